"""What two dropped dependencies would buy: scipy for PageRank, extruct for page dates.

- PageRank: ``trawl.graph.pagerank`` (numpy: edges sorted by target, a gather and
  ``np.add.reduceat`` an iteration) against the same power iteration over a scipy
  sparse matrix (the implementation Trawl had before), on the hygiene bench's
  synthetic graphs (eight links a node, skewed in-degree), matrix or edge
  preparation included, both to an L1 change under 1e-6, best of interleaved runs.
  The scores must agree.
- Page dates: ``markup_dates`` over the 181 pages of the article benchmark,
  first pass (imports included) and best of three, with a digest of every page's
  answer so that two checkouts can be compared:

    .venv/bin/python bench/dependencies.py [--quick]
    PYTHONPATH=OTHER_CHECKOUT/src .venv/bin/python bench/dependencies.py --dates-only

scipy comes with the bench extra; nothing here needs extruct.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import sparse
from w3lib.encoding import html_to_unicode

from trawl.extract import dates
from trawl.graph.pagerank import pagerank

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "RESULTS.md"
ARTICLES = BENCH.parents[1] / "shared" / "data" / "article-extraction-benchmark"
LINKS_PER_NODE = 8
NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)


def graph(n: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The hygiene bench's graph: n nodes, eight links each, a few pages get most links."""
    rng = np.random.default_rng(2)
    sources = np.repeat(np.arange(n, dtype=np.int64), LINKS_PER_NODE)
    targets = np.minimum((rng.pareto(1.2, sources.size) * n / 50).astype(np.int64), n - 1)
    return sources, rng.permutation(n)[targets]


def pagerank_scipy(
    n: int, src: npt.NDArray[np.int64], dst: npt.NDArray[np.int64], tol: float = 1e-6
) -> npt.NDArray[np.float64]:
    """Trawl's PageRank until this bench: the same iteration over a scipy CSR matrix."""
    keep = src != dst
    src, dst = src[keep], dst[keep]
    # Untyped on purpose: scipy-stubs (still in environments built before scipy
    # left the runtime) and plain scipy disagree on this constructor's overloads.
    build: Any = sparse.csr_array
    links = build((np.ones(src.size, dtype=np.float64), (dst, src)), shape=(n, n), dtype=np.float64)
    links.sum_duplicates()
    links.data[:] = 1.0
    out_degree = np.bincount(links.indices, minlength=n).astype(np.float64)
    dangling = out_degree == 0
    inverse = np.divide(1.0, out_degree, out=np.zeros(n), where=~dangling)
    links.data *= inverse[links.indices]
    x = np.full(n, 1.0 / n)
    teleport = 0.15 / n
    for _ in range(200):
        spread = 0.85 * x[dangling].sum() / n
        new = 0.85 * (links @ x) + (spread + teleport)
        change = float(np.abs(new - x).sum())
        x = new
        if change < tol:
            break
    result: npt.NDArray[np.float64] = x / x.sum()
    return result


def time_pagerank(n: int, rounds: int) -> tuple[float, float, float]:
    """(numpy seconds, scipy seconds, largest score difference), best of interleaved runs."""
    sources, targets = graph(n)
    ours = theirs = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        a = pagerank(n, sources, targets)
        ours = min(ours, time.perf_counter() - started)
        started = time.perf_counter()
        b = pagerank_scipy(n, sources, targets)
        theirs = min(theirs, time.perf_counter() - started)
    return ours, theirs, float(np.abs(np.asarray(a) - b).max())


def time_dates() -> tuple[float, float, int, str]:
    """(first pass s, best of three s, pages with a published date, digest of the answers)."""
    truth = json.loads((ARTICLES / "ground-truth.json").read_text())
    pages = []
    for path in sorted((ARTICLES / "html").glob("*.html.gz")):
        _, html = html_to_unicode(None, gzip.decompress(path.read_bytes()))
        pages.append((truth[path.name.removesuffix(".html.gz")]["url"], html))
    answers = []
    started = time.perf_counter()
    for url, html in pages:
        published, source, modified = dates.markup_dates(html, url, now=NOW)
        answers.append([published and published.isoformat(), source, modified and str(modified)])
    first = time.perf_counter() - started
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for url, html in pages:
            dates.markup_dates(html, url, now=NOW)
        best = min(best, time.perf_counter() - started)
    digest = hashlib.sha256(json.dumps(answers).encode()).hexdigest()[:12]
    return first, best, sum(a[0] is not None for a in answers), digest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="Small graphs, nothing recorded.")
    parser.add_argument("--dates-only", action="store_true", help="Only the dates; not recorded.")
    args = parser.parse_args()
    first, best, found, digest = time_dates()
    dates_line = (
        f"page dates over {len(list((ARTICLES / 'html').glob('*.html.gz')))} pages"
        f" ({dates.__file__}): first pass {first:.2f} s (imports included),"
        f" best of 3 {best:.3f} s, {found} with a published date, answers digest {digest}"
    )
    print(dates_line)
    if args.dates_only:
        return 0
    rows = []
    for n in (5_000, 12_500) if args.quick else (12_500, 100_000, 1_000_000):
        ours, theirs, difference = time_pagerank(n, 3 if n >= 1_000_000 else 7)
        rows.append(
            f"| PageRank, {n:,} nodes, {n * LINKS_PER_NODE:,} links, s | {ours:.3f}"
            f" | {theirs:.3f} | {ours / theirs:.2f}x | {difference:.1e} |"
        )
    table = (
        "| measure | numpy (Trawl) | scipy sparse | numpy / scipy | largest difference |\n"
        "|---|---:|---:|---:|---:|\n" + "\n".join(rows)
    )
    print(table)
    if not args.quick:
        when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        ).stdout.strip()
        machine = (
            f"Python {platform.python_version()}, numpy {np.__version__},"
            f" load average {os.getloadavg()[0]:.1f} at the end"
        )
        section = (
            f"\n## Dependencies: PageRank without scipy, dates without extruct, {when}\n\n"
            f"- commit: {commit}\n- {machine}\n\n{table}\n\n- {dates_line}\n"
        )
        RESULTS.write_text(RESULTS.read_text() + section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
