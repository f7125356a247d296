"""An open-web crawl keeps at most ``max_host_queues`` hosts' URLs in memory (seed
002's MAX_HOST_QUEUES): the other hosts' URLs wait in the store's frontier and come
back when a queue empties, and a host with nothing left is forgotten."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fixture_sites import HOUSEKEEPING, SiteServer, html_page
from trawl.crawl import frontier as frontier_module
from trawl.crawl.frontier import MAX_HELD, Frontier
from trawl.pipeline.crawl_run import crawl
from trawl.records import CrawlUrl
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

Serve = Callable[..., SiteServer]
HOSTS = 6
PAGES = 3


def overlap(servers: list[SiteServer]) -> int:
    """The most hosts whose page requests were under way at one instant: each host's
    span runs from its first page request to its last (robots.txt and sitemaps aside).
    The first host is left out: the last one links back to it when it has finished."""
    events = []
    for server in servers[1:]:
        times = [t for t, _, path in server.requests if path not in HOUSEKEEPING]
        events += [(min(times), 1), (max(times), -1)]
    most = current = 0
    for _, step in sorted(events):
        current += step
        most = max(most, current)
    return most


async def crawl_hosts(serve: Serve, tmp_path: Path, max_host_queues: int) -> list[SiteServer]:
    servers = []
    for i in range(HOSTS):
        servers.append(serve({}, host=f"127.0.0.{i + 2}"))
    for i, server in enumerate(servers):
        links = "".join(f'<a href="/p{k}">p{k}</a>' for k in range(PAGES))
        # A link to the next host's page: it arrives while that host's queue is in
        # memory (the second host) or while the host waits in the store (the others).
        links += f'<a href="{servers[(i + 1) % HOSTS].url("/linked")}">next</a>'
        server.routes["/"] = html_page("Home", links)
        for k in range(PAGES):
            server.routes[f"/p{k}"] = html_page(f"P{k}", f"<p>page {k} of host {i}</p>")
        server.routes["/linked"] = html_page("Linked", "<p>linked from elsewhere</p>")
    # The last host links back to the first, which has finished: it comes back to memory
    # (or waits in the store) like any other. Its span is left out of the overlap below.
    settings = Settings(
        data=tmp_path / "data",
        delay=0.2,
        host_concurrency=1,
        concurrency=8,
        max_host_queues=max_host_queues,
    )
    store = SQLiteStore(settings.sqlite_path)
    try:
        outcome = await crawl([s.url("/") for s in servers], settings, store)
        assert outcome.outcome == "complete"
        assert store.count_pages() == HOSTS * (PAGES + 2)
    finally:
        store.close()
    for server in servers:
        pages = [p for p in server.paths() if p not in HOUSEKEEPING]
        assert sorted(pages) == sorted(["/", "/linked", *(f"/p{k}" for k in range(PAGES))])
    return servers


async def test_at_most_max_host_queues_hosts_are_crawled_at_once(
    serve: Serve, tmp_path: Path
) -> None:
    servers = await crawl_hosts(serve, tmp_path, max_host_queues=2)
    # Every page fetched once (above), yet never more than two hosts under way.
    assert overlap(servers) <= 2


async def test_without_the_cap_every_host_is_crawled_at_once(serve: Serve, tmp_path: Path) -> None:
    # The check above is not vacuous: uncapped, the six hosts overlap.
    servers = await crawl_hosts(serve, tmp_path, max_host_queues=100)
    assert overlap(servers) > 2


def test_a_host_with_nothing_left_is_forgotten_after_its_delay() -> None:
    frontier = Frontier(delay=1.0, host_concurrency=1)
    for i in range(1000):
        frontier.enqueue(CrawlUrl(f"http://h{i}.example/", 0))
    now = 0.0
    while (item := frontier.next(now)) is not None:
        frontier.done(item, now)
    assert frontier.hosts_held == 1000  # each host's delay still runs
    assert frontier.next(1.0) is None
    assert frontier.hosts_held == 0
    # A host met again is paced as before.
    frontier.enqueue(CrawlUrl("http://h1.example/a", 0))
    frontier.enqueue(CrawlUrl("http://h1.example/b", 0))
    assert frontier.next(1.0) is not None
    assert frontier.next(1.5) is None


def test_a_waiting_url_keeps_what_the_store_does_not() -> None:
    # The store's frontier keeps URL, depth, source, request form and sitemap date; a
    # redirect chain rides along in memory until the URL is read back.
    stored: list[CrawlUrl] = []
    frontier = Frontier(
        delay=0.0, host_concurrency=1, max_host_queues=1, overflow=lambda host: stored
    )
    first = CrawlUrl("http://a.example/", 0)
    chained = CrawlUrl("http://b.example/p", 1, "http://a.example/", ("http://a.example/old",))
    assert frontier.enqueue(first) and frontier.enqueue(chained)
    stored.append(CrawlUrl(chained.url, chained.depth, chained.source))  # what the caller saves
    assert frontier.queued == 2
    assert frontier.next(0.0) == first
    assert frontier.next(0.0) is None  # b waits in the store
    frontier.done(first, 0.0)
    assert frontier.next(0.0) == chained


@pytest.mark.parametrize("held", [MAX_HELD, 0])
def test_a_url_waiting_in_the_store_keeps_its_sitemap_date(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, held: int
) -> None:
    """A sitemap's lastmod came back from the store's frontier as None: only the URLs
    held in memory (MAX_HELD, 100,000) kept it, so a URL past them was fetched undated
    (0: as every URL past the first 100,000)."""
    monkeypatch.setattr(frontier_module, "MAX_HELD", held)
    store = SQLiteStore(tmp_path / "trawl.sqlite")
    crawl_id = store.begin_crawl(["http://a.example/"])
    frontier = Frontier(
        delay=0.0,
        host_concurrency=1,
        max_host_queues=1,
        overflow=lambda host: store.frontier_waiting(crawl_id, host),
    )
    lastmod = datetime(2026, 1, 2, tzinfo=UTC)
    first = CrawlUrl("http://a.example/", 0)
    dated = CrawlUrl("http://b.example/p", 1, "http://a.example/", lastmod=lastmod)
    for item in (first, dated):
        assert frontier.enqueue(item)
        store.frontier_add(crawl_id, [item])  # as the pipeline records every admitted URL
    assert frontier.next(0.0) == first
    assert frontier.next(0.0) is None  # b waits in the store
    frontier.done(first, 0.0)
    back = frontier.next(0.0)
    store.close()
    assert back is not None and back.url == dated.url and back.lastmod == lastmod
