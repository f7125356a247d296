"""The async crawl loop: workers take URLs from the frontier, fetch, hand results on.

The crawler knows politeness (frontier, 429/503 back-off), permission
(robots.txt), scope, safety (unsafe URLs, redirect limits) and the crawl's
limits. It does not know what a page means: every response goes to a
``PageSink`` (``trawl.pipeline``), which hands back the links worth following and
records those the crawler admits with the page.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Protocol

from trawl.crawl import policy as decide
from trawl.crawl.frontier import CrawlFrontier
from trawl.crawl.policy import (
    ADDRESS_REFUSED,
    MAX_ROBOTS_REDIRECTS,
    PARKED,
    Action,
    Fail,
    Keep,
    Pacing,
    Park,
    Refuse,
    Retry,
    Slow,
)
from trawl.errors import DiskFull, FetchError, InvalidUrl, SitemapError
from trawl.net.transport import ANY_TYPE, FetchRequest, Transport
from trawl.records import CrawlUrl, FetchResult, Href, Skip, SkipKind
from trawl.robots.policy import RobotsPolicy
from trawl.robots.rules import MAX_RULES
from trawl.sitemaps import MAX_INDEX_DEPTH, Sitemap, candidate_urls, parse_sitemap
from trawl.sitemaps.parse import GZIP_MAGIC
from trawl.urls.identity import normalise, origin, politeness_host
from trawl.urls.safety import unsafe_reason
from trawl.urls.scope import CrawlScope

log = logging.getLogger(__name__)

SAMPLES_PER_REASON = 5
# Workers per request slot: a worker whose response is being understood and stored
# (a parse in the stage pool, a store write) has handed its request slot on, so the
# next request goes out meanwhile; the extra workers bound the pages in that state.
WORKERS_PER_SLOT = 2
LAST_ERRORS = 5  # the latest failures kept for the live progress (URL, what went wrong)
MAX_LATE_LASTMODS = 200_000  # about 30 MB at most; past it a late date is lost


# What a sink calls with the URLs a response points to: the crawler's admission of them
# (scope, safety, depth, redirect limits), the new frontier entries back.
Admit = Callable[[Sequence[Href]], list[CrawlUrl]]


class PageSink(Protocol):
    """What the crawler tells the rest of the pipeline."""

    def admitted(self, items: Sequence[CrawlUrl]) -> None: ...

    async def fetched(self, item: CrawlUrl, result: FetchResult, admit: Admit) -> None:
        """Record a response and, in the same commit, the entries ``admit`` returns for
        the URLs it points to (links, redirect target): a kill between the two would
        leave the page fetched and its links never crawled."""
        ...

    def failed(self, item: CrawlUrl, error: str) -> None: ...

    def request_headers(self, item: CrawlUrl) -> dict[str, str]:
        """Extra request headers for ``item`` (conditional requests on a recrawl)."""
        ...

    def skipped(self, item: CrawlUrl, skip: Skip) -> None: ...

    def listed(self, urls: Sequence[str]) -> None:
        """A sitemap lists ``urls`` (fetched, to be fetched, or out of scope)."""
        ...

    async def dated(self, lastmods: Mapping[str, datetime]) -> set[str]:
        """A sitemap dates URLs a link found first: the pages saved already take the
        date now; return their URLs (the others get it with their CrawlUrl)."""
        ...


@dataclass
class CrawlStats:
    discovered: int = 0
    fetched: int = 0
    ok: int = 0
    failed: int = 0  # no response at all
    server_errors: int = 0  # 5xx responses, after retries
    blocked: int = 0  # by robots.txt
    internal_errors: int = 0  # pages whose processing raised: a bug, logged with the URL
    parked: dict[str, str] = field(default_factory=dict)  # host -> why it was given up
    sitemap_urls: int = 0  # page URLs read from sitemaps
    started: float = 0.0
    hit_page_cap: bool = False
    queued: int = 0
    skipped: Counter[str] = field(default_factory=Counter)  # reason -> URLs not fetched
    samples: dict[str, list[str]] = field(default_factory=dict)  # reason -> a few of them
    fetching: str = ""  # the URL whose request started last
    last_errors: deque[tuple[str, str]] = field(default_factory=lambda: deque(maxlen=LAST_ERRORS))

    @property
    def pages_per_second(self) -> float:
        elapsed = time.monotonic() - self.started
        return self.fetched / elapsed if elapsed > 0 else 0.0

    def error(self, url: str, error: str) -> None:
        self.last_errors.append((url, error))

    def skip(self, reason: str, url: str, count: int = 1) -> None:
        self.skipped[reason] += count
        sample = self.samples.setdefault(reason, [])
        if len(sample) < SAMPLES_PER_REASON:
            sample.append(url)


@dataclass(frozen=True)
class CrawlLimits:
    user_agent: str
    concurrency: int
    delay: float
    max_pages: int
    max_depth: int
    max_bytes: int
    robots_max_bytes: int
    scope: str = "host"
    max_redirects: int = 20
    max_retries: int = 3
    robots_retry: float = 60.0  # seconds before an unreachable robots.txt is asked again
    robots_timeout: float = 10.0  # one deadline for a robots.txt fetch, redirects included
    retry_backoff: float = 1.0  # seconds before the first retry, doubling after
    sitemaps: bool = True
    max_sitemaps_per_host: int = 50  # files, indexes included
    sitemap_max_bytes: int = 50 * 1024 * 1024  # decompressed, per file
    sitemap_first_bytes: int = 1024 * 1024  # read at once; past it, one sitemap at a time
    sitemap_max_urls: int = 50_000  # per file (the sitemaps.org limit)

    @property
    def pacing(self) -> Pacing:
        return Pacing(self.delay, self.retry_backoff, self.max_retries)


class _Slots:
    """The crawl's ``concurrency`` request slots, pages first: a sitemap's request waits
    while a worker waits, so that no host's first page waits for another's sitemap."""

    def __init__(self, slots: int) -> None:
        self._free = slots
        self._pages: deque[asyncio.Future[None]] = deque()
        self._sitemaps: deque[asyncio.Future[None]] = deque()

    async def take(self, *, sitemap: bool = False) -> None:
        if self._free > 0 and not self._pages and not (sitemap and self._sitemaps):
            self._free -= 1
            return
        waiter = asyncio.get_running_loop().create_future()
        queue = self._sitemaps if sitemap else self._pages
        queue.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed over just as its task was cancelled
            else:
                # A queue holds live waiters only (see the first line): a dead one
                # would keep later takers waiting for a slot that is free.
                with contextlib.suppress(ValueError):  # release skipped it already
                    queue.remove(waiter)
            raise

    def release(self) -> None:
        for waiting in (self._pages, self._sitemaps):
            while waiting:
                waiter = waiting.popleft()
                if not waiter.done():
                    waiter.set_result(None)  # the slot goes to it, never free meanwhile
                    return
        self._free += 1


class _Slot:
    """One request slot, held by a worker from taking a URL until its response is in:
    what follows (the sink's work on the page) needs no slot."""

    def __init__(self, slots: _Slots) -> None:
        self._slots = slots
        self._held = False

    async def take(self, *, sitemap: bool = False) -> None:
        await self._slots.take(sitemap=sitemap)
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._slots.release()


class _Idle:
    """Workers with nothing to fetch, woken one at a time.

    One timer, at the earliest time a host is due, wakes one worker; a worker that takes
    a URL arms it again for the next host due (at once if one is). An event set for
    everyone woke every idle worker for each page and each due host to find nothing:
    18 empty looks at the frontier a page on 100 hosts x 20 pages, the event loop's
    time taken from the requests due then (bench/RESULTS.md, "Many hosts: one worker
    woken at a time").
    """

    def __init__(self) -> None:
        self._sleepers: deque[asyncio.Future[None]] = deque()
        self._timer: asyncio.TimerHandle | None = None

    def ring_at(self, when: float) -> None:
        """Wake one worker when the loop's clock reaches ``when`` (or the earlier time
        already set)."""
        if self._timer is not None:
            if self._timer.when() <= when:
                return
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_at(when, self._ring)

    async def sleep(self, when: float | None) -> None:
        """Until woken; ``when``: the loop time a host is due (None: none waits for time)."""
        if when is not None:
            self.ring_at(when)
        waiter = asyncio.get_running_loop().create_future()
        self._sleepers.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            with contextlib.suppress(ValueError):  # woken just as it was cancelled
                self._sleepers.remove(waiter)
            if waiter.done() and not waiter.cancelled():
                self.wake_one()  # the wake it took goes to another
            raise

    def _ring(self) -> None:
        self._timer = None
        self.wake_one()

    def wake_one(self) -> None:
        while self._sleepers:
            waiter = self._sleepers.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def wake_all(self) -> None:
        while self._sleepers:
            waiter = self._sleepers.popleft()
            if not waiter.done():
                waiter.set_result(None)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


@dataclass
class _Robots:
    policy: RobotsPolicy
    expires: float  # loop time; inf for a usable answer


class Crawler:
    def __init__(
        self,
        transport: Transport,
        sink: PageSink,
        limits: CrawlLimits,
        frontier: CrawlFrontier,
        on_progress: Callable[[CrawlStats], None] | None = None,
    ) -> None:
        self._transport = transport
        self._sink = sink
        self._limits = limits
        self._frontier = frontier
        self._on_progress = on_progress
        self._scope = CrawlScope(limits.scope, ())
        self._robots: dict[str, asyncio.Future[_Robots]] = {}
        self._sitemap_origins: set[str] = set()
        self._idle = _Idle()
        self._slots = _Slots(limits.concurrency)
        self._stopping = False
        self.stop_requested = False
        self._reserved = 0  # fetches started or about to start: keeps max_pages exact
        self._sitemap_tasks: set[asyncio.Task[None]] = set()
        self._big_sitemap = asyncio.Semaphore(1)  # _read_sitemap: one large body at a time
        self._big_sitemap_failed: set[str] = set()  # hosts whose whole read failed under it
        # Sitemap dates of URLs a link had queued first, until they are fetched.
        self._lastmods: dict[str, datetime] = {}
        self.stats = CrawlStats()

    def stop(self) -> None:
        """Finish the requests in flight, start no new ones (Ctrl-C, the API)."""
        self.stop_requested = True
        self._halt()

    def _halt(self) -> None:
        self._stopping = True
        self._idle.wake_all()

    def _nudge(self) -> None:
        """The frontier changed: a worker looks when the next host is due (at once if one
        is), or now when nothing waits for time (the crawl's end may have come)."""
        when = self._frontier.wake_at()
        if when is None:
            self._idle.wake_one()
        else:
            self._idle.ring_at(when)

    def _halted(self) -> bool:
        return self._stopping

    async def run(
        self,
        start_urls: Sequence[str],
        resume: Sequence[CrawlUrl] = (),
        requests: Mapping[str, str] | None = None,
        revisit: Sequence[str] = (),
    ) -> CrawlStats:
        """Crawl from ``start_urls``; ``resume`` holds URLs an interrupted run left queued,
        ``requests`` the URL to send for a start URL typed other than its identity,
        ``revisit`` the URLs at depth 0 it fetched (start URLs and their redirects'
        targets), whose origins' sitemaps are read again."""
        self.stats = CrawlStats(started=time.monotonic())
        self._scope = CrawlScope(self._limits.scope, start_urls)
        wanted = requests or {}
        admitted = {
            c.url for c in self.admit([CrawlUrl(u, 0, request=wanted.get(u)) for u in start_urls])
        }
        for url in start_urls:
            if url not in admitted and self._frontier.seen(url):
                self._read_sitemaps_again(url)
        for url in revisit:  # an origin read already is not read twice (_robots_for)
            self._read_sitemaps_again(url)
        for item in resume:
            self._frontier.enqueue(item)  # already in the store: not announced again
        workers = [
            asyncio.create_task(self._worker())
            for _ in range(self._limits.concurrency * WORKERS_PER_SLOT)
        ]
        try:
            await asyncio.gather(*workers)
        finally:
            for task in [*workers, *self._sitemap_tasks]:
                task.cancel()
            self._idle.close()
        self.stats.queued = self._frontier.queued
        # Decided at the end: only then is every discovery of the last pages known.
        self.stats.hit_page_cap = self._reserved >= self._limits.max_pages and self.stats.queued > 0
        for reason, count in self._frontier.refused.items():
            self.stats.skipped[reason] += count
        return self.stats

    def admit(self, candidates: Sequence[CrawlUrl]) -> list[CrawlUrl]:
        """Queue the in-scope, safe, unseen ``candidates``; return those admitted."""
        admitted = self._enqueue(candidates)
        self._announce(admitted)
        return admitted

    def _announce(self, admitted: Sequence[CrawlUrl]) -> None:
        """Have the sink record entries ``_enqueue`` queued, in a write of their own."""
        if admitted:
            self._sink.admitted(admitted)
            self._nudge()

    def _enqueue(self, candidates: Sequence[CrawlUrl]) -> list[CrawlUrl]:
        """Queue the in-scope, safe, unseen ``candidates`` in memory; the store is told
        by the caller."""
        admitted = []
        for c in candidates:
            if not self._scope.contains(c.url):
                continue
            if self._frontier.seen(c.url):
                continue
            if self.stats.parked and politeness_host(c.url) in self.stats.parked:
                self.stats.skip(PARKED, c.url)
                self._frontier.mark_seen(c.url)
                continue
            reason = unsafe_reason(c.url)
            if reason is None and c.request is not None:
                reason = unsafe_reason(c.request)  # what is sent, tracking fields and all
            if reason is not None:
                self.stats.skip(f"unsafe URL: {reason}", c.url)
                self._frontier.mark_seen(c.url)  # counted once, not once per link to it
                continue
            if self._frontier.enqueue(c):
                admitted.append(c)
        self.stats.discovered += len(admitted)
        return admitted

    # -- workers ----------------------------------------------------------

    async def _worker(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._stopping:
            if self._reserved >= self._limits.max_pages:
                self._halt()
                break
            slot = _Slot(self._slots)
            await slot.take()
            if self._halted():  # while it waited for the slot
                slot.release()
                break
            item = self._frontier.next(loop.time())
            if item is None:
                slot.release()
                if not self._frontier.has_pending() and not self._sitemap_tasks:
                    self._idle.wake_all()  # let the other workers see the end too
                    break
                await self._idle.sleep(self._frontier.wake_at())
                continue
            self._nudge()  # another host may be due too: the next worker looks
            self._reserved += 1
            try:
                await self._crawl_one(item, loop, slot)
            except DiskFull:
                raise  # no page's fault: every page after it would fail the same way
            except Exception:
                # The page boundary: whatever one page does to us (a header no parser
                # foresaw, a store that refuses a value) ends that page, never the crawl.
                self._internal_error(item)
            finally:
                slot.release()
                self._frontier.done(item, loop.time())
                self._nudge()
            if self._on_progress is not None:
                self.stats.queued = self._frontier.queued
                self._on_progress(self.stats)

    async def _crawl_one(
        self, item: CrawlUrl, loop: asyncio.AbstractEventLoop, slot: _Slot
    ) -> None:
        asked = loop.time()
        waited = not self._robots_known(item.url, asked)
        robots = await self._robots_for(item.url, loop)
        bar = decide.robots_bar(robots.policy, item.request_url, self._limits.user_agent)
        if waited and bar is None and self._prerequisite_wait(item, robots, asked, loop):
            return
        if bar is not None:
            self._reserved -= 1
            self.stats.skip(bar.skip, item.url)
            if bar.kind == "rules":
                unanswered = robots.policy.unanswered
                self.stats.blocked += 0 if unanswered else 1
                kind = SkipKind.ROBOTS_UNANSWERED if unanswered else SkipKind.ROBOTS
                self._sink.skipped(item, Skip(kind, robots.policy.reason))
                return
            if bar.kind == "unreachable":
                self.stats.failed += 1
                self.stats.error(item.url, bar.note)
            self._sink.failed(item, bar.note)
            return
        host = politeness_host(item.url)
        if host in self.stats.parked:
            self._reserved -= 1
            self.stats.skip(PARKED, item.url)
            self._sink.skipped(item, Skip(SkipKind.PARKED, self.stats.parked[host]))
            return
        self.stats.fetched += 1
        self.stats.fetching = item.url
        request = FetchRequest(
            item.request_url,
            max_bytes=self._limits.max_bytes,
            headers=tuple(self._sink.request_headers(item).items()),
        )
        result: FetchResult | None = None
        try:
            result = await self._transport.fetch(request)
            decision = decide.on_answer(result, item.retries, self._limits.pacing, time.time())
        except FetchError as e:
            decision = decide.on_error(e, item.retries, self._limits.pacing)
        slot.release()  # the answer is in: another request may go out meanwhile
        if decision.host_answered:
            self._frontier.host_answered(item.url)
        if decision.host_failure is not None and decision.count_first:
            self._host_failed(host, item.url, decision.host_failure, loop)
        await self._act(item, result, decision.settled(host in self.stats.parked), loop)
        if decision.host_failure is not None and not decision.count_first:
            self._host_failed(host, item.url, decision.host_failure, loop)

    def _robots_known(self, url: str, now: float) -> bool:
        """Whether ``url``'s origin has a robots.txt answer in hand (no wait for it)."""
        future = self._robots.get(origin(url))
        return future is not None and future.done() and future.result().expires > now

    def _prerequisite_wait(
        self, item: CrawlUrl, robots: _Robots, asked: float, loop: asyncio.AbstractEventLoop
    ) -> bool:
        """After ``item`` waited for its origin's robots.txt, fetched as a prerequisite:
        True when the page must wait longer (put back), False when it goes out now.

        Without a Crawl-delay the page follows robots.txt at once, and the host's delay
        counts from the page, not from the hand-out before robots.txt (the gap to the
        next page would be the delay less robots.txt's answer time). A Crawl-delay is
        obeyed to the letter: robots.txt is a request, so the page waits that long after
        it, as in Scrapy and Heritrix, which pace robots.txt like any request."""
        if decide.robots_delay(robots.policy, self._limits.user_agent, self._limits.delay):
            # set_delay (in _robots_for) holds the host from robots.txt's answer on.
            self._reserved -= 1
            self._frontier.retry(item, asked)
            return True
        self._frontier.started(item.url, loop.time())
        return False

    async def _act(
        self,
        item: CrawlUrl,
        result: FetchResult | None,
        action: Action,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        if isinstance(action, Retry):
            self._retry(item, action, loop)
        elif isinstance(action, Refuse):
            self.stats.fetched -= 1
            self._reserved -= 1
            self.stats.skip(ADDRESS_REFUSED, item.url)
            self._sink.failed(item, action.error)
        elif isinstance(action, Fail):
            self.stats.failed += 1
            self.stats.error(item.url, action.error)
            if action.unreachable is not None:
                self.stats.skip(action.unreachable, item.url)
            self._sink.failed(item, action.error)
        elif result is not None:
            await self._keep(item, result, action)

    async def _keep(self, item: CrawlUrl, result: FetchResult, action: Keep) -> None:
        """Hand the answer to the sink and admit what it points to."""
        self.stats.ok += 1
        if action.server_error:
            self.stats.server_errors += 1
            self.stats.error(item.url, f"HTTP {result.status}")
        if self._lastmods and item.lastmod is None and item.url in self._lastmods:
            item = replace(item, lastmod=self._lastmods.pop(item.url))
        chosen: list[CrawlUrl] = []

        def admit(found: Sequence[Href]) -> list[CrawlUrl]:
            queued = self._follow(item, result, found)
            chosen.extend(queued)
            return queued

        try:
            await self._sink.fetched(item, result, admit)
        except DiskFull:
            raise
        except Exception:
            # Queued in memory, but the page's commit that held them may not have
            # happened: told again on their own (an entry already stored stays as is).
            self._internal_error(item, chosen)
            return
        if chosen:
            self._nudge()
        late = self._lastmods.pop(item.url, None) if self._lastmods else None
        if late is not None and item.lastmod is None:
            # A sitemap dated the page while it was being saved (after the pop above):
            # saved now, it takes the date.
            await self._date_saved({item.url: late})

    def _follow(self, item: CrawlUrl, result: FetchResult, found: Sequence[Href]) -> list[CrawlUrl]:
        """Queue what ``item``'s answer points to: its redirect's target, or its links
        one level deeper."""
        if result.location is not None:
            return self._follow_redirect(item, found)
        if item.depth + 1 > self._limits.max_depth:
            return []
        return self._enqueue(
            [CrawlUrl(h.url, item.depth + 1, item.url, request=h.request) for h in found]
        )

    def _retry(self, item: CrawlUrl, retry: Retry, loop: asyncio.AbstractEventLoop) -> None:
        """Put ``item`` back and hold its whole host: the request does not count as fetched."""
        self._frontier.retry(replace(item, retries=item.retries + 1), loop.time() + retry.wait)
        self.stats.fetched -= 1
        self._reserved -= 1
        self.stats.skip(retry.reason, item.url)

    def _host_failed(
        self, host: str, url: str, error: str, loop: asyncio.AbstractEventLoop
    ) -> None:
        """One more failure in a row at ``host``: the frontier counts (workers share one
        count and one park through the store), ``policy.host_failing`` decides."""
        if host in self.stats.parked:
            return
        verdict = decide.host_failing(self._frontier.host_failed(url), error, self._limits.pacing)
        if isinstance(verdict, Park):
            self.stats.parked[host] = verdict.reason
            log.warning("parking %s for the rest of the run: %s", host, verdict.reason)
            for dropped in self._frontier.park(url, verdict.reason):
                self.stats.skip(PARKED, dropped.url)
                self._sink.skipped(dropped, Skip(SkipKind.PARKED, verdict.reason))
        elif isinstance(verdict, Slow):
            self._frontier.set_delay(url, verdict.delay, loop.time())

    def _internal_error(self, item: CrawlUrl, queued: Sequence[CrawlUrl] = ()) -> None:
        """Record a page whose processing raised: logged with its URL and counted;
        ``queued``: what its answer added to the frontier in memory."""
        log.exception("internal error while processing %s", item.url)
        self.stats.internal_errors += 1
        self.stats.error(item.url, "internal error (see the log)")
        self.stats.skip("internal error (see the log)", item.url)
        try:
            self._announce(queued)
            self._sink.failed(item, "internal error while processing the page")
        except DiskFull:
            raise
        except Exception:
            # The sink itself failing (the store) must not end the crawl either.
            log.exception("recording the failure of %s failed", item.url)

    def _follow_redirect(self, item: CrawlUrl, targets: Sequence[Href]) -> list[CrawlUrl]:
        chain = (*item.redirect_chain, item.url)
        queued = []
        for target in targets:
            refusal = decide.redirect_refusal(target.url, chain, self._limits.max_redirects)
            if refusal is not None:
                self.stats.skip(refusal, target.url)
            else:
                # The same navigation, one hop on: the depth does not grow.
                queued += self._enqueue(
                    [CrawlUrl(target.url, item.depth, item.url, chain, request=target.request)]
                )
        return queued

    async def pace(self, url: str, within: float) -> bool:
        """Wait for a slot at ``url``'s host, for a request the frontier never hands out
        (a rendered page's subrequest): the host's delay holds for those too. False at
        once, and no slot taken, when the slot comes more than ``within`` seconds on."""
        loop = asyncio.get_running_loop()
        wait = self._frontier.reserve(url, loop.time(), within)
        if wait is None:
            return False
        if wait > 0:
            await asyncio.sleep(wait)
        return True

    # -- robots.txt -------------------------------------------------------

    async def robots_refusal(self, url: str) -> str | None:
        """Why robots.txt keeps the crawl from ``url``, or None: asked for the requests
        a rendered page makes itself (scripts, images, XHR), which the crawler never
        sees. An origin not seen before has its robots.txt read first."""
        robots = await self._robots_for(url, asyncio.get_running_loop())
        return None if robots.policy.allows(url, self._limits.user_agent) else "robots.txt"

    async def _robots_for(self, url: str, loop: asyncio.AbstractEventLoop) -> _Robots:
        key = origin(url)
        future = self._robots.get(key)
        if future is not None and future.done() and future.result().expires <= loop.time():
            future = None  # an unreachable robots.txt is asked again after a while
        if future is None:
            future = self._robots[key] = loop.create_future()
            try:
                policy = await self._fetch_robots(key)
            except asyncio.CancelledError:
                future.cancel()
                raise
            if policy.dropped_rules:
                reason = f"robots.txt rules past the {MAX_RULES}-rule cap ignored"
                self.stats.skip(reason, key + "/robots.txt", policy.dropped_rules)
            delay = decide.robots_delay(policy, self._limits.user_agent, self._limits.delay)
            if delay is not None:
                self._frontier.set_delay(url, delay, loop.time())
            usable = decide.robots_usable(policy)
            expires = float("inf") if usable else loop.time() + self._limits.robots_retry
            future.set_result(_Robots(policy, expires))
            if usable and self._limits.sitemaps and key not in self._sitemap_origins:
                self._sitemap_origins.add(key)
                task = asyncio.create_task(self._read_sitemaps(key, policy))
                self._sitemap_tasks.add(task)
                task.add_done_callback(self._sitemap_done)
        return await future

    # -- sitemaps ---------------------------------------------------------
    # Read in tasks of their own, beside the workers: a huge or slow sitemap
    # holds no worker and delays no page.

    def _read_sitemaps_again(self, url: str) -> None:
        """A start URL a run before this one fetched (this run resumes it): its origin's
        sitemaps are read again even if no page of it is left to fetch. What the killed
        run read of them (the URLs they admitted, their dates, the in-sitemap marks) went
        into a write batch that the kill may have lost whole."""
        if not self._limits.sitemaps:
            return

        async def robots() -> None:
            await self._robots_for(url, asyncio.get_running_loop())  # then the sitemaps

        task = asyncio.create_task(robots())
        # Counted as a sitemap task, so that no worker ends the crawl while robots.txt is
        # read: the sitemap task that follows is added before this one is done.
        self._sitemap_tasks.add(task)
        task.add_done_callback(self._sitemap_done)

    def _sitemap_done(self, task: asyncio.Task[None]) -> None:
        self._sitemap_tasks.discard(task)
        self._nudge()

    async def _read_sitemaps(self, site: str, policy: RobotsPolicy) -> None:
        budget = self._limits.max_sitemaps_per_host
        listed = policy.sitemaps()
        # Under the crawl's own delay a sitemap is a prerequisite, like robots.txt, and
        # takes no turn from the pages; a robots.txt Crawl-delay paces it like a page.
        paced = decide.robots_delay(policy, self._limits.user_agent, self._limits.delay)
        home = politeness_host(site)
        todo = [(url, 0, bool(listed)) for url in candidate_urls(site, listed)]
        seen: set[str] = set()
        while todo and budget > 0 and not self._stopping:
            url, depth, declared = todo.pop(0)
            if url in seen:
                continue
            seen.add(url)
            # A guessed location must be allowed by robots.txt; a declared one is.
            if not declared and not policy.allows(url, self._limits.user_agent):
                continue
            budget -= 1
            own_pace = bool(paced) and politeness_host(url) == home
            if own_pace:
                await self.pace(url, float("inf"))
            try:
                read = await self._read_sitemap(url, own_pace)
                if isinstance(read, FetchResult):
                    if read.location is not None:
                        # Yoast SEO sends /sitemap.xml on to /sitemap_index.xml. Followed on
                        # this site only: robots.txt vouches for the declared, not their hops.
                        target = _same_site(read.location, url, site)
                        if target is not None:
                            todo.insert(0, (target, depth, False))
                    continue
                sitemap = read
            except (FetchError, SitemapError) as e:
                self.stats.skip(f"sitemap unusable: {type(e).__name__}", url)
                continue
            if depth < MAX_INDEX_DEPTH:
                # No more than can still be read: an index lists up to 50,000 children
                # (16 KB each at most), and each read's would be held to the end.
                known = seen | {u for u, _, _ in todo}
                fresh = [c for c in self._own_children(sitemap) if c not in known]
                room = max(0, budget - len(todo))
                todo.extend((child, depth + 1, True) for child in fresh[:room])
            self.stats.sitemap_urls += len(sitemap.entries)
            self._sink.listed([e.url for e in sitemap.entries])
            if self._limits.max_depth < 1:
                # A sitemap's URLs are one hop from the start, like its links.
                if sitemap.entries:
                    reason = "sitemap URL past --max-depth"
                    self.stats.skip(reason, sitemap.entries[0].url, len(sitemap.entries))
                continue
            # lastmod rides with the URL: the parser already dropped it where the
            # sitemap's dates were not to be trusted.
            entries = [
                CrawlUrl(e.url, 1, url, lastmod=e.lastmod, request=e.request)
                for e in sitemap.entries
            ]
            admitted = {c.url for c in self.admit(entries)}
            # A link found these URLs first: a date waits for its page's fetch, and a
            # page saved already takes it now. Kept before the sink is asked, so that a
            # page being saved meanwhile finds it when its save is done (_keep).
            late = {
                e.url: e.lastmod for e in entries if e.lastmod is not None and e.url not in admitted
            }
            for url, lastmod in late.items():
                if len(self._lastmods) < MAX_LATE_LASTMODS:
                    # The first sitemap's date, as for a URL a sitemap admitted.
                    self._lastmods.setdefault(url, lastmod)
            if late:
                for url in await self._date_saved(late):
                    self._lastmods.pop(url, None)

    def _own_children(self, index: Sitemap) -> list[str]:
        """The sitemaps ``index`` lists on its own host (sitemaps.org allows no other):
        robots.txt vouched for the index, and another host's robots.txt, pace and safe
        URLs are not asked for a sitemap's request."""
        host = politeness_host(index.url)
        own = [child for child in index.children if politeness_host(child) == host]
        if len(own) < len(index.children):
            foreign = next(c for c in index.children if politeness_host(c) != host)
            self.stats.skip(
                "sitemap index child on another host", foreign, len(index.children) - len(own)
            )
        return own

    async def _read_sitemap(self, url: str, paced: bool) -> Sitemap | FetchResult:
        """The sitemap at ``url``, or the answer when it holds none (a redirect, an error).

        Each host's sitemaps are read by a task of its own, so a body waiting for its
        parse would cost up to ``sitemap_max_bytes`` per host. A first read stops at
        ``sitemap_first_bytes``; a sitemap found larger (cut there, or gzip inflating
        past it) is read again whole under a crawler-wide permit, one at a time, and
        its body dropped before the permit is: memory is bounded, not by host count.
        """
        limits = self._limits
        cap = min(limits.sitemap_first_bytes, limits.sitemap_max_bytes)
        first = await self._fetch_sitemap(url, cap)
        if first.location is not None or first.status != 200:
            return first
        if not first.truncated or cap == limits.sitemap_max_bytes:
            try:
                return await self._parse_sitemap(first, url, cap)
            except SitemapError:
                if cap == limits.sitemap_max_bytes or not first.body.startswith(GZIP_MAGIC):
                    raise
                # Possibly a gzip that inflates past the first cap: read again whole.
        del first  # not held while waiting for the permit
        host = politeness_host(url)
        if host in self._big_sitemap_failed:
            # Every host's large sitemaps wait for the permit: a host that drips one
            # until the timeout would hold it that long for each of its 50 sitemaps.
            raise SitemapError("a large sitemap of a host that failed to send one whole")
        if paced:
            # A later request than the turn taken is still a polite one.
            await self.pace(url, float("inf"))
        async with self._big_sitemap:
            try:
                whole = await self._fetch_sitemap(url, limits.sitemap_max_bytes)
            except FetchError:
                self._big_sitemap_failed.add(host)
                raise
            try:
                if whole.location is not None or whole.status != 200:
                    return replace(whole, body=b"")
                return await self._parse_sitemap(whole, url, limits.sitemap_max_bytes)
            finally:
                del whole

    async def _fetch_sitemap(self, url: str, max_bytes: int) -> FetchResult:
        slot = _Slot(self._slots)
        await slot.take(sitemap=True)
        try:
            # A Content-Length past the first cap is read up to it, then again whole.
            cut = max_bytes < self._limits.sitemap_max_bytes
            request = FetchRequest(url, max_bytes=max_bytes, read_types=ANY_TYPE, cut_declared=cut)
            return await self._transport.fetch(request)
        finally:
            slot.release()

    async def _parse_sitemap(self, result: FetchResult, url: str, max_bytes: int) -> Sitemap:
        # Parsing a large sitemap takes a while: off the event loop, so the workers
        # keep fetching meanwhile.
        return await asyncio.to_thread(
            parse_sitemap,
            result.body,
            url,
            content_type=result.header("content-type"),
            max_bytes=max_bytes,
            max_urls=self._limits.sitemap_max_urls,
        )

    async def _date_saved(self, lastmods: Mapping[str, datetime]) -> set[str]:
        """The sink's ``dated``; a failure (a store that refuses a value) loses these
        dates, never the crawl or the rest of the sitemaps."""
        try:
            return await self._sink.dated(lastmods)
        except DiskFull:
            raise
        except Exception:
            log.exception("dating %d pages from a sitemap failed", len(lastmods))
            return set()

    async def _fetch_robots(self, site: str) -> RobotsPolicy:
        # A deadline of its own, redirects included: every page of the origin waits
        # for this answer, and a server that drips robots.txt must not hold them all
        # for the page timeout times six hops.
        try:
            async with asyncio.timeout(self._limits.robots_timeout):
                return await self._fetch_robots_hops(site)
        except TimeoutError:
            return decide.robots_late(self._limits.robots_timeout)

    async def _fetch_robots_hops(self, site: str) -> RobotsPolicy:
        url = site + "/robots.txt"
        for _ in range(MAX_ROBOTS_REDIRECTS + 1):
            request = FetchRequest(
                url,
                max_bytes=self._limits.robots_max_bytes,
                read_types=ANY_TYPE,
                cut_declared=True,
            )
            try:
                result = await self._transport.fetch(request)
            except FetchError as e:
                return decide.robots_failed(e)
            hop = decide.robots_hop(url, result)
            if isinstance(hop, RobotsPolicy):
                return hop
            url = hop
        return decide.robots_unavailable()


def _same_site(location: str, base: str, site: str) -> str | None:
    """A redirect's target when it stays on ``site`` (an origin), else None."""
    try:
        target = normalise(location, base=base)
    except InvalidUrl:
        return None
    return target if origin(target) == site else None
