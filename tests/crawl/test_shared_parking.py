"""Workers sharing a frontier park a failing host as an embedded crawl does: one count
of failures in a row and one park, in the store, for every worker. Real loopback
servers; in-process workers on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from fixture_sites import Route, SiteServer, html_page
from trawl.crawl.policy import PARK_AFTER
from trawl.pipeline.workers import work
from trawl.records import CrawlUrl, Skip, SkipKind
from trawl.settings import Settings
from trawl.store.base import Store

Serve = Callable[..., SiteServer]


def _quick_backoff(crawler: Any) -> None:
    # The rule is what is tested, not its one-second base.
    crawler._limits = replace(crawler._limits, retry_backoff=0.05)


def test_workers_park_a_failing_host_after_the_embedded_crawls_count(
    serve: Serve, open_store: Callable[[], Store], tmp_path: Path
) -> None:
    broken = Route(b"down", 502, {"Content-Type": "text/plain"})
    pages = [f"/p{i}" for i in range(20)]
    links = "".join(f'<a href="{p}">{p}</a>' for p in pages)
    site = serve({"/": html_page("Home", links), **dict.fromkeys(pages, broken)})
    first, second = open_store(), open_store()
    settings = Settings(data=tmp_path / "data", delay=0.0, host_concurrency=1, parse_workers=0)

    async def both() -> list[Any]:
        start = [site.url("/")]
        return list(
            await asyncio.gather(
                work(start, settings, first, owner="one", on_crawler=_quick_backoff),
                work(start, settings, second, owner="two", on_crawler=_quick_backoff),
            )
        )

    outcomes = asyncio.run(both())

    # Nine failures in a row over both workers, as in one embedded crawl; counted per
    # worker, each would have gone on to nine of its own.
    requested = [p for p in site.page_paths() if p != "/"]
    assert len(requested) == PARK_AFTER
    named = [o.parked_hosts["127.0.0.1"] for o in outcomes if o.parked_hosts]
    assert named and "9 failures in a row, the last HTTP 502" in named[0]
    # The rest were skipped in the store, so the crawl could end: nothing is queued.
    crawl_id = outcomes[0].crawl_id
    assert not first.frontier_active(crawl_id)
    for path in set(pages) - set(requested):
        skip = first.frontier_skipped(crawl_id, site.url(path))
        assert skip is not None and skip.kind == SkipKind.PARKED
        assert skip.detail.startswith("9 failures in a row")


def test_failures_are_counted_per_crawl_and_a_parked_host_takes_no_more_urls(
    store: Store,
) -> None:
    one = store.begin_crawl(["https://a.example/"])
    store.frontier_add(one, [CrawlUrl("https://a.example/x", 1)])
    assert [store.host_failed(one, "a.example") for _ in range(3)] == [1, 2, 3]
    store.host_answered(one, "a.example")
    assert store.host_failed(one, "a.example") == 1  # in a row: an answer starts again
    two = store.begin_crawl(["https://b.example/"])
    assert store.host_failed(two, "a.example") == 1  # another crawl's count is not its

    dropped = store.park_host(one, "a.example", "down")
    store.frontier_add(one, [CrawlUrl("https://a.example/later", 2)])
    store.frontier_add(two, [CrawlUrl("https://a.example/other-run", 1)])

    assert [d.url for d in dropped] == ["https://a.example/x"]
    assert not store.frontier_active(one)
    assert store.frontier_skipped(one, "https://a.example/later") == Skip(SkipKind.PARKED, "down")
    assert store.frontier_pending(two) == [CrawlUrl("https://a.example/other-run", 1)]
