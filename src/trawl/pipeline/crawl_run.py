"""A crawl from start to end: open the store's run, crawl, check resources, finish.

``crawl`` is the embedded crawl (one process, its own frontier and index
writer); ``run_crawler`` drives the crawler for it and for workers
(pipeline/workers.py). The run is judged complete, capped, stopped or
unhealthy by pipeline/health.py, host by host, on what the store recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from trawl.crawl.crawler import Crawler, CrawlLimits, CrawlStats
from trawl.crawl.frontier import CrawlFrontier
from trawl.errors import InvalidUrl, RenderError, StoreError
from trawl.extras import require
from trawl.faults import fault_point
from trawl.index.tantivy_index import IndexReader, IndexWriter
from trawl.net.addresses import Target
from trawl.net.fetcher import Fetcher
from trawl.pipeline.health import (
    CapLog,
    CappedFrontier,
    DepthCap,
    is_embedded,
    judge_crawl,
    mark_embedded,
)
from trawl.pipeline.pages import PagePipeline
from trawl.pipeline.stage_pool import StagePool, start_pool
from trawl.pipeline.vectors import refresh_vectors
from trawl.records import NOT_INDEXED, CrawlUrl, Outcome, ResourceCheck
from trawl.robots.policy import product_token
from trawl.settings import Settings
from trawl.store.base import Store
from trawl.urls.identity import host_port, normalise
from trawl.urls.safety import unsafe_reason
from trawl.urls.scope import CrawlScope
from trawl.urls.start import parse_host_aliases, start_forms

if TYPE_CHECKING:
    from trawl.net.renderer import Renderer

# What only the crawl's end needs (the corpus step, the header checks):
# imported beside the crawl, once its first requests are out, not before them.
END_MODULES = (
    "trawl.pipeline.crawl_end",
    "trawl.pipeline.resource_checks",
    "trawl.pipeline.integrity",
)
END_IMPORT_AFTER = 1.0  # seconds: the start, with every host's first requests, is busiest


async def _import_end_modules() -> None:
    await asyncio.sleep(END_IMPORT_AFTER)
    for name in END_MODULES:
        await asyncio.to_thread(importlib.import_module, name)


@dataclass(frozen=True)
class CrawlOutcome:
    crawl_id: int
    outcome: Outcome  # complete, capped, stopped or unhealthy
    discovered: int
    fetched: int
    ok: int
    failed: int
    blocked: int
    indexed: int
    pruned: int
    seconds: float
    resumed_from: int | None = None
    resources_checked: int = 0
    resources_broken: int = 0
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> URLs not fetched
    samples: dict[str, list[str]] = field(default_factory=dict)  # reason -> a few of them
    internal_errors: int = 0  # pages whose processing raised (logged with their URL)
    parked_hosts: dict[str, str] = field(default_factory=dict)  # host -> why given up
    unchanged: int = 0  # pages that answered 304 (still searchable)
    not_indexed: dict[str, int] = field(default_factory=dict)  # reason -> fetched pages

    @property
    def main_loss(self) -> str | None:
        """When most fetched pages were not indexed for one reason, that reason, counted:
        "368 pages canonicalised to sumo.dlr.de (outside the crawl): not indexed"."""
        if not self.not_indexed:
            return None
        reason, count = max(self.not_indexed.items(), key=lambda kv: kv[1])
        if count * 2 <= max(1, self.ok):
            return None
        return f"{count} pages {reason}: not indexed"

    @classmethod
    def of(
        cls,
        crawl_id: int,
        outcome: Outcome,
        stats: CrawlStats,
        started: float,
        *,
        indexed: int,
        pruned: int,
        resumed_from: int | None = None,
        resources_checked: int = 0,
        resources_broken: int = 0,
        unchanged: int = 0,
        not_indexed: dict[str, int] | None = None,
    ) -> CrawlOutcome:
        """The outcome of a run that began at ``started`` (monotonic) with ``stats``."""
        return cls(
            crawl_id=crawl_id,
            outcome=outcome,
            discovered=stats.discovered,
            fetched=stats.fetched,
            ok=stats.ok,
            failed=stats.failed,
            blocked=stats.blocked,
            seconds=time.monotonic() - started,
            indexed=indexed,
            pruned=pruned,
            resumed_from=resumed_from,
            resources_checked=resources_checked,
            resources_broken=resources_broken,
            skipped=dict(stats.skipped),
            samples=stats.samples,
            internal_errors=stats.internal_errors,
            parked_hosts=dict(stats.parked),
            unchanged=unchanged,
            not_indexed=not_indexed or {},
        )

    @property
    def pages_per_second(self) -> float:
        return self.fetched / self.seconds if self.seconds > 0 else 0.0


async def crawl(
    start_urls: Sequence[str],
    settings: Settings,
    store: Store,
    on_progress: Callable[[CrawlStats], None] | None = None,
    on_crawler: Callable[[Crawler], None] | None = None,
    *,
    fresh: bool = False,
    allow: Sequence[Target] = (),
    trust_start_urls: bool = True,
    pool: StagePool | None = None,
    on_begin: Callable[[int], None] | None = None,
    index: IndexWriter | None = None,
) -> CrawlOutcome:
    """Crawl from ``start_urls`` (already checked by ``start_request`` or
    ``parse_start_url``: each is requested as written, known by its identity) and index.

    A run of the same start URLs that was stopped or killed is resumed unless
    ``fresh``: what it fetched is not fetched again, what it had queued is.
    ``allow`` names extra private host:port targets (``--allow-host``); the start URLs'
    own may be private too, unless not ``trust_start_urls`` (a crawl the server starts
    for an API caller reaches only ``allow``). ``pool``:
    a stage pool started earlier (``trawl crawl`` starts it first thing), which the
    crawl uses and closes; by default one is made for the ``parse_workers`` setting.
    ``on_begin`` is told the crawl log's id for this run once its row exists.
    ``index``: the index writer, opened earlier (``trawl crawl`` opens it beside its
    imports), which the crawl uses and closes; by default one is opened here.
    """
    if settings.semantic:
        require("semantic")  # before any work: the vectors are written after the crawl
    started = time.monotonic()
    start_urls, requests = start_forms(start_urls)
    # Before the index writer.
    parser = start_pool(settings.parse_workers, pool=pool, deadline=settings.parse_timeout)
    try:
        # The writer's lock is also the crawl lock: a crawl still marked running can
        # only be one that died, so it is marked interrupted.
        index = index or IndexWriter(settings.index_path)
    except BaseException:
        await parser.close()
        raise
    try:
        died = store.interrupt_running() > 0
        previous = None if fresh else store.resumable_crawl(start_urls)
        died = died or (previous is not None and previous.outcome == Outcome.INTERRUPTED)
        for url in start_urls:
            store.add_site(url)
        crawl_id = store.begin_crawl(start_urls, previous.id if previous else None)
        fault_point("crawl.after_begin")
        if on_begin is not None:
            on_begin(crawl_id)
        # A resumed run carries the mark over with its frontier, unless the run it
        # resumes was killed before it made its own.
        if not is_embedded(store, crawl_id):
            mark_embedded(store, crawl_id, start_urls[0])
        pipeline = PagePipeline(
            store,
            index,
            crawl_id,
            parser,
            product_token(settings.user_agent),
            live_index_after=settings.live_index_after,
        )
        caps = CapLog(store, crawl_id)
        frontier = CappedFrontier(
            caps,
            delay=settings.delay,
            host_concurrency=settings.host_concurrency,
            max_per_host=settings.max_per_host,
            max_pending=settings.max_pending,
            max_host_queues=settings.max_host_queues,
            overflow=lambda host: store.frontier_waiting(crawl_id, host),
        )
        scope = CrawlScope(settings.scope, start_urls)
        pipeline.depth_cap = DepthCap(
            caps, settings.max_depth, lambda url: not frontier.seen(url) and scope.contains(url)
        )
        resume: list[CrawlUrl] = []
        carried: list[str] = []
        revisit: list[str] = []
        if previous is not None:
            for url in store.frontier_finished(crawl_id):
                frontier.mark_seen(url)
            # What the interrupted run fetched was never indexed (see fetched): it is,
            # with this run's pages, when this run ends. Only what it fetched: each URL
            # carried is a store read at the end, and a run may have skipped 100,000s.
            carried = store.frontier_fetched(crawl_id)
            resume = store.frontier_pending(crawl_id)
            revisit = store.frontier_starts(crawl_id)
        importing = asyncio.create_task(_import_end_modules())
        try:
            # SQLite: the crawl's writes commit WRITE_BATCH at a time, not one by one.
            with store.write_batch(*WRITE_BATCH):
                crawling = asyncio.ensure_future(
                    run_crawler(
                        start_urls=start_urls,
                        resume=resume,
                        settings=settings,
                        frontier=frontier,
                        pipeline=pipeline,
                        on_progress=on_progress,
                        on_crawler=on_crawler,
                        allow=allow,
                        trust_start_urls=trust_start_urls,
                        requests=requests,
                        revisit=revisit,
                    )
                )
                flushing = asyncio.create_task(_flush_every(store, WRITE_BATCH[1], crawling))
                try:
                    stats, ended = await crawling
                except asyncio.CancelledError:
                    done = flushing.done() and not flushing.cancelled()
                    failed = flushing.exception() if done else None
                    if failed is not None:
                        raise failed from None  # a full disk stops the crawl
                    raise
                finally:
                    flushing.cancel()
        except RenderError:
            # Chromium would not start, so no request was made: a failed run, not
            # one to resume.
            store.finish_crawl(crawl_id, pages_ok=0, pages_failed=0, outcome=Outcome.FAILED)
            raise
        finally:
            importing.cancel()  # a short crawl imports them below, in this thread
        from trawl.pipeline.crawl_end import close_crawl  # noqa: PLC0415 - see END_MODULES
        from trawl.pipeline.integrity import mend_after_crash  # noqa: PLC0415
        from trawl.pipeline.resource_checks import check_resources  # noqa: PLC0415

        resources: list[ResourceCheck] = []
        if settings.resource_checks > 0 and ended != Outcome.STOPPED:
            resources = await check_resources(
                store, crawl_id, settings, _allowed(start_urls, allow, trust_start_urls)
            )
        loss = _main_loss(pipeline, stats)
        if loss is not None:
            stats.skipped[NOT_INDEXED + loss[0]] = loss[1]
        judgement = judge_crawl(
            store, crawl_id, start_urls, max_error_rate=settings.max_error_rate, ended=ended
        )
        outcome = judgement.outcome
        pruned = await close_crawl(
            store,
            parser,
            crawl_id,
            judgement,
            stats,
            pages_ok=stats.ok,
            pages_failed=stats.failed,
            index=index,
            indexed_urls=[*carried, *pipeline.indexed_urls],
        )
        if died:
            # A run died before this one: whatever it left half done, store and index
            # agree again before this run reports (pipeline/integrity.py).
            await mend_after_crash(store, index, IndexReader(settings.index_path), parser)
    except StoreError:
        # The store's write batch may be lost (a full disk rolls it back): the pages
        # indexed live since its last commit must not be committed on close, or the
        # index holds pages the store lost. What the store kept and the index now
        # lacks, the same command indexes when it resumes (carried, above).
        with contextlib.suppress(ValueError):  # a writer the failure already killed
            index.rollback()
        raise
    finally:
        await parser.close()
        index.close()
    await asyncio.to_thread(refresh_vectors, settings)  # after the commit: see pipeline/vectors
    return CrawlOutcome.of(
        crawl_id,
        outcome,
        stats,
        started,
        indexed=pipeline.indexed,
        pruned=pruned,
        resumed_from=previous.id if previous else None,
        resources_checked=len(resources),
        resources_broken=sum(r.broken for r in resources),
        unchanged=pipeline.unchanged,
        not_indexed=dict(pipeline.not_indexed),
    )


# The store's write batch during a crawl: at most this many writes (pages, frontier
# marks), held at most this many seconds. A kill loses at most that much, refetched.
WRITE_BATCH = (100, 0.5)


async def _flush_every(store: Store, seconds: float, crawling: asyncio.Future[Any]) -> None:
    """Commit the write batch when it is due. Between the crawl's events: a page's save
    and its links' admission (no await between them) commit together. A commit that
    fails (a full disk) stops the crawl with its error."""
    while True:
        await asyncio.sleep(seconds / 5)
        try:
            store.flush(due_only=True)
        except BaseException:
            crawling.cancel()
            raise


async def run_crawler(
    *,
    start_urls: Sequence[str],
    resume: Sequence[CrawlUrl],
    settings: Settings,
    frontier: CrawlFrontier,
    pipeline: PagePipeline,
    on_progress: Callable[[CrawlStats], None] | None,
    on_crawler: Callable[[Crawler], None] | None,
    allow: Sequence[Target],
    trust_start_urls: bool = True,
    requests: Mapping[str, str] | None = None,
    revisit: Sequence[str] = (),
) -> tuple[CrawlStats, Outcome | None]:
    """Crawl; return the stats and how the requests ended: stopped, capped (max_pages)
    or ran (to the end: judged by pipeline/health.py). ``revisit``: Crawler.run's."""
    limits = CrawlLimits(
        user_agent=settings.user_agent,
        concurrency=settings.concurrency,
        delay=settings.delay,
        max_pages=settings.max_pages,
        max_depth=settings.max_depth,
        max_bytes=settings.max_bytes,
        robots_max_bytes=settings.robots_max_bytes,
        scope=settings.scope,
    )
    aliases = parse_host_aliases(settings.host_aliases)
    async with Fetcher(
        user_agent=settings.user_agent,
        timeout=settings.timeout,
        concurrency=settings.concurrency,
        host_concurrency=settings.host_concurrency,
        # The user named the alias targets: like --allow-host, they may be private.
        allowed=_allowed(start_urls, allow, trust_start_urls) | frozenset(aliases.values()),
        aliases=aliases,
    ) as fetcher:
        crawler = Crawler(fetcher, pipeline, limits, frontier, on_progress)
        async with _renderer(settings, fetcher, start_urls, crawler) as renderer:
            pipeline.renderer = renderer
            if on_crawler is not None:
                on_crawler(crawler)
            stats = await crawler.run(start_urls, resume, requests, revisit)
            pipeline.renderer = None
    if renderer is not None:
        for reason, count in renderer.refused.items():
            stats.skipped[f"browser request refused: {reason}"] += count
    # The rest of the verdict (health, every other cap) is the store's to give, host by
    # host, with what a resumed run carried: pipeline/health.py.
    if crawler.stop_requested:
        return stats, Outcome.STOPPED
    if stats.hit_page_cap:
        return stats, Outcome.CAPPED
    return stats, None


def _main_loss(pipeline: PagePipeline, stats: CrawlStats) -> tuple[str, int] | None:
    """The one reason most fetched pages were not indexed, if there is one."""
    if not pipeline.not_indexed:
        return None
    reason, count = pipeline.not_indexed.most_common(1)[0]
    return (reason, count) if count * 2 > max(1, stats.ok) else None


def _allowed(
    start_urls: Sequence[str], allow: Sequence[Target], trust_start_urls: bool = True
) -> frozenset[Target]:
    # The user named these exact targets, so they may be private (tests, intranets).
    starts = frozenset(host_port(u) for u in start_urls) if trust_start_urls else frozenset()
    return starts | frozenset(allow)


@contextlib.asynccontextmanager
async def _renderer(
    settings: Settings,
    fetcher: Fetcher,
    start_urls: Sequence[str],
    crawler: Crawler,
) -> AsyncIterator[Renderer | None]:
    """Chromium for the crawl when ``settings.render``; started before the first request,
    so a browser that cannot start stops the crawl before it begins. Subrequests obey
    the crawler's own robots.txt check (with its cache) and its hosts' pace."""
    if not settings.render:
        yield None
        return
    from trawl.net.renderer import Renderer  # noqa: PLC0415 - Playwright only when rendering

    scope = CrawlScope(settings.scope, start_urls)

    async def permits(url: str) -> str | None:
        """The crawl's own rules for a request the page's scripts make."""
        try:
            identity = normalise(url)
        except InvalidUrl:
            return "invalid URL"
        if not scope.contains(identity):
            return "out of scope"
        reason = unsafe_reason(url)
        if reason is not None:
            return f"unsafe URL: {reason}"
        blocked = await crawler.robots_refusal(url)
        return None if blocked is None else f"blocked by {blocked}"

    async with Renderer(
        fetcher,
        permits,
        crawler.pace,
        executable=settings.chromium,
        user_agent=settings.user_agent,
        timeout=settings.render_timeout,
        workers=settings.render_workers,
        max_bytes=settings.max_bytes,
    ) as renderer:
        yield renderer
