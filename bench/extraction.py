"""Main-text extraction: Trawl's ``main_text`` against trafilatura and resiliparse.

Every extractor runs over the 181 pages of the article-extraction benchmark
(news and blogs, with the article's text as ground truth) in this one process,
in alternating order over several rounds; F1, precision and recall follow the
benchmark's own metric, pages/s is the median over the rounds. The target
(issue: main text) is F1 >= 0.95 at a speed no worse than trafilatura's default
``extract()``. The result is appended to bench/RESULTS.md.

    .venv/bin/python bench/extraction.py [--rounds N] [--quick]

The metric (README of shared/data, section 5): \\w+ tokens, 4-gram shingle
multisets, TP/FP/FN per document normalised by their sum, per-document precision
and recall (1.0 when FP = FN = 0; a document with TP+FP = 0, or TP+FN = 0, is left
out of that mean), means over documents, then F1 of the means. Before anything is
measured it must reproduce the published figures of the stored outputs; the tests
import this module for the same metric.
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser

from trawl.extract.main_text import main_text

# The peers are optional (the bench extra): a run without one measures the others.
try:
    import trafilatura

    HAVE_TRAFILATURA = True
except ImportError:
    HAVE_TRAFILATURA = False
try:
    from resiliparse.extract.html2text import extract_plain_text

    HAVE_RESILIPARSE = True
except ImportError:
    HAVE_RESILIPARSE = False

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DATA = ROOT.parent / "shared" / "data" / "article-extraction-benchmark"
RESULTS = BENCH / "RESULTS.md"
QUICK_PAGES = 30
TARGET_F1 = 0.95
# F1 of the outputs stored with the benchmark, as its README publishes them.
PUBLISHED = {
    "trafilatura": 0.958,
    "readability": 0.922,
    "readability_js": 0.947,
    "html-text": 0.665,
}
REFERENCE = "trafilatura default"  # the speed to match

TOKEN = re.compile(r"\w+")
SHINGLE = 4

Extractor = Callable[[str], str]


# -- the metric -------------------------------------------------------------------


def shingles(text: str) -> Counter[tuple[str, ...]]:
    tokens = TOKEN.findall(text)
    return Counter(tuple(tokens[i : i + SHINGLE]) for i in range(max(0, len(tokens) - SHINGLE + 1)))


def article_score(
    predictions: Mapping[str, str], truths: Mapping[str, str]
) -> tuple[float, float, float]:
    """(F1, precision, recall) of ``predictions`` against ``truths``, both keyed by page id.

    A page missing from ``predictions`` counts as an empty prediction.
    """
    precisions: list[float] = []
    recalls: list[float] = []
    for key, truth in truths.items():
        predicted, expected = shingles(predictions.get(key, "")), shingles(truth)
        counts = (
            sum((predicted & expected).values()),  # true positives
            sum((predicted - expected).values()),  # false positives
            sum((expected - predicted).values()),  # false negatives
        )
        total = sum(counts) or 1
        tp, fp, fn = (count / total for count in counts)
        if fp == 0 and fn == 0:
            precisions.append(1.0)
            recalls.append(1.0)
            continue
        if tp + fp > 0:
            precisions.append(tp / (tp + fp))
        if tp + fn > 0:
            recalls.append(tp / (tp + fn))
    precision = statistics.fmean(precisions) if precisions else 0.0
    recall = statistics.fmean(recalls) if recalls else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return f1, precision, recall


def load_pages(data: Path = DATA) -> tuple[dict[str, str], dict[str, str]]:
    """(HTML by page id, ground-truth article text by page id), in id order."""
    truth = json.loads((data / "ground-truth.json").read_text(encoding="utf-8"))
    html: dict[str, str] = {}
    for key in sorted(truth):
        with gzip.open(data / "html" / f"{key}.html.gz", "rt", encoding="utf-8") as f:
            html[key] = f.read()
    return html, {key: truth[key]["articleBody"] for key in sorted(truth)}


def published_outputs(data: Path = DATA) -> dict[str, dict[str, str]]:
    """The stored predictions of the published extractors, by extractor name."""
    outputs: dict[str, dict[str, str]] = {}
    for name in PUBLISHED:
        stored = json.loads((data / "output" / f"{name}.json").read_text(encoding="utf-8"))
        outputs[name] = {k: v.get("articleBody") or "" for k, v in stored["output"].items()}
    return outputs


# -- the extractors ---------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    name: str
    settings: str
    extract: Extractor


def full_text(html: str) -> str:
    """Every word of the body: the floor any main-text extractor must beat on precision."""
    tree = LexborHTMLParser(html)
    body = tree.body
    if body is None:
        return ""
    tree.strip_tags(["script", "style", "noscript", "template", "svg"])
    text: str = body.text(separator="\n")
    return text


# Each tried for the F1/speed trade-off; include_comments=False is how the benchmark
# itself runs trafilatura, fast=True skips its readability/jusText fallbacks.
TRAFILATURA_OPTIONS: list[dict[str, bool]] = [
    {},
    {"include_comments": False},
    {"include_comments": False, "fast": True},
    {"include_comments": False, "fast": True, "favor_recall": True},
    {"include_comments": False, "fast": True, "favor_precision": True},
    {"include_comments": False, "favor_precision": True},
    {"include_comments": False, "favor_recall": True},
    {"include_comments": False, "include_tables": False},
    {"include_comments": False, "fast": True, "deduplicate": True},
]
RESILIPARSE_SKIP = ["figure", "figcaption", "aside", "header", "footer", "nav"]


def trafilatura_with(
    *,
    include_comments: bool = True,
    fast: bool = False,
    favor_recall: bool = False,
    favor_precision: bool = False,
    include_tables: bool = True,
    deduplicate: bool = False,
) -> Extractor:
    def extract(html: str) -> str:
        text: str | None = trafilatura.extract(
            html,
            include_comments=include_comments,
            fast=fast,
            favor_recall=favor_recall,
            favor_precision=favor_precision,
            include_tables=include_tables,
            deduplicate=deduplicate,
        )
        return text or ""

    return extract


def resiliparse_default(html: str) -> str:
    text: str = extract_plain_text(html, main_content=True)
    return text


def resiliparse_tuned(html: str) -> str:
    text: str = extract_plain_text(
        html,
        main_content=True,
        comments=False,
        post_meta=False,
        alt_texts=False,
        skip_elements=RESILIPARSE_SKIP,
    )
    return text


def resiliparse_then_trafilatura(html: str) -> str:
    """resiliparse first; trafilatura (fast) when it finds little."""
    text = resiliparse_tuned(html)
    if len(text) >= 250:
        return text
    found: str | None = trafilatura.extract(html, include_comments=False, fast=True)
    return found or text


def candidates() -> list[Candidate]:
    found = [
        Candidate("trawl main_text", "readability-style scorer on selectolax", main_text),
        Candidate("full text", "selectolax body text, no boilerplate removal", full_text),
    ]
    if HAVE_TRAFILATURA:
        # trafilatura logs every page it finds little in; the log is not the result.
        logging.getLogger("trafilatura").setLevel(logging.CRITICAL)
        for options in TRAFILATURA_OPTIONS:
            name = "trafilatura" if options else REFERENCE
            settings = ", ".join(f"{k}={v}" for k, v in options.items()) or "extract(html)"
            found.append(Candidate(name, settings, trafilatura_with(**options)))
    else:
        print("bench: trafilatura not installed (pip install -e '.[bench]'): skipped")
    if HAVE_RESILIPARSE:
        found.append(Candidate("resiliparse", "main_content=True", resiliparse_default))
        found.append(
            Candidate(
                "resiliparse",
                "main_content=True, comments, post_meta and alt_texts off,"
                f" skip {', '.join(RESILIPARSE_SKIP)}",
                resiliparse_tuned,
            )
        )
        if HAVE_TRAFILATURA:
            found.append(
                Candidate(
                    "resiliparse + trafilatura",
                    "tuned resiliparse; trafilatura fast when under 250 characters",
                    resiliparse_then_trafilatura,
                )
            )
    else:
        print("bench: resiliparse not installed (pip install -e '.[bench]'): skipped")
    return found


# -- the run ----------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    candidate: Candidate
    f1: float
    precision: float
    recall: float
    pages_per_second: float


def timed(extract: Extractor, pages: Mapping[str, str]) -> tuple[dict[str, str], float]:
    started = time.perf_counter()
    out = {key: extract(html) for key, html in pages.items()}
    return out, time.perf_counter() - started


def measure(
    found: list[Candidate], pages: Mapping[str, str], truths: Mapping[str, str], rounds: int
) -> list[Result]:
    for candidate in found:
        candidate.extract(next(iter(pages.values())))  # lazy imports and models, not timed
    seconds: list[list[float]] = [[] for _ in found]
    outputs: list[dict[str, str]] = [{} for _ in found]
    for n in range(rounds):
        # Alternate the order, so that warm caches and drift favour no one.
        order = list(enumerate(found))
        for i, candidate in order if n % 2 == 0 else reversed(order):
            outputs[i], spent = timed(candidate.extract, pages)
            seconds[i].append(spent)
            print(
                f"round {n + 1}/{rounds} {len(pages) / spent:7.1f} pages/s"
                f"  {candidate.name}: {candidate.settings}",
                flush=True,
            )
    results = []
    for i, candidate in enumerate(found):
        f1, precision, recall = article_score(outputs[i], truths)
        rate = len(pages) / statistics.median(seconds[i])
        results.append(Result(candidate, f1, precision, recall, rate))
    return results


def check_metric(data: Path) -> str:
    """The F1 of the stored outputs, or SystemExit unless they are the published figures."""
    _, truths = load_pages(data)
    found = []
    for name, outputs in published_outputs(data).items():
        f1 = article_score(outputs, truths)[0]
        if round(f1, 3) != PUBLISHED[name]:
            raise SystemExit(f"bench: metric gives {name} {f1:.4f}, published {PUBLISHED[name]}")
        found.append(f"{name} {f1:.3f}")
    return ", ".join(found)


def reference_rate(results: list[Result]) -> float | None:
    return next((r.pages_per_second for r in results if r.candidate.name == REFERENCE), None)


def table(results: list[Result]) -> str:
    reference = reference_rate(results)
    rows = [
        "| extractor | settings | F1 | precision | recall | pages/s | ms/page | x trafilatura |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        ratio = f"{r.pages_per_second / reference:.2f}" if reference else "-"
        rows.append(
            f"| {r.candidate.name} | {r.candidate.settings} | {r.f1:.3f} | {r.precision:.3f}"
            f" | {r.recall:.3f} | {r.pages_per_second:.1f} | {1000 / r.pages_per_second:.2f}"
            f" | {ratio} |"
        )
    return "\n".join(rows)


def verdict(results: list[Result]) -> str:
    ours = next(r for r in results if r.candidate.name == "trawl main_text")
    reference = reference_rate(results)
    speed = (
        f"{ours.pages_per_second / reference:.2f}x trafilatura's pages/s"
        if reference
        else "trafilatura not measured"
    )
    met = ours.f1 >= TARGET_F1 and (reference is None or ours.pages_per_second >= reference)
    return (
        f"**trawl main_text: F1 {ours.f1:.3f} (target {TARGET_F1}), {speed}**;"
        f" target {'met' if met else 'not met'}."
    )


def git(*args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    return proc.stdout.strip()


def installed(package: str) -> str:
    try:
        return f"{package} {version(package)}"
    except PackageNotFoundError:
        return f"{package} not installed"


def record(results: list[Result], rounds: int, pages: int, metric: str, load: float) -> None:
    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    if git("status", "--porcelain", "--", "src"):
        commit += " + uncommitted src/ changes"
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    libraries = ", ".join(installed(p) for p in ("selectolax", "trafilatura", "resiliparse"))
    section = (
        f"\n## Extraction, {when}\n\n"
        f"- commit: {commit}\n"
        f"- machine: nproc {len(os.sched_getaffinity(0))}, Python {platform.python_version()},"
        f" {libraries}, load average {load:.2f} at start\n"
        f"- {pages} pages of the article-extraction benchmark, {rounds} rounds in alternating"
        " order in one process; pages/s is the median round, HTML already decoded\n"
        f"- metric check on the stored outputs (published 0.958, 0.922, 0.947, 0.665): {metric}\n\n"
        f"{table(results)}\n\n"
        f"{verdict(results)}\n"
    )
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    RESULTS.write_text(text + section)


def main() -> int:
    parser = argparse.ArgumentParser(description="Main-text extraction: quality and speed.")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (default 3).")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK_PAGES} pages, one round, smoke check: RESULTS.md is not touched.",
    )
    args = parser.parse_args()
    rounds: int = 1 if args.quick else max(1, args.rounds)

    if not (DATA / "ground-truth.json").is_file():
        print(f"bench: skipped, no article-extraction benchmark at {DATA}")
        return 0

    load = os.getloadavg()[0]
    metric = check_metric(DATA)
    print(f"metric check (published 0.958, 0.922, 0.947, 0.665): {metric}")
    pages, truths = load_pages(DATA)
    if args.quick:
        keys = sorted(pages)[:QUICK_PAGES]
        pages = {k: pages[k] for k in keys}
        truths = {k: truths[k] for k in keys}
    results = measure(candidates(), pages, truths, rounds)
    print()
    print(table(results))
    print(f"\n{verdict(results)}")
    if args.quick:
        print("(--quick: not recorded)")
    else:
        record(results, rounds, len(pages), metric, load)
        print(f"appended to {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
