"""robots.txt to the letter, against real loopback servers through the real pipeline:
percent-encoding (RFC 9309 2.2.2), 429, the fetch's own deadline, the matcher's bound."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fixture_sites import Route, SiteServer, html_page
from trawl.pipeline.crawl_run import CrawlOutcome, crawl
from trawl.robots.rules import MAX_COMPARISONS, MAX_RULES
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

Serve = Callable[..., SiteServer]


async def run(tmp_path: Path, *urls: str, **settings: object) -> CrawlOutcome:
    config = Settings(data=tmp_path / "data", delay=0.0).replace(**settings)
    store = SQLiteStore(config.sqlite_path)
    try:
        return await crawl(list(urls), config, store)
    finally:
        store.close()


def text_route(body: str, status: int = 200, delay: float = 0.0) -> Route:
    return Route(body.encode(), status, {"Content-Type": "text/plain"}, delay=delay)


def links(*paths: str) -> str:
    return "".join(f'<a href="{p}">{p}</a>' for p in paths)


async def test_escaped_rules_block_the_paths_they_name(serve: Serve, tmp_path: Path) -> None:
    site = serve(
        {
            "/robots.txt": text_route("User-agent: *\nDisallow: /%7Efoo\nDisallow: /b%61r\n"),
            "/": html_page("Home", links("/~foo", "/%7Efoo/x", "/bar", "/b%61r2", "/baz")),
            "/baz": html_page("Baz", "ok"),
        }
    )

    outcome = await run(tmp_path, site.url("/"))

    assert sorted(site.page_paths()) == ["/", "/baz"]
    assert outcome.blocked == 4


async def test_robots_429_means_not_now(serve: Serve, tmp_path: Path) -> None:
    site = serve(
        {
            "/robots.txt": text_route("slow down", 429),
            "/": html_page("Home", links("/a")),
            "/a": html_page("A", "a"),
        }
    )

    outcome = await run(tmp_path, site.url("/"))

    assert site.page_paths() == []
    # Not "1 blocked by robots.txt": the file forbids nothing, the server said "not now".
    assert outcome.blocked == 0 and outcome.indexed == 0
    assert outcome.skipped == {"robots.txt answered 429 (too many requests): nothing allowed": 1}


async def test_matcher_work_is_bounded_and_reported(serve: Serve, tmp_path: Path) -> None:
    # Rules past MAX_RULES are ignored, and counted in the summary.
    many = "Disallow:/a\n" * (MAX_RULES + 7)  # 480 kB: under the 500 KiB body cap
    # One path that would need more than MAX_COMPARISONS comparisons is refused.
    same_head = "".join(f"Disallow: /samehead{i}x\n" for i in range(MAX_COMPARISONS + 10))
    heavy = serve(
        {
            "/robots.txt": text_route("User-agent: *\n" + same_head),
            "/": html_page("Home", links("/sameheadz", "/ok")),
            "/ok": html_page("Ok", "ok"),
        }
    )
    capped = serve(
        {"/robots.txt": text_route("User-agent: *\n" + many), "/": html_page("Home", "home")}
    )

    heavy_outcome = await run(tmp_path / "heavy", heavy.url("/"))
    capped_outcome = await run(tmp_path / "capped", capped.url("/"))

    assert sorted(heavy.page_paths()) == ["/", "/ok"]
    refused = f"robots.txt needs over {MAX_COMPARISONS} comparisons: refused"
    assert heavy_outcome.skipped[refused] == 1
    assert capped_outcome.skipped[f"robots.txt rules past the {MAX_RULES}-rule cap ignored"] == 7


async def test_a_robots_txt_over_the_cap_is_read_to_the_cap(serve: Serve, tmp_path: Path) -> None:
    # RFC 9309 2.5: a crawler parses at least 500 KiB of robots.txt. A file that says
    # it is longer (a Content-Length over the cap) is read that far, not taken as
    # an unreachable robots.txt that shuts the whole host out.
    rules = "User-agent: *\nDisallow: /private\n"
    site = serve(
        {
            "/robots.txt": text_route(rules + "# padding\n" * 60_000),  # 600 kB
            "/": html_page("Home", links("/private", "/open")),
            "/open": html_page("Open", "open"),
            "/private": html_page("Private", "private"),
        }
    )

    outcome = await run(tmp_path, site.url("/"))

    assert sorted(site.page_paths()) == ["/", "/open"]
    assert outcome.blocked == 1 and outcome.indexed == 2
