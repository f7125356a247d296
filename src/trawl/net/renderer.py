"""Rendered crawling: an HTML page loaded in headless Chromium, its DOM handed back.

The only module that imports Playwright. The crawler still fetches each page
itself (robots.txt, caps, status, redirects); the renderer takes that
response and lets Chromium run the page's JavaScript on it:

- the document request is answered with the body the crawler already has,
  so the page is not requested twice;
- every other request the page makes (scripts, images, XHR, frames) is routed
  through ``permits`` (scope, unsafe URLs, robots.txt: the crawl's rules) and, when
  allowed, fetched through the crawl's ``Transport``: the SSRF-checked resolver,
  the byte cap, no cookies. Each fetch, each redirect hop too, waits for ``pace``:
  a slot at its host booked with the crawl's frontier, so a host's delay holds
  for a page's subrequests as for its pages. Chromium itself never reaches the
  network; requests other than GET and HEAD, WebSockets and anything a route
  misses are refused (a dead proxy catches the last kind);
- each page gets a fresh browser context (no cookies, storage or cache from
  the page before) and one deadline, ``timeout``, for loading, settling and
  reading the DOM;
- a page with no script and no inline event handler is not loaded at all
  (``scripted``): nothing on it could change its DOM;
- scripts, stylesheets, images and fonts are fetched once per crawl and then
  served from our own memory (``CACHE_BYTES``, least recently used out first;
  never an answer marked ``no-store``): a site's pages share most of their
  assets, and a fresh context per page would otherwise ask the site for all of
  them again on every page. A page that overruns it has its context closed; when even
  closing fails the whole browser is replaced, so one hung page cannot hold
  the crawl.

Chromium is Debian's (``/usr/bin/chromium``); Playwright's bundled browser
download is not used. ``launch`` gives every browser a fresh temporary profile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from types import TracebackType
from urllib.parse import urljoin

from trawl.errors import FetchError, RenderError
from trawl.extras import reraise_missing

try:
    from playwright.async_api import (
        Browser,
        BrowserContext,
        Playwright,
        Request,
        Route,
        WebSocketRoute,
        async_playwright,
    )
    from playwright.async_api import Error as PlaywrightError
except ImportError as e:
    reraise_missing(e, "render")
    raise

from trawl.net.transport import ANY_TYPE, FetchRequest, Transport
from trawl.records import FetchResult

log = logging.getLogger(__name__)

CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    "--dns-prefetch-disable",
    "--mute-audio",
    # Every page request is answered through a route. Anything Chromium would
    # still send on its own goes to a proxy that does not exist, loopback included.
    "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
)
SETTLE = 1.0  # seconds at most to wait, after "load", for the page's requests to stop
QUIET = 0.15  # seconds with no request in flight that count as settled
MAX_SUBREQUESTS = 200  # per page; the rest are refused
MAX_REDIRECTS = 20  # followed per subrequest (seed 003)
CLOSE_DEADLINE = 5.0
CACHE_BYTES = 32 * 1024 * 1024  # static subresources kept for the crawl's later pages
_CACHED_TYPES = frozenset({"script", "stylesheet", "image", "font"})
# Not handed back to Chromium: the body is already decoded and its length known,
# and a rendered page keeps no cookies.
_DROPPED_HEADERS = frozenset(
    {"content-encoding", "content-length", "transfer-encoding", "set-cookie", "connection"}
)


# A script element or an inline event handler (onload=...): what can run when a page
# loads. Searched in the lower-cased body; bounded, so no input makes it backtrack.
_HANDLER = re.compile(rb"\son[a-z]{3,24}\s*=")


class Renderer:
    """``async with Renderer(...) as r: html = await r.render(url, response)``."""

    def __init__(
        self,
        transport: Transport,
        permits: Callable[[str], Awaitable[str | None]],
        pace: Callable[[str, float], Awaitable[bool]],
        *,
        executable: str,
        user_agent: str,
        timeout: float,
        workers: int,
        max_bytes: int,
    ) -> None:
        """``permits(url)`` gives the reason a subrequest is refused, or None;
        ``pace(url, within)`` returns True when a request to ``url``'s host may start,
        False when it could not within ``within`` seconds (no slot taken)."""
        self._transport = transport
        self._permits = permits
        self._pace = pace
        self._executable = executable
        self._user_agent = user_agent
        self._timeout = timeout
        self._max_bytes = max_bytes
        self._gate = asyncio.Semaphore(workers)
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self.refused: dict[str, int] = {}  # reason -> subrequests refused
        self.reused = 0  # subrequests answered from the cache (or another page's fetch)
        self.static = 0  # pages with nothing to run, not loaded in Chromium
        self._cache: OrderedDict[str, FetchResult] = OrderedDict()
        self._cached_bytes = 0
        self._fetching: dict[str, asyncio.Task[FetchResult]] = {}
        self.timeouts = 0  # pages whose context was dropped at the deadline
        self.restarts = 0  # browsers replaced because a context would not close

    async def __aenter__(self) -> Renderer:
        try:
            self._playwright = await async_playwright().start()
            self._browser = await self._launch()
        except PlaywrightError as e:
            await self.__aexit__(None, None, None)
            raise RenderError(f"cannot start Chromium at {self._executable}: {e.message}") from e
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for fetching in list(self._fetching.values()):
            fetching.cancel()  # a page dropped at its deadline may have left one running
        if self._browser is not None:
            with contextlib.suppress(PlaywrightError, TimeoutError):
                await asyncio.wait_for(self._browser.close(), CLOSE_DEADLINE)
            self._browser = None
        if self._playwright is not None:
            with contextlib.suppress(PlaywrightError, TimeoutError):
                await asyncio.wait_for(self._playwright.stop(), CLOSE_DEADLINE)
            self._playwright = None

    async def _launch(self) -> Browser:
        assert self._playwright is not None
        return await self._playwright.chromium.launch(
            executable_path=self._executable,
            headless=True,
            args=list(CHROMIUM_ARGS),
            chromium_sandbox=False,
            timeout=30_000,
        )

    def scripted(self, response: FetchResult) -> bool:
        """Could running the page change its DOM? Not without a script or an inline event
        handler: such a page renders to what it already is, and is not loaded at all
        (opening a context and letting the page settle is most of a render's time).
        Such pages are counted in ``static``."""
        lowered = response.body.lower()
        scripted = b"<script" in lowered or _HANDLER.search(lowered) is not None
        if not scripted:
            self.static += 1
        return scripted

    async def render(self, url: str, response: FetchResult) -> str:
        """The serialised DOM of ``url`` after Chromium ran it; RenderError when it cannot."""
        async with self._gate:
            context = await self._new_context()
            deadline = asyncio.get_running_loop().time() + self._timeout
            try:
                async with asyncio.timeout_at(deadline):
                    return await self._load(context, url, response, deadline)
            except TimeoutError:
                self.timeouts += 1
                raise RenderError(f"render timed out after {self._timeout:g}s") from None
            except PlaywrightError as e:
                raise RenderError(f"render failed: {e.message.splitlines()[0][:200]}") from None
            finally:
                await self._close(context)

    async def _new_context(self) -> BrowserContext:
        """A fresh context; a browser that died or cannot make one is replaced once."""
        for attempt in range(2):
            if self._browser is None or not self._browser.is_connected():
                await self._replace_browser()
            assert self._browser is not None
            try:
                return await self._browser.new_context(
                    user_agent=self._user_agent,
                    service_workers="block",
                    accept_downloads=False,
                )
            except PlaywrightError as e:
                if attempt == 1:
                    raise RenderError(f"Chromium cannot open a page: {e.message}") from e
                self._browser = None
        raise AssertionError("unreachable")

    async def _load(
        self, context: BrowserContext, url: str, response: FetchResult, deadline: float
    ) -> str:
        served_document = False
        subrequests = 0
        loop = asyncio.get_running_loop()
        in_flight = 0
        last_activity = loop.time()

        async def route(route: Route, request: Request) -> None:
            nonlocal served_document, subrequests, in_flight, last_activity
            if not served_document and request.is_navigation_request():
                served_document = True
                await route.fulfill(
                    status=response.status, headers=_passed_on(response), body=response.body
                )
                return
            subrequests += 1
            in_flight += 1
            try:
                # A page dropped at its deadline closes its routes under us: nothing to do.
                with contextlib.suppress(PlaywrightError):
                    await answer(route, request)
            finally:
                in_flight -= 1
                last_activity = loop.time()

        async def answer(route: Route, request: Request) -> None:
            reason = await self._refusal(request, subrequests)
            if reason is not None:
                self.refused[reason] = self.refused.get(reason, 0) + 1
                await route.abort("blockedbyclient")
                return
            try:
                fetched = await self._subresource(request, deadline)
            except (FetchError, _Refused) as e:
                reason = str(e) if isinstance(e, _Refused) else type(e).__name__
                self.refused[reason] = self.refused.get(reason, 0) + 1
                await route.abort("failed")
                return
            await route.fulfill(
                status=fetched.status, headers=_passed_on(fetched), body=fetched.body
            )

        async def no_websocket(ws: WebSocketRoute) -> None:
            self.refused["websocket"] = self.refused.get("websocket", 0) + 1
            await ws.close()

        await context.route("**/*", route)
        await context.route_web_socket("**/*", no_websocket)
        page = await context.new_page()
        await page.goto(url, wait_until="load")
        # Scripts often add content just after "load", or once their requests
        # answer: wait until nothing has been in flight for a moment. (Our own
        # count, since every request passes through the route: Playwright's
        # "networkidle" always waits a fixed 500 ms, most of a page's time.)
        settle_by = loop.time() + SETTLE
        while loop.time() < settle_by:
            if in_flight == 0 and loop.time() - last_activity >= QUIET:
                break
            await asyncio.sleep(QUIET / 3)
        return await page.content()

    async def _subresource(self, request: Request, deadline: float) -> FetchResult:
        """The answer to an allowed subrequest; a static one is fetched once per crawl."""
        url = request.url
        if request.resource_type not in _CACHED_TYPES:
            return await self._fetch_following(url, deadline)
        cached = self._cache.get(url)
        if cached is not None:
            self._cache.move_to_end(url)
            self.reused += 1
            return cached
        fetching = self._fetching.get(url)
        if fetching is None:
            fetching = asyncio.ensure_future(self._fetch_following(url, deadline))
            fetching.add_done_callback(lambda task: self._fetched(url, task))
            self._fetching[url] = fetching
        else:
            self.reused += 1  # another page's render is fetching it now
        # Shielded: a page dropped at its deadline leaves the fetch to the others waiting.
        return await asyncio.shield(fetching)

    def _fetched(self, url: str, task: asyncio.Task[FetchResult]) -> None:
        del self._fetching[url]
        if task.cancelled() or task.exception() is not None:
            return  # each page that waited for it has the error; nothing is kept
        fetched = task.result()
        size = len(fetched.body)
        if "no-store" in (fetched.header("cache-control") or "").lower() or size > CACHE_BYTES // 8:
            return
        self._cache[url] = fetched
        self._cached_bytes += size
        while self._cached_bytes > CACHE_BYTES:
            _, dropped = self._cache.popitem(last=False)
            self._cached_bytes -= len(dropped.body)

    async def _fetch_following(self, url: str, deadline: float) -> FetchResult:
        """GET ``url``, following redirects here, each hop checked like the first and
        paced; a hop whose host has no slot before the page's ``deadline`` is refused.

        Chromium is never handed a redirect: a request it makes for a Location is
        not routed again (Playwright calls a route for the first URL only), so it
        would escape the checks.
        """
        loop = asyncio.get_running_loop()
        for _ in range(MAX_REDIRECTS + 1):
            if not await self._pace(url, deadline - loop.time()):
                raise _Refused("no slot at its host before the page's deadline")
            request = FetchRequest(url, max_bytes=self._max_bytes, read_types=ANY_TYPE)
            fetched = await self._transport.fetch(request)
            if fetched.location is None:
                return fetched
            url = urljoin(url, fetched.location)
            reason = _not_http(url) or await self._permits(url)
            if reason is not None:
                raise _Refused(f"redirect to {reason}")
        raise _Refused(f"more than {MAX_REDIRECTS} redirects")

    async def _refusal(self, request: Request, count: int) -> str | None:
        if count > MAX_SUBREQUESTS:
            return f"more than {MAX_SUBREQUESTS} requests from one page"
        if request.method not in ("GET", "HEAD"):
            return f"{request.method} request"
        if request.is_navigation_request() and request.frame.parent_frame is None:
            return "the page navigated away"
        return _not_http(request.url) or await self._permits(request.url)

    async def _close(self, context: BrowserContext) -> None:
        try:
            await asyncio.wait_for(context.close(), CLOSE_DEADLINE)
        except (PlaywrightError, TimeoutError):
            log.warning("a browser context would not close: replacing the browser")
            await self._replace_browser()

    async def _replace_browser(self) -> None:
        self.restarts += 1
        if self._browser is not None:
            with contextlib.suppress(PlaywrightError, TimeoutError):
                await asyncio.wait_for(self._browser.close(), CLOSE_DEADLINE)
        try:
            self._browser = await self._launch()
        except PlaywrightError as e:
            self._browser = None
            raise RenderError(f"cannot restart Chromium: {e.message}") from e


class _Refused(Exception):
    """A subrequest's redirect led somewhere the crawl may not go."""


def _not_http(url: str) -> str | None:
    return None if url.startswith(("http://", "https://")) else "not http(s)"


def _passed_on(result: FetchResult) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, value in result.headers:
        if name.lower() not in _DROPPED_HEADERS:
            headers[name] = value
    return headers
