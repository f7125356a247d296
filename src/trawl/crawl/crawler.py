"""The async crawl loop: workers take URLs from the frontier, fetch, hand results on.

The crawler knows politeness (frontier), permission (robots.txt), scope and
limits (max pages, max depth). It does not know what a page means: every
response goes to a ``PageSink`` (``trawl.pipeline``), which answers with the
links worth following.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from trawl.crawl.frontier import Frontier
from trawl.errors import FetchError, InvalidUrl
from trawl.net.fetcher import Fetcher
from trawl.records import CrawlUrl, FetchResult
from trawl.robots.policy import RobotsPolicy
from trawl.urls.identity import normalise, origin
from trawl.urls.scope import HostScope

log = logging.getLogger(__name__)

MAX_ROBOTS_REDIRECTS = 5  # RFC 9309 2.3.1.2
MAX_CRAWL_DELAY = 60.0  # a hostile Crawl-delay must not stall a crawl for days


class PageSink(Protocol):
    """What the crawler tells the rest of the pipeline."""

    def admitted(self, items: Sequence[CrawlUrl]) -> None: ...

    async def fetched(self, item: CrawlUrl, result: FetchResult) -> list[str]:
        """Record a response; return the URLs it points to (links, redirect target)."""
        ...

    def failed(self, item: CrawlUrl, error: str) -> None: ...

    def skipped(self, item: CrawlUrl, reason: str) -> None: ...


@dataclass
class CrawlStats:
    discovered: int = 0
    fetched: int = 0
    ok: int = 0
    failed: int = 0
    blocked: int = 0
    started: float = 0.0
    hit_page_cap: bool = False
    queued: int = 0

    @property
    def pages_per_second(self) -> float:
        elapsed = time.monotonic() - self.started
        return self.fetched / elapsed if elapsed > 0 else 0.0


@dataclass(frozen=True)
class CrawlLimits:
    user_agent: str
    concurrency: int
    delay: float
    max_pages: int
    max_depth: int
    max_bytes: int
    robots_max_bytes: int


class Crawler:
    def __init__(
        self,
        fetcher: Fetcher,
        sink: PageSink,
        limits: CrawlLimits,
        frontier: Frontier,
        on_progress: Callable[[CrawlStats], None] | None = None,
    ) -> None:
        self._fetcher = fetcher
        self._sink = sink
        self._limits = limits
        self._frontier = frontier
        self._on_progress = on_progress
        self._scopes: list[HostScope] = []
        self._robots: dict[str, asyncio.Future[RobotsPolicy]] = {}
        self._wakeup = asyncio.Event()
        self._stopping = False
        self.stop_requested = False
        self._reserved = 0  # fetches started or about to start: keeps max_pages exact
        self.stats = CrawlStats()

    def stop(self) -> None:
        """Finish the requests in flight, start no new ones (Ctrl-C, the API)."""
        self.stop_requested = True
        self._halt()

    def _halt(self) -> None:
        self._stopping = True
        self._wakeup.set()

    async def run(self, start_urls: Sequence[str]) -> CrawlStats:
        self.stats = CrawlStats(started=time.monotonic())
        self._scopes = [HostScope.of(u) for u in start_urls]
        self._admit([CrawlUrl(u, 0) for u in start_urls])
        workers = [asyncio.create_task(self._worker()) for _ in range(self._limits.concurrency)]
        try:
            await asyncio.gather(*workers)
        finally:
            for w in workers:
                w.cancel()
        self.stats.queued = self._frontier.queued
        # Decided at the end: only then is every discovery of the last pages known.
        self.stats.hit_page_cap = self._reserved >= self._limits.max_pages and self.stats.queued > 0
        return self.stats

    # -- workers ----------------------------------------------------------

    async def _worker(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._stopping:
            if self._reserved >= self._limits.max_pages:
                self._halt()
                break
            item = self._frontier.next(loop.time())
            if item is None:
                if not self._frontier.has_pending():
                    self._wakeup.set()  # let the other workers see the end too
                    break
                await self._sleep_until(self._frontier.wake_at(), loop)
                continue
            self._reserved += 1
            try:
                await self._crawl_one(item)
            finally:
                self._frontier.done(item, loop.time())
                self._wakeup.set()
            if self._on_progress is not None:
                self.stats.queued = self._frontier.queued
                self._on_progress(self.stats)

    async def _sleep_until(self, when: float | None, loop: asyncio.AbstractEventLoop) -> None:
        self._wakeup.clear()
        timeout = None if when is None else max(0.0, when - loop.time())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wakeup.wait(), timeout)

    async def _crawl_one(self, item: CrawlUrl) -> None:
        policy = await self._robots_for(item.url)
        if not policy.allows(item.url, self._limits.user_agent):
            self._reserved -= 1
            self.stats.blocked += 1
            self._sink.skipped(item, f"robots.txt: {policy.reason}")
            return
        self.stats.fetched += 1
        try:
            result = await self._fetcher.get(item.url, max_bytes=self._limits.max_bytes)
        except FetchError as e:
            self.stats.failed += 1
            self._sink.failed(item, str(e) or type(e).__name__)
            return
        self.stats.ok += 1
        try:
            found = await self._sink.fetched(item, result)
        except Exception:
            # A hostile page must never stop the crawl; the bug is logged with its URL.
            log.exception("processing %s failed", item.url)
            self._sink.failed(item, "internal error while processing the page")
            return
        depth = item.depth if result.location else item.depth + 1
        if depth <= self._limits.max_depth:
            self._admit([CrawlUrl(u, depth, item.url) for u in found])

    def _admit(self, candidates: list[CrawlUrl]) -> None:
        admitted = [
            c
            for c in candidates
            if any(s.contains(c.url) for s in self._scopes) and self._frontier.enqueue(c)
        ]
        if admitted:
            self.stats.discovered += len(admitted)
            self._sink.admitted(admitted)
            self._wakeup.set()

    # -- robots.txt -------------------------------------------------------

    async def _robots_for(self, url: str) -> RobotsPolicy:
        key = origin(url)
        future = self._robots.get(key)
        if future is None:
            future = self._robots[key] = asyncio.get_running_loop().create_future()
            try:
                policy = await self._fetch_robots(key)
            except asyncio.CancelledError:
                future.cancel()
                raise
            delay = policy.crawl_delay(self._limits.user_agent)
            if delay is not None and delay > self._limits.delay:
                self._frontier.set_delay(url, min(delay, MAX_CRAWL_DELAY))
            future.set_result(policy)
        return await future

    async def _fetch_robots(self, site: str) -> RobotsPolicy:
        url = site + "/robots.txt"
        for _ in range(MAX_ROBOTS_REDIRECTS + 1):
            try:
                result = await self._fetcher.get(
                    url, max_bytes=self._limits.robots_max_bytes, read_types=("*",)
                )
            except FetchError as e:
                return RobotsPolicy.unreachable(f"robots.txt: {e}")
            if result.location is None:
                return RobotsPolicy.from_response(result.status, result.body)
            try:
                url = normalise(result.location, base=url)
            except InvalidUrl:
                break
        # Too many or unusable redirects: RFC 9309 lets us treat the file as unavailable.
        return RobotsPolicy.from_response(404, b"")
