"""Crawl benchmark: 1 against 2 `trawl worker` processes on one PostgreSQL.

The PostgreSQL 15 manual is served from loopback by a static server in its own
process; a throwaway PostgreSQL (initdb in a temporary folder, as the tests do)
holds the shared store, a fresh database per run. Each run is timed from the
first worker's start to the last worker's exit. The embedded crawl (`trawl
crawl`, SQLite, in-memory frontier) runs beside them as the reference. The
static server's request log counts pages fetched more than once.

    .venv/bin/python bench/crawl_workers.py [--rounds N] [--quick]

On this 2-core machine the workers, their parser processes, PostgreSQL and the
static server all share two cores: the ratio says what a second worker buys
when nothing is added but a process, not what a second machine would.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT / "tests"))

from postgres_server import PostgresServer, server_binaries  # noqa: E402

SITE = ROOT.parent / "shared" / "data" / "site-postgresql-15-docs"
BIN = ROOT / ".venv" / "bin"
RESULTS = BENCH / "RESULTS.md"
TIMEOUT = 900.0
CONCURRENCY = 16  # requests in flight per worker, as in crawl_speed.py
REQUEST = re.compile(r'"GET (\S+) HTTP/[\d.]+"')
HOUSEKEEPING = {"/robots.txt", "/sitemap.xml", "/sitemap_index.xml"}


@dataclass(frozen=True)
class Run:
    seconds: float
    pages: int  # distinct page paths requested
    repeats: int  # page requests beyond the first for the same path

    @property
    def pages_per_second(self) -> float:
        return self.pages / self.seconds


class StaticServer:
    """``python -m http.server`` in its own process; its stderr is the request log."""

    def __init__(self, root: Path, log: Path) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port: int = s.getsockname()[1]
        self._log_path = log
        self._log = log.open("w")
        cmd = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(self.port)]
        self._process = subprocess.Popen(
            [*cmd, "-d", str(root)], stdout=subprocess.DEVNULL, stderr=self._log
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self._process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("bench: static server did not start") from None
                time.sleep(0.05)

    def mark(self) -> int:
        """The log's length now: requests after this mark belong to the next run."""
        self._log.flush()
        return self._log_path.stat().st_size

    def pages_since(self, mark: int) -> Counter[str]:
        time.sleep(0.2)  # the server writes its log line after answering
        with self._log_path.open() as f:
            f.seek(mark)
            paths = REQUEST.findall(f.read())
        return Counter(p for p in paths if p not in HOUSEKEEPING)

    def stop(self) -> None:
        self._process.terminate()
        self._process.wait(timeout=10)
        self._log.close()


@contextmanager
def postgres() -> Iterator[PostgresServer]:
    bindir = server_binaries()
    if bindir is None:
        raise SystemExit("bench: PostgreSQL server binaries not found (pg_config --bindir)")
    server = PostgresServer(bindir).start()
    try:
        yield server
    finally:
        server.stop()


def clean_env() -> dict[str, str]:
    # No TRAWL_* variables: no stray setting may change what is measured.
    return {k: v for k, v in os.environ.items() if not k.startswith("TRAWL_")}


def run_workers(count: int, url: str, store: str, site: StaticServer) -> Run:
    mark = site.mark()
    with tempfile.TemporaryDirectory(prefix="trawl-bench-") as tmp:
        cmd = [str(BIN / "trawl"), "worker", url, "--store", store, "--data", tmp]
        cmd += ["--delay", "0", "--concurrency", str(CONCURRENCY)]
        cmd += ["--host-concurrency", str(CONCURRENCY * count)]
        started = time.perf_counter()
        workers = [
            subprocess.Popen(
                cmd, cwd=tmp, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            for _ in range(count)
        ]
        for worker in workers:
            _, errors = worker.communicate(timeout=TIMEOUT)
            if worker.returncode != 0:
                raise SystemExit(f"bench: worker failed:\n{errors.decode()[-2000:]}")
        seconds = time.perf_counter() - started
    return _run(seconds, site.pages_since(mark))


def run_embedded(url: str, site: StaticServer) -> Run:
    mark = site.mark()
    with tempfile.TemporaryDirectory(prefix="trawl-bench-") as tmp:
        cmd = [str(BIN / "trawl"), "crawl", url, "--data", str(Path(tmp) / "data")]
        cmd += ["--delay", "0", "--concurrency", str(CONCURRENCY)]
        cmd += ["--host-concurrency", str(CONCURRENCY)]
        started = time.perf_counter()
        proc = subprocess.run(
            cmd, cwd=tmp, env=clean_env(), capture_output=True, timeout=TIMEOUT, check=False
        )
        seconds = time.perf_counter() - started
        if proc.returncode != 0:
            raise SystemExit(f"bench: trawl crawl failed:\n{proc.stderr.decode()[-2000:]}")
    return _run(seconds, site.pages_since(mark))


def _run(seconds: float, requests: Counter[str]) -> Run:
    return Run(seconds, len(requests), sum(requests.values()) - len(requests))


def git(*args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    return proc.stdout.strip()


def cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


WORK = {
    "1 worker": "`trawl worker`, PostgreSQL store, shared frontier",
    "2 workers": "two `trawl worker` processes, one PostgreSQL",
    "embedded": "`trawl crawl`, SQLite store, in-memory frontier, index",
}


def rate(runs: list[Run]) -> float:
    return statistics.median(r.pages_per_second for r in runs)


def table(results: dict[str, list[Run]]) -> str:
    rows = [
        "| crawl | how | pages | fetched twice | median wall s | median pages/s |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for name, runs in results.items():
        pages = statistics.median(r.pages for r in runs)
        repeats = max(r.repeats for r in runs)
        wall = statistics.median(r.seconds for r in runs)
        rows.append(
            f"| {name} | {WORK[name]} | {pages:g} | {repeats} | {wall:.2f} | {rate(runs):.1f} |"
        )
    return "\n".join(rows)


def record(results: dict[str, list[Run]], rounds: int, load: float) -> None:
    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    if git("status", "--porcelain", "--", "src"):
        commit += " + uncommitted src/ changes"
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    two = rate(results["2 workers"]) / rate(results["1 worker"])
    embedded = rate(results["1 worker"]) / rate(results["embedded"])
    section = (
        f"\n## Crawl workers on PostgreSQL, {when}\n\n"
        f"- commit: {commit}\n"
        f"- machine: nproc {cpus()}, Python {platform.python_version()},"
        f" {platform.system()} {platform.machine()}, load average {load:.2f} at start\n"
        f"- {rounds} rounds, rotating order; {CONCURRENCY} requests in flight per worker,"
        " no delay; PostgreSQL 15 on loopback, fresh database per run\n\n"
        f"{table(results)}\n\n"
        f"**2 workers / 1 worker pages/s: {two:.2f}x**; 1 worker on PostgreSQL / embedded"
        f" SQLite crawl: {embedded:.2f}x. Every process (workers, parsers, PostgreSQL, the"
        " static server) shares the same two cores.\n"
    )
    RESULTS.write_text(RESULTS.read_text() + section)


def main() -> int:
    parser = argparse.ArgumentParser(description="Crawl benchmark: 1 against 2 workers.")
    parser.add_argument("--rounds", type=int, default=3, help="Rounds (default 3).")
    parser.add_argument(
        "--quick", action="store_true", help="One round, smoke check: RESULTS.md is not touched."
    )
    args = parser.parse_args()
    rounds: int = 1 if args.quick else max(1, args.rounds)
    if not (SITE / "index.html").is_file():
        print(f"bench: skipped, no test site at {SITE}")
        return 0

    load = os.getloadavg()[0]
    results: dict[str, list[Run]] = {name: [] for name in WORK}
    with tempfile.TemporaryDirectory(prefix="trawl-bench-log-") as logs, postgres() as pg:
        site = StaticServer(SITE, Path(logs) / "requests.log")
        try:
            start = f"http://127.0.0.1:{site.port}/index.html"
            crawls: dict[str, Callable[[], Run]] = {
                "1 worker": lambda: run_workers(1, start, pg.new_database(), site),
                "2 workers": lambda: run_workers(2, start, pg.new_database(), site),
                "embedded": lambda: run_embedded(start, site),
            }
            names = list(crawls)
            for n in range(rounds):
                # Rotate who goes first, so warm caches and drift favour none.
                for name in names[n % 3 :] + names[: n % 3]:
                    run = crawls[name]()
                    results[name].append(run)
                    print(
                        f"round {n + 1}/{rounds} {name:9} {run.pages:5} pages"
                        f" ({run.repeats} twice) {run.seconds:6.2f}s"
                        f" {run.pages_per_second:6.1f} pages/s",
                        flush=True,
                    )
        finally:
            site.stop()

    print()
    print(table(results))
    if args.quick:
        print("(--quick: not recorded)")
    else:
        record(results, rounds, load)
        print(f"appended to {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
