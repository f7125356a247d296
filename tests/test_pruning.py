"""Pruning is judged host by host: only a whole, healthy part of a run removes what
it did not see (pipeline/health.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from urllib.parse import SplitResult, urlsplit

import pytest

from fixture_sites import Route, SiteServer, html_page
from trawl.index.tantivy_index import IndexReader
from trawl.pipeline import health
from trawl.pipeline.crawl_run import CrawlOutcome, crawl
from trawl.pipeline.health import judge_health
from trawl.records import HostTally
from trawl.search.searcher import search
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

Serve = Callable[..., SiteServer]


def animals(*names: str) -> dict[str, Route]:
    home = "".join(f'<a href="/{n}">more</a>' for n in names)
    return {
        "/": html_page("Home", home),
        **{f"/{n}": html_page(n.title(), f"<p>{n} lives here</p>") for n in names},
    }


async def run(settings: Settings, *urls: str) -> CrawlOutcome:
    store = SQLiteStore(settings.sqlite_path)
    try:
        return await crawl(list(urls), settings, store)
    finally:
        store.close()


def found(settings: Settings, query: str) -> int:
    return search(IndexReader(settings.index_path), query, settings).total


def stored(settings: Settings) -> int:
    store = SQLiteStore(settings.sqlite_path)
    try:
        return store.count_pages()
    finally:
        store.close()


async def test_a_down_host_keeps_its_pages_while_the_other_prunes(
    serve: Serve, tmp_path: Path
) -> None:
    routes_a = animals("alpaca", "bison")
    routes_b = animals("camel", "dingo", "eland")
    a = serve(routes_a)
    b = serve(routes_b, host="127.0.0.2")
    settings = Settings(data=tmp_path / "data", delay=0.0)
    first = await run(settings, a.url("/"), b.url("/"))
    assert first.outcome == "complete" and stored(settings) == 7

    # Host b is down, robots.txt included; host a lost a page.
    down = Route(b"down", 503, {"Retry-After": "3600", "Content-Type": "text/plain"})
    for path in [*routes_b, "/robots.txt"]:
        routes_b[path] = down
    routes_a["/"] = html_page("Home", '<a href="/alpaca">more</a>')
    del routes_a["/bison"]
    second = await run(settings, a.url("/"), b.url("/"))

    assert second.outcome == "unhealthy"  # one host's part was not whole
    assert second.pruned == 1  # bison, from the host that answered
    assert found(settings, "bison") == 0 and found(settings, "alpaca") == 1
    for animal in ("camel", "dingo", "eland"):
        assert found(settings, animal) == 1, animal
    assert stored(settings) == 6


async def test_a_host_whose_start_url_fails_keeps_its_pages(serve: Serve, tmp_path: Path) -> None:
    routes_a = animals("alpaca")
    routes_b = animals("camel", "dingo")
    a = serve(routes_a)
    b = serve(routes_b, host="127.0.0.2")
    settings = Settings(data=tmp_path / "data", delay=0.0)
    await run(settings, a.url("/"), b.url("/"))

    routes_b["/"] = Route(b"oops", 500, {"Content-Type": "text/plain"})  # robots.txt: 404
    second = await run(settings, a.url("/"), b.url("/"))

    assert second.pruned == 0
    assert found(settings, "camel") == 1 and found(settings, "dingo") == 1


async def test_every_cap_leaves_the_run_capped_and_prunes_nothing(
    serve: Serve, tmp_path: Path
) -> None:
    names = [f"n{i}" for i in range(8)]
    routes = animals(*names)
    routes["/n0"] = html_page("N0", '<p>n0 lives here</p><a href="/deep">deeper</a>')
    routes["/deep"] = html_page("Deep", "<p>okapi lives deep</p>")
    site = serve(routes)
    settings = Settings(data=tmp_path / "data", delay=0.0)
    assert (await run(settings, site.url("/"))).outcome == "complete"
    assert stored(settings) == 10

    for name, capped in {
        "max_per_host": settings.replace(max_per_host=3),
        "max_depth": settings.replace(max_depth=1),
        "max_pending": settings.replace(max_pending=2),
        "max_pages": settings.replace(max_pages=2),
    }.items():
        outcome = await run(capped, site.url("/"))
        assert (outcome.outcome, outcome.pruned) == ("capped", 0), name
        assert stored(settings) == 10, name
        assert found(settings, "okapi") == 1, name


def test_judge_health_is_per_host() -> None:
    start = ["http://a.test/", "http://b.test/"]
    tallies = {
        "a.test": HostTally("a.test", fetched=10),
        "b.test": HostTally("b.test", fetched=10, failed=8),
    }
    judged = judge_health(tallies, start, set(start), max_error_rate=0.5)
    assert judged.outcome == "unhealthy" and judged.prunable == ["a.test"]

    robots = {**tallies, "b.test": HostTally("b.test", robots_unanswered=3)}
    judged = judge_health(robots, start, {start[0]}, max_error_rate=0.5)
    assert judged.prunable == ["a.test"]
    assert judged.hosts[1].reason == "robots.txt did not answer"

    capped = {**tallies, "b.test": HostTally("b.test", fetched=4, caps=("max_depth",))}
    judged = judge_health(capped, start, set(start), max_error_rate=0.5)
    assert judged.outcome == "capped" and judged.prunable == ["a.test"]

    full = {**tallies, "b.test": HostTally("b.test", fetched=4, caps=("max_pending",))}
    judged = judge_health(full, start, set(start), max_error_rate=0.5)
    assert judged.prunable == []  # a full frontier may have cost any host its URLs

    judged = judge_health(tallies, start, set(start), max_error_rate=0.5, stopped=True)
    assert judged.outcome == "stopped" and judged.prunable == []


def test_judge_health_reads_each_start_url_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A crawl of many hosts is judged in time linear in its start URLs: scanning every
    start URL for each host took 7 CPU-s at the end of a crawl of 1,000 hosts."""
    start = [f"http://h{i}.test/" for i in range(200)] + ["http://h0.test/other"]
    tallies = {f"h{i}.test": HostTally(f"h{i}.test", fetched=5) for i in range(200)}
    calls = 0
    real = urlsplit

    def counted(url: str) -> SplitResult:
        nonlocal calls
        calls += 1
        return real(url)

    monkeypatch.setattr(health, "urlsplit", counted)
    judged = judge_health(tallies, start, set(start), max_error_rate=0.5)
    assert judged.outcome == "complete" and len(judged.prunable) == 200
    assert calls <= 2 * len(start)


async def test_a_crawl_prunes_nothing_of_the_same_host_on_another_port(
    serve: Serve, tmp_path: Path
) -> None:
    # Pages are stored by host name, without the port: a crawl of 127.0.0.1:B pruned
    # every page of 127.0.0.1:A that it had not seen, which is all of them (probed with
    # trawl crawl: "7 pruned" on a crawl of a one-page site).
    a = serve(animals("alpaca", "bison"))
    b = serve(animals("camel"))
    settings = Settings(data=tmp_path / "data", delay=0.0)
    await run(settings, a.url("/"))
    assert found(settings, "alpaca") == 1

    outcome = await run(settings, b.url("/"))

    assert outcome.outcome == "complete" and outcome.pruned == 0
    assert found(settings, "alpaca") == 1 and found(settings, "camel") == 1
    assert stored(settings) == 5
