"""A small real site, crawled into a data folder, and an API key for it: what the
service tests (API, property-based run, browser) start from."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import uvicorn

from fixture_sites import Route, SiteServer, html_page
from trawl.index.tantivy_index import IndexWriter
from trawl.pipeline.crawl_run import crawl
from trawl.records import PageRecord
from trawl.server.auth import create_key
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore


def index_guide(settings: Settings, pages: range) -> None:
    """Commit pages ``pages`` of a tortoise guide to the index, with no crawl or store."""
    writer = IndexWriter(settings.index_path)
    for n in pages:
        writer.upsert(
            PageRecord(
                url=f"https://docs.example/{n}",
                host="docs.example",
                status=200,
                depth=0,
                fetched_at=0.0,
                title=f"Tortoise care {n}",
                text=f"Tortoises need warmth and a shallow dish of water. Page {n} of the guide.",
                lang="en",
                indexable=True,
            )
        )
    writer.close()


ARTICLE_DATES = (
    '<script type="application/ld+json">{"@context": "https://schema.org",'
    ' "@type": "Article", "datePublished": "2024-03-01", "dateModified": "2024-05-20"}'
    "</script>"
)


# Another host for the site to link to: a private address, so the real header
# checker refuses it at once (no lookup, no request leaves the machine).
ELSEWHERE = "http://10.255.255.1:9/page"


def site_routes(external: str = ELSEWHERE) -> dict[str, Route]:
    """Home links to articles, a redirect, a missing page, a noindex page and another host."""
    home = (
        "<h1>Heron watching</h1>"
        '<a href="/herons">Grey herons</a> <a href="/egrets">Little egrets</a>'
        '<a href="/old">Old page</a> <a href="/missing">Missing</a>'
        f'<a href="/private">Private</a> <a href="{external}">Elsewhere</a>'
    )
    return {
        "/": html_page("Heron watching", home),
        "/herons": html_page(
            "Grey herons",
            "<p>The grey heron stands still in shallow water, waiting for fish.</p>"
            + '<a href="/egrets">egrets too</a>',
            head=ARTICLE_DATES,
        ),
        "/egrets": html_page(
            "Little egrets", "<p>Little egrets are small white herons with black legs.</p>"
        ),
        "/old": Route(b"", 301, {"Location": "/herons", "Content-Type": "text/html"}),
        "/private": html_page(
            "Private heron notes",
            "<p>Heron notes kept out of search.</p>",
            head='<meta name="robots" content="noindex">',
        ),
    }


def service_settings(data: Path, **changes: object) -> Settings:
    return Settings(data=data, delay=0.0, parse_workers=0).replace(**changes)


def target(site: SiteServer) -> str:
    """The site's host:port, as ``admin_allow_hosts`` lists it: a crawl the server starts
    reaches a loopback site only when the operator listed it."""
    return urlsplit(site.url("/")).netloc


def crawl_site(site: SiteServer, settings: Settings) -> None:
    """Crawl ``site`` into the data folder (in a thread of its own: the caller may be
    inside an event loop, as Playwright's sync API is)."""

    def run() -> None:
        store = SQLiteStore(settings.sqlite_path)
        try:
            asyncio.run(crawl([site.url("/")], settings, store))
        finally:
            store.close()

    with ThreadPoolExecutor(1) as pool:
        pool.submit(run).result()


def new_key(settings: Settings, name: str = "tests") -> str:
    store = SQLiteStore(settings.sqlite_path)
    try:
        return create_key(store, name)[1]
    finally:
        store.close()


class LiveServer:
    """The app served by a real uvicorn on a loopback port, in a thread."""

    def __init__(self, app: Any) -> None:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def __enter__(self) -> str:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        port = self._server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(30)
