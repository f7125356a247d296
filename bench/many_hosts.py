"""Many-host benchmark: a crawl bound by politeness, not by parsing.

N sites on loopback, each on its own address in 127.0.0.0/8 (127.10.x.y), P pages each
(the home page links to the others), every answer delayed 20-80 ms, and a per-host delay
of 1 s with one request per host at a time. The physical limit is the per-host schedule:
(P - 1) x 1 s for the whole crawl, whatever the machine. Trawl and Scrapy (set up for
broad crawls as its documentation advises: DownloaderAwarePriorityQueue, a 1 s delay
per domain, one request per domain at a time, 16 in all) each crawl every site once.
Reported: wall seconds against the schedule, pages, CPU seconds per page, and peak
memory of the crawler's whole process tree (sampled every 50 ms: the sum of the
processes' resident sets, and of their proportional sets, which count a page that
forked processes share once). The sites log when each request arrives, which splits
the wall time into start-up (launch to first request), crawl (first to last request)
and end (last request to exit), and gives each host's gaps between requests: on a
quiet machine those are the politeness delay, and what exceeds it is the crawler's
own lateness, whatever the load.

    .venv/bin/python bench/many_hosts.py [--hosts 100] [--pages 20]
    .venv/bin/python bench/many_hosts.py --hosts 1000 --pages 5 --rounds 2

The machine is shared: only ratios measured in one run mean much (the load average is
printed with each run).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean, median, quantiles
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
TRAWL_SUMMARY = re.compile(r"crawl \d+ \w+.*?: (\d+) fetched")
CONCURRENCY = 16
DELAY = 1.0  # seconds between one host's requests, for both crawlers
SITE_FILES = ("/robots.txt", "/sitemap.xml")  # not pages: left out of the page gaps


def address(i: int) -> str:
    return f"127.10.{i // 250}.{i % 250 + 1}"


# -- the sites -------------------------------------------------------------------


def serve(hosts: int, pages: int, port: int) -> None:
    """Every site on its own loopback address, one asyncio process, answers delayed."""
    from aiohttp import web  # noqa: PLC0415 - only the server process needs it

    arrivals: list[tuple[float, str, str]] = []  # monotonic time, host, path

    async def page(request: web.Request) -> web.StreamResponse:
        path = request.path
        if path == "/__arrivals":  # the bench's own: what arrived since it last asked
            taken = arrivals.copy()
            arrivals.clear()
            return web.json_response(taken)
        arrivals.append((time.monotonic(), request.host, path))
        await asyncio.sleep(random.uniform(0.02, 0.08))
        if path == "/":
            links = "".join(f'<a href="/p{k}">page {k}</a> ' for k in range(1, pages))
            body = f"<html><head><title>Home</title></head><body>{links}</body></html>"
        elif re.fullmatch(r"/p\d+", path) and 0 < int(path[2:]) < pages:
            words = " ".join(random.choice(("river", "stone", "lamp", "field")) for _ in range(80))
            body = f"<html><head><title>{path}</title></head><body><p>{words}</p></body></html>"
        else:
            return web.Response(status=404, text="not found")
        return web.Response(text=body, content_type="text/html")

    async def main() -> None:
        app = web.Application()
        app.router.add_get("/{tail:.*}", page)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        for i in range(hosts):
            await web.TCPSite(runner, address(i), port, backlog=128).start()
        print("ready", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


# -- the crawlers ----------------------------------------------------------------


@dataclass
class Run:
    seconds: float
    pages: int
    cpu: float
    peak_mb: float  # the largest single process (wait4's ru_maxrss)
    tree_rss_mb: float = 0.0  # the whole tree's resident sets, summed, at its peak
    tree_pss_mb: float = 0.0  # the same in proportional sets (shared pages counted once)
    launched: float = 0.0  # time.monotonic() at launch
    ended: float = 0.0
    arrivals: list[tuple[float, str, str]] = field(default_factory=list)

    def phases(self) -> str:
        """Start-up, crawl and end, from the sites' log of arrivals."""
        if not self.arrivals:
            return ""
        first, last = self.arrivals[0][0], self.arrivals[-1][0]
        return (
            f"start-up {first - self.launched:4.2f} s, requests {last - first:5.2f} s,"
            f" end {self.ended - last:4.2f} s"
        )

    def schedule(self) -> str:
        """The start and the lateness, from the pages' arrivals (robots.txt and sitemaps
        left out): when the last host's first page went out after the first request
        (its floor is every host's two requests through the slots), the page gaps'
        mean excess over the delay, and the host that ended last: its first page and
        the lateness summed over its gaps. The wall time is roughly start-up + that
        first page + the schedule + that lateness + end."""
        pages: dict[str, list[float]] = {}
        for when, host, path in self.arrivals:
            if path not in SITE_FILES:
                pages.setdefault(host, []).append(when)
        excess = [b - a - DELAY for times in pages.values() for a, b in itertools.pairwise(times)]
        if not excess:
            return ""
        first = self.arrivals[0][0]
        last = max(pages.values(), key=lambda times: times[-1])
        late = last[-1] - last[0] - DELAY * (len(last) - 1)
        return (
            f"last host's first page {max(t[0] for t in pages.values()) - first:4.2f} s"
            f" after the first request; page gaps' mean excess {mean(excess) * 1000:3.0f} ms;"
            f" last host to end: first page at {last[0] - first:4.2f} s, {late:4.2f} s late"
        )

    def gaps(self) -> str:
        """Each host's gaps between the arrivals of its requests (robots.txt and sitemap
        guesses included): the politeness delay plus the crawler's lateness."""
        by_host: dict[str, list[float]] = {}
        for when, host, _ in self.arrivals:
            by_host.setdefault(host, []).append(when)
        gaps = [b - a for times in by_host.values() for a, b in itertools.pairwise(times)]
        if len(gaps) < 2:
            return ""
        p95 = quantiles(gaps, n=20)[-1]
        return (
            f"{len(self.arrivals)} requests; per-host gap median {median(gaps):.2f} s,"
            f" p95 {p95:.2f} s, max {max(gaps):.2f} s"
        )


def _tree(pid: int) -> list[int]:
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        with contextlib.suppress(OSError):
            todo += [int(c) for c in Path(f"/proc/{p}/task/{p}/children").read_text().split()]
    return pids


def _tree_memory(pid: int) -> tuple[float, float]:
    """The resident and proportional set sizes of ``pid`` and its descendants, in MB."""
    rss = pss = 0
    for p in _tree(pid):
        try:
            for line in Path(f"/proc/{p}/smaps_rollup").read_text().splitlines():
                if line.startswith("Rss:"):
                    rss += int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss += int(line.split()[1])
        except OSError:
            pass  # gone meanwhile
    return rss / 1024, pss / 1024


def _sample_memory(pid: int, peak: list[float], done: threading.Event) -> None:
    while not done.wait(0.05):
        rss, pss = _tree_memory(pid)
        peak[0], peak[1] = max(peak[0], rss), max(peak[1], pss)


def measured(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[Run, list[str]]:
    """Wall and CPU seconds and peak memory of one crawler process tree, with its stdout.
    Output goes to files so the process is reaped by wait4, which reports its own usage:
    CPU of the process and the children it waited for; ru_maxrss the largest resident
    set among them (KiB on Linux), not their sum. The tree's summed memory is sampled."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        launched = time.monotonic()
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err)
        peak, done = [0.0, 0.0], threading.Event()
        sampler = threading.Thread(target=_sample_memory, args=(proc.pid, peak, done))
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        ended = time.monotonic()
        done.set()
        sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        lines = out.read().decode().strip().splitlines()
        if proc.returncode not in (0, 1) or not lines:
            raise SystemExit(
                f"bench: {cmd[:3]} failed ({proc.returncode}):\n{err.read()[-2000:]!r}"
            )
    cpu = usage.ru_utime + usage.ru_stime
    run = Run(seconds, 0, cpu, usage.ru_maxrss / 1024, peak[0], peak[1], launched, ended)
    return run, lines


def run_trawl(starts: list[str], settings: Sequence[str] = ()) -> Run:
    """``settings``: TRAWL_NAME=VALUE for this run; the caller's own TRAWL_ are dropped."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAWL_")}
    for setting in settings:
        name, _, value = setting.partition("=")
        env[name] = value
    with tempfile.TemporaryDirectory(prefix="trawl-many-") as tmp:
        cmd = [str(BIN / "trawl"), "crawl", *starts, "--data", str(Path(tmp) / "data")]
        cmd += ["--delay", str(DELAY), "--host-concurrency", "1"]
        cmd += ["--concurrency", str(CONCURRENCY)]
        run, lines = measured(cmd, Path(tmp), env)
    match = next((m for m in map(TRAWL_SUMMARY.search, lines) if m), None)
    if match is None:
        raise SystemExit(f"bench: no trawl summary line in {lines!r}")
    run.pages = int(match.group(1))
    return run


def run_scrapy(starts: list[str]) -> Run:
    run, lines = measured([sys.executable, __file__, "--scrapy", *starts], ROOT)
    run.pages = int(lines[-1])
    return run


SCRAPY_SETTINGS: dict[str, Any] = {
    # docs.scrapy.org, "Broad Crawls", and the per-domain politeness of this bench.
    "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.DownloaderAwarePriorityQueue",
    "CONCURRENT_REQUESTS": CONCURRENCY,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
    "DOWNLOAD_DELAY": DELAY,
    "RANDOMIZE_DOWNLOAD_DELAY": False,
    "REACTOR_THREADPOOL_MAXSIZE": 20,
    "LOG_LEVEL": "WARNING",
    "COOKIES_ENABLED": False,
    "RETRY_ENABLED": False,
    "DOWNLOAD_TIMEOUT": 15,
    "REDIRECT_ENABLED": False,
    "AJAXCRAWL_ENABLED": True,
    "ROBOTSTXT_OBEY": True,
    "TELNETCONSOLE_ENABLED": False,
    "HTTPCACHE_ENABLED": False,
}


def scrapy_main(starts: list[str]) -> int:
    from urllib.parse import urlsplit  # noqa: PLC0415

    from scrapy import Request, Spider  # noqa: PLC0415 - only the Scrapy run
    from scrapy.crawler import CrawlerProcess  # noqa: PLC0415
    from scrapy.http import Response, TextResponse  # noqa: PLC0415
    from scrapy.linkextractors import LinkExtractor  # noqa: PLC0415

    class ManySpider(Spider):
        name = "many"
        pages = 0

        async def start(self) -> Any:
            for url in starts:
                yield Request(url)

        def parse(self, response: Response, **kwargs: Any) -> Any:
            ManySpider.pages += 1
            if not isinstance(response, TextResponse):
                return
            netloc = urlsplit(response.url).netloc
            for link in LinkExtractor(tags=("a",), attrs=("href",)).extract_links(response):
                if urlsplit(link.url).netloc == netloc:
                    yield response.follow(link, callback=self.parse)

    process = CrawlerProcess(settings=SCRAPY_SETTINGS)
    process.crawl(ManySpider)
    process.start()
    print(ManySpider.pages)
    return 0


def arrivals(port: int) -> list[tuple[float, str, str]]:
    """What the sites received since the last call, in order of arrival."""
    with urllib.request.urlopen(f"http://{address(0)}:{port}/__arrivals", timeout=30) as r:
        return sorted((when, host, path) for when, host, path in json.load(r))


def load() -> str:
    return "load " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--scrapy":
        return scrapy_main(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--only", choices=("trawl", "scrapy"))
    parser.add_argument(
        "--rounds", type=int, default=1, help="crawl with each in turn, this many times"
    )
    parser.add_argument(
        "--trawl-env",
        action="append",
        default=[],
        metavar="TRAWL_NAME=VALUE",
        help="a setting for Trawl's runs (TRAWL_PARSE_WORKERS=0), repeatable",
    )
    parser.add_argument(
        "--arrivals",
        type=Path,
        help="write each run's requests (seconds from launch, host, path) to this JSON file",
    )
    args = parser.parse_args()
    port = 18000 + os.getpid() % 1000
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(args.hosts), str(args.pages), str(port)],
        stdout=subprocess.PIPE,
    )
    try:
        assert server.stdout is not None
        if server.stdout.readline().strip() != b"ready":
            raise SystemExit("bench: the sites did not start")
        starts = [f"http://{address(i)}:{port}/" for i in range(args.hosts)]
        schedule = float(args.pages - 1)
        print(f"{args.hosts} hosts x {args.pages} pages; schedule {schedule:.0f} s")
        if args.trawl_env:
            print("Trawl with " + " ".join(args.trawl_env))
        crawlers = {"Trawl": lambda s: run_trawl(s, args.trawl_env), "Scrapy": run_scrapy}
        timelines: dict[str, list[tuple[float, str, str]]] = {}
        for round_ in range(1, args.rounds + 1):
            for name, crawl in crawlers.items():
                if args.only and name.lower() != args.only:
                    continue
                before = load()
                run = crawl(starts)
                run.arrivals = arrivals(port)
                timelines[f"{name} {round_}"] = [
                    (round(when - run.launched, 4), host, path) for when, host, path in run.arrivals
                ]
                print(
                    f"round {round_} {name:7} {run.seconds:6.1f} s"
                    f" ({run.seconds / schedule:.2f}x schedule)"
                    f"  {run.pages} pages  {run.pages / run.seconds:6.1f} pages/s"
                    f"  {run.cpu / max(1, run.pages) * 1000:5.1f} CPU-ms/page"
                    f"  {run.cpu:5.1f} CPU-s"
                    f"\n    peak memory: largest process {run.peak_mb:.0f} MB, tree RSS"
                    f" {run.tree_rss_mb:.0f} MB, tree PSS {run.tree_pss_mb:.0f} MB"
                    f"\n    {run.phases()}; {run.gaps()}"
                    f"\n    {run.schedule()}"
                    f"\n    {before} before, {load()} after",
                    flush=True,
                )
    finally:
        server.terminate()
        server.wait(timeout=10)
    if args.arrivals is not None:
        args.arrivals.write_text(json.dumps(timelines))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--serve":
        serve(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit(main())
