"""The whole pipeline against a real fixture site on loopback."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fixture_sites import Route, SiteServer, html_page
from stage_faults import raising_parse
from trawl.index.tantivy_index import IndexReader, IndexWriter
from trawl.pipeline import stage_pool
from trawl.pipeline.crawl_run import CrawlOutcome, crawl
from trawl.pipeline.pages import PagePipeline
from trawl.pipeline.stage_pool import BUSY_WINDOW, StagePool
from trawl.pipeline.upkeep import rebuild_index
from trawl.records import CrawlUrl, FetchResult
from trawl.search.searcher import search
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

Serve = Callable[[dict[str, Route]], SiteServer]


def fixture_site() -> dict[str, Route]:
    return {
        "/robots.txt": Route(
            b"User-agent: *\nDisallow: /private/\n", headers={"Content-Type": "text/plain"}
        ),
        "/": html_page(
            "Fixture Home",
            '<nav><a href="/about">About us</a></nav>'
            "<p>Welcome to the fixture site.</p>"
            '<a href="/blog/post-1?utm_source=news&b=2&a=1#comments">First post</a>'
            '<a href="/private/secret">Secret</a>'
            '<a href="/files/report.pdf">Report</a>'
            '<a href="/title-in-body">Odd page</a>'
            '<a href="/old">Old address</a>'
            '<a href="/missing">Broken link</a>'
            '<a href="mailto:someone@example.com">Mail</a>',
        ),
        "/about": html_page("About the zebra keepers", "<h1>About</h1><p>We keep zebras.</p>"),
        # Asked as the link writes it (seed 003), fragment dropped.
        "/blog/post-1?utm_source=news&b=2&a=1": html_page(
            "First post", '<p>Giraffes are tall.</p><a href="/">Home</a>'
        ),
        "/private/secret": html_page("Secret", "<p>okapi secrets</p>"),
        "/files/report.pdf": Route(
            b"%PDF-1.4 narwhal", headers={"Content-Type": "application/pdf"}
        ),
        "/title-in-body": Route(
            b"<html><body><title>Stray Title Page</title><p>Pangolins roam here.</p></body></html>",
            headers={"Content-Type": "text/html; charset=utf-8"},
        ),
        "/old": Route(b"", 301, {"Location": "/about", "Content-Type": "text/html"}),
    }


async def run(settings: Settings, *urls: str) -> CrawlOutcome:
    store = SQLiteStore(settings.sqlite_path)
    try:
        return await crawl(list(urls), settings, store)
    finally:
        store.close()


def settings_for(tmp_path: Path, **changes: object) -> Settings:
    return Settings(data=tmp_path / "data", delay=0.0).replace(**changes)


def urls_found(settings: Settings, query: str) -> list[str]:
    page = search(IndexReader(settings.index_path), query, settings)
    return [h.url for h in page.hits]


async def test_crawl_honours_robots_and_indexes_only_html(serve: Serve, tmp_path: Path) -> None:
    site = serve(fixture_site())
    settings = settings_for(tmp_path)

    outcome = await run(settings, site.url("/"))

    assert outcome.outcome == "complete"
    paths = site.paths()
    assert paths[0] == "/robots.txt"
    assert not any(p.startswith("/private/") for p in paths), paths
    assert outcome.blocked == 1
    # Requested as written, fragment dropped; known by its identity: the tracking
    # parameter gone, the query sorted.
    assert "/blog/post-1?utm_source=news&b=2&a=1" in paths
    assert urls_found(settings, "zebras") == [site.url("/about")]
    assert urls_found(settings, "giraffes") == [site.url("/blog/post-1?a=1&b=2")]
    assert urls_found(settings, "narwhal") == []  # a PDF is fetched but never indexed
    assert urls_found(settings, "okapi") == []
    store = SQLiteStore(settings.sqlite_path)
    pdf = store.page(site.url("/files/report.pdf"))
    assert pdf is not None and pdf.status == 200 and not pdf.indexable
    old = store.page(site.url("/old"))
    assert old is not None and old.redirect_to == site.url("/about") and not old.indexable
    missing = store.page(site.url("/missing"))
    assert missing is not None and missing.status == 404 and not missing.indexable
    run_row = store.crawls()[0]
    assert (run_row.outcome, run_row.pages_ok) == ("complete", outcome.ok)
    assert store.frontier_counts(outcome.crawl_id)["skipped"] == 1
    store.close()


async def test_title_inside_body_is_the_title(serve: Serve, tmp_path: Path) -> None:
    site = serve(fixture_site())
    settings = settings_for(tmp_path)
    await run(settings, site.url("/"))

    page = search(IndexReader(settings.index_path), "pangolins", settings)

    assert [h.title for h in page.hits] == ["Stray Title Page"]
    assert "<mark>Pangolins</mark>" in page.hits[0].snippet


async def test_recrawl_updates_in_place(serve: Serve, tmp_path: Path) -> None:
    routes = fixture_site()
    site = serve(routes)
    settings = settings_for(tmp_path)
    await run(settings, site.url("/"))
    store = SQLiteStore(settings.sqlite_path)
    pages_before = store.count_pages()
    docs_before = IndexReader(settings.index_path).num_docs()

    routes["/about"] = html_page("About the quagga keepers", "<p>We keep quaggas now.</p>")
    await run(settings, site.url("/"))

    assert urls_found(settings, "quaggas") == [site.url("/about")]
    assert urls_found(settings, "zebras") == []
    assert store.count_pages() == pages_before
    assert IndexReader(settings.index_path).num_docs() == docs_before
    assert len(store.crawls()) == 2
    store.close()


async def test_page_that_turns_into_an_error_leaves_the_index(serve: Serve, tmp_path: Path) -> None:
    routes = fixture_site()
    site = serve(routes)
    settings = settings_for(tmp_path)
    await run(settings, site.url("/"))
    assert urls_found(settings, "zebras") == [site.url("/about")]

    routes["/about"] = Route(b"gone", 410, {"Content-Type": "text/plain"})
    await run(settings, site.url("/"))

    assert urls_found(settings, "zebras") == []


async def test_max_pages_and_max_depth(serve: Serve, tmp_path: Path) -> None:
    chain = {f"/p{i}": html_page(f"Page {i}", f'<a href="/p{i + 1}">next</a>') for i in range(20)}
    site = serve(chain)
    capped = await run(settings_for(tmp_path / "a", max_pages=5), site.url("/p0"))
    assert capped.fetched == 5 and capped.outcome == "capped"
    assert site.page_paths() == ["/p0", "/p1", "/p2", "/p3", "/p4"]

    site = serve(chain)
    shallow = await run(settings_for(tmp_path / "b", max_depth=3), site.url("/p0"))
    assert shallow.outcome == "capped"  # /p4 was linked but too deep: nothing is pruned
    assert site.page_paths() == ["/p0", "/p1", "/p2", "/p3"]  # depths 0 to 3


async def test_rebuild_index_from_store(serve: Serve, tmp_path: Path) -> None:
    site = serve(fixture_site())
    settings = settings_for(tmp_path)
    outcome = await run(settings, site.url("/"))

    store = SQLiteStore(settings.sqlite_path)
    count = await rebuild_index(store, settings)
    store.close()

    assert count == outcome.indexed
    assert IndexReader(settings.index_path).num_docs() == outcome.indexed
    assert urls_found(settings, "zebras") == [site.url("/about")]


async def test_hostile_pages_do_not_stop_the_crawl(serve: Serve, tmp_path: Path) -> None:
    many_links = "".join(f'<a href="/x{i}">x</a>' for i in range(20_000))
    site = serve(
        {
            "/": html_page(
                "Start", '<a href="/broken">b</a><a href="/links">l</a><a href="/ok">ok</a>'
            ),
            "/broken": Route(b"\xff\xfe<html><title>\x00\x01</titl<<body><a href='http://[::1'>"),
            "/links": html_page("Links", many_links),
            "/ok": html_page("Fine", "<p>Wombats are fine.</p>"),
        }
    )
    settings = settings_for(tmp_path, max_pages=50)

    outcome = await run(settings, site.url("/"))

    assert outcome.outcome == "capped"
    assert urls_found(settings, "wombats") == [site.url("/ok")]


async def test_parsing_in_a_worker_process_gives_the_same_index(
    serve: Serve, tmp_path: Path
) -> None:
    site = serve(fixture_site())
    inline = settings_for(tmp_path / "inline", parse_workers=0)
    pooled = settings_for(tmp_path / "pooled", parse_workers=1)

    await run(inline, site.url("/"))
    await run(pooled, site.url("/"))

    for query in ("zebras", "giraffes", "pangolins"):
        assert urls_found(pooled, query) == urls_found(inline, query) != []


async def test_inbound_anchor_text_finds_the_target(serve: Serve, tmp_path: Path) -> None:
    site = serve(
        {
            # Navigation is not body text: only /b can match, through its anchors.
            "/": html_page("Home", '<nav><a href="/b">aardwolf facts</a><a href="/c">c</a></nav>'),
            "/b": html_page("Bee page", "<p>Nothing about the animal here.</p>"),
            "/c": html_page("See page", '<nav><a href="/b">aardwolf facts again</a></nav>'),
        }
    )
    settings = settings_for(tmp_path)
    await run(settings, site.url("/"))

    assert urls_found(settings, "aardwolf") == [site.url("/b")]
    store = SQLiteStore(settings.sqlite_path)
    inlinks = {u: store.page(site.url(u)).inlinks for u in ("/", "/b", "/c")}  # type: ignore[union-attr]
    store.close()
    assert inlinks == {"/": 0, "/b": 2, "/c": 1}


async def test_page_dates_take_the_first_source_that_speaks(serve: Serve, tmp_path: Path) -> None:
    ld = (
        '<script type="application/ld+json">{"@type": "Article", '
        '"datePublished": "2020-05-01", "dateModified": "2021-06-01"}</script>'
    )
    sitemap_dates = [f"2022-01-0{d}" for d in range(1, 4)]  # distinct dates: trusted
    site = serve({})
    base = site.base
    urlset = "".join(
        f"<url><loc>{base}/s{i}</loc><lastmod>{d}</lastmod></url>"
        for i, d in enumerate(sitemap_dates)
    )
    http_date = "Wed, 01 Mar 2023 10:00:00 GMT"
    site.routes.update(
        {
            "/": html_page("Home", '<a href="/ld">ld</a><a href="/h">h</a>'),
            "/ld": html_page("LD", "<p>x</p>", head=ld),
            "/h": Route(
                b"<title>H</title><p>x</p>",
                headers={"Content-Type": "text/html", "Last-Modified": http_date},
            ),
            "/sitemap.xml": Route(
                f"<urlset>{urlset}</urlset>".encode(), headers={"Content-Type": "application/xml"}
            ),
            **{f"/s{i}": html_page(f"S{i}", "<p>s</p>") for i in range(3)},
        }
    )
    settings = settings_for(tmp_path)
    await run(settings, site.url("/"))

    store = SQLiteStore(settings.sqlite_path)
    ld_page, header_page, sitemap_page = (store.page(site.url(p)) for p in ("/ld", "/h", "/s1"))
    store.close()
    assert ld_page is not None and header_page is not None and sitemap_page is not None
    assert (ld_page.published, ld_page.modified_source) == (
        datetime(2020, 5, 1, tzinfo=UTC),
        "page",
    )
    assert ld_page.modified == datetime(2021, 6, 1, tzinfo=UTC)
    assert (header_page.modified_source, header_page.published) == ("http", None)
    assert header_page.modified == datetime(2023, 3, 1, 10, tzinfo=UTC)
    assert (sitemap_page.modified_source, sitemap_page.modified) == (
        "sitemap",
        datetime(2022, 1, 2, tzinfo=UTC),
    )


@pytest.mark.parametrize(
    ("head", "label"),
    [
        ('<meta name="robots" content="noindex">', "Noindex"),
        ('<link rel="canonical" href="/about-us">', "Canonicalised"),
        ('<meta http-equiv="refresh" content="0; url=/about-us">', "Redirected"),
    ],
)
async def test_a_page_that_turns_unindexable_leaves_the_index(
    serve: Serve, tmp_path: Path, head: str, label: str
) -> None:
    routes = fixture_site()
    routes["/about-us"] = html_page("Us", "<p>The new about page.</p>")
    site = serve(routes)
    settings = settings_for(tmp_path)
    await run(settings, site.url("/"))
    assert urls_found(settings, "zebras") == [site.url("/about")]

    routes["/about"] = html_page("About the zebra keepers", "<p>We keep zebras.</p>", head=head)
    await run(settings, site.url("/"))

    assert urls_found(settings, "zebras") == []
    store = SQLiteStore(settings.sqlite_path)
    about, target = store.page(site.url("/about")), store.page(site.url("/about-us"))
    store.close()
    assert about is not None and about.indexability == label
    if label == "Noindex":
        assert target is None  # nothing names it
    else:  # the canonical or the refresh target was queued and crawled
        assert target is not None and target.indexability == "Indexable"


async def test_pages_past_live_index_after_are_indexed_as_fetched(tmp_path: Path) -> None:
    settings = Settings(data=tmp_path / "data")
    settings.data.mkdir()
    store = SQLiteStore(settings.sqlite_path)
    index = IndexWriter(settings.index_path, fresh=True)
    base = "http://example.test/"
    crawl_id = store.begin_crawl([base])
    pipeline = PagePipeline(store, index, crawl_id, StagePool(0), live_index_after=2)
    try:
        for n in range(5):
            url = f"{base}page-{n}"
            page = html_page(f"Page {n}", f"<p>Words about herons, number {n}.</p>")
            result = FetchResult(url, 200, (("content-type", "text/html"),), page.body)
            await pipeline.fetched(CrawlUrl(url, 0), result, lambda found: [])
        index.commit()
        reader = IndexReader(settings.index_path)
        # The first two wait for the crawl's end (anchor text, signals); the rest are
        # searchable already, and all five are listed for the end of crawl step.
        assert reader.num_docs() == 3
        assert pipeline.indexed_urls == [f"{base}page-{n}" for n in range(5)]
    finally:
        index.close()
        store.close()


async def test_a_pool_started_before_the_crawl_is_used_and_closed(
    serve: Serve, tmp_path: Path
) -> None:
    # `trawl crawl` starts the stage pool before it imports the rest of the crawl.
    site = serve(fixture_site())
    settings = settings_for(tmp_path)
    before = {p.pid for p in multiprocessing.active_children()}
    pool = StagePool(2)
    pool.start()
    started = {p.pid for p in multiprocessing.active_children()} - before
    assert len(started) == 2
    store = SQLiteStore(settings.sqlite_path)
    try:
        outcome = await crawl([site.url("/")], settings, store, pool=pool)
    finally:
        store.close()
    assert outcome.outcome == "complete" and outcome.indexed > 0
    assert urls_found(settings, "welcome fixture") == [site.url("/")]
    # The crawl closed the pool it was given: its workers are gone.
    assert not started & {p.pid for p in multiprocessing.active_children()}


async def test_a_page_that_breaks_a_parse_worker_is_an_error_and_the_crawl_goes_on(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The parser raising in a worker process comes back as that page's error.
    monkeypatch.setattr(stage_pool, "_parse", raising_parse)
    site = serve({**fixture_site(), "/boom": html_page("Boom", "<p>Aardvarks.</p>")})
    settings = settings_for(tmp_path)
    pool = StagePool(1)
    pool.start()
    store = SQLiteStore(settings.sqlite_path)
    try:
        outcome = await crawl([site.url("/"), site.url("/boom")], settings, store, pool=pool)
    finally:
        store.close()
    assert outcome.internal_errors == 1
    assert urls_found(settings, "zebras") == [site.url("/about")]
    assert urls_found(settings, "aardvarks") == []


async def test_a_crawl_bound_by_politeness_parses_in_its_own_process(
    serve: Serve, tmp_path: Path
) -> None:
    # parse_workers -1 (the default): while the crawl waits on its hosts' delay the
    # event loop has time to parse, and worker processes would only triple its memory.
    site = serve(fixture_site())
    settings = settings_for(tmp_path, delay=0.5, parse_workers=-1)  # about 4 s
    before = {p.pid for p in multiprocessing.active_children()}
    children: set[int | None] = set()

    def progress(_: object) -> None:
        children.update({p.pid for p in multiprocessing.active_children()} - before)

    store = SQLiteStore(settings.sqlite_path)
    try:
        outcome = await crawl([site.url("/")], settings, store, progress)
    finally:
        store.close()
    assert outcome.outcome == "complete" and outcome.indexed >= 4
    assert outcome.seconds > BUSY_WINDOW  # a window was watched at least
    assert urls_found(settings, "zebras") == [site.url("/about")]
    assert not children


async def test_a_sitemap_date_for_a_queued_url_reaches_whichever_worker_claims_it(
    tmp_path: Path,
) -> None:
    # Issue 17 across workers: a link queued the URL, this worker's sitemap dates it
    # before anyone fetched it; the worker that claims it (maybe another) has the date.
    store = SQLiteStore(tmp_path / "trawl.sqlite")
    url = "http://example.test/later"
    crawl_id = store.join_crawl(["http://example.test/"])
    store.frontier_add(crawl_id, [CrawlUrl(url, 1)])
    pipeline = PagePipeline(store, None, crawl_id, StagePool(0))
    lastmod = datetime(2022, 2, 1, tzinfo=UTC)
    try:
        assert await pipeline.dated({url: lastmod}) == set()  # not saved yet
        claimed = store.frontier_claim(crawl_id, "w2", lease=60.0, delay=0.0, host_concurrency=1)
        assert claimed is not None and claimed.lastmod == lastmod
    finally:
        store.close()
