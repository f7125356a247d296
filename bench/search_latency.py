"""Search latency as users meet it: results pages with snippets, in-process and served.

    .venv/bin/python bench/search_latency.py [--data DIR] [--quick] [--served-only]
        [--search-workers N]

- SciFact (5,183 abstracts, 300 test queries x 3 rounds): a results page of 10 through
  ``search()`` (ranking, stored pages, snippets: what the API answers) beside bm25s's
  top 10 ids, interleaved one query at a time. Target: p95 under 5 ms.
- The PostgreSQL manual (crawled into a temporary folder, or ``--data`` given): the
  service bench's 30 queries through ``search()`` and through ``trawl serve``'s
  ``/api/search`` with 1 and with 8 concurrent clients. Targets: p95 under 15 ms with one
  client, under 60 ms with 8. Beside wall time, the CPU a request costs (this process for
  ``search()``, the server process over HTTP), which a loaded machine barely moves.

Appends a section to bench/RESULTS.md (not with --quick).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from crawl_speed import SITE, static_server
from relevance import IR, bm25s_ids, bm25s_index
from service import crawl_manual, in_process, over_http, percentile, run_and_record, serve
from trawl.evaluation.collections import read_beir
from trawl.evaluation.runner import build_index
from trawl.index.tantivy_index import IndexReader
from trawl.search.request import SearchRequest
from trawl.search.searcher import search
from trawl.settings import Settings


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def ms(values: list[float], q: float) -> str:
    return f"{percentile(values, q) * 1000:.2f}"


def scifact(rounds: int) -> str:
    collection = read_beir(IR / "scifact")
    settings = Settings()
    ids = [d[0] for d in collection.docs]
    ours: list[float] = []
    theirs: list[float] = []
    with tempfile.TemporaryDirectory(prefix="trawl-bench-") as tmp:
        build_index(Path(tmp) / "index", collection.docs)
        retriever = bm25s_index(collection)
        for _ in range(rounds):
            reader = IndexReader(Path(tmp) / "index")  # fresh: nothing built by a round before
            for n, text in enumerate(collection.queries.values()):
                pair: list[tuple[list[float], Callable[[], object]]] = [
                    (ours, partial(search, reader, SearchRequest(text, per_page=10), settings)),
                    (theirs, partial(bm25s_ids, retriever, ids, text, 10)),
                ]
                for latencies, action in pair if n % 2 == 0 else pair[::-1]:
                    latencies.append(timed(action))
    return "\n".join(
        [
            f"SciFact, {len(collection.queries)} queries x {rounds} rounds, one at a time:",
            "",
            "| | requests | p50 ms | p95 ms | p99 ms |",
            "|---|---:|---:|---:|---:|",
            f"| Trawl `search()`, a results page of 10 with snippets | {len(ours)}"
            f" | {ms(ours, 0.5)} | {ms(ours, 0.95)} | {ms(ours, 0.99)} |",
            f"| bm25s top-10 ids | {len(theirs)} | {ms(theirs, 0.5)} | {ms(theirs, 0.95)}"
            f" | {ms(theirs, 0.99)} |",
        ]
    )


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system, all threads) a process has used so far: the server's
    cost of a request, which the machine's other work barely moves, unlike wall time."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_ms(seconds: float, requests: int) -> str:
    return f"{seconds / requests * 1000:.2f}"


def manual(data: Path | None, passes: int, search_workers: int = 0) -> str:
    with tempfile.TemporaryDirectory(prefix="trawl-bench-") as tmp:
        if data is None:
            data = Path(tmp) / "data"
            with static_server(SITE) as base:
                crawl_manual(data, base)
        cpu_before = time.process_time()
        local = in_process(data, passes)
        # in_process warms the reader with one pass of its own: its share taken out.
        local_cpu = (time.process_time() - cpu_before) * passes / (passes + 1)
        runs = {}
        # The queries repeat (a warm-up pass, then `passes` each): with the result cache
        # most answers would be look-ups, so the figures that count are without it.
        for cache in ("0", "512"):
            server, base = serve(data, search_cache_size=cache, search_workers=str(search_workers))
            try:
                over_http(base, 1, 1)  # warm up
                for n in (1, 8):
                    before = process_cpu(server.pid)
                    latencies, rate = over_http(base, n, passes)
                    runs[n, cache] = (latencies, rate, process_cpu(server.pid) - before)
            finally:
                server.terminate()
                server.wait(timeout=30)
    rows = [
        "| how | clients | requests | p50 ms | p95 ms | requests/s | CPU ms/request |",
        "|---|---:|---:|---:|---:|---:|---:|",
        f"| in-process `search()` | 1 | {len(local)} | {ms(local, 0.5)} | {ms(local, 0.95)}"
        f" | {len(local) / sum(local):.0f} | {cpu_ms(local_cpu, len(local))} |",
    ]
    for (clients, cache), (latencies, rate, cpu) in runs.items():
        how = "HTTP `/api/search`" + ("" if cache == "0" else ", result cache on (repeats)")
        if search_workers:  # their CPU is not counted: bench/served_workers.py counts it
            how += f", search_workers {search_workers} (CPU: the server process alone)"
        rows.append(
            f"| {how} | {clients} | {len(latencies)} | {ms(latencies, 0.5)}"
            f" | {ms(latencies, 0.95)} | {rate:.0f} | {cpu_ms(cpu, len(latencies))} |"
        )
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="A crawled PostgreSQL manual to reuse.")
    parser.add_argument("--quick", action="store_true", help="Fewer passes; nothing recorded.")
    parser.add_argument("--served-only", action="store_true", help="Skip SciFact.")
    parser.add_argument("--passes", type=int, help="Passes over the manual's queries.")
    parser.add_argument(
        "--search-workers", type=int, default=0, help="The server's search_workers setting."
    )
    args = parser.parse_args()
    load = os.getloadavg()[0]
    parts = [
        (
            "The PostgreSQL manual, served",
            partial(
                manual, args.data, args.passes or (1 if args.quick else 5), args.search_workers
            ),
        ),
    ]
    if not args.served_only:
        parts.insert(
            0, ("SciFact: a results page against bm25s", partial(scifact, 1 if args.quick else 3))
        )
    return run_and_record(
        "Search latency",
        parts,
        quick=args.quick,
        load=load,
        machine_note=" (shared with other work)",
    )


if __name__ == "__main__":
    sys.exit(main())
