"""The one module that knows the order of the stages.

    start URLs -> Crawler (frontier, robots, fetch) -> PagePipeline.fetched:
        understand -> extract (parse_html) -> PageRecord -> store.save_page -> index

and, once the crawl has ended, the lifecycle: the crawl-log row, pruning
after a complete and healthy run, resuming a run that was cut short.
Everything else is a stage that does one thing and knows nothing of its
neighbours. ``trawl index`` reuses the tail: store.pages -> index upsert.

``work`` runs the same stages as one of many workers sharing a store: the
frontier is the store's (``SharedFrontier``), and no worker writes an index
(``trawl index`` builds it from the store).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from trawl.corpus import update_signals
from trawl.crawl.crawler import Crawler, CrawlLimits, CrawlStats
from trawl.crawl.frontier import CrawlFrontier, Frontier
from trawl.crawl.shared_frontier import SharedFrontier
from trawl.errors import InvalidUrl, RenderError, StoreError
from trawl.extract.links import followed
from trawl.index.tantivy_index import IndexWriter
from trawl.net.addresses import Target
from trawl.net.fetcher import Fetcher
from trawl.net.header_check import check_many
from trawl.records import CrawlUrl, FetchResult, HeaderCheck, Link, ResourceCheck
from trawl.robots.policy import product_token
from trawl.settings import Settings
from trawl.stage_pool import Page, StagePool, workers_for
from trawl.store.base import Store
from trawl.understand.eviction import (
    EvictionRules,
    eviction_reason,
    host_languages,
    parse_languages,
)
from trawl.understand.response import (
    blocked_page,
    failed_page,
    understand_page,
    understand_response,
)
from trawl.urls.identity import host_port, normalise
from trawl.urls.safety import unsafe_reason
from trawl.urls.scope import make_scope

if TYPE_CHECKING:
    from trawl.net.renderer import Renderer

COMMIT_EVERY = 500  # index commits: bounds what a crash loses, and makes progress searchable


@dataclass(frozen=True)
class CrawlOutcome:
    crawl_id: int
    outcome: str  # complete, capped, stopped, unhealthy
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

    @classmethod
    def of(
        cls,
        crawl_id: int,
        outcome: str,
        stats: CrawlStats,
        started: float,
        *,
        indexed: int,
        pruned: int,
        resumed_from: int | None = None,
        resources_checked: int = 0,
        resources_broken: int = 0,
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
        )

    @property
    def pages_per_second(self) -> float:
        return self.fetched / self.seconds if self.seconds > 0 else 0.0


class PagePipeline:
    """Receives every crawl event, keeps store and index in step."""

    def __init__(
        self,
        store: Store,
        index: IndexWriter | None,
        crawl_id: int,
        parser: StagePool | None = None,
        robots_name: str = "trawlbot",
        *,
        live_index_after: int = 2000,
    ) -> None:
        """``robots_name``: our product token, which meta tags and X-Robots-Tag may name.
        ``index`` None: pages go to the store only (workers; ``trawl index`` follows).
        ``live_index_after``: indexable pages past this many are indexed as fetched too."""
        self._parser = parser or StagePool(0)
        self._live_index_after = live_index_after
        self._robots_name = robots_name
        self._store = store
        self._index = index
        self._crawl_id = crawl_id
        self.indexed_urls: list[str] = []
        self.renderer: Renderer | None = None  # set for the crawl when --render

    @property
    def indexed(self) -> int:
        return len(self.indexed_urls)

    def admitted(self, items: Sequence[CrawlUrl]) -> None:
        self._store.frontier_add(self._crawl_id, items)

    def request_headers(self, item: CrawlUrl) -> dict[str, str]:
        """Validators from the last crawl: an unchanged page answers 304 and costs no body."""
        etag, last_modified = self._store.validators(item.url)
        headers = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        return headers

    async def fetched(self, item: CrawlUrl, result: FetchResult) -> list[str]:
        if result.status == 304:
            self._store.touch_page(item.url, self._crawl_id)
            return followed(tuple(self._store.links_from(item.url)))
        record, follow = understand_response(item, result)
        links: tuple[Link, ...] = ()
        if record.indexable:
            body, content_type = result.body, result.header("content-type")
            if self.renderer is not None and result.status == 200:
                try:
                    body = (await self.renderer.render(item.url, result)).encode()
                    content_type = "text/html; charset=utf-8"
                except RenderError as e:
                    # Extracted from the server's HTML, but labelled: the page the
                    # browser would show is unknown.
                    record = replace(record, error=str(e))
            parsed = await self._parser.parse(
                body, item.url, content_type, result.header("content-language")
            )
            record, follow = understand_page(
                record, parsed, result, self._robots_name, item.lastmod
            )
            links = parsed.links
        if self._store.threadsafe:
            # A network round trip or several (PostgreSQL): waited for in a thread,
            # so the event loop goes on fetching meanwhile.
            await asyncio.to_thread(self._store.save_page, record, links, self._crawl_id)
        else:
            self._store.save_page(record, links, self._crawl_id)
        if self._index is None:
            return follow
        if record.indexable:
            # Indexed when the crawl ends (_link_up): by then every link to the page is
            # known (its anchor text) and the batch step has scored it. A document made
            # now is made again then, at the same cost (stemming its text), so a short
            # crawl waits; a long one, past live_index_after pages, pays twice for the
            # rest so that they are searchable within COMMIT_EVERY pages of being found.
            self.indexed_urls.append(record.url)
            if len(self.indexed_urls) > self._live_index_after:
                self._index.upsert(record)
        elif record.status < 500:
            # A page that turned into a redirect, a client error or a file leaves the
            # index now. A server error may be an outage: it leaves only when the
            # crawl ends healthy (see _finish).
            self._index.delete(record.url)
        if self._index.pending >= COMMIT_EVERY:
            self._index.commit()
        return follow

    def failed(self, item: CrawlUrl, error: str) -> None:
        # No response at all: kept like a server error, judged when the crawl ends.
        self._store.save_page(failed_page(item, time.time(), error), (), self._crawl_id)
        self._store.frontier_mark(self._crawl_id, item.url, "failed", error)

    def skipped(self, item: CrawlUrl, reason: str) -> None:
        if reason.startswith("robots.txt"):
            # Recorded as a page (label Blocked), and so out of the index.
            self._store.save_page(blocked_page(item, time.time()), (), self._crawl_id)
            if self._index is not None:
                self._index.delete(item.url)
        self._store.frontier_mark(self._crawl_id, item.url, "skipped", reason)


async def crawl(
    start_urls: Sequence[str],
    settings: Settings,
    store: Store,
    on_progress: Callable[[CrawlStats], None] | None = None,
    on_crawler: Callable[[Crawler], None] | None = None,
    *,
    fresh: bool = False,
    allow: Sequence[Target] = (),
    pool: StagePool | None = None,
) -> CrawlOutcome:
    """Crawl from ``start_urls`` (already checked by ``parse_start_url``) and index.

    A run of the same start URLs that was stopped or killed is resumed unless
    ``fresh``: what it fetched is not fetched again, what it had queued is.
    ``allow`` names extra private host:port targets (``--allow-host``). ``pool``:
    a stage pool started earlier (``trawl crawl`` starts it first thing), which the
    crawl uses and closes; by default one is made for the ``parse_workers`` setting.
    """
    started = time.monotonic()
    parser = pool or StagePool(workers_for(settings.parse_workers))
    parser.warm_up()  # before the index writer starts its threads: see warm_up
    try:
        # The writer's lock is also the crawl lock: a crawl still marked running can
        # only be one that died, so it is marked interrupted.
        index = IndexWriter(settings.index_path)
    except BaseException:
        await parser.close()
        raise
    try:
        store.interrupt_running()
        previous = None if fresh else store.resumable_crawl(start_urls)
        for url in start_urls:
            store.add_site(url)
        crawl_id = store.begin_crawl(start_urls, previous.id if previous else None)
        pipeline = PagePipeline(
            store,
            index,
            crawl_id,
            parser,
            product_token(settings.user_agent),
            live_index_after=settings.live_index_after,
        )
        frontier = Frontier(
            delay=settings.delay,
            host_concurrency=settings.host_concurrency,
            max_per_host=settings.max_per_host,
            max_pending=settings.max_pending,
        )
        resume: list[CrawlUrl] = []
        carried: list[str] = []
        if previous is not None:
            for url in store.frontier_finished(crawl_id):
                frontier.mark_seen(url)
                # What the interrupted run fetched was never indexed (see fetched):
                # it is, with this run's pages, when this run ends.
                carried.append(url)
            resume = store.frontier_pending(crawl_id)
        try:
            stats, outcome = await _run(
                start_urls=start_urls,
                resume=resume,
                settings=settings,
                frontier=frontier,
                pipeline=pipeline,
                on_progress=on_progress,
                on_crawler=on_crawler,
                allow=allow,
            )
        except RenderError:
            # Chromium would not start, so no request was made: a failed run, not
            # one to resume.
            store.finish_crawl(crawl_id, pages_ok=0, pages_failed=0, outcome="failed")
            raise
        resources: list[ResourceCheck] = []
        if settings.resource_checks > 0 and outcome != "stopped":
            resources = await check_resources(
                store, crawl_id, settings, _allowed(start_urls, allow)
            )
        pruned = await _finish(
            store,
            index,
            parser,
            crawl_id,
            start_urls=start_urls,
            stats=stats,
            outcome=outcome,
            indexed_urls=[*carried, *pipeline.indexed_urls],
        )
    finally:
        await parser.close()
        index.close()
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
    )


async def _run(
    *,
    start_urls: Sequence[str],
    resume: Sequence[CrawlUrl],
    settings: Settings,
    frontier: CrawlFrontier,
    pipeline: PagePipeline,
    on_progress: Callable[[CrawlStats], None] | None,
    on_crawler: Callable[[Crawler], None] | None,
    allow: Sequence[Target],
) -> tuple[CrawlStats, str]:
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
    async with Fetcher(
        user_agent=settings.user_agent,
        timeout=settings.timeout,
        concurrency=settings.concurrency,
        host_concurrency=settings.host_concurrency,
        allowed=_allowed(start_urls, allow),
    ) as fetcher:
        crawler = Crawler(fetcher, pipeline, limits, frontier, on_progress)
        async with _renderer(settings, fetcher, start_urls, crawler.robots_refusal) as renderer:
            pipeline.renderer = renderer
            if on_crawler is not None:
                on_crawler(crawler)
            stats = await crawler.run(start_urls, resume)
            pipeline.renderer = None
    if renderer is not None:
        for reason, count in renderer.refused.items():
            stats.skipped[f"browser request refused: {reason}"] += count
    if crawler.stop_requested:
        return stats, "stopped"
    if stats.hit_page_cap:
        return stats, "capped"
    errors = stats.failed + stats.server_errors
    if stats.ok == 0 or errors > settings.max_error_rate * max(1, stats.fetched):
        return stats, "unhealthy"
    return stats, "complete"


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
    parser = StagePool(workers_for(settings.parse_workers))
    parser.warm_up()
    try:
        crawl_id = store.join_crawl(start_urls)
        joined = [list(r.start_urls) for r in store.crawls(limit=1000) if r.id == crawl_id]
        starts = list(start_urls) or (joined[0] if joined else [])
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
            stats, outcome = await _run(
                start_urls=starts,
                resume=(),
                settings=settings,
                frontier=frontier,
                pipeline=pipeline,
                on_progress=None,
                on_crawler=on_crawler,
                allow=allow,
            )
        finally:
            renewing.cancel()
        pruned = 0
        if outcome != "stopped" and frontier.capped:
            # max_pages is spent over all the workers: the crawl ends capped, pruning
            # nothing (each worker that runs out closes it, with the store's figures).
            outcome, _ = _close_shared_crawl(store, crawl_id, starts, stats, settings, capped=True)
        elif outcome not in ("stopped", "capped") and not store.frontier_active(crawl_id):
            outcome, pruned = _close_shared_crawl(store, crawl_id, starts, stats, settings)
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


def _close_shared_crawl(
    store: Store,
    crawl_id: int,
    starts: Sequence[str],
    stats: CrawlStats,
    settings: Settings,
    *,
    capped: bool = False,
) -> tuple[str, int]:
    """The end of a crawl shared by workers, judged on every worker's results; a
    ``capped`` one prunes nothing, like an embedded crawl that hit max_pages."""
    counts = store.frontier_counts(crawl_id)
    ok, failed = counts.get("fetched", 0), counts.get("failed", 0)
    errors = failed + len(store.server_error_pages(crawl_id))
    healthy = ok > 0 and errors <= settings.max_error_rate * max(1, ok + failed)
    hosts = sorted({urlsplit(u).hostname or "" for u in starts})
    store.count_inlinks(hosts)
    pruned = 0
    if healthy and not capped:
        gone = store.unseen_pages(crawl_id, hosts)
        store.delete_pages(gone)
        pruned = len(gone)
    outcome = "capped" if capped else "complete" if healthy else "unhealthy"
    store.finish_crawl(
        crawl_id,
        pages_ok=ok,
        pages_failed=failed,
        outcome=outcome,
        skipped=stats.skipped,
        samples=stats.samples,
    )
    return outcome, pruned


def _allowed(start_urls: Sequence[str], allow: Sequence[Target]) -> frozenset[Target]:
    # The user named these exact targets, so they may be private (tests, intranets).
    return frozenset(host_port(u) for u in start_urls) | frozenset(allow)


@contextlib.asynccontextmanager
async def _renderer(
    settings: Settings,
    fetcher: Fetcher,
    start_urls: Sequence[str],
    robots_refusal: Callable[[str], Awaitable[str | None]],
) -> AsyncIterator[Renderer | None]:
    """Chromium for the crawl when ``settings.render``; started before the first request,
    so a browser that cannot start stops the crawl before it begins. ``robots_refusal``
    is the crawl's own robots.txt check (the crawler's, with its cache)."""
    if not settings.render:
        yield None
        return
    from trawl.net.renderer import Renderer  # noqa: PLC0415 - Playwright only when rendering

    scopes = [make_scope(settings.scope, u) for u in start_urls]

    async def permits(url: str) -> str | None:
        """The crawl's own rules for a request the page's scripts make."""
        try:
            identity = normalise(url)
        except InvalidUrl:
            return "invalid URL"
        if not any(s.contains(identity) for s in scopes):
            return "out of scope"
        reason = unsafe_reason(url)
        if reason is not None:
            return f"unsafe URL: {reason}"
        blocked = await robots_refusal(url)
        return None if blocked is None else f"blocked by {blocked}"

    async with Renderer(
        fetcher,
        permits,
        executable=settings.chromium,
        user_agent=settings.user_agent,
        timeout=settings.render_timeout,
        workers=settings.render_workers,
        max_bytes=settings.max_bytes,
    ) as renderer:
        yield renderer


async def check_resources(
    store: Store, crawl_id: int, settings: Settings, allowed: frozenset[Target]
) -> list[ResourceCheck]:
    """HEAD the resources (images, scripts, stylesheets...) the crawl's pages use, at most
    ``settings.resource_checks`` of them, and store the answers."""
    urls = store.resource_urls(crawl_id, settings.resource_checks)
    checks = await check_many(urls, user_agent=settings.user_agent, allowed=allowed)
    resources = [_resource(c) for c in checks]
    store.save_resources(resources)
    return resources


def _resource(check: HeaderCheck) -> ResourceCheck:
    length = check.header("content-length")
    return ResourceCheck(
        url=check.url,
        status=check.status,
        content_type=check.header("content-type"),
        content_length=int(length) if length and length.isdigit() else None,
        error=check.error,
        checked_at=time.time(),
    )


async def check_external_headers(
    urls: Sequence[str], settings: Settings, *, allow: Sequence[Target] = ()
) -> list[HeaderCheck]:
    """The report's "Check headers" action: HEAD each URL under seed 003's rules
    (``trawl.net.header_check``), six at once, in the order given. Private
    addresses are refused unless their exact host:port is in ``allow``."""
    return await check_many(urls, user_agent=settings.user_agent, allowed=frozenset(allow))


async def _link_up(
    store: Store, index: IndexWriter, pool: StagePool, indexed_urls: Sequence[str]
) -> None:
    """The corpus batch step (authority, duplicates, "Discussed on"), then the index
    brought in line with it: the indexable pages of this crawl (and of the run it
    resumes) are indexed, once, with the anchor text of every link to them and their
    fresh signals; other pages whose signals changed are indexed again; duplicates
    leave. A page that is not indexable was dealt with when it was fetched (a server
    error waits for _finish), so it is left alone here."""
    report = update_signals(store)
    urls = dict.fromkeys([*indexed_urls, *report.changed])
    # Documents are built by the stage pool's workers (stemming every page's text is
    # most of this step), while this process reads the next pages and feeds the index.
    async for fields in pool.documents(_searchable_pages(store, index, urls)):
        index.upsert_fields(fields)
    # No commit every COMMIT_EVERY pages here, only the one when the crawl closes
    # the index: a crash before it leaves the crawl open, and its resume indexes
    # what this run fetched. Each commit (about 0.1 s) held up the crawl's end.


def _searchable_pages(store: Store, index: IndexWriter, urls: Iterable[str]) -> Iterator[Page]:
    """Each searchable page of ``urls`` with the anchor texts of links to it, read from
    the store once, as the workers ask; an indexable page that is not searchable (a
    duplicate) or is gone leaves the index on the way."""
    for url in urls:
        record = store.page(url)
        if record is None or (record.indexable and not record.searchable):
            index.delete(url)
        elif record.searchable:
            yield record, store.anchors_to(url)


async def _finish(
    store: Store,
    index: IndexWriter,
    pool: StagePool,
    crawl_id: int,
    *,
    start_urls: Sequence[str],
    stats: CrawlStats,
    outcome: str,
    indexed_urls: Sequence[str],
) -> int:
    """Prune what is gone (after a complete, healthy run), run the batch step over the
    corpus, then close the crawl-log row.

    Only a complete run removes pages the run did not reach, and pages that answered
    with a server error: a capped, stopped or unhealthy run (an outage) removes nothing.
    The row is closed last, so a run killed during the batch step is resumed.
    """
    hosts = sorted({urlsplit(u).hostname or "" for u in start_urls})
    store.count_inlinks(hosts)
    pruned = 0
    if outcome == "complete":
        gone = store.unseen_pages(crawl_id, hosts)
        store.delete_pages(gone)
        for url in [*gone, *store.server_error_pages(crawl_id)]:
            index.delete(url)
        pruned = len(gone)
    await _link_up(store, index, pool, indexed_urls)
    store.finish_crawl(
        crawl_id,
        pages_ok=stats.ok,
        pages_failed=stats.failed,
        outcome=outcome,
        skipped=stats.skipped,
        samples=stats.samples,
    )
    return pruned


async def rebuild_index(store: Store, settings: Settings) -> int:
    """Run the corpus batch step, then rebuild the index from the store's searchable
    pages (indexable, not a duplicate); return how many were indexed.

    One commit at the end: a search server reading the index meanwhile answers from
    the old one until the new one is whole (the writer spills segments to disk as
    its memory fills, uncommitted), and a rebuild that fails publishes nothing.
    """
    pool = StagePool(workers_for(settings.parse_workers), parsing=False)
    pool.warm_up()  # before the index writer starts its threads: see warm_up
    count = 0
    try:
        index = IndexWriter(settings.index_path, fresh=True)
        try:
            update_signals(store)
            pages = (
                (record, store.anchors_to(record.url))
                for record in store.pages(indexable_only=True)
                if record.searchable
            )
            async for fields in pool.documents(pages):
                index.upsert_fields(fields)
                count += 1
        except BaseException:
            index.rollback()
            raise
        finally:
            index.close()
    finally:
        await pool.close()
    return count


async def recrawl_sites(settings: Settings, store: Store) -> list[CrawlOutcome]:
    """Crawl every enabled site again, one after another."""
    return [
        await crawl([site.start_url], settings, store, fresh=True)
        for site in store.sites()
        if site.enabled
    ]


@dataclass(frozen=True)
class Eviction:
    counts: dict[str, int]  # rule -> pages
    samples: dict[str, list[str]]  # rule -> a few of them
    removed: int  # 0 on a dry run


EVICTION_SAMPLES = 5


def evict(store: Store, settings: Settings, *, dry_run: bool) -> Eviction:
    """Apply the eviction rules (trawl.understand.eviction) to every stored page; unless
    ``dry_run``, remove what they name from store and index."""
    rules = EvictionRules(
        min_quality=settings.evict_min_quality,
        min_authority=settings.evict_min_authority,
        languages=parse_languages(settings.evict_languages),
    )
    languages = host_languages((r.host, r.lang) for r in store.pages(indexable_only=True))
    counts: dict[str, int] = {}
    samples: dict[str, list[str]] = {}
    doomed: list[str] = []
    for record in store.pages():
        reason = eviction_reason(record, languages.get(record.host), rules)
        if reason is None:
            continue
        counts[reason] = counts.get(reason, 0) + 1
        if len(samples.setdefault(reason, [])) < EVICTION_SAMPLES:
            samples[reason].append(record.url)
        doomed.append(record.url)
    if dry_run or not doomed:
        return Eviction(counts, samples, 0)
    index = IndexWriter(settings.index_path)
    try:
        store.delete_pages(doomed)
        for url in doomed:
            index.delete(url)
            if index.pending >= COMMIT_EVERY * 10:
                index.commit()
    finally:
        index.close()
    return Eviction(counts, samples, len(doomed))
