"""Service benchmarks: search over the HTTP API against in-process search, and the
SEO report's queries on a 100,000-row crawl with and without its sort indexes.

    .venv/bin/python bench/service.py [--quick]

API: the PostgreSQL manual is crawled into a temporary data folder, then the
same queries are answered (a) by calling the searcher in this process and
(b) by `trawl serve` over HTTP, with 1 and with 8 concurrent clients.
Report: 100,000 synthetic pages; each report query is timed on the store as
migration 5 leaves it and on a copy without the sort indexes (the peer).
Appends a section to bench/RESULTS.md (not with --quick).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from crawl_speed import BIN, RESULTS, ROOT, SITE, cpus, free_port, git, static_server
from trawl.index.tantivy_index import IndexReader
from trawl.records import ReportQuery
from trawl.search.searcher import search
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

QUERIES = (
    "create index", "vacuum", "write ahead log", "json", "foreign key", "trigger",
    "replication slot", "window function", "explain analyze", "sequence", "partition",
    "autovacuum", "role", "tablespace", "cursor", "pg_dump", "full text search",
    "transaction isolation", "hash join", "collation", "listen notify", "copy from",
    "materialized view", "array", "timestamp with time zone", "lock", "extension",
    "checkpoint", "index only scan", "plpgsql",
)  # fmt: skip
SORT_INDEXES = (
    "pages_status", "pages_indexability", "pages_title", "pages_word_count", "pages_depth",
    "pages_inlinks", "pages_lang", "pages_published", "pages_modified", "pages_fetched_at",
)  # fmt: skip
ROWS = 100_000


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def crawl_manual(data: Path, base: str) -> None:
    cmd = [str(BIN / "trawl"), "crawl", f"{base}/index.html", "--data", str(data)]
    cmd += ["--delay", "0", "--concurrency", "16", "--host-concurrency", "16"]
    subprocess.run(cmd, check=True, capture_output=True, timeout=600)


def in_process(data: Path, passes: int) -> list[float]:
    reader = IndexReader(data / "index")
    settings = Settings(data=data)
    for q in QUERIES:  # warm the reader, as the server is warm
        search(reader, q, settings)
    latencies = []
    for _ in range(passes):
        for q in QUERIES:
            started = time.perf_counter()
            search(reader, q, settings)
            latencies.append(time.perf_counter() - started)
    return latencies


def over_http(base: str, clients: int, passes: int) -> tuple[list[float], float]:
    """Per-request latencies and requests per second with ``clients`` threads."""
    latencies: list[float] = []
    lock = threading.Lock()

    def client(seed: int) -> None:
        order = list(QUERIES) * passes
        random.Random(seed).shuffle(order)
        mine = []
        for q in order:
            url = f"{base}/api/search?" + urllib.parse.urlencode({"q": q})
            started = time.perf_counter()
            with urllib.request.urlopen(url, timeout=30) as r:
                r.read()
            mine.append(time.perf_counter() - started)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, len(latencies) / (time.perf_counter() - started)


def serve(
    data: Path, trawl: str | Path = BIN / "trawl", **settings: str
) -> tuple[subprocess.Popen[bytes], str]:
    """``trawl serve`` on ``data``, no rate limit, with ``settings`` (as TRAWL_ variables);
    ``trawl`` is the command (another checkout's, for an A/B)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAWL_")}
    env["TRAWL_SEARCH_RATE_LIMIT"] = "100000000/minute"
    env.update({f"TRAWL_{name.upper()}": value for name, value in settings.items()})
    cmd = [str(trawl), "serve", "--data", str(data), "--port", str(port)]
    server = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120  # a loaded machine starts Python slowly
    while True:
        try:
            urllib.request.urlopen(base + "/healthz", timeout=2).read()
            return server, base
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()  # not left listening after the bench ends
                raise SystemExit("bench: trawl serve did not start") from None
            time.sleep(0.1)


def api_bench(passes: int) -> str:
    if not (SITE / "index.html").is_file():
        return f"(skipped: no test site at {SITE})"
    with tempfile.TemporaryDirectory(prefix="trawl-bench-") as tmp:
        data = Path(tmp) / "data"
        with static_server(SITE) as base:
            crawl_manual(data, base)
        local = in_process(data, passes)
        server, base = serve(data)
        try:
            over_http(base, 1, 1)  # warm up
            runs = {n: over_http(base, n, passes) for n in (1, 8)}
        finally:
            server.terminate()
            server.wait(timeout=30)
    p50 = percentile(local, 0.5)
    rows = [
        "| how | clients | requests | p50 ms | p95 ms | requests/s | p50 vs in-process |",
        "|---|---:|---:|---:|---:|---:|---:|",
        f"| in-process `search()` | 1 | {len(local)} | {p50 * 1000:.2f}"
        f" | {percentile(local, 0.95) * 1000:.2f} | {len(local) / sum(local):.0f} | 1.00x |",
    ]
    for clients, (lat, rate) in runs.items():
        rows.append(
            f"| HTTP `/api/search` | {clients} | {len(lat)} | {percentile(lat, 0.5) * 1000:.2f}"
            f" | {percentile(lat, 0.95) * 1000:.2f} | {rate:.0f}"
            f" | {percentile(lat, 0.5) / p50:.2f}x |"
        )
    return "\n".join(rows)


def fill_store(path: Path) -> None:
    SQLiteStore(path).close()  # the schema, as migrations leave it
    db = sqlite3.connect(path)
    rng = random.Random(7)
    labels = ("Indexable", "Redirected", "Client Error", "Noindex", "Canonicalised")
    rows = []
    for n in range(ROWS):
        status = rng.choice((200,) * 17 + (301, 404, 500))
        rows.append(
            (
                f"https://site{n % 20}.example/section{n % 300}/page-{n}.html",
                f"site{n % 20}.example",
                status,
                rng.randint(0, 12),
                1.7e9 + n,
                f"Page {rng.randint(0, 10**6)} about topic {n % 977}",
                rng.randint(0, 5000),
                rng.choice(("en", "de", "fr", "sv")),
                rng.choice(labels),
                rng.randint(0, 400),
                f"20{rng.randint(10, 25)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}",
            )
        )
    with db:
        db.executemany(
            "INSERT INTO pages (url, host, status, depth, fetched_at, title, word_count, lang,"
            " indexability, inlinks, modified) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    db.close()


REPORT_QUERIES: dict[str, ReportQuery] = {
    "first page by URL": ReportQuery(),
    "words, most first": ReportQuery(sort="word_count", descending=True),
    "title, page 500": ReportQuery(sort="title", offset=49_900),
    "4xx by inlinks": ReportQuery(status="4xx", sort="inlinks", descending=True),
    "modified, newest": ReportQuery(sort="modified", descending=True),
    "URL contains text": ReportQuery(text="topic 42", sort="depth"),
}


def time_report(path: Path, repeats: int) -> dict[str, float]:
    store = SQLiteStore(path)
    medians = {}
    for name, query in REPORT_QUERIES.items():
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            store.report_pages(query)
            times.append(time.perf_counter() - started)
        medians[name] = statistics.median(times)
    store.close()
    return medians


def report_bench(repeats: int) -> str:
    with tempfile.TemporaryDirectory(prefix="trawl-bench-") as tmp:
        indexed = Path(tmp) / "indexed.sqlite"
        fill_store(indexed)
        bare = Path(tmp) / "bare.sqlite"
        shutil.copy(indexed, bare)
        db = sqlite3.connect(bare)
        for name in SORT_INDEXES:
            db.execute(f"DROP INDEX {name}")
        db.close()
        with_indexes = time_report(indexed, repeats)
        without = time_report(bare, repeats)
    rows = [
        "| query (count + 100 rows) | with sort indexes ms | without ms | speed-up |",
        "|---|---:|---:|---:|",
    ]
    for name in REPORT_QUERIES:
        a, b = with_indexes[name], without[name]
        rows.append(f"| {name} | {a * 1000:.1f} | {b * 1000:.1f} | {b / a:.1f}x |")
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Fewer passes; nothing recorded.")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    parts: list[tuple[str, Callable[[], str]]] = [
        ("API search latency", lambda: api_bench(1 if args.quick else 5)),
        (f"Report queries on {ROWS:,} pages", lambda: report_bench(3 if args.quick else 7)),
    ]
    return run_and_record("Service", parts, quick=args.quick, load=load)


def run_and_record(
    heading: str,
    parts: Sequence[tuple[str, Callable[[], str]]],
    *,
    quick: bool,
    load: float,
    machine_note: str = "",
) -> int:
    """Run each part, print its table, and append them to RESULTS.md under ``heading``
    (not with --quick). Shared by this bench and search_latency.py."""
    results = []
    for title, run in parts:
        print(f"-- {title}", flush=True)
        table = run()
        print(table, flush=True)
        results.append((title, table))
    if quick:
        print("(--quick: not recorded)")
        return 0
    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    if git("status", "--porcelain", "--", "src"):
        commit += " + uncommitted src/ changes"
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    section = (
        f"\n## {heading}, {when}\n\n- commit: {commit}\n"
        f"- machine: nproc {cpus()}, Python {platform.python_version()},"
        f" load average {load:.2f} at start{machine_note}\n"
    )
    for title, table in results:
        section += f"\n### {title}\n\n{table}\n"
    RESULTS.write_text(RESULTS.read_text() + section)
    print(f"appended to {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
