"""What is fetched and what is recorded: XHTML, URLs as written, sitemap dates and depth,
against real loopback servers through the real pipeline."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fixture_sites import Route, SiteServer, html_page
from trawl.pipeline.crawl_run import CrawlOutcome, crawl
from trawl.records import PageRecord
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
