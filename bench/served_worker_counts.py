"""`/api/search` from this checkout's `trawl serve` with search_workers 0, 1, 2 and the
default (-1, one per core), in interleaved rounds on one crawled data folder.

    .venv/bin/python bench/served_worker_counts.py --data DIR [--rounds 2] [--passes 1]

``DIR`` is a crawled PostgreSQL manual (bench/search_latency.py crawls one). Each round
starts each server in turn (a new first each round), warms it with one pass of 8
clients, then times one client and 8 clients; the result cache is off. Prints a row per
setting and client count with the load average seen, which moves these figures more
than anything on a shared machine: compare within one run.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from service import over_http, percentile, serve

VARIANTS: dict[str, str | None] = {"0": "0", "1": "1", "2": "2", "default (-1)": None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--passes", type=int, default=1)
    args = parser.parse_args()
    runs: dict[tuple[str, int], list[tuple[list[float], float, float]]] = {}
    for n in range(args.rounds):
        names = list(VARIANTS)
        names = names[n % len(names) :] + names[: n % len(names)]
        for name in names:
            settings = {"search_cache_size": "0"}
            workers = VARIANTS[name]
            if workers is not None:
                settings["search_workers"] = workers
            server, base = serve(args.data, **settings)
            try:
                over_http(base, 8, 1)  # imports, the index, the workers' own readers
                for clients in (1, 8):
                    load = os.getloadavg()[0]
                    latencies, rate = over_http(base, clients, args.passes)
                    runs.setdefault((name, clients), []).append((latencies, rate, load))
                    print(
                        f"round {n + 1} search_workers {name}, {clients} clients: p50"
                        f" {percentile(latencies, 0.5) * 1000:.1f} p95"
                        f" {percentile(latencies, 0.95) * 1000:.1f} ms, {rate:.0f}/s,"
                        f" load {load:.1f}",
                        flush=True,
                    )
            finally:
                server.terminate()
                server.wait(20)
    print("\n| search_workers | clients | requests | p50 ms | p95 ms | requests/s | load |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for (name, clients), found in runs.items():
        latencies = [x for run in found for x in run[0]]
        rate = sum(run[1] for run in found) / len(found)
        loads = [run[2] for run in found]
        print(
            f"| {name} | {clients} | {len(latencies)} |"
            f" {percentile(latencies, 0.5) * 1000:.1f} |"
            f" {percentile(latencies, 0.95) * 1000:.1f} | {rate:.0f} |"
            f" {min(loads):.1f}-{max(loads):.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
