"""The async crawl loop: workers take URLs from the frontier, fetch, hand results on.

The crawler knows politeness (frontier, 429/503 back-off), permission
(robots.txt), scope, safety (unsafe URLs, redirect limits) and the crawl's
limits. It does not know what a page means: every response goes to a
``PageSink`` (``trawl.pipeline``), which answers with the links worth following.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Protocol

from trawl.crawl.frontier import CrawlFrontier
from trawl.errors import (
    BlockedAddress,
    ConnectionLost,
    FetchError,
    FetchTimeout,
    HostUnreachable,
    InvalidUrl,
    SitemapError,
)
from trawl.net.transport import ANY_TYPE, FetchRequest, Transport
from trawl.records import CrawlUrl, FetchResult, Href
from trawl.robots.policy import RobotsPolicy
from trawl.robots.rules import MAX_RULES
from trawl.sitemaps import MAX_INDEX_DEPTH, candidate_urls, parse_sitemap
from trawl.urls.identity import normalise, origin, politeness_host
from trawl.urls.safety import unsafe_reason
from trawl.urls.scope import Scope, make_scope

log = logging.getLogger(__name__)

MAX_ROBOTS_REDIRECTS = 5  # RFC 9309 2.3.1.2
MAX_CRAWL_DELAY = 60.0  # a hostile Crawl-delay must not stall a crawl for days
MAX_BACKOFF = 300.0  # longest wait after a 429 or 503, whatever Retry-After says
# Server errors and lost connections are often passing: tried again at most twice,
# with the host held back exponentially. A host failing SLOW_AFTER times in a row is
# slowed, PARK_AFTER times is given up for the rest of the run (three pages' worth).
RETRIED_STATUSES = frozenset({500, 502, 503, 504})
RETRIED_ERRORS = (ConnectionLost,)
MAX_SERVER_RETRIES = 2
SLOW_AFTER = 3
PARK_AFTER = 9
SAMPLES_PER_REASON = 5
LAST_ERRORS = 5  # the latest failures kept for the live progress (URL, what went wrong)
MAX_LATE_LASTMODS = 200_000  # about 30 MB at most; past it a late date is lost
_DELTA_SECONDS = re.compile(r"[0-9]+", re.ASCII)
# IMF-fixdate and the two obsolete forms RFC 9110 5.6.7 still asks recipients to read:
# printable ASCII only, so no Unicode digit or space reaches the date parser.
_HTTP_DATE = re.compile(r"[A-Za-z]{3,9},? [ -~]{10,40}", re.ASCII)


class PageSink(Protocol):
    """What the crawler tells the rest of the pipeline."""

    def admitted(self, items: Sequence[CrawlUrl]) -> None: ...

    async def fetched(self, item: CrawlUrl, result: FetchResult) -> list[Href]:
        """Record a response; return the URLs it points to (links, redirect target)."""
        ...

    def failed(self, item: CrawlUrl, error: str) -> None: ...

    def request_headers(self, item: CrawlUrl) -> dict[str, str]:
        """Extra request headers for ``item`` (conditional requests on a recrawl)."""
        ...

    def skipped(self, item: CrawlUrl, reason: str) -> None: ...

    def listed(self, urls: Sequence[str]) -> None:
        """A sitemap lists ``urls`` (fetched, to be fetched, or out of scope)."""
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
    sitemap_max_urls: int = 50_000  # per file (the sitemaps.org limit)


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
        self._scopes: list[Scope] = []
        self._robots: dict[str, asyncio.Future[_Robots]] = {}
        self._sitemap_origins: set[str] = set()
        self._wakeup = asyncio.Event()
        self._stopping = False
        self.stop_requested = False
        self._reserved = 0  # fetches started or about to start: keeps max_pages exact
        self._sitemap_tasks: set[asyncio.Task[None]] = set()
        # Sitemap dates of URLs a link had queued first, until they are fetched.
        self._lastmods: dict[str, datetime] = {}
        self.stats = CrawlStats()

    def stop(self) -> None:
        """Finish the requests in flight, start no new ones (Ctrl-C, the API)."""
        self.stop_requested = True
        self._halt()

    def _halt(self) -> None:
        self._stopping = True
        self._wakeup.set()

    async def run(
        self,
        start_urls: Sequence[str],
        resume: Sequence[CrawlUrl] = (),
        requests: Mapping[str, str] | None = None,
    ) -> CrawlStats:
        """Crawl from ``start_urls``; ``resume`` holds URLs an interrupted run left queued,
        ``requests`` the URL to send for a start URL typed other than its identity."""
        self.stats = CrawlStats(started=time.monotonic())
        self._scopes = [make_scope(self._limits.scope, u) for u in start_urls]
        wanted = requests or {}
        self.admit([CrawlUrl(u, 0, request=wanted.get(u)) for u in start_urls])
        for item in resume:
            self._frontier.enqueue(item)  # already in the store: not announced again
        workers = [asyncio.create_task(self._worker()) for _ in range(self._limits.concurrency)]
        try:
            await asyncio.gather(*workers)
        finally:
            for task in [*workers, *self._sitemap_tasks]:
                task.cancel()
        self.stats.queued = self._frontier.queued
        # Decided at the end: only then is every discovery of the last pages known.
        self.stats.hit_page_cap = self._reserved >= self._limits.max_pages and self.stats.queued > 0
        for reason, count in self._frontier.refused.items():
            self.stats.skipped[reason] += count
        return self.stats

    def admit(self, candidates: Sequence[CrawlUrl]) -> list[CrawlUrl]:
        """Queue the in-scope, safe, unseen ``candidates``; return those admitted."""
        admitted = []
        for c in candidates:
            if not any(s.contains(c.url) for s in self._scopes):
                continue
            if self._frontier.seen(c.url):
                continue
            if self.stats.parked and politeness_host(c.url) in self.stats.parked:
                self.stats.skip("host parked after repeated failures", c.url)
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
        if admitted:
            self.stats.discovered += len(admitted)
            self._sink.admitted(admitted)
            self._wakeup.set()
        return admitted

    # -- workers ----------------------------------------------------------

    async def _worker(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._stopping:
            if self._reserved >= self._limits.max_pages:
                self._halt()
                break
            item = self._frontier.next(loop.time())
            if item is None:
                if not self._frontier.has_pending() and not self._sitemap_tasks:
                    self._wakeup.set()  # let the other workers see the end too
                    break
                await self._sleep_until(self._frontier.wake_at(), loop)
                continue
            self._reserved += 1
            try:
                await self._crawl_one(item, loop)
            except Exception:
                # The page boundary: whatever one page does to us (a header no parser
                # foresaw, a store that refuses a value) ends that page, never the crawl.
                self._internal_error(item)
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

    async def _crawl_one(self, item: CrawlUrl, loop: asyncio.AbstractEventLoop) -> None:
        robots = await self._robots_for(item.url, loop)
        # robots.txt judges the URL requested: a rule may name a query as written.
        refusal = robots.policy.refusal(item.request_url, self._limits.user_agent)
        if refusal is not None and robots.policy.refused_address:
            self._reserved -= 1
            self.stats.skip("address not allowed (private or reserved)", item.url)
            self._sink.failed(item, robots.policy.error)
            return
        if refusal is not None and robots.policy.error:
            # No server answered robots.txt: the host is down, not forbidding us.
            self._reserved -= 1
            self.stats.failed += 1
            self.stats.error(item.url, robots.policy.error)
            self.stats.skip(f"host unreachable ({_kind(robots.policy.error)})", item.url)
            self._sink.failed(item, robots.policy.error)
            return
        if refusal is not None:
            self._reserved -= 1
            self.stats.blocked += 1
            self.stats.skip(refusal, item.url)
            self._sink.skipped(item, f"robots.txt: {robots.policy.reason}")
            return
        host = politeness_host(item.url)
        if host in self.stats.parked:
            self._reserved -= 1
            self.stats.skip("host parked after repeated failures", item.url)
            self._sink.skipped(item, f"host parked: {self.stats.parked[host]}")
            return
        self.stats.fetched += 1
        self.stats.fetching = item.url
        try:
            request = FetchRequest(
                item.request_url,
                max_bytes=self._limits.max_bytes,
                headers=tuple(self._sink.request_headers(item).items()),
            )
            result = await self._transport.fetch(request)
        except BlockedAddress as e:
            # Our own rule refused it before any request: not the server failing.
            self.stats.fetched -= 1
            self._reserved -= 1
            self.stats.skip("address not allowed (private or reserved)", item.url)
            self._sink.failed(item, str(e))
            return
        except FetchError as e:
            error = str(e) or type(e).__name__
            if isinstance(e, RETRIED_ERRORS) and item.retries < MAX_SERVER_RETRIES:
                self._retry(item, None, f"{type(e).__name__}: retried later", loop)
            else:
                self.stats.failed += 1
                self.stats.error(item.url, error)
                if isinstance(e, HostUnreachable | FetchTimeout):
                    self.stats.skip(f"host unreachable ({_kind(error)})", item.url)
                self._sink.failed(item, error)
            self._host_failed(host, item.url, error, loop)
            return
        if result.status == 429 and item.retries < self._limits.max_retries:
            # The server asks us to slow down: hold the whole host, then try again.
            self._retry(item, _retry_after(result), "HTTP 429: retried later", loop)
            return
        if result.status in RETRIED_STATUSES:
            self._host_failed(host, item.url, f"HTTP {result.status}", loop)
            # Not put back once its host is parked: another worker would ask it again.
            if item.retries < MAX_SERVER_RETRIES and host not in self.stats.parked:
                wait = _retry_after(result) if result.status == 503 else None
                self._retry(item, wait, f"HTTP {result.status}: retried later", loop)
                return
        elif result.status < 500:
            self._frontier.host_answered(item.url)
        self.stats.ok += 1
        if result.status >= 500:
            self.stats.server_errors += 1
            self.stats.error(item.url, f"HTTP {result.status}")
        if self._lastmods and item.lastmod is None and item.url in self._lastmods:
            item = replace(item, lastmod=self._lastmods.pop(item.url))
        try:
            found = await self._sink.fetched(item, result)
        except Exception:
            self._internal_error(item)
            return
        if result.location is not None:
            self._follow_redirect(item, found)
        elif item.depth + 1 <= self._limits.max_depth:
            self.admit(
                [CrawlUrl(h.url, item.depth + 1, item.url, request=h.request) for h in found]
            )

    def _retry(
        self, item: CrawlUrl, wait: float | None, reason: str, loop: asyncio.AbstractEventLoop
    ) -> None:
        """Put ``item`` back and hold its whole host for ``wait`` seconds (exponential
        back-off when None): the request does not count as fetched."""
        if wait is None:
            wait = max(self._limits.delay, self._limits.retry_backoff) * 2**item.retries
        self._frontier.retry(replace(item, retries=item.retries + 1), loop.time() + wait)
        self.stats.fetched -= 1
        self._reserved -= 1
        self.stats.skip(reason, item.url)

    def _host_failed(
        self, host: str, url: str, error: str, loop: asyncio.AbstractEventLoop
    ) -> None:
        """One more failure in a row at ``host`` (a retried server error, a reset, no
        answer): past SLOW_AFTER its delay doubles with each, past PARK_AFTER it is
        parked for the rest of the run, its queued URLs skipped without a request.
        The frontier counts (workers share one count and one park through the store);
        the rule is this one, for an embedded crawl and for workers alike."""
        if host in self.stats.parked:
            return
        failures = self._frontier.host_failed(url)
        if failures >= PARK_AFTER:
            self.stats.parked[host] = f"{failures} failures in a row, the last {error}"
            log.warning("parking %s for the rest of the run: %s", host, self.stats.parked[host])
            for dropped in self._frontier.park(url, f"host parked: {self.stats.parked[host]}"):
                self.stats.skip("host parked after repeated failures", dropped.url)
                self._sink.skipped(dropped, f"host parked: {self.stats.parked[host]}")
        elif failures >= SLOW_AFTER:
            slower = max(self._limits.delay, self._limits.retry_backoff) * 2 ** (
                failures - SLOW_AFTER + 1
            )
            self._frontier.set_delay(url, min(slower, MAX_CRAWL_DELAY), loop.time())

    def _internal_error(self, item: CrawlUrl) -> None:
        """Record a page whose processing raised: logged with its URL and counted."""
        log.exception("internal error while processing %s", item.url)
        self.stats.internal_errors += 1
        self.stats.error(item.url, "internal error (see the log)")
        self.stats.skip("internal error (see the log)", item.url)
        try:
            self._sink.failed(item, "internal error while processing the page")
        except Exception:
            # The sink itself failing (the store) must not end the crawl either.
            log.exception("recording the failure of %s failed", item.url)

    def _follow_redirect(self, item: CrawlUrl, targets: list[Href]) -> None:
        chain = (*item.redirect_chain, item.url)
        for target in targets:
            if target.url in chain:
                self.stats.skip("redirect loop", target.url)
            elif len(chain) > self._limits.max_redirects:
                self.stats.skip(f"more than {self._limits.max_redirects} redirects", target.url)
            else:
                # The same navigation, one hop on: the depth does not grow.
                self.admit(
                    [CrawlUrl(target.url, item.depth, item.url, chain, request=target.request)]
                )

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
            delay = policy.crawl_delay(self._limits.user_agent)
            if delay is not None and delay > self._limits.delay:
                self._frontier.set_delay(url, min(delay, MAX_CRAWL_DELAY), loop.time())
            usable = policy.rules is not None or policy.allow_all
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

    def _sitemap_done(self, task: asyncio.Task[None]) -> None:
        self._sitemap_tasks.discard(task)
        self._wakeup.set()

    async def _read_sitemaps(self, site: str, policy: RobotsPolicy) -> None:
        budget = self._limits.max_sitemaps_per_host
        listed = policy.sitemaps()
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
            try:
                request = FetchRequest(
                    url, max_bytes=self._limits.sitemap_max_bytes, read_types=ANY_TYPE
                )
                result = await self._transport.fetch(request)
                if result.status != 200:
                    continue
                # Parsing a large sitemap takes a while: off the event loop, so
                # the workers keep fetching meanwhile.
                sitemap = await asyncio.to_thread(
                    parse_sitemap,
                    result.body,
                    url,
                    content_type=result.header("content-type"),
                    max_bytes=self._limits.sitemap_max_bytes,
                    max_urls=self._limits.sitemap_max_urls,
                )
            except (FetchError, SitemapError) as e:
                self.stats.skip(f"sitemap unusable: {type(e).__name__}", url)
                continue
            if depth < MAX_INDEX_DEPTH:
                todo.extend((child, depth + 1, True) for child in sitemap.children)
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
            for entry in entries:
                # A link found the URL first: its date is kept for when it is fetched.
                if (
                    entry.lastmod is not None
                    and entry.url not in admitted
                    and len(self._lastmods) < MAX_LATE_LASTMODS
                ):
                    self._lastmods[entry.url] = entry.lastmod

    async def _fetch_robots(self, site: str) -> RobotsPolicy:
        # A deadline of its own, redirects included: every page of the origin waits
        # for this answer, and a server that drips robots.txt must not hold them all
        # for the page timeout times six hops.
        try:
            async with asyncio.timeout(self._limits.robots_timeout):
                return await self._fetch_robots_hops(site)
        except TimeoutError:
            late = f"no answer within {self._limits.robots_timeout:g}s"
            return RobotsPolicy.unreachable(f"robots.txt: {late}", late)

    async def _fetch_robots_hops(self, site: str) -> RobotsPolicy:
        url = site + "/robots.txt"
        for _ in range(MAX_ROBOTS_REDIRECTS + 1):
            try:
                request = FetchRequest(
                    url, max_bytes=self._limits.robots_max_bytes, read_types=ANY_TYPE
                )
                result = await self._transport.fetch(request)
            except BlockedAddress as e:
                # Never asked: our own address rule, not the host, keeps us out.
                return RobotsPolicy.unreachable(f"robots.txt: {e}", str(e), refused_address=True)
            except FetchError as e:
                return RobotsPolicy.unreachable(f"robots.txt: {e}", str(e) or type(e).__name__)
            if result.location is None:
                return RobotsPolicy.from_response(result.status, result.body)
            try:
                url = normalise(result.location, base=url)
            except InvalidUrl:
                break
        # Too many or unusable redirects: RFC 9309 lets us treat the file as unavailable.
        return RobotsPolicy.from_response(404, b"")


def _retry_after(result: FetchResult) -> float | None:
    """Seconds from a Retry-After header, capped at MAX_BACKOFF; None when it is not
    one of RFC 9110's two forms (ASCII delta-seconds or an HTTP-date).

    Strict on purpose: ``str.isdigit`` accepts "²" and "①", which ``float`` refuses,
    and ``int`` refuses more than 4,300 digits; a server's header must never raise.
    """
    value = (result.header("retry-after") or "").strip()
    if not value:
        return None
    if _DELTA_SECONDS.fullmatch(value):
        # More digits than MAX_BACKOFF has: past the cap, whatever they say.
        return MAX_BACKOFF if len(value) > 6 else min(float(int(value)), MAX_BACKOFF)
    if not _HTTP_DATE.fullmatch(value):
        return None
    try:
        when = parsedate_to_datetime(value)
        seconds = when.timestamp() - time.time()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return min(max(0.0, seconds), MAX_BACKOFF)


def _kind(error: str) -> str:
    """The kind of an unreachable host's error, for one summary line per kind."""
    if error.startswith("TLS failure"):
        return "TLS failure"
    if error.startswith("unknown host name"):
        return "unknown host name"
    if error.startswith(("timed out", "no answer")):
        return "no answer in time"
    return "connection refused" if "refused" in error.lower() else "cannot connect"
