"""The first exact URL seen is the one requested (seed 003): the normalised identity
decides "seen", the link as written is what the server is asked. A real loopback
server logs each raw request line; the crawl runs embedded and as workers, on
SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from fixture_sites import Route, SiteServer, html_page, trawl
from trawl.pipeline.crawl_run import crawl
from trawl.pipeline.workers import work
from trawl.records import CrawlUrl, Link, PageRecord
from trawl.settings import Settings
from trawl.store import open_store as open_data_store
from trawl.store.base import Store

Serve = Callable[..., SiteServer]

# As a page writes them: query order, a tracking field, escapes a normaliser rewrites.
WRITTEN = "/p?b=2&a=1&utm_source=news"
ESCAPED = "/%7Efoo/x?sig=a%2Fb"
SAME_IDENTITY = "/p?a=1&b=2"  # written later: the same identity as WRITTEN


def site(serve: Serve) -> SiteServer:
    home = "".join(
        f'<a href="{href}">{href}</a> ' for href in (WRITTEN, ESCAPED, SAME_IDENTITY, "/old")
    )
    moved = Route(b"", 302, {"Location": "/new?z=1&y=2", "Content-Type": "text/html"})
    return serve(
        {"/": html_page("Home", home), "/old": moved},
        dynamic=lambda path: html_page("Page", f"<p>page {path}</p>"),
    )


def lines(server: SiteServer) -> list[str]:
    return [line for line in server.request_lines if not line.startswith("GET /robots.txt")]


def assert_requested_as_written(server: SiteServer) -> None:
    sent = lines(server)
    assert f"GET {WRITTEN} HTTP/1.1" in sent
    assert f"GET {ESCAPED} HTTP/1.1" in sent  # not requoted to /~foo/x?sig=a/b
    assert "GET /new?z=1&y=2 HTTP/1.1" in sent  # a redirect's Location, as written
    assert not [line for line in sent if SAME_IDENTITY in line]  # seen: never asked
    pages = [line.split()[1] for line in sent if not line.startswith("GET /sitemap")]
    assert len(pages) == len(set(pages))  # each once


def assert_recorded(store: Store, server: SiteServer) -> None:
    page = store.page(server.url("/p?a=1&b=2"))  # the identity: sorted, tracking dropped
    assert page is not None and page.status == 200
    assert page.request_url == server.url(WRITTEN)
    escaped = store.page(server.url("/~foo/x?sig=a%2Fb"))
    assert escaped is not None and escaped.request_url == server.url(ESCAPED)
    moved = store.page(server.url("/new?y=2&z=1"))
    assert moved is not None and moved.request_url == server.url("/new?z=1&y=2")
    home = store.page(server.url("/"))
    assert home is not None and home.request_url is None  # the identity was sent
    # Each occurrence keeps its own form: the first was requested, the second was seen.
    occurrences = [(link.url, link.request) for link in store.links_from(server.url("/"))]
    identity = server.url("/p?a=1&b=2")
    assert [r for u, r in occurrences if u == identity] == [server.url(WRITTEN), None]


def test_an_embedded_crawl_requests_each_link_as_first_written(
    serve: Serve, open_store: Callable[[], Store], tmp_path: Path
) -> None:
    server = site(serve)
    store = open_store()
    settings = Settings(data=tmp_path / "data", delay=0.0, parse_workers=0)

    asyncio.run(crawl([server.url("/")], settings, store))

    assert_requested_as_written(server)
    assert_recorded(store, server)


def test_workers_request_each_link_as_first_written(
    serve: Serve, open_store: Callable[[], Store], tmp_path: Path
) -> None:
    server = site(serve)
    first, second = open_store(), open_store()
    settings = Settings(data=tmp_path / "data", delay=0.0, parse_workers=0)

    async def both() -> None:
        start = [server.url("/")]
        await asyncio.gather(
            work(start, settings, first, owner="one"), work(start, settings, second, owner="two")
        )

    asyncio.run(both())

    assert_requested_as_written(server)
    assert_recorded(first, server)


def test_the_frontier_keeps_the_written_form_for_claims_and_resumes(store: Store) -> None:
    identity, written = "https://example.com/p?a=1&b=2", "https://example.com/p?b=2&a=1"
    crawl_id = store.begin_crawl(["https://example.com/"])
    store.frontier_add(crawl_id, [CrawlUrl(identity, 1, request=written)])

    assert store.frontier_pending(crawl_id) == [CrawlUrl(identity, 1, request=written)]
    resumed = store.begin_crawl(["https://example.com/"], crawl_id)
    assert [i.request for i in store.frontier_pending(resumed)] == [written]
    # A host's URLs waiting in the store while other hosts' queues fill memory.
    assert [i.request for i in store.frontier_waiting(resumed, "example.com")] == [written]
    claimed = store.frontier_claim(resumed, "w", lease=30, delay=0, host_concurrency=1)
    assert claimed is not None and claimed.request_url == written


def test_the_first_written_form_of_a_link_is_found_by_its_identity(store: Store) -> None:
    identity = "https://example.com/i.png?a=1&v=2"
    first, second = "https://example.com/i.png?v=2&a=1", "https://example.com/i.png?a=1&v=2&"
    record = PageRecord(url="https://example.com/", host="example.com", status=200, depth=0,
                        fetched_at=1.0)  # fmt: skip
    links = [Link(identity, "", element="img", attribute="src", request=r) for r in (first, second)]
    store.save_page(record, [*links, Link("https://example.com/x", "x")])

    assert store.written_forms([identity, "https://example.com/x"]) == {identity: first}


def assert_started_as_typed(server: SiteServer, store: Store) -> None:
    sent = lines(server)
    assert f"GET {WRITTEN} HTTP/1.1" in sent
    assert not [line for line in sent if SAME_IDENTITY in line]  # the identity: never asked
    page = store.page(server.url(SAME_IDENTITY))  # known by its identity
    assert page is not None and page.status == 200
    assert page.request_url == server.url(WRITTEN)


def test_trawl_crawl_requests_the_start_url_as_typed(serve: Serve, tmp_path: Path) -> None:
    server = site(serve)
    data = tmp_path / "data"

    crawled = trawl("crawl", server.url(WRITTEN), "--data", str(data), "--delay", "0")

    assert crawled.returncode == 0, crawled.stderr
    store = open_data_store(Settings(data=data))
    try:
        assert_started_as_typed(server, store)
    finally:
        store.close()


def test_trawl_worker_requests_the_start_url_as_typed(serve: Serve, tmp_path: Path) -> None:
    server = site(serve)
    data = tmp_path / "data"

    worked = trawl("worker", server.url(WRITTEN), "--data", str(data), "--delay", "0")

    assert worked.returncode == 0, worked.stderr
    store = open_data_store(Settings(data=data))
    try:
        assert_started_as_typed(server, store)
    finally:
        store.close()
