"""What rendering and header checks cost, as ratios measured in one run.

- Rendered crawl: the same 100 pages crawled by ``trawl crawl`` plain and with
  ``--render`` (Debian's Chromium), alternating order; the figure is rendered
  pages/s over plain pages/s. Two sites: the PostgreSQL 15 manual, whose pages
  run no script (``--render`` loads none of them in Chromium), and Eclipse
  SUMO's docs, where every page has scripts (every page is rendered; their
  shared assets are fetched once).
- Header checks: the same URLs HEAD-checked by ``check_many`` (a fresh,
  address-checked connection per URL, six at once) and by an httpx client
  (pooled keep-alive connections, six at once); the figure is ours over httpx.

    .venv/bin/python bench/render_cost.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

from crawl_speed import (
    BIN,
    RESULTS,
    ROOT,
    SITE,
    TRAWL_SUMMARY,
    Run,
    cpus,
    git,
    static_server,
    timed,
)
from trawl.net.header_check import check_many
from trawl.settings import Settings

PAGES = 100
CHECKS = 300
SUMO = SITE.parent / "site-sumo-docs"
# (label, folder served, start page)
SITES = (
    ("the PostgreSQL manual (no scripts)", SITE, "index.html"),
    ("SUMO's docs (scripts on every page)", SUMO, "docs/index.html"),
)


def crawl(url: str, *, render: bool) -> Run:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAWL_")}
    env["TRAWL_RESOURCE_CHECKS"] = "0"  # rendering alone is measured
    with tempfile.TemporaryDirectory(prefix="trawl-bench-") as tmp:
        cmd = [str(BIN / "trawl"), "crawl", url, "--data", str(Path(tmp) / "data")]
        cmd += ["--delay", "0", "--concurrency", "8", "--max-pages", str(PAGES)]
        cmd += ["--render" if render else "--no-render"]
        seconds, cpu, lines = timed(cmd, Path(tmp), env)
    match = next((m for m in map(TRAWL_SUMMARY.match, lines) if m), None)
    if match is None:
        raise SystemExit(f"bench: no trawl summary line in {lines!r}")
    return Run(seconds, int(match.group(1)), cpu)


async def ours(urls: list[str], allowed: frozenset[tuple[str, int]]) -> float:
    started = time.perf_counter()
    checks = await check_many(urls, user_agent="bench", allowed=allowed)
    assert all(c.status == 200 for c in checks), {c.error for c in checks}
    return time.perf_counter() - started


async def peer(urls: list[str]) -> float:
    started = time.perf_counter()
    gate = asyncio.Semaphore(6)
    limits = httpx.Limits(max_connections=6)
    async with httpx.AsyncClient(limits=limits, follow_redirects=False) as client:

        async def one(url: str) -> int:
            async with gate:
                return (await client.head(url)).status_code

        statuses = await asyncio.gather(*(one(u) for u in urls))
    assert set(statuses) == {200}
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="One round, not recorded.")
    args = parser.parse_args()
    rounds = 1 if args.quick else 3
    if not (SITE / "index.html").is_file():
        print(f"bench: skipped, no test site at {SITE}")
        return 0
    if shutil.which(Settings().chromium) is None:
        print(f"bench: skipped, no Chromium at {Settings().chromium}")
        return 0
    load = os.getloadavg()[0]
    files = sorted(p.name for p in SITE.glob("*.html"))[:CHECKS]
    crawl_rows: list[str] = []
    ratios: list[str] = []
    for label, root, start in SITES:
        if not (root / start).is_file():
            print(f"bench: {label} skipped, no test site at {root}")
            continue
        plain: list[Run] = []
        rendered: list[Run] = []
        with static_server(root) as base:
            for n in range(rounds):
                for render in [False, True] if n % 2 == 0 else [True, False]:
                    run = crawl(f"{base}/{start}", render=render)
                    (rendered if render else plain).append(run)
                    print(f"{label} round {n + 1} render={render}: {run.pages} pages"
                          f" {run.seconds:.1f}s")  # fmt: skip
        plain_rate = statistics.median(r.pages_per_second for r in plain)
        render_rate = statistics.median(r.pages_per_second for r in rendered)
        crawl_rows += [
            f"| crawl, {PAGES} pages of {label}, plain | {plain_rate:.1f} pages/s |",
            f"| crawl, same pages, `--render` (Chromium) | {render_rate:.1f} pages/s |",
        ]
        ratios.append(f"{render_rate / plain_rate:.2f}x on {label}")
    head_ours: list[float] = []
    head_peer: list[float] = []
    with static_server(SITE) as base:
        host, port = base.removeprefix("http://").split(":")
        allowed = frozenset({(host, int(port))})
        urls = [f"{base}/{name}" for name in files]
        for n in range(rounds):
            if n % 2 == 0:
                head_ours.append(asyncio.run(ours(urls, allowed)))
                head_peer.append(asyncio.run(peer(urls)))
            else:
                head_peer.append(asyncio.run(peer(urls)))
                head_ours.append(asyncio.run(ours(urls, allowed)))
    ours_rate = len(files) / statistics.median(head_ours)
    peer_rate = len(files) / statistics.median(head_peer)
    rows = "\n".join(crawl_rows)
    section = (
        f"\n## Rendering and header checks, {datetime.now(UTC):%Y-%m-%d %H:%M UTC}\n\n"
        f"- commit: {git('rev-parse', '--short', 'HEAD') or 'unknown'}\n"
        f"- machine: nproc {cpus()}, load average {load:.2f} at start; {rounds} rounds,"
        f" alternating order\n\n"
        f"| what | median rate |\n|---|---:|\n{rows}\n"
        f"| HEAD checks, {len(files)} URLs, `check_many` (fresh connection each) |"
        f" {ours_rate:.0f} URLs/s |\n"
        f"| HEAD checks, same URLs, httpx pooled keep-alive | {peer_rate:.0f} URLs/s |\n\n"
        f"**Rendered/plain crawl pages/s: {'; '.join(ratios)}. Header checks"
        f" ours/httpx: {ours_rate / peer_rate:.2f}x.**\n"
    )
    print(section)
    if not args.quick:
        RESULTS.write_text(RESULTS.read_text() + section)
        print(f"appended to {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
