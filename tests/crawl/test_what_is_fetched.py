"""What is fetched and what is recorded: XHTML, URLs as written, sitemap dates and depth,
against real loopback servers through the real pipeline."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from fixture_sites import Route, SiteServer, html_page
from trawl.index.tantivy_index import IndexReader
from trawl.pipeline.crawl_run import CrawlOutcome, crawl
from trawl.records import PageRecord
from trawl.search.request import search_request
from trawl.search.searcher import search
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


def stored(tmp_path: Path, url: str) -> PageRecord | None:
    store = SQLiteStore(tmp_path / "data" / "trawl.sqlite")
    try:
        return store.page(url)
    finally:
        store.close()


def links(*paths: str) -> str:
    return "".join(f'<a href="{p}">{p}</a>' for p in paths)


async def test_xhtml_is_read_as_html(serve: Serve, tmp_path: Path) -> None:
    xhtml = (
        b'<?xml version="1.0" encoding="utf-8"?>\n'
        b'<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Quokka facts</title></head>'
        b"<body><p>The quokka smiles at everyone it meets.</p></body></html>"
    )
    site = serve(
        {
            "/": html_page("Home", links("/x.xhtml")),
            "/x.xhtml": Route(xhtml, headers={"Content-Type": "application/xhtml+xml"}),
        }
    )

    await run(tmp_path, site.url("/"))

    page = stored(tmp_path, site.url("/x.xhtml"))
    assert page is not None and page.indexable
    assert page.title == "Quokka facts"
    assert "quokka smiles" in page.text


def sitemap_route(base: str, dated: dict[str, str]) -> Route:
    urls = "".join(
        f"<url><loc>{base}{path}</loc><lastmod>{day}</lastmod></url>" for path, day in dated.items()
    )
    return Route(
        f"<urlset>{urls}</urlset>".encode(),
        headers={"Content-Type": "application/xml"},
        delay=1.0,  # read after the start page's links are queued
    )


async def test_a_sitemap_date_is_kept_for_a_url_a_link_found_first(
    serve: Serve, tmp_path: Path
) -> None:
    dated = {"/a": "2022-01-01", "/b": "2022-01-02", "/c": "2022-01-03"}
    site = serve({})
    site.routes.update(
        {
            "/": html_page("Home", links(*dated)),
            "/sitemap.xml": sitemap_route(site.base, dated),
            **{p: html_page(p, "<p>dated</p>") for p in dated},
        }
    )

    # Queued first as start URLs (as a link would be), fetched one at a time 0.8 s
    # apart: /c goes out at 2.4 s, after the sitemap is read (1 s).
    starts = [site.url(p) for p in ("/", *dated)]
    await run(tmp_path, *starts, delay=0.8, host_concurrency=1)

    page = stored(tmp_path, site.url("/c"))
    assert page is not None
    assert (page.modified_source, page.modified) == ("sitemap", datetime(2022, 1, 3, tzinfo=UTC))


async def test_a_sitemap_date_reaches_a_page_fetched_before_the_sitemap_was_read(
    serve: Serve, tmp_path: Path
) -> None:
    # Each page gets what it would have got fetched after the sitemap: the sitemap's
    # date, unless the page dates itself, or its published date is later (HTTP speaks).
    dated = {"/a": "2022-01-01", "/b": "2022-01-02", "/c": "2022-01-03"}
    own = {"/own": "2022-01-04", "/pub": "2022-01-05"}
    ld_modified = '<script type="application/ld+json">{"dateModified": "2021-06-01"}</script>'
    ld_published = '<script type="application/ld+json">{"datePublished": "2023-01-01"}</script>'
    http_date = "Wed, 01 Mar 2023 10:00:00 GMT"
    site = serve({})

    def page(path: str, head: str = "") -> Route:  # distinct texts: no page a duplicate
        return html_page(path, f"<p>A dated page called {path[1:]}.</p>", head=head)

    pub = page("/pub", ld_published)
    site.routes.update(
        {
            "/": html_page("Home", links(*dated, *own)),
            "/sitemap.xml": sitemap_route(site.base, dated | own),  # answers after 1 s
            **{p: page(p) for p in dated},
            "/own": page("/own", ld_modified),
            "/pub": Route(
                pub.body, headers={"Content-Type": "text/html", "Last-Modified": http_date}
            ),
        }
    )

    await run(tmp_path, site.url("/"))

    asked = {path: at for at, _, path in site.requests}
    answered = asked["/sitemap.xml"] + 1.0
    assert all(asked[p] < answered for p in [*dated, *own])  # the order this is about
    pages = {p: stored(tmp_path, site.url(p)) for p in [*dated, *own]}
    got = {p: (r.modified_source, r.modified) for p, r in pages.items() if r is not None}
    assert got == {
        "/a": ("sitemap", datetime(2022, 1, 1, tzinfo=UTC)),
        "/b": ("sitemap", datetime(2022, 1, 2, tzinfo=UTC)),
        "/c": ("sitemap", datetime(2022, 1, 3, tzinfo=UTC)),
        "/own": ("page", datetime(2021, 6, 1, tzinfo=UTC)),
        "/pub": ("http", datetime(2023, 3, 1, 10, tzinfo=UTC)),
    }
    # The index documents are made from the store: the date sort sees the dates.
    settings = Settings(data=tmp_path / "data")
    found = search(IndexReader(settings.index_path), search_request("dated", sort="date"), settings)
    assert [(h.url, h.modified) for h in found.hits] == [
        (site.url("/pub"), datetime(2023, 3, 1, 10, tzinfo=UTC)),
        (site.url("/c"), datetime(2022, 1, 3, tzinfo=UTC)),
        (site.url("/b"), datetime(2022, 1, 2, tzinfo=UTC)),
        (site.url("/a"), datetime(2022, 1, 1, tzinfo=UTC)),
        (site.url("/own"), datetime(2021, 6, 1, tzinfo=UTC)),
    ]


async def test_sitemap_urls_obey_max_depth(serve: Serve, tmp_path: Path) -> None:
    dated = {"/orphan1": "2022-01-01", "/orphan2": "2022-01-02"}
    site = serve({})
    site.routes.update(
        {
            "/": html_page("Home", "no links"),
            "/sitemap.xml": sitemap_route(site.base, dated),
            **{p: html_page(p, "<p>orphan</p>") for p in dated},
        }
    )

    outcome = await run(tmp_path, site.url("/"), max_depth=0)

    assert site.page_paths() == ["/"]
    assert outcome.skipped["sitemap URL past --max-depth"] == 2


def xml_route(text: str) -> Route:
    return Route(text.encode(), headers={"Content-Type": "application/xml"})


async def test_sitemap_indexes_are_followed_three_levels_deep_no_more(
    serve: Serve, tmp_path: Path
) -> None:
    site = serve({"/": html_page("Home", "no links")})
    b = site.base

    def index(*children: str) -> Route:
        entries = "".join(f"<sitemap><loc>{b}{c}</loc></sitemap>" for c in children)
        return xml_route(f"<sitemapindex>{entries}</sitemapindex>")

    def urlset(*pages: str) -> Route:
        return xml_route(
            "<urlset>" + "".join(f"<url><loc>{b}{p}</loc></url>" for p in pages) + "</urlset>"
        )

    site.routes.update(
        {
            "/sitemap.xml": index("/i1.xml"),  # level 0
            "/i1.xml": index("/i2.xml"),  # 1
            "/i2.xml": index("/u3.xml", "/i3.xml"),  # 2
            "/u3.xml": urlset("/at3"),  # 3: read
            "/i3.xml": index("/u4.xml"),  # 3: read, its children are not
            "/u4.xml": urlset("/deep"),
            "/at3": html_page("At three", "ok"),
            "/deep": html_page("Deep", "too deep"),
        }
    )

    await run(tmp_path, site.url("/"))

    assert "/at3" in site.paths() and "/i3.xml" in site.paths()
    assert "/u4.xml" not in site.paths() and "/deep" not in site.paths()
