"""The crawl loop against real servers: politeness, robots.txt outcomes, scope."""

from __future__ import annotations

import asyncio
import gzip
import itertools
import tracemalloc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from fixture_sites import HOUSEKEEPING, Route, SiteServer, html_page
from trawl.crawl.crawler import Admit, Crawler, CrawlLimits, CrawlStats, _Slots
from trawl.crawl.frontier import Frontier
from trawl.net.fetcher import Fetcher
from trawl.net.transport import FetchRequest
from trawl.records import CrawlUrl, FetchResult, Href, Skip, SkipKind
from trawl.urls.identity import forms

Serve = Callable[..., SiteServer]
Allowed = frozenset[tuple[str, int]]


@dataclass
class RecordingSink:
    """A real PageSink that keeps what it is told (the pipeline's job, minus store and index)."""

    fetched_urls: list[str] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    skips: list[tuple[str, Skip]] = field(default_factory=list)

    def admitted(self, items: Sequence[CrawlUrl]) -> None:
        pass

    async def fetched(self, item: CrawlUrl, result: FetchResult, admit: Admit) -> None:
        self.fetched_urls.append(item.url)
        text = result.body.decode()
        hrefs = [part.split('"', 1)[0] for part in text.split('href="')[1:]]
        targets = hrefs + ([result.location] if result.location else [])
        admit([Href(*forms(h, base=item.url)) for h in targets])

    def request_headers(self, item: CrawlUrl) -> dict[str, str]:
        return {}

    def failed(self, item: CrawlUrl, error: str) -> None:
        self.failures.append((item.url, error))

    def skipped(self, item: CrawlUrl, skip: Skip) -> None:
        self.skips.append((item.url, skip))

    def listed(self, urls: Sequence[str]) -> None:
        pass

    async def dated(self, lastmods: Mapping[str, datetime]) -> set[str]:
        return set()


async def crawl(
    start: str,
    sink: RecordingSink,
    *,
    delay: float = 0.0,
    host_concurrency: int = 4,
    fetch_timeout: float = 5.0,
    allowed: frozenset[tuple[str, int]],
) -> CrawlStats:
    limits = CrawlLimits(
        user_agent="TrawlTest/1.0",
        concurrency=4,
        delay=delay,
        max_pages=100,
        max_depth=10,
        max_bytes=100_000,
        robots_max_bytes=10_000,
    )
    async with Fetcher(
        user_agent=limits.user_agent,
        timeout=fetch_timeout,
        concurrency=4,
        host_concurrency=host_concurrency,
        allowed=allowed,
    ) as fetcher:
        frontier = Frontier(delay=delay, host_concurrency=host_concurrency)
        return await Crawler(fetcher, sink, limits, frontier).run([start])


def linked_pages(n: int) -> dict[str, Route]:
    index = "".join(f'<a href="/p{i}">p{i}</a>' for i in range(n))
    pages = {f"/p{i}": html_page(f"P{i}", "<p>text</p>") for i in range(n)}
    return {"/": html_page("Home", index), **pages}


async def test_per_host_delay_is_held(serve: Serve) -> None:
    site = serve(linked_pages(4))
    sink = RecordingSink()

    await crawl(site.url("/"), sink, delay=0.25, host_concurrency=1, allowed=_allow(site))

    starts = [t for t, _, path in site.requests if path not in HOUSEKEEPING]
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert len(starts) == 5
    # The server stamps a request when its thread gets to it, so on a loaded machine one
    # late stamp shortens the next gap: each gap keeps a wide slack, and the whole span,
    # which such lateness cannot shrink by more than one gap's slack, a narrow one.
    assert min(gaps) >= 0.15, gaps
    assert starts[-1] - starts[0] >= 4 * 0.25 - 0.1, gaps


async def test_robots_server_error_means_nothing_is_fetched(serve: Serve) -> None:
    site = serve({"/robots.txt": Route(b"oops", 503), **linked_pages(2)})
    sink = RecordingSink()

    stats = await crawl(site.url("/"), sink, allowed=_allow(site))

    assert site.paths() == ["/robots.txt"]
    assert stats.blocked == 0 and sink.fetched_urls == []  # unanswered, not forbidding
    assert sink.skips[0][1].kind == SkipKind.ROBOTS_UNANSWERED
    assert "nothing allowed" in sink.skips[0][1].detail


async def test_robots_not_found_means_everything_is_allowed(serve: Serve) -> None:
    site = serve(linked_pages(3))  # no /robots.txt: 404
    sink = RecordingSink()

    stats = await crawl(site.url("/"), sink, allowed=_allow(site))

    assert stats.fetched == 4 and stats.blocked == 0


async def test_robots_redirect_is_followed(serve: Serve) -> None:
    site = serve(
        {
            "/robots.txt": Route(b"", 301, {"Location": "/real-robots.txt"}),
            "/real-robots.txt": Route(
                b"User-agent: TrawlTest\nDisallow: /p1\n", headers={"Content-Type": "text/plain"}
            ),
            **linked_pages(3),
        }
    )
    sink = RecordingSink()

    await crawl(site.url("/"), sink, allowed=_allow(site))

    assert "/p1" not in site.paths()
    assert "/p2" in site.paths()


async def test_links_to_other_hosts_and_ports_are_not_followed(serve: Serve) -> None:
    other = serve(linked_pages(1))
    site = serve(
        {
            "/": html_page(
                "Home",
                f'<a href="{other.url("/")}">other port</a>'
                '<a href="http://localhost/">alias</a><a href="/jump">jump</a>',
            ),
            "/jump": Route(b"", 302, {"Location": other.url("/p0")}),
        }
    )
    sink = RecordingSink()

    stats = await crawl(site.url("/"), sink, allowed=_allow(site))

    assert other.paths() == []
    assert stats.fetched == 2  # "/" and "/jump"; the redirect target is out of scope


async def test_unreachable_page_is_recorded_and_the_crawl_goes_on(serve: Serve) -> None:
    site = serve({"/": html_page("Home", '<a href="/slow">s</a><a href="/ok">ok</a>')})
    site.routes["/slow"] = Route(b"late", delay=2.0)
    site.routes["/ok"] = html_page("OK", "fine")
    sink = RecordingSink()

    stats = await crawl(site.url("/"), sink, fetch_timeout=0.5, allowed=_allow(site))

    assert stats.failed == 1 and sink.failures[0][0].endswith("/slow")
    assert any(u.endswith("/ok") for u in sink.fetched_urls)


def _allow(site: SiteServer) -> frozenset[tuple[str, int]]:
    return frozenset({("127.0.0.1", site.port)})


async def test_robots_fetch_has_its_own_deadline(serve: Serve) -> None:
    # robots.txt answers after 2 s: within the page timeout (5 s), past robots' own.
    site = serve(
        {
            "/robots.txt": Route(
                b"User-agent: *\nAllow: /\n", headers={"Content-Type": "text/plain"}, delay=2.0
            ),
            "/": html_page("Home", "home"),
        }
    )
    limits = CrawlLimits(
        user_agent="TrawlTest/1.0",
        concurrency=2,
        delay=0.0,
        max_pages=10,
        max_depth=1,
        max_bytes=100_000,
        robots_max_bytes=10_000,
        robots_timeout=0.5,
        sitemaps=False,
    )
    sink = RecordingSink()
    async with Fetcher(
        user_agent=limits.user_agent,
        timeout=5.0,
        concurrency=2,
        host_concurrency=1,
        allowed=frozenset({("127.0.0.1", site.port)}),
    ) as fetcher:
        frontier = Frontier(delay=0.0, host_concurrency=1)
        stats = await Crawler(fetcher, sink, limits, frontier).run([site.url("/")])

    assert sink.fetched_urls == []
    assert (stats.blocked, stats.failed) == (0, 1)  # the host is down, nothing forbids us
    assert "no answer within 0.5s" in sink.failures[0][1]


# -- sitemap discovery: what it costs each host ---------------------------------


def sitemap(*urls: str) -> Route:
    entries = "".join(f"<url><loc>{u}</loc></url>" for u in urls)
    return Route(f"<urlset>{entries}</urlset>".encode(), headers={"Content-Type": "text/xml"})


async def test_a_host_naming_no_sitemap_gets_one_guess(serve: Serve) -> None:
    # Every request here is a request to every host of a many-host crawl.
    site = serve(linked_pages(2))  # no robots.txt, no sitemap: 404s

    await crawl(site.url("/"), RecordingSink(), allowed=_allow(site))

    assert sorted(site.paths()) == ["/", "/p0", "/p1", "/robots.txt", "/sitemap.xml"]


async def test_a_declared_sitemap_replaces_the_guess(serve: Serve) -> None:
    site = serve({})
    site.routes.update(
        {
            "/robots.txt": Route(
                f"User-agent: *\nAllow: /\nSitemap: {site.url('/map.xml')}\n".encode(),
                headers={"Content-Type": "text/plain"},
            ),
            "/map.xml": sitemap(site.url("/listed")),
            "/listed": html_page("Listed", "only in the sitemap"),
            **linked_pages(1),
        }
    )

    await crawl(site.url("/"), RecordingSink(), allowed=_allow(site))

    assert sorted(site.paths()) == ["/", "/listed", "/map.xml", "/p0", "/robots.txt"]


async def test_a_guessed_sitemap_that_redirects_is_followed_on_its_site(serve: Serve) -> None:
    # Yoast SEO, the usual home of /sitemap_index.xml, redirects /sitemap.xml to it.
    site = serve({})
    site.routes.update(
        {
            "/sitemap.xml": Route(b"", 301, {"Location": "/sitemap_index.xml"}),
            "/sitemap_index.xml": sitemap(site.url("/listed")),
            "/listed": html_page("Listed", "only in the sitemap"),
            "/": html_page("Home", "no links"),
        }
    )

    await crawl(site.url("/"), RecordingSink(), allowed=_allow(site))

    assert "/listed" in site.paths()


async def test_a_guessed_sitemap_is_not_followed_to_another_site(serve: Serve) -> None:
    # A guess is only this site's: robots.txt, which vouches for declared ones, named none.
    other = serve({"/sitemap_index.xml": sitemap("http://127.0.0.1/elsewhere")})
    site = serve(
        {
            "/sitemap.xml": Route(b"", 302, {"Location": other.url("/sitemap_index.xml")}),
            "/": html_page("Home", "no links"),
        }
    )

    await crawl(site.url("/"), RecordingSink(), allowed=_allow(site) | _allow(other))

    assert other.paths() == []


async def test_an_index_sends_no_request_to_another_host(serve: Serve) -> None:
    # A sitemap index may list only its own host's sitemaps (sitemaps.org); robots.txt
    # vouched for the index, not for another host's URLs. Its children were fetched
    # wherever they were: any site made the crawler send up to 50 requests a host to
    # any other, unpaced, unasked of that host's robots.txt (which forbids them here).
    other = serve(
        {
            "/robots.txt": Route(
                b"User-agent: *\nDisallow: /", headers={"Content-Type": "text/plain"}
            ),
            "/logout": sitemap("http://127.0.0.2/elsewhere"),
        },
        host="127.0.0.2",
    )
    site = serve({"/": html_page("Home", "no links")})
    children = [other.url("/logout"), site.url("/own.xml")]
    entries = "".join(f"<sitemap><loc>{c}</loc></sitemap>" for c in children)
    site.routes["/sitemap.xml"] = Route(
        f"<sitemapindex>{entries}</sitemapindex>".encode(), headers={"Content-Type": "text/xml"}
    )
    site.routes["/own.xml"] = sitemap(site.url("/listed"))
    site.routes["/listed"] = html_page("Listed", "only in the sitemap")

    await crawl(site.url("/"), RecordingSink(), allowed=_allow_all([site, other]))

    assert other.paths() == []
    assert "/listed" in site.paths()  # its own child is read


@dataclass
class BigSitemapSink(RecordingSink):
    """Counts the sitemaps held past the first cap: from their whole read's request
    (``BigReads``) to their listing, which comes once the parse is done."""

    held: int = 0
    most_held: int = 0
    listings: int = 0

    def listed(self, urls: Sequence[str]) -> None:
        self.listings += 1
        if urls and "/big" in urls[0]:
            self.held -= 1


@dataclass
class BigReads:
    """The real Fetcher, noting each sitemap read past the first cap."""

    fetcher: Fetcher
    first_bytes: int
    sink: BigSitemapSink

    async def fetch(self, request: FetchRequest) -> FetchResult:
        if request.url.endswith("/sitemap.xml") and request.max_bytes > self.first_bytes:
            self.sink.held += 1
            self.sink.most_held = max(self.sink.most_held, self.sink.held)
        return await self.fetcher.fetch(request)


async def crawl_big_sitemaps(
    starts: list[str], sink: BigSitemapSink, allowed: Allowed, *, fetch_timeout: float = 5.0
) -> None:
    limits = CrawlLimits(
        user_agent="TrawlTest/1.0",
        concurrency=8,
        delay=0.0,
        max_pages=100,
        max_depth=10,
        max_bytes=100_000,
        robots_max_bytes=10_000,
        sitemap_max_bytes=1_000_000,
        sitemap_first_bytes=32_000,
    )
    async with Fetcher(
        user_agent=limits.user_agent,
        timeout=fetch_timeout,
        concurrency=8,
        host_concurrency=2,
        allowed=allowed,
    ) as fetcher:
        transport = BigReads(fetcher, limits.sitemap_first_bytes, sink)
        frontier = Frontier(delay=0.0, host_concurrency=2)
        await Crawler(transport, sink, limits, frontier).run(starts)


def padded_sitemap(urls: Sequence[str], size: int) -> bytes:
    entries = "".join(f"<url><loc>{u}</loc></url>" for u in urls)
    return f"<urlset>{entries}<!-- {'x' * size} --></urlset>".encode()


async def test_large_sitemaps_of_many_hosts_are_held_one_at_a_time(serve: Serve) -> None:
    # Each host's sitemaps are read by a task of its own: unbounded, a 50 MB body per
    # host waited for its parse at once (12 hosts: 1.7 GB). Past the first cap, one.
    sites = [serve(linked_pages(0), host=f"127.0.0.{i}") for i in range(1, 5)]
    for s in sites:
        listed = [s.url(f"/big{i}") for i in range(5)]
        s.routes["/sitemap.xml"] = Route(
            padded_sitemap(listed, 300_000), headers={"Content-Type": "text/xml"}, delay=0.2
        )
        s.routes.update({f"/big{i}": html_page(f"Big {i}", "listed") for i in range(5)})
    sink = BigSitemapSink()

    await crawl_big_sitemaps([s.url("/") for s in sites], sink, _allow_all(sites))

    assert sink.listings == 4
    assert sink.most_held == 1
    assert {s.url(f"/big{i}") for s in sites for i in range(5)} <= set(sink.fetched_urls)
    # A sitemap within the first cap is read once; a larger one twice, not more.
    assert all(s.paths().count("/sitemap.xml") == 2 for s in sites)


async def test_a_host_that_drips_a_large_sitemap_holds_the_permit_once(serve: Serve) -> None:
    # Every host's large sitemaps wait for the one permit. A host whose whole read
    # drips until the request's timeout held it that long for each of its sitemaps
    # (50 a host: 1,000 s at the default 20 s), one hostile host after another, while
    # every other host's large sitemaps waited.
    site = serve(linked_pages(0))
    head = padded_sitemap([site.url("/big0")], 40_000)[: -len(b"</urlset>")]
    drip = Route(chunks=[head, *[b"<!-- -->"] * 100], chunk_delay=0.1)
    children = [f"/drip{i}.xml" for i in range(3)]
    entries = "".join(f"<sitemap><loc>{site.url(c)}</loc></sitemap>" for c in children)
    site.routes["/sitemap.xml"] = Route(
        f"<sitemapindex>{entries}</sitemapindex>".encode(), headers={"Content-Type": "text/xml"}
    )
    site.routes.update(dict.fromkeys(children, drip))
    sink = BigSitemapSink()

    await crawl_big_sitemaps([site.url("/")], sink, _allow(site), fetch_timeout=1.0)

    # Each child is read to the first cap; only the first is read again, and times out.
    assert [site.paths().count(c) for c in children] == [2, 1, 1]


async def test_index_children_past_the_budget_are_not_held(serve: Serve) -> None:
    # Each index's children were queued whole, though at most max_sitemaps_per_host are
    # read: indexes of 50,000 children, or of 3,000 at 16 KB each, held up to 48 MB of
    # URLs a read, 2.4 GB a host after 50 reads, every host's task at once.
    site = serve(linked_pages(0))

    def wide(k: int) -> Route:  # 3.6 MB, children of their own
        pad = "a" * 6000
        children = "".join(
            f"<sitemap><loc>{site.url(f'/c{k}/{pad}{j}')}</loc></sitemap>" for j in range(600)
        )
        body = f"<sitemapindex>{children}</sitemapindex>".encode()
        return Route(body, headers={"Content-Type": "text/xml"})

    top = "".join(f"<sitemap><loc>{site.url(f'/i{k}.xml')}</loc></sitemap>" for k in range(9))
    site.routes["/sitemap.xml"] = Route(
        f"<sitemapindex>{top}</sitemapindex>".encode(), headers={"Content-Type": "text/xml"}
    )
    site.routes.update({f"/i{k}.xml": wide(k) for k in range(9)})
    limits = CrawlLimits(
        user_agent="TrawlTest/1.0",
        concurrency=4,
        delay=0.0,
        max_pages=10,
        max_depth=10,
        max_bytes=100_000,
        robots_max_bytes=10_000,
        max_sitemaps_per_host=10,
        sitemap_max_bytes=20_000_000,
    )
    tracemalloc.start()
    try:
        async with Fetcher(
            user_agent=limits.user_agent,
            timeout=30.0,
            concurrency=4,
            host_concurrency=2,
            allowed=_allow(site),
        ) as fetcher:
            frontier = Frontier(delay=0.0, host_concurrency=2)
            await Crawler(fetcher, RecordingSink(), limits, frontier).run([site.url("/")])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert [p for p in site.paths() if p.startswith("/i")] == [
        f"/i{k}.xml"
        for k in range(9)
        for _ in range(2)  # a first read, then whole
    ]
    # One index's body and children at a time (15 MB measured), not the children of
    # all nine indexes read (41 MB).
    assert peak < 25_000_000, peak


async def test_a_gzip_sitemap_inflating_past_the_first_cap_is_read_whole(serve: Serve) -> None:
    site = serve(linked_pages(0))
    listed = [site.url(f"/big{i}") for i in range(3)]
    site.routes.update(
        {
            "/sitemap.xml": Route(
                gzip.compress(padded_sitemap(listed, 300_000)),
                headers={"Content-Type": "application/gzip"},
            ),
            **{f"/big{i}": html_page(f"Big {i}", "listed") for i in range(3)},
        }
    )
    sink = BigSitemapSink()

    await crawl_big_sitemaps([site.url("/")], sink, _allow(site))

    assert set(listed) <= set(sink.fetched_urls)
    assert site.paths().count("/sitemap.xml") == 2


# -- request slots ----------------------------------------------------------------


class CountingFrontier(Frontier):
    """A real frontier that counts the hand-outs that found nothing to fetch."""

    empty = 0

    def next(self, now: float) -> CrawlUrl | None:
        item = super().next(now)
        self.empty += item is None
        return item


async def test_idle_workers_are_woken_one_at_a_time(serve: Serve) -> None:
    # Hosts at the politeness limit leave most workers idle. Each page done, URL admitted
    # or host due woke all of them to look at the frontier and find nothing (18 times a
    # page on 100 hosts): the event loop's time, taken from the requests due then.
    sites = [serve(linked_pages(4), host=f"127.0.0.{i}") for i in (1, 2, 3)]
    sink = RecordingSink()
    limits = CrawlLimits(
        user_agent="TrawlTest/1.0",
        concurrency=4,
        delay=0.1,
        max_pages=100,
        max_depth=10,
        max_bytes=100_000,
        robots_max_bytes=10_000,
        sitemaps=False,
    )
    frontier = CountingFrontier(delay=0.1, host_concurrency=1)
    async with Fetcher(
        user_agent=limits.user_agent,
        timeout=5.0,
        concurrency=4,
        host_concurrency=1,
        allowed=_allow_all(sites),
    ) as fetcher:
        await Crawler(fetcher, sink, limits, frontier).run([s.url("/") for s in sites])

    assert len(sink.fetched_urls) == 15
    # Woken one at a time: about one look that finds nothing per hand-out (the worker a
    # taker wakes, in case another host is due), where all eight workers looked before.
    assert frontier.empty <= 3 * len(sink.fetched_urls), frontier.empty
    # Every host's delay still held.
    for site in sites:
        starts = [t for t, _, path in site.requests if path not in HOUSEKEEPING]
        assert min(b - a for a, b in itertools.pairwise(starts)) >= 0.05, starts


@dataclass
class SlowSink(RecordingSink):
    """Takes ``seconds`` over each page, as a parse in the stage pool and a store write do."""

    seconds: float = 0.6

    async def fetched(self, item: CrawlUrl, result: FetchResult, admit: Admit) -> None:
        await asyncio.sleep(self.seconds)
        await super().fetched(item, result, admit)


def _allow_all(sites: list[SiteServer]) -> Allowed:
    """Each site on its own loopback address: a politeness host of its own."""
    return frozenset((s.host, s.port) for s in sites)


async def crawl_one_slot(
    starts: list[str], sink: RecordingSink, allowed: Allowed, *, sitemaps: bool = False
) -> None:
    limits = CrawlLimits(
        user_agent="TrawlTest/1.0",
        concurrency=1,
        delay=0.0,
        max_pages=100,
        max_depth=10,
        max_bytes=100_000,
        robots_max_bytes=10_000,
        sitemaps=sitemaps,
    )
    async with Fetcher(
        user_agent=limits.user_agent,
        timeout=5.0,
        concurrency=4,  # the crawler's one slot is the limit under test, not the pool's
        host_concurrency=1,
        allowed=allowed,
    ) as fetcher:
        frontier = Frontier(delay=0.0, host_concurrency=1)
        await Crawler(fetcher, sink, limits, frontier).run(starts)


async def test_the_next_request_goes_out_while_a_page_is_processed(serve: Serve) -> None:
    # A request slot is held for the request, not for what is made of its answer: on
    # many hosts at the politeness limit the slots, not the cores, bound the crawl.
    sites = [serve(linked_pages(0), host=f"127.0.0.{i}") for i in (1, 2)]

    await crawl_one_slot([s.url("/") for s in sites], SlowSink(), _allow_all(sites))

    firsts = sorted(s.requests[0][0] for s in sites)
    # Without it, the second host waited for the first one's page to be processed.
    assert firsts[1] - firsts[0] < 0.5, firsts


async def test_requests_in_flight_never_exceed_the_slots(serve: Serve) -> None:
    slow = Route(b"<p>slow</p>", delay=0.2)
    missing = Route(b"", 404, delay=0.2)
    routes = {"/": slow, "/robots.txt": missing, "/sitemap.xml": missing}
    sites = [serve(routes, host=f"127.0.0.{i}") for i in (1, 2, 3)]

    await crawl_one_slot(
        [s.url("/") for s in sites], SlowSink(seconds=0.0), _allow_all(sites), sitemaps=True
    )

    arrivals = sorted(t for s in sites for t, _, _ in s.requests)
    assert len(arrivals) == 9
    # One slot: each request waits for the answer before it (0.2 s), robots.txt and
    # sitemaps included.
    assert min(b - a for a, b in itertools.pairwise(arrivals)) >= 0.15, arrivals


async def test_every_first_page_goes_before_any_sitemap(serve: Serve) -> None:
    # On many hosts, a sitemap read in a slot a host's first page wanted delays that
    # host's whole schedule; a sitemap waits for a slot no page wants.
    sites = [serve(linked_pages(0), host=f"127.0.0.{i}") for i in (1, 2, 3)]

    await crawl_one_slot(
        [s.url("/") for s in sites], RecordingSink(), _allow_all(sites), sitemaps=True
    )

    requests = sorted((t, s.host, p) for s in sites for t, _, p in s.requests)
    paths = [p for _, _, p in requests]
    assert paths.count("/sitemap.xml") == 3, requests
    last_page = max(i for i, p in enumerate(paths) if p == "/")
    assert paths.index("/sitemap.xml") > last_page, requests


async def test_a_slot_handed_to_a_cancelled_waiter_is_not_lost() -> None:
    slots = _Slots(1)
    await slots.take()
    waiting = asyncio.create_task(slots.take())
    await asyncio.sleep(0)
    slots.release()  # handed to the waiter...
    waiting.cancel()  # ...which is cancelled (the crawl stops) before it runs again
    await asyncio.sleep(0)
    assert waiting.cancelled()

    # The slot is free again: the next taker gets it at once, sitemap or page.
    await asyncio.wait_for(slots.take(sitemap=True), 1.0)
    slots.release()
    await asyncio.wait_for(slots.take(), 1.0)


@dataclass
class SavingSink(RecordingSink):
    """Saves ``held`` only once a sitemap has been read, as a slow parse or store would:
    the sitemap dates it between the crawler's look for a date and the save."""

    held: str = ""
    saved: set[str] = field(default_factory=set)
    dates: dict[str, datetime] = field(default_factory=dict)  # given to saved pages
    sitemap_read: asyncio.Event = field(default_factory=asyncio.Event)

    async def fetched(self, item: CrawlUrl, result: FetchResult, admit: Admit) -> None:
        if item.url == self.held:
            await self.sitemap_read.wait()
        await super().fetched(item, result, admit)
        self.saved.add(item.url)

    def listed(self, urls: Sequence[str]) -> None:
        self.sitemap_read.set()

    async def dated(self, lastmods: Mapping[str, datetime]) -> set[str]:
        saved = {u for u in lastmods if u in self.saved}
        self.dates.update((u, lastmods[u]) for u in saved)
        return saved


async def test_a_sitemap_date_reaches_pages_saved_before_or_while_it_is_read(
    serve: Serve,
) -> None:
    days = {f"/p{i}": f"2022-01-0{i + 1}" for i in range(3)}  # distinct: trusted
    site = serve(linked_pages(3))
    urlset = "".join(
        f"<url><loc>{site.base}{p}</loc><lastmod>{d}</lastmod></url>" for p, d in days.items()
    )
    site.routes["/sitemap.xml"] = Route(
        f"<urlset>{urlset}</urlset>".encode(),
        headers={"Content-Type": "application/xml"},
        delay=0.5,
    )
    sink = SavingSink(held=site.url("/p0"))

    await crawl(site.url("/"), sink, allowed=_allow(site))

    # /p1 and /p2 were saved before the sitemap came; /p0 was being saved.
    assert sink.dates == {
        site.url(p): datetime(2022, 1, i + 1, tzinfo=UTC) for i, p in enumerate(days)
    }


@dataclass
class FailingSaveSink(RecordingSink):
    """Admits a page's links, then fails to save it (the store refused it): nothing it
    was to record with the page is recorded."""

    announced: list[str] = field(default_factory=list)

    def admitted(self, items: Sequence[CrawlUrl]) -> None:
        self.announced += [i.url for i in items]

    async def fetched(self, item: CrawlUrl, result: FetchResult, admit: Admit) -> None:
        await super().fetched(item, result, admit)
        if item.depth == 0:
            raise RuntimeError("the save failed")


async def test_links_queued_for_a_page_whose_save_failed_are_still_recorded(
    serve: Serve,
) -> None:
    """The crawler queued them in memory and fetches them: the store's frontier, which
    a resume and the crawl's judgement read, has them too (in a write of their own)."""
    site = serve(linked_pages(3))
    sink = FailingSaveSink()

    stats = await crawl(site.url("/"), sink, allowed=_allow(site))

    assert stats.internal_errors == 1
    links = {site.url(f"/p{i}") for i in range(3)}
    assert links <= set(sink.fetched_urls)
    assert links <= set(sink.announced), sink.announced
