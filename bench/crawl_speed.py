"""Crawl benchmark: Trawl against Scrapy on a local copy of the PostgreSQL 15 docs.

Both crawlers run as subprocesses against one static server in its own process, in
alternating order, and the result is appended to bench/RESULTS.md. Only the ratio
means anything: absolute seconds depend on whatever else the machine is doing.

The server is nginx when it is installed (Debian: ``apt-get install nginx-light``),
started by the bench with a config of its own in a temporary directory, one worker
process, keep-alive on: it serves thousands of pages a second on one core's sliver,
so the bench measures the crawlers. Python's ``http.server`` (``--server python``,
and the fallback without nginx) opens a connection per request and costs about a
tenth of a core at these rates, which both crawlers then share with it.

    .venv/bin/python bench/crawl_speed.py [--rounds N] [--server nginx|python] [--quick]
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
SITE = ROOT.parent / "shared" / "data" / "site-postgresql-15-docs"
BIN = ROOT / ".venv" / "bin"
RESULTS = BENCH / "RESULTS.md"
TIMEOUT = 900.0  # seconds per crawl: a hung crawler must fail the bench, not stall it
TRAWL_SUMMARY = re.compile(r"^crawl \d+ [\w ()]+: (\d+) fetched")

HEADER = """\
# Benchmark results

`make bench` (`bench/run.py`) appends one section per benchmark run below. Every
figure that matters is a ratio against a peer measured in the same run on the
same machine; absolute times on this 2-core machine are noise.

# Log
"""


@dataclass(frozen=True)
class Run:
    seconds: float
    pages: int
    cpu: float  # user + system seconds of the crawler and every process it started

    @property
    def pages_per_second(self) -> float:
        return self.pages / self.seconds


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


NGINX_CONF = """\
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log stderr error;
events {{ worker_connections 1024; }}
http {{
    include {mime_types};
    default_type application/octet-stream;
    access_log off;
    sendfile on;
    keepalive_timeout 60s;
    keepalive_requests 100000;
    client_body_temp_path {tmp}/temp;
    proxy_temp_path {tmp}/temp;
    fastcgi_temp_path {tmp}/temp;
    uwsgi_temp_path {tmp}/temp;
    scgi_temp_path {tmp}/temp;
    server {{
        listen 127.0.0.1:{port};
        root {root};
    }}
}}
"""
MIME_TYPES = Path("/etc/nginx/mime.types")


def default_server() -> str:
    return "nginx" if shutil.which("nginx") and MIME_TYPES.is_file() else "python"


def server_command(kind: str, root: Path, port: int, tmp: Path) -> list[str]:
    if kind == "python":
        # Python's own server: HTTP/1.0, a new connection per request, one thread each.
        return [sys.executable, "-m", "http.server", "-b", "127.0.0.1", str(port), "-d", str(root)]
    # nginx (Debian's nginx-light), one worker process, keep-alive on, with a config of
    # its own in a temporary directory: no system service is touched.
    (tmp / "temp").mkdir()
    conf = tmp / "nginx.conf"
    conf.write_text(
        NGINX_CONF.format(tmp=tmp, port=port, root=root.resolve(), mime_types=MIME_TYPES)
    )
    return ["nginx", "-c", str(conf), "-p", str(tmp), "-e", "stderr"]


@contextmanager
def static_server(root: Path, kind: str = "python") -> Iterator[str]:
    """Serve ``root`` from another process, so serving never competes for the crawler's GIL."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="trawl-bench-server-") as tmp:
        cmd = server_command(kind, root, port, Path(tmp))
        server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 10
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        raise SystemExit(
                            f"bench: static server ({kind}) on port {port} did not start"
                        ) from None
                    time.sleep(0.05)
            yield f"http://127.0.0.1:{port}"
        finally:
            server.terminate()  # nginx: SIGTERM is its fast shutdown
            server.wait(timeout=10)


def timed(
    cmd: list[str], cwd: Path, env: dict[str, str] | None = None
) -> tuple[float, float, list[str]]:
    """Wall and CPU seconds for the whole process (startup included; CPU counts the
    processes it started too, once they are waited for) and its stdout lines."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"bench: {cmd[0]} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return seconds, cpu, lines


def run_trawl(url: str) -> Run:
    # No TRAWL_* variables and a bare working directory: no stray trawl.toml or env
    # setting may change what is measured.
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAWL_")}
    with tempfile.TemporaryDirectory(prefix="trawl-bench-") as tmp:
        cmd = [str(BIN / "trawl"), "crawl", url, "--data", str(Path(tmp) / "data")]
        cmd += ["--delay", "0", "--concurrency", "16", "--host-concurrency", "16"]
        seconds, cpu, lines = timed(cmd, Path(tmp), env)
    match = next((m for m in map(TRAWL_SUMMARY.match, lines) if m), None)
    if match is None:
        raise SystemExit(f"bench: no trawl summary line in {lines!r}")
    return Run(seconds, int(match.group(1)), cpu)


def run_scrapy(url: str) -> Run:
    seconds, cpu, lines = timed([str(BIN / "python"), str(BENCH / "scrapy_spider.py"), url], ROOT)
    return Run(seconds, int(lines[-1]), cpu)


def git(*args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    return proc.stdout.strip()


def cpus() -> int:
    # What nproc prints: the CPUs this process may use, not the host's total.
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def table(results: dict[str, list[Run]]) -> str:
    rows = [
        "| crawler | work per page | pages | median wall s | median CPU s | median pages/s |",
        "|---|---|---:|---:|---:|---:|",
    ]
    work = {
        "Trawl": "fetch, robots, extract text, store (SQLite), index (Tantivy)",
        "Scrapy": "fetch, robots, extract links; nothing stored or indexed",
    }
    for name, runs in results.items():
        pages = statistics.median(r.pages for r in runs)
        wall = statistics.median(r.seconds for r in runs)
        cpu = statistics.median(r.cpu for r in runs)
        rate = statistics.median(r.pages_per_second for r in runs)
        rows.append(f"| {name} | {work[name]} | {pages:g} | {wall:.2f} | {cpu:.2f} | {rate:.1f} |")
    return "\n".join(rows)


def ratio(results: dict[str, list[Run]]) -> float:
    def rate(name: str) -> float:
        return statistics.median(r.pages_per_second for r in results[name])

    return rate("Trawl") / rate("Scrapy")


def round_ratios(results: dict[str, list[Run]]) -> list[float]:
    """Trawl/Scrapy pages/s within each round: the two ran back to back, under about
    the same load from whatever else shares the machine."""
    return [
        t.pages_per_second / s.pages_per_second
        for t, s in zip(results["Trawl"], results["Scrapy"], strict=True)
    ]


def record(
    results: dict[str, list[Run]], rounds: int, loads: list[float], server: str, note: str
) -> None:
    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    if git("status", "--porcelain", "--", "src"):
        commit += " + uncommitted src/ changes"
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    per_round = ", ".join(f"{r:.2f}" for r in round_ratios(results))
    section = (
        f"\n## Crawl speed, {when}\n\n"
        f"- commit: {commit}\n"
        f"- machine: nproc {cpus()}, Python {platform.python_version()},"
        f" Scrapy {version('scrapy')}, {platform.system()} {platform.machine()};"
        f" load average (1 min) before each crawl: median {statistics.median(loads):.2f},"
        f" min {min(loads):.2f}, max {max(loads):.2f}\n"
        f"- server: {SERVERS[server]}\n"
        f"- {rounds} rounds, alternating order; 16 requests in flight, no delay\n\n"
        f"{table(results)}\n\n"
        f"**Trawl/Scrapy pages/s: {ratio(results):.2f}x** (ratio of the medians; per round:"
        f" {per_round}; median {statistics.median(round_ratios(results)):.2f}x). {note}\n"
    )
    text = RESULTS.read_text() if RESULTS.exists() else HEADER
    RESULTS.write_text(text + section)


SERVERS = {
    "nginx": "nginx (one worker, keep-alive)",
    "python": "python -m http.server (a connection per request)",
}


def main() -> int:
    parser = argparse.ArgumentParser(description="Crawl benchmark: Trawl against Scrapy.")
    parser.add_argument("--rounds", type=int, default=5, help="A/B rounds (default 5).")
    parser.add_argument(
        "--server",
        choices=sorted(SERVERS),
        default=default_server(),
        help="Static server (default: nginx when installed, else python).",
    )
    parser.add_argument(
        "--quick", action="store_true", help="One round, smoke check: RESULTS.md is not touched."
    )
    args = parser.parse_args()
    rounds: int = 1 if args.quick else max(1, args.rounds)

    if not (SITE / "index.html").is_file():
        print(f"bench: skipped, no test site at {SITE}")
        return 0

    # Other work on the box: the best hint of how noisy a run was.
    loads: list[float] = []
    crawlers: dict[str, Callable[[str], Run]] = {"Trawl": run_trawl, "Scrapy": run_scrapy}
    results: dict[str, list[Run]] = {name: [] for name in crawlers}
    print(f"server: {SERVERS[args.server]}", flush=True)
    with static_server(SITE, args.server) as base:
        start = f"{base}/index.html"
        for n in range(rounds):
            # Alternate who goes first, so warm caches and drift favour neither.
            order = list(crawlers) if n % 2 == 0 else list(reversed(crawlers))
            for name in order:
                loads.append(os.getloadavg()[0])
                run = crawlers[name](start)
                results[name].append(run)
                print(
                    f"round {n + 1}/{rounds} {name:6} {run.pages:5} pages"
                    f" {run.seconds:6.2f}s (CPU {run.cpu:5.2f}s)"
                    f" {run.pages_per_second:6.1f} pages/s"
                    f" (load {loads[-1]:.2f})",
                    flush=True,
                )

    pages = {name: {r.pages for r in runs} for name, runs in results.items()}
    note = (
        "Scrapy only fetches and follows links; Trawl also extracts text, stores and"
        " indexes every page, so the ratio is per page of finished work."
    )
    if pages["Trawl"] != pages["Scrapy"]:
        note += f" Page counts differ (Trawl {pages['Trawl']}, Scrapy {pages['Scrapy']})."
    print()
    print(table(results))
    per_round = ", ".join(f"{r:.2f}" for r in round_ratios(results))
    print(f"\nTrawl/Scrapy pages/s: {ratio(results):.2f}x (per round: {per_round})\n{note}")
    if args.quick:
        print("(--quick: not recorded)")
    else:
        record(results, rounds, loads, args.server, note)
        print(f"appended to {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
