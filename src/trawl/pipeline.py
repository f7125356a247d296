"""The one module that knows the order of the stages.

    start URLs -> Crawler (frontier, robots, fetch) -> PagePipeline.fetched:
        extract (parse_html) -> PageRecord -> store.save_page -> index upsert/delete

Everything else is a stage that does one thing and knows nothing of its
neighbours. ``trawl index`` reuses the tail: store.pages -> index upsert.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from trawl.crawl.crawler import Crawler, CrawlLimits, CrawlStats
from trawl.crawl.frontier import Frontier
from trawl.extract.html import parse_html
from trawl.index.tantivy_index import IndexWriter
from trawl.net.fetcher import Fetcher
from trawl.records import CrawlUrl, FetchResult, Link, PageRecord
from trawl.settings import Settings
from trawl.store.base import Store
from trawl.understand.response import understand_response, with_content
from trawl.urls.identity import host_port

COMMIT_EVERY = 500  # index commits: bounds what a crash loses, and makes progress searchable


@dataclass(frozen=True)
class CrawlOutcome:
    crawl_id: int
    outcome: str
    discovered: int
    fetched: int
    ok: int
    failed: int
    blocked: int
    indexed: int
    seconds: float

    @property
    def pages_per_second(self) -> float:
        return self.fetched / self.seconds if self.seconds > 0 else 0.0


class PagePipeline:
    """Receives every crawl event, keeps store and index in step."""

    def __init__(self, store: Store, index: IndexWriter, crawl_id: int) -> None:
        self._store = store
        self._index = index
        self._crawl_id = crawl_id
        self.indexed = 0

    def admitted(self, items: Sequence[CrawlUrl]) -> None:
        self._store.frontier_add(self._crawl_id, items)

    async def fetched(self, item: CrawlUrl, result: FetchResult) -> list[str]:
        record, follow = understand_response(item, result)
        links: tuple[Link, ...] = ()
        if record.indexable:
            parsed = parse_html(
                result.body,
                item.url,
                result.header("content-type"),
                result.header("content-language"),
            )
            record = with_content(record, parsed)
            links = parsed.links
            follow = [link.url for link in parsed.links if not link.nofollow]
        self._store.save_page(record, links)
        self._store.frontier_mark(self._crawl_id, item.url, "fetched")
        if record.indexable:
            self._index.upsert(record)
            self.indexed += 1
        else:
            # A page that turned into a redirect, an error or a file leaves the index.
            self._index.delete(record.url)
        if self._index.pending >= COMMIT_EVERY:
            self._index.commit()
        return follow

    def failed(self, item: CrawlUrl, error: str) -> None:
        record = PageRecord(
            url=item.url,
            host=_host(item.url),
            status=0,
            depth=item.depth,
            fetched_at=time.time(),
            error=error,
        )
        self._store.save_page(record)
        self._store.frontier_mark(self._crawl_id, item.url, "failed", error)
        self._index.delete(item.url)

    def skipped(self, item: CrawlUrl, reason: str) -> None:
        self._store.frontier_mark(self._crawl_id, item.url, "skipped", reason)
        self._index.delete(item.url)


def _host(url: str) -> str:
    return urlsplit(url).hostname or ""


async def crawl(
    start_urls: Sequence[str],
    settings: Settings,
    store: Store,
    on_progress: Callable[[CrawlStats], None] | None = None,
    on_crawler: Callable[[Crawler], None] | None = None,
) -> CrawlOutcome:
    """Crawl from ``start_urls`` (already checked by ``parse_start_url``) and index."""
    started = time.monotonic()
    for url in start_urls:
        store.add_site(url)
    crawl_id = store.begin_crawl(start_urls)
    index = IndexWriter(settings.index_path)
    pipeline = PagePipeline(store, index, crawl_id)
    limits = CrawlLimits(
        user_agent=settings.user_agent,
        concurrency=settings.concurrency,
        delay=settings.delay,
        max_pages=settings.max_pages,
        max_depth=settings.max_depth,
        max_bytes=settings.max_bytes,
        robots_max_bytes=settings.robots_max_bytes,
    )
    # The user named these exact targets, so they may be private (tests, intranets).
    allowed = frozenset(host_port(u) for u in start_urls)
    outcome = "failed"
    stats = CrawlStats()
    try:
        async with Fetcher(
            user_agent=settings.user_agent,
            timeout=settings.timeout,
            concurrency=settings.concurrency,
            host_concurrency=settings.host_concurrency,
            allowed=allowed,
        ) as fetcher:
            frontier = Frontier(delay=settings.delay, host_concurrency=settings.host_concurrency)
            crawler = Crawler(fetcher, pipeline, limits, frontier, on_progress)
            if on_crawler is not None:
                on_crawler(crawler)
            stats = await crawler.run(start_urls)
            if crawler.stop_requested:
                outcome = "stopped"
            else:
                outcome = "page cap" if stats.hit_page_cap else "completed"
    finally:
        index.close()
        store.finish_crawl(crawl_id, pages_ok=stats.ok, pages_failed=stats.failed, outcome=outcome)
    return CrawlOutcome(
        crawl_id=crawl_id,
        outcome=outcome,
        discovered=stats.discovered,
        fetched=stats.fetched,
        ok=stats.ok,
        failed=stats.failed,
        blocked=stats.blocked,
        indexed=pipeline.indexed,
        seconds=time.monotonic() - started,
    )


def rebuild_index(store: Store, settings: Settings) -> int:
    """Rebuild the index from the store's indexable pages; return how many were indexed."""
    index = IndexWriter(settings.index_path, fresh=True)
    count = 0
    try:
        for record in store.pages(indexable_only=True):
            index.upsert(record)
            count += 1
            if index.pending >= COMMIT_EVERY * 10:
                index.commit()
    finally:
        index.close()
    return count
