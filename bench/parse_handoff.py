"""Handing pages to parse workers: pages a second through the stage pool, and the
crawl process's CPU a page for the hand-off.

A page of the many-hosts bench (80 words, a title) goes through ``StagePool.parse``
``--pages`` times with ``--in-flight`` awaiting at once, as a crawl's request slots
do. The figure that matters is the parent's CPU a page (``time.process_time``, every
thread of this process: the event loop's and any helper threads a pool runs), beside
the worker's: the parse itself. ``--workers 0`` parses in this process, for scale.

    .venv/bin/python bench/parse_handoff.py --workers 1 --rounds 3
    PYTHONPATH=/path/to/other/src .venv/bin/python bench/parse_handoff.py   # A/B
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import time
from typing import Any

from trawl.pipeline.stage_pool import StagePool
from trawl.records import PageRecord


def body(n: int, rng: random.Random) -> bytes:
    words = " ".join(rng.choice(("river", "stone", "lamp", "field")) for _ in range(80))
    return f"<html><head><title>/p{n}</title></head><body><p>{words}</p></body></html>".encode()


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def one_round(pool: StagePool, pages: int, in_flight: int) -> tuple[float, float, float]:
    rng = random.Random(7)
    bodies = [body(n, rng) for n in range(pages)]
    gate = asyncio.Semaphore(in_flight)

    async def parse(n: int) -> None:
        async with gate:
            url = f"http://127.10.0.{n % 250 + 1}:8000/p{n}"
            await pool.parse(bodies[n], url, "text/html", None)

    loop_cpu, cpu, wall = time.thread_time(), time.process_time(), time.perf_counter()
    await asyncio.gather(*(parse(n) for n in range(pages)))
    wall = time.perf_counter() - wall
    return wall, time.process_time() - cpu, time.thread_time() - loop_cpu


async def documents_round(pool: StagePool, pages: int) -> tuple[float, float, float]:
    """The end of a crawl: ``pages`` parsed pages' index documents, 32 a task."""
    from trawl.pipeline.parse import parse_page  # noqa: PLC0415 - after the pool's fork

    rng = random.Random(7)
    records = []
    for n in range(pages):
        url = f"http://127.10.0.{n % 250 + 1}:8000/p{n}"
        parsed = parse_page(body(n, rng), url, "text/html", None)
        records.append((record_of(url, parsed), [f"page {n}"]))
    loop_cpu, cpu, wall = time.thread_time(), time.process_time(), time.perf_counter()
    built = [fields async for fields in pool.documents(records)]
    wall = time.perf_counter() - wall
    assert len(built) == pages
    return wall, time.process_time() - cpu, time.thread_time() - loop_cpu


def record_of(url: str, parsed: Any) -> PageRecord:
    return PageRecord(
        url=url,
        host=url.split("/")[2],
        status=200,
        depth=1,
        fetched_at=0.0,
        title=parsed.title,
        text=parsed.text,
        lang="en",
        indexable=True,
    )


async def run(pool: StagePool, args: argparse.Namespace) -> None:
    if args.documents:
        for r in range(1, args.rounds + 1):
            wall, cpu, loop_cpu = await documents_round(pool, args.pages)
            n = args.pages
            print(
                f"documents round {r}: {n / wall:7.0f} pages/s  parent CPU"
                f" {1e3 * cpu / n:.3f} ms/page  (loop thread {1e3 * loop_cpu / n:.3f})"
                f"  load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
        await pool.close()
        return
    await one_round(pool, 50, args.in_flight)  # the workers' and the parser's warm-up
    for r in range(1, args.rounds + 1):
        wall, cpu, loop_cpu = await one_round(pool, args.pages, args.in_flight)
        n = args.pages
        print(
            f"round {r}: {n / wall:7.0f} pages/s  parent CPU {1e3 * cpu / n:.3f} ms/page"
            f"  (loop thread {1e3 * loop_cpu / n:.3f})  load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    await pool.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--pages", type=int, default=3000)
    parser.add_argument("--in-flight", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--documents", action="store_true", help="index documents (a crawl's end), not parsing"
    )
    args = parser.parse_args()
    pool = StagePool(args.workers, parsing=not args.documents)
    pool.start()  # before the loop, as `trawl crawl` does: forked workers
    asyncio.run(run(pool, args))


if __name__ == "__main__":
    main()
