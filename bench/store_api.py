"""API latency on both stores: the store opened for each request (before) or once (after).

    .venv/bin/python bench/store_api.py --before DIR [--store sqlite|postgres|both]
        [--rounds N] [--quick]

``DIR`` is a checkout of the code to compare with (e.g. ``git worktree add --detach
/work/wt-store-base main``); its ``src`` runs in this checkout's virtual environment.
The PostgreSQL manual is crawled once per store (SQLite in the data folder, or a
throwaway PostgreSQL server started as the tests start theirs, ``pg_config
--bindir``). Then two ``trawl serve`` run at once on the same data, one from each
checkout, with ``search_requires_key`` on, and every round measures both in turn
(before, after, before, after...): a loaded, shared machine slows both alike, so the
ratios of one run mean more than its milliseconds.

Endpoints, each with an API key in X-API-Key: ``/api/search`` (the key looked up in
the store, then the index searched) and ``/api/admin/sites`` (the key, then a store
read). 1 and 8 concurrent clients, the service bench's 30 queries each per round.

Appends a section to bench/RESULTS.md (not with --quick).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

from crawl_speed import BIN, ROOT, SITE, free_port, static_server
from service import QUERIES, percentile, run_and_record
from trawl.server.auth import create_key
from trawl.settings import Settings
from trawl.store import open_store

sys.path.insert(0, str(ROOT / "tests"))
from postgres_server import PostgresServer, server_binaries

ENDPOINTS = ("/api/search", "/api/admin/sites")
CLIENTS = (1, 8)


def _env(data: Path, store: str, src: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAWL_")}
    env["PYTHONPATH"] = str(src)
    env["TRAWL_STORE"] = store
    env["TRAWL_SEARCH_REQUIRES_KEY"] = "true"
    env["TRAWL_SEARCH_RATE_LIMIT"] = "100000000/minute"
    env["TRAWL_ADMIN_RATE_LIMIT"] = "100000000/minute"
    env["TRAWL_DATA"] = str(data)
    return env


def _trawl() -> list[str]:
    # This checkout's environment; the code is PYTHONPATH's (it comes first).
    return [str(BIN / "python"), "-c", "import sys; from trawl.cli import main; sys.exit(main())"]


def crawl(data: Path, store: str, base: str) -> None:
    cmd = [*_trawl(), "crawl", f"{base}/index.html", "--data", str(data)]
    cmd += ["--delay", "0", "--concurrency", "16", "--host-concurrency", "16"]
    env = _env(data, store, ROOT / "src")
    subprocess.run(cmd, check=True, capture_output=True, timeout=1200, env=env)


@contextlib.contextmanager
def served(data: Path, store: str, src: Path) -> Iterator[str]:
    port = free_port()
    cmd = [*_trawl(), "serve", "--data", str(data), "--port", str(port)]
    env = _env(data, store, src)
    server = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                urllib.request.urlopen(base + "/opensearch.xml", timeout=2).read()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    err = server.stderr.read().decode() if server.stderr else ""
                    raise SystemExit(f"bench: trawl serve ({src}) did not start\n{err}") from None
                time.sleep(0.2)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)


def round_of(base: str, endpoint: str, key: str, clients: int, seed: int) -> list[float]:
    latencies: list[float] = []
    lock = threading.Lock()

    def client(n: int) -> None:
        order = list(QUERIES)
        random.Random(seed * 100 + n).shuffle(order)
        mine = []
        for q in order:
            url = base + endpoint
            if endpoint == "/api/search":
                url += "?" + urllib.parse.urlencode({"q": q})
            request = urllib.request.Request(url, headers={"X-API-Key": key})
            started = time.perf_counter()
            with urllib.request.urlopen(request, timeout=60) as r:
                r.read()
            mine.append(time.perf_counter() - started)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies


def compare(data: Path, store: str, before: Path, rounds: int) -> list[str]:
    settings = Settings(data=data, store=store)
    opened = open_store(settings)
    try:
        key = create_key(opened, "bench")[1]
    finally:
        opened.close()
    sides = {"before": before / "src", "after": ROOT / "src"}
    found: dict[tuple[str, str, int], list[float]] = {}
    with served(data, store, sides["before"]) as old, served(data, store, sides["after"]) as new:
        bases = {"before": old, "after": new}
        for base in bases.values():  # warm both: index readers, connections, caches
            for endpoint in ENDPOINTS:
                round_of(base, endpoint, key, 8, 0)
        for n in range(rounds):
            for endpoint in ENDPOINTS:
                for clients in CLIENTS:
                    order = list(bases) if n % 2 == 0 else list(reversed(bases))
                    for side in order:
                        got = round_of(bases[side], endpoint, key, clients, n + 1)
                        found.setdefault((side, endpoint, clients), []).extend(got)
    rows = []
    for endpoint in ENDPOINTS:
        for clients in CLIENTS:
            b = found[("before", endpoint, clients)]
            a = found[("after", endpoint, clients)]
            b50, b95 = percentile(b, 0.5) * 1000, percentile(b, 0.95) * 1000
            a50, a95 = percentile(a, 0.5) * 1000, percentile(a, 0.95) * 1000
            rows.append(
                f"| `{endpoint}` | {clients} | {len(a)} | {b50:.2f} | {b95:.2f} | {a50:.2f}"
                f" | {a95:.2f} | {a50 / b50:.2f}x | {a95 / b95:.2f}x |"
            )
    return rows


def bench(kind: str, before: Path, rounds: int) -> str:
    if not (SITE / "index.html").is_file():
        return f"(skipped: no test site at {SITE})"
    header = [
        "| endpoint | clients | requests each | before p50 ms | before p95 ms | after p50 ms"
        " | after p95 ms | p50 after/before | p95 after/before |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    with tempfile.TemporaryDirectory(prefix="trawl-bench-") as tmp:
        data = Path(tmp) / "data"
        if kind == "sqlite":
            with static_server(SITE) as base:
                crawl(data, "", base)
            return "\n".join(header + compare(data, "", before, rounds))
        bindir = server_binaries()
        if bindir is None:
            return "(skipped: no PostgreSQL server binaries, pg_config --bindir)"
        server = PostgresServer(bindir).start()
        try:
            url = server.new_database()
            with static_server(SITE) as base:
                crawl(data, url, base)
            return "\n".join(header + compare(data, url, before, rounds))
        finally:
            server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="A checkout to compare.")
    parser.add_argument("--store", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--rounds", type=int, default=4, help="Rounds per side.")
    parser.add_argument("--quick", action="store_true", help="One round; nothing recorded.")
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    kinds = ("sqlite", "postgres") if args.store == "both" else (args.store,)
    names = {"sqlite": "SQLite", "postgres": "PostgreSQL"}
    parts: list[tuple[str, Callable[[], str]]] = [
        (
            f"{names[k]} store, before ({args.before.name}) and after, interleaved",
            partial(bench, k, args.before.resolve(), rounds),
        )
        for k in kinds
    ]
    load = os.getloadavg()[0]
    note = (
        f" (shared with other work); command: `.venv/bin/python bench/store_api.py"
        f" --before {args.before} --store {args.store} --rounds {rounds}`"
    )
    return run_and_record(
        "Store opened once: API latency", parts, quick=args.quick, load=load, machine_note=note
    )


if __name__ == "__main__":
    sys.exit(main())
