"""Frontier memory: one million queued URLs, Trawl's frontier against Scrapy's.

Each side runs in a fresh process and reports how much its resident memory
grew while it admitted the URLs: Trawl's ``Frontier`` (per-host queues, a
seen set of 64-bit hashes) against what Scrapy holds for the same work, its
``Request`` objects in a FIFO memory queue plus its dupefilter's fingerprints.
The target for Trawl is 500 MB at 1M URLs.

    .venv/bin/python bench/frontier_memory.py [--urls N] [--quick]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections import deque
from datetime import UTC, datetime
from pathlib import Path

from scrapy import Request
from scrapy.dupefilters import RFPDupeFilter

from trawl.crawl.frontier import Frontier
from trawl.records import CrawlUrl

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "RESULTS.md"
HOSTS = 1_000


def url(i: int) -> str:
    return f"https://www.site{i % HOSTS}.example/section/{i % 50}/page-{i}.html?id={i}"


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def measure_trawl(n: int) -> float:
    frontier = Frontier(delay=1.0, host_concurrency=2, max_pending=n)
    before = rss_mb()
    for i in range(n):
        frontier.enqueue(CrawlUrl(url(i), i % 10, None))
    grown = rss_mb() - before
    assert frontier.queued == n
    return grown


def measure_scrapy(n: int) -> float:
    dupes = RFPDupeFilter()
    queue: deque[Request] = deque()
    before = rss_mb()
    for i in range(n):
        request = Request(url(i))
        if not dupes.request_seen(request):
            queue.append(request)
    grown = rss_mb() - before
    assert len(queue) == n
    return grown


def child(which: str, n: int) -> float:
    out = subprocess.run(
        [sys.executable, __file__, "--child", which, "--urls", str(n)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return float(out.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="100k URLs, nothing recorded.")
    parser.add_argument("--child", choices=["trawl", "scrapy"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    n = 100_000 if args.quick else args.urls
    if args.child:
        grown = measure_trawl(n) if args.child == "trawl" else measure_scrapy(n)
        print(f"{grown:.1f}")
        return 0

    trawl, scrapy = child("trawl", n), child("scrapy", n)
    table = (
        "| frontier | URLs | RSS growth MB | bytes per URL |\n|---|---:|---:|---:|\n"
        f"| Trawl `Frontier` | {n:,} | {trawl:.0f} | {trawl * 2**20 / n:.0f} |\n"
        f"| Scrapy Requests + dupefilter | {n:,} | {scrapy:.0f} | {scrapy * 2**20 / n:.0f} |"
    )
    verdict = "met" if trawl <= 500 * n / 1_000_000 else "NOT met"
    summary = (
        f"**Trawl/Scrapy memory: {trawl / scrapy:.2f}x**; target 500 MB at 1M URLs: {verdict}."
    )
    print(table, summary, sep="\n\n")
    if not args.quick:
        when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        ).stdout.strip()
        section = f"\n## Frontier memory, {when}\n\n- commit: {commit}\n\n{table}\n\n{summary}\n"
        RESULTS.write_text(RESULTS.read_text() + section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
