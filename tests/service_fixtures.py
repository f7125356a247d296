"""A small real site, crawled into a data folder, and an API key for it: what the
service tests (API, property-based run, browser) start from."""

from __future__ import annotations

import asyncio
from pathlib import Path

from fixture_sites import Route, SiteServer, html_page
from trawl.pipeline import crawl
from trawl.server.auth import create_key
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

ARTICLE_DATES = (
    '<script type="application/ld+json">{"@context": "https://schema.org",'
    ' "@type": "Article", "datePublished": "2024-03-01", "dateModified": "2024-05-20"}'
    "</script>"
)


def site_routes(external: str = "https://elsewhere.example/page") -> dict[str, Route]:
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


def crawl_site(site: SiteServer, settings: Settings) -> None:
    store = SQLiteStore(settings.sqlite_path)
    try:
        asyncio.run(crawl([site.url("/")], settings, store))
    finally:
        store.close()


def new_key(settings: Settings, name: str = "tests") -> str:
    store = SQLiteStore(settings.sqlite_path)
    try:
        return create_key(store, name)[1]
    finally:
        store.close()
