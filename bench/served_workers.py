"""`/api/search` with searches in worker processes (``search_workers``) against without,
and another checkout (main) with and without, in interleaved rounds on one crawled
data folder.

    .venv/bin/python bench/served_workers.py --data DIR [--other /work/main/.venv/bin/trawl]
        [--workers 2] [--rounds 3] [--passes 2]

``DIR`` is a crawled PostgreSQL manual (bench/search_latency.py crawls one; any data folder
does). Every server runs with the result cache off (the queries repeat) and no rate limit.
Per server and round: the service bench's 30 queries ``passes`` times with 1 client, then
with 8 clients; the p50/p95 of every round's requests, and the CPU a request costs the
server's whole process tree (its workers included), which the machine's other work moves
far less than wall time. Prints a table; records nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

from crawl_speed import BIN
from service import over_http, percentile, serve


def tree_cpu(root: int) -> tuple[float, float]:
    """CPU seconds (user + system) used so far by ``root`` and every live descendant,
    and by ``root`` alone (its GIL's work: what one process can do a second)."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry.name)
        parents[pid] = int(fields[1])
        times[pid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    tree, grew = {root}, True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= more
        grew = bool(more)
    return sum(times.get(pid, 0.0) for pid in tree), times.get(root, 0.0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--other", default="/work/main/.venv/bin/trawl", help="main's trawl")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--passes", type=int, default=2)
    args = parser.parse_args()
    ours = str(BIN / "trawl")
    variants = {
        "main": (args.other, None),
        f"main, search_workers {args.workers}": (args.other, args.workers),
        "branch, search_workers 0": (ours, 0),
        f"branch, search_workers {args.workers}": (ours, args.workers),
    }
    runs: dict[tuple[str, int], list[tuple[list[float], float, float, float]]] = {}
    loads = []
    for n in range(args.rounds):
        names = list(variants)
        order = names[n % len(names) :] + names[: n % len(names)]  # a new first each round
        for name in order:
            trawl, workers = variants[name]
            settings = {"search_cache_size": "0"}
            if workers is not None:
                settings["search_workers"] = str(workers)
            server, base = serve(Path(args.data), trawl, **settings)
            try:
                over_http(base, 8, 1)  # warm: imports, the index, the workers' own readers
                for clients in (1, 8):
                    loads.append(os.getloadavg()[0])
                    before, own_before = tree_cpu(server.pid)
                    latencies, rate = over_http(base, clients, args.passes)
                    after, own_after = tree_cpu(server.pid)
                    cpu, own = after - before, own_after - own_before
                    runs.setdefault((name, clients), []).append((latencies, rate, cpu, own))
                    print(
                        f"round {n + 1} {name}, {clients} clients: p50"
                        f" {percentile(latencies, 0.5) * 1000:.1f} p95"
                        f" {percentile(latencies, 0.95) * 1000:.1f} ms, {rate:.0f}/s,"
                        f" {cpu / len(latencies) * 1000:.2f} CPU-ms/request"
                        f" ({own / len(latencies) * 1000:.2f} the server process),"
                        f" load {loads[-1]:.1f}",
                        flush=True,
                    )
            finally:
                server.terminate()
                server.wait(timeout=30)
    print(f"\nload average {min(loads):.1f}-{max(loads):.1f}; {args.rounds} rounds interleaved\n")
    print(
        "| server | clients | requests | p50 ms | p95 ms | requests/s | CPU-ms/request"
        " | of which the server process |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for (name, clients), rounds in runs.items():
        every = [x for latencies, _, _, _ in rounds for x in latencies]
        rate = statistics.median(r for _, r, _, _ in rounds)
        cpu = sum(c for _, _, c, _ in rounds) / len(every) * 1000
        own = sum(o for _, _, _, o in rounds) / len(every) * 1000
        print(
            f"| {name} | {clients} | {len(every)} | {percentile(every, 0.5) * 1000:.1f}"
            f" | {percentile(every, 0.95) * 1000:.1f} | {rate:.0f} | {cpu:.2f} | {own:.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
