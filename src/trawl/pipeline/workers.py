"""One worker of a crawl shared through the store (PostgreSQL): many on many machines.

The frontier is the store's (``SharedFrontier``); a worker holds leases on the
URLs it fetches and renews them while it crawls. No worker writes an index:
``trawl index`` builds it from the store.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence

from trawl.crawl.crawler import Crawler, CrawlStats
from trawl.crawl.shared_frontier import SharedFrontier
from trawl.errors import Conflict, StoreError
from trawl.net.addresses import Target
from trawl.pipeline.crawl_run import CrawlOutcome, run_crawler
from trawl.pipeline.health import is_embedded, judge_crawl
from trawl.pipeline.pages import PagePipeline
from trawl.pipeline.stage_pool import StagePool, start_pool
from trawl.records import Outcome
from trawl.robots.policy import product_token
from trawl.settings import Settings
from trawl.store.base import Store
from trawl.urls.start import start_forms


async def work(
    start_urls: Sequence[str],
    settings: Settings,
    store: Store,
    *,
    owner: str,
    on_crawler: Callable[[Crawler], None] | None = None,
    allow: Sequence[Target] = (),
) -> CrawlOutcome:
    """Be one worker of a crawl shared through ``store``: join the running crawl of
    ``start_urls`` (begin it if there is none; no start URLs: the latest running
    crawl), fetch URLs under leases until no URL is queued or leased anywhere.

    The worker that sees the frontier empty closes the crawl: inlinks, pruning
    after a healthy run, the crawl-log row (the figures are the store's, over all
    workers). Several may do so at the end; each step gives the same result twice.
    """
    started = time.monotonic()
    start_urls, requests = start_forms(start_urls)
    parser = start_pool(settings.parse_workers, deadline=settings.parse_timeout)
    try:
        crawl_id = store.join_crawl(start_urls)
        joined = [list(r.start_urls) for r in store.crawls(limit=1000) if r.id == crawl_id]
        starts = list(start_urls) or (joined[0] if joined else [])
        if is_embedded(store, crawl_id):
            # Its frontier is in that process's memory: a worker would fetch again what
            # it already has, and close the run under it.
            raise Conflict(
                f"crawl {crawl_id} was started by `trawl crawl`, which runs alone: a worker"
                " cannot join it (let it finish, or run `trawl crawl` again to resume it)"
            )
        for url in starts:
            store.add_site(url)
        pipeline = PagePipeline(store, None, crawl_id, parser, product_token(settings.user_agent))
        frontier = SharedFrontier(
            store,
            crawl_id,
            owner,
            delay=settings.delay,
            host_concurrency=settings.host_concurrency,
            lease=settings.lease,
            max_pages=settings.max_pages,
        )
        renewing = asyncio.create_task(_renew_leases(frontier, settings.lease))
        try:
            stats, ended = await run_crawler(
                start_urls=starts,
                resume=(),
                settings=settings,
                frontier=frontier,
                pipeline=pipeline,
                on_progress=None,
                on_crawler=on_crawler,
                allow=allow,
                requests=requests,
            )
        finally:
            renewing.cancel()
        pruned = 0
        outcome: Outcome
        if ended != Outcome.STOPPED and frontier.capped:
            # max_pages is spent over all the workers: the crawl ends capped, pruning
            # nothing (each worker that runs out closes it, with the store's figures).
            outcome, pruned = await _close_shared_crawl(
                store,
                parser,
                crawl_id,
                starts,
                stats=stats,
                settings=settings,
                ended=Outcome.CAPPED,
            )
        elif ended is not None:
            outcome = ended
        elif not store.frontier_active(crawl_id):
            outcome, pruned = await _close_shared_crawl(
                store, parser, crawl_id, starts, stats=stats, settings=settings
            )
        else:
            # Others are still at it: the run so far, as the store tells it.
            outcome = judge_crawl(
                store, crawl_id, starts, max_error_rate=settings.max_error_rate
            ).outcome
    finally:
        await parser.close()
    return CrawlOutcome.of(crawl_id, outcome, stats, started, indexed=0, pruned=pruned)


async def _renew_leases(frontier: SharedFrontier, lease: float) -> None:
    """Renew the worker's leases every third of a lease while it crawls."""
    while True:
        await asyncio.sleep(lease / 3)
        try:
            frontier.renew()
        except StoreError:
            # The store is out of reach for now: the next renewal may get through
            # before the leases run out, and the crawl itself will meet the error.
            continue


async def _close_shared_crawl(
    store: Store,
    pool: StagePool,
    crawl_id: int,
    starts: Sequence[str],
    *,
    stats: CrawlStats,
    settings: Settings,
    ended: Outcome | None = None,
) -> tuple[Outcome, int]:
    """The end of a crawl shared by workers, judged on every worker's results, host by
    host (pipeline/health.py), and closed as an embedded crawl is, without the index
    (``trawl index`` builds it); the figures are the store's, over all workers."""
    from trawl.pipeline.crawl_end import close_crawl  # noqa: PLC0415 - see END_MODULES

    judgement = judge_crawl(
        store, crawl_id, starts, max_error_rate=settings.max_error_rate, ended=ended
    )
    counts = store.frontier_counts(crawl_id)
    pruned = await close_crawl(
        store,
        pool,
        crawl_id,
        judgement,
        stats,
        pages_ok=counts.get("fetched", 0),
        pages_failed=counts.get("failed", 0),
    )
    return judgement.outcome, pruned
