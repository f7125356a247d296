"""Each fetched page through the stages, in order, into the store and the index.

    FetchResult -> understand -> parse (parse_page, in the stage pool) ->
        PageRecord -> store.save_page -> index (at the crawl's end, or live)

``PagePipeline`` is what the crawler hands every event to: admitted URLs,
request headers (validators), fetched pages, failures and skips.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from trawl.errors import RenderError
from trawl.extract.links import followed
from trawl.faults import fault_point
from trawl.index.tantivy_index import IndexWriter
from trawl.pipeline.health import DepthCap
from trawl.pipeline.stage_pool import StagePool
from trawl.records import CrawlUrl, FetchResult, Href, Link, PageRecord, Skip, SkipKind
from trawl.store.base import FrontierLog, Pages
from trawl.understand.indexability import Indexability
from trawl.understand.response import (
    blocked_page,
    failed_page,
    sitemap_dated,
    understand_page,
    understand_response,
)

if TYPE_CHECKING:
    from trawl.crawl.crawler import Admit
    from trawl.net.renderer import Renderer


COMMIT_EVERY = 500  # index commits: bounds what a crash loses, and makes progress searchable
MAX_LISTED = 500_000  # sitemap URLs kept in memory per crawl (about 60 MB at most)


class PageStore(Pages, FrontierLog, Protocol):
    """The store's roles a crawl's pages go through."""

    threadsafe: bool


class PagePipeline:
    """Receives every crawl event, keeps store and index in step."""

    def __init__(
        self,
        store: PageStore,
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
        self.unchanged = 0  # pages that answered 304: still in the index
        self.not_indexed: Counter[str] = Counter()  # why fetched pages are not indexed
        self.renderer: Renderer | None = None  # set for the crawl when --render
        self.depth_cap: DepthCap | None = None  # set by a crawl that judges its caps
        self._listed: set[str] = set()  # URLs the crawl's sitemaps list

    @property
    def indexed(self) -> int:
        return len(self.indexed_urls)

    def admitted(self, items: Sequence[CrawlUrl]) -> None:
        self._store.frontier_add(self._crawl_id, items)

    def listed(self, urls: Sequence[str]) -> None:
        """Pages a sitemap lists: those saved already are marked now, the others as they
        are saved (up to MAX_LISTED URLs kept in memory; past that, only the first)."""
        room = MAX_LISTED - len(self._listed)
        self._listed.update(urls[:room] if room > 0 else ())
        self._store.mark_in_sitemap(self._crawl_id, urls)

    async def dated(self, lastmods: Mapping[str, datetime]) -> set[str]:
        """A sitemap dates URLs a link found first: those this crawl saved already take
        the date as if fetched after the sitemap (``sitemap_dated``); return their URLs.
        Their index documents are made from the store when the crawl ends (link_up)."""
        if self._store.threadsafe:
            return await asyncio.to_thread(self._dated, lastmods)
        return self._dated(lastmods)

    def _dated(self, lastmods: Mapping[str, datetime]) -> set[str]:
        # On the frontier rows first: a URL claimed from now on (by any worker of a
        # shared crawl, or on resuming) carries its date; one saved already is redated.
        self._store.frontier_date(self._crawl_id, lastmods)
        saved = self._store.saved_dates(self._crawl_id, list(lastmods))
        changes = [
            (page.url, dates.modified, dates.modified_source)
            for page in saved
            if (dates := sitemap_dated(page, lastmods[page.url])) is not None
        ]
        if changes:
            self._store.redate_pages(changes)
            fault_point("sitemap.after_redate")  # in the write batch, not yet committed
        return {page.url for page in saved}

    def _save(
        self, record: PageRecord, links: Sequence[Link] = (), admitted: Sequence[CrawlUrl] = ()
    ) -> None:
        if record.url in self._listed:
            record = replace(record, in_sitemap=True)
        self._store.save_page(record, links, self._crawl_id, admitted)

    def request_headers(self, item: CrawlUrl) -> dict[str, str]:
        """Validators from the last crawl: an unchanged page answers 304 and costs no body."""
        etag, last_modified = self._store.validators(item.url)
        headers = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        return headers

    async def fetched(self, item: CrawlUrl, result: FetchResult, admit: Admit) -> None:
        follow = await self._fetched(item, result, admit)
        if self.depth_cap is not None and result.location is None:
            self.depth_cap.links(item, follow)

    async def _fetched(self, item: CrawlUrl, result: FetchResult, admit: Admit) -> list[Href]:
        """Save the answer and the frontier entries ``admit`` makes of what it points to
        in one transaction; return what it points to."""
        if self._index is not None and self._index.pending >= COMMIT_EVERY:
            # Before the save: the store's write batch first, so the index never holds
            # a page, or lacks one it deleted, that a kill could still take out of the
            # store.
            self._store.flush()
            self._index.commit()
        if result.status == 304:
            self.unchanged += 1
            follow = followed(tuple(self._store.links_from(item.url)))
            self._store.touch_page(item.url, self._crawl_id, admit(follow))
            if self._index is not None and not self._index.contains(item.url):
                # Unchanged, but not in the index (a crash lost its document before the
                # commit): indexed again when the crawl ends, so a recrawl repairs it.
                self.indexed_urls.append(item.url)
            return follow
        record, follow = understand_response(item, result)
        links: tuple[Link, ...] = ()
        if record.indexable:
            body, content_type = result.body, result.header("content-type")
            renderer = self.renderer
            if renderer is not None and result.status == 200 and renderer.scripted(result):
                try:
                    body = (await renderer.render(item.url, result)).encode()
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
        admitted = admit(follow)
        if self._store.threadsafe:
            # A network round trip or several (PostgreSQL): waited for in a thread,
            # so the event loop goes on fetching meanwhile.
            await asyncio.to_thread(self._save, record, links, admitted)
        else:
            self._save(record, links, admitted)
        fault_point("page.after_save")
        if not record.indexable and record.redirect_to is None:
            # A redirect is not a page lost: its target is crawled in its place.
            self.not_indexed[_not_indexed_reason(record)] += 1
        if self._index is None:
            return follow
        if record.indexable:
            # Indexed when the crawl ends (crawl_end.py): by then every link to the page is
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
            # crawl ends healthy (see crawl_end.close_crawl).
            self._index.delete(record.url)
        return follow

    def failed(self, item: CrawlUrl, error: str) -> None:
        # No response at all: kept like a server error, judged when the crawl ends.
        self._save(failed_page(item, time.time(), error))
        self._store.frontier_mark(self._crawl_id, item.url, "failed", error)

    def skipped(self, item: CrawlUrl, skip: Skip) -> None:
        if skip.kind in (SkipKind.ROBOTS, SkipKind.ROBOTS_UNANSWERED):
            # Recorded as a page (label Blocked), and so out of the index.
            self._save(blocked_page(item, time.time()))
            if self._index is not None:
                self._index.delete(item.url)
        self._store.frontier_skip(self._crawl_id, item.url, skip)


def _not_indexed_reason(record: PageRecord) -> str:
    """Why a fetched page is not searchable, in a summary's words."""
    label = record.indexability or "not a page"
    if record.canonical and label == Indexability.CANONICALISED.value:
        host = urlsplit(record.canonical).netloc
        if host != urlsplit(record.url).netloc:
            return f"canonicalised to {host} (outside the crawl)"
    return label.lower()
