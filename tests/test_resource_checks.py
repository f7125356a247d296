"""Resource checks: images, scripts and stylesheets of crawled pages, HEAD only."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fixture_sites import Route, SiteServer, html_page
from trawl.pipeline.crawl_run import CrawlOutcome, crawl
from trawl.pipeline.resource_checks import check_external_headers
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

Serve = Callable[..., SiteServer]


def site_with_resources() -> dict[str, Route]:
    return {
        "/": html_page(
            "Home",
            '<img src="/img/ok.png" alt="fine"><img src="/img/gone.png" alt="broken">'
            '<a href="/second">Second</a>',
            head='<link rel="stylesheet" href="/style.css"><link rel="canonical" href="/">'
            '<script src="/app.js"></script>',
        ),
        "/second": html_page("Second", '<img src="/img/gone.png"><p>again</p>'),
        "/img/ok.png": Route(b"\x89PNG" + b"0" * 5000, headers={"Content-Type": "image/png"}),
        "/style.css": Route(b"body{}", headers={"Content-Type": "text/css"}),
        "/app.js": Route(b"", 500, {"Content-Type": "text/plain"}),
    }


async def run(settings: Settings, url: str) -> CrawlOutcome:
    store = SQLiteStore(settings.sqlite_path)
    try:
        return await crawl([url], settings, store)
    finally:
        store.close()


async def test_resources_are_checked_with_head_and_broken_ones_show_their_pages(
    serve: Serve, tmp_path: Path
) -> None:
    site = serve(site_with_resources())
    settings = Settings(data=tmp_path, delay=0, parse_workers=0)
    outcome = await run(settings, site.url("/"))
    assert outcome.resources_checked == 4
    assert outcome.resources_broken == 2
    resource_requests = [
        (m, p) for _, m, p in site.requests if p.startswith(("/img", "/st", "/app"))
    ]
    # Header-only: every resource asked once, with HEAD, never its body.
    assert sorted(resource_requests) == sorted(
        [
            ("HEAD", "/img/ok.png"),
            ("HEAD", "/img/gone.png"),
            ("HEAD", "/style.css"),
            ("HEAD", "/app.js"),
        ]
    )
    store = SQLiteStore(settings.sqlite_path)
    try:
        everything = {r.url.removeprefix(site.base): r for r in store.resources()}
        assert set(everything) == {"/img/ok.png", "/img/gone.png", "/style.css", "/app.js"}
        ok = everything["/img/ok.png"]
        assert (ok.status, ok.content_type, ok.content_length) == (200, "image/png", 5004)
        broken = {
            r.url.removeprefix(site.base): r.status for r in store.resources(broken_only=True)
        }
        assert broken == {"/img/gone.png": 404, "/app.js": 500}
        assert store.resource_pages(site.url("/img/gone.png")) == [
            site.url("/"),
            site.url("/second"),
        ]
        assert store.resource_pages(site.url("/app.js")) == [site.url("/")]
    finally:
        store.close()


async def test_resource_checks_can_be_turned_off_and_capped(serve: Serve, tmp_path: Path) -> None:
    site = serve(site_with_resources())
    off = Settings(data=tmp_path / "off", delay=0, parse_workers=0, resource_checks=0)
    assert (await run(off, site.url("/"))).resources_checked == 0
    assert not [p for _, m, p in site.requests if m == "HEAD"]
    capped = Settings(data=tmp_path / "capped", delay=0, parse_workers=0, resource_checks=2)
    assert (await run(capped, site.url("/"))).resources_checked == 2
    assert len([p for _, m, p in site.requests if m == "HEAD"]) == 2


async def test_a_resource_on_a_private_host_not_named_is_refused(
    serve: Serve, tmp_path: Path
) -> None:
    other = serve({"/secret.png": Route(b"", headers={"Content-Type": "image/png"})})
    site = serve({"/": html_page("Home", f'<img src="{other.url("/secret.png")}">')})
    settings = Settings(data=tmp_path, delay=0, parse_workers=0)
    outcome = await run(settings, site.url("/"))
    assert outcome.resources_broken == 1
    assert other.requests == []
    store = SQLiteStore(settings.sqlite_path)
    try:
        (check,) = store.resources()
        assert check.status == 0
        assert check.error is not None
        assert "non-public" in check.error
    finally:
        store.close()


# A site crawled under host_aliases: named 127.0.0.9 (a loopback name, so that nothing
# leaves the machine even when the alias is ignored), served by a server elsewhere.
SITE = "127.0.0.9"


async def test_resource_checks_honour_host_aliases(serve: Serve, tmp_path: Path) -> None:
    mirror = serve(site_with_resources())
    settings = Settings(
        data=tmp_path, delay=0, parse_workers=0, host_aliases=f"{SITE}={mirror.host}:{mirror.port}"
    )

    outcome = await run(settings, f"http://{SITE}/")

    # Asked of the mirror, naming the site: as the crawl's own requests are.
    assert outcome.resources_checked == 4
    assert outcome.resources_broken == 2
    heads = [
        (p, h.get("Host"))
        for (_, m, p), h in zip(mirror.requests, mirror.request_headers, strict=True)
        if m == "HEAD"
    ]
    assert sorted(heads) == sorted(
        (p, SITE) for p in ["/img/ok.png", "/img/gone.png", "/style.css", "/app.js"]
    )
    store = SQLiteStore(settings.sqlite_path)
    try:
        statuses = {r.url: r.status for r in store.resources()}
    finally:
        store.close()
    assert statuses[f"http://{SITE}/img/ok.png"] == 200
    assert statuses[f"http://{SITE}/img/gone.png"] == 404


async def test_check_headers_asks_an_aliased_host_at_its_target(serve: Serve) -> None:
    mirror = serve({"/old": Route(b"", 301, {"Content-Type": "text/html"})})
    # The mirror redirects to its own address: the report shows the site's URL.
    mirror.routes["/old"].headers["Location"] = mirror.url("/new")
    settings = Settings(host_aliases=f"{SITE}={mirror.host}:{mirror.port}")

    (check,) = await check_external_headers([f"http://{SITE}/old"], settings)

    assert (check.status, check.error) == (301, None)
    assert check.location == f"http://{SITE}/new"
    assert mirror.request_headers[0]["Host"] == SITE


async def test_a_resource_is_asked_as_the_page_wrote_it(serve: Serve, tmp_path: Path) -> None:
    written = "/img/a%7Eb.png?v=2&a=1"
    site = serve(
        {
            "/": html_page("Home", f'<img src="{written}" alt="logo">'),
            written: Route(b"png", headers={"Content-Type": "image/png"}),
        }
    )
    settings = Settings(data=tmp_path, delay=0, parse_workers=0)

    outcome = await run(settings, site.url("/"))

    assert (outcome.resources_checked, outcome.resources_broken) == (1, 0)
    assert f"HEAD {written} HTTP/1.1" in site.request_lines
    store = SQLiteStore(settings.sqlite_path)
    try:
        (check,) = store.resources()
        assert (check.url, check.status) == (site.url("/img/a~b.png?a=1&v=2"), 200)
        assert store.resource_pages(check.url) == [site.url("/")]
    finally:
        store.close()
