"""End to end: the Eclipse SUMO docs (407 pages, a real sitemap, meta refreshes,
canonical tags) served on loopback as if they were https://sumo.dlr.de."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from fixture_sites import shared_data
from trawl.index.tantivy_index import IndexReader
from trawl.pipeline.crawl_run import crawl
from trawl.search.searcher import search
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

LIVE_ORIGIN = b"https://sumo.dlr.de"


def rewriting_handler(root: Path, origin: bytes) -> type[SimpleHTTPRequestHandler]:
    class Handler(SimpleHTTPRequestHandler):
        """Serves the mirror with its absolute live URLs pointing at this server."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

        def do_GET(self) -> None:
            if self.path == "/robots.txt":
                body = b"User-agent: *\nAllow: /\nSitemap: " + origin + b"/docs/sitemap.xml\n"
                return self._send(body, "text/plain")
            path = Path(self.translate_path(self.path))
            if path.is_dir():
                path = path / "index.html"
            if not path.is_file() or path.suffix not in {".html", ".xml"}:
                return super().do_GET()
            body = path.read_bytes().replace(LIVE_ORIGIN, origin)
            return self._send(body, "text/html" if path.suffix == ".html" else "application/xml")

        def _send(self, body: bytes, content_type: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def sumo_site() -> Iterator[str]:
    root = shared_data("site-sumo-docs")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), SimpleHTTPRequestHandler)
    origin = f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.RequestHandlerClass = rewriting_handler(root, origin.encode())
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield origin
    httpd.shutdown()
    httpd.server_close()


def test_sumo_docs(sumo_site: str, tmp_path: Path) -> None:
    settings = Settings(data=tmp_path, delay=0.0, concurrency=8, host_concurrency=8)
    store = SQLiteStore(settings.sqlite_path)
    # TraCI.html is a redirect stub nothing links to: named as a second start URL.
    starts = [f"{sumo_site}/docs/index.html", f"{sumo_site}/docs/TraCI.html"]
    outcome = asyncio.run(crawl(starts, settings, store))
    assert outcome.outcome == "complete"

    # Meta refresh pages are redirects: recorded, followed, never indexed.
    traci = store.page(f"{sumo_site}/docs/TraCI.html")
    assert traci is not None and traci.indexability == "Redirected"
    assert traci.redirect_to == f"{sumo_site}/docs/TraCI/index.html"
    target = store.page(f"{sumo_site}/docs/TraCI/index.html")
    assert target is not None and target.indexability == "Indexable"

    # The sitemap's 1970 lastmod values are discarded, and its pages are all crawled,
    # also the ones no page links to.
    pages = {p.url: p for p in store.pages()}
    assert not any(p.modified_source == "sitemap" for p in pages.values())
    sitemap_urls = (shared_data("site-sumo-docs") / "docs" / "sitemap.xml").read_text()
    listed = [
        u.replace("https://sumo.dlr.de", sumo_site)
        for u in sitemap_urls.split("<loc>")[1:]
        for u in [u.split("</loc>", 1)[0]]
    ]
    missing = [u for u in listed if u.replace("%2C", ",") not in pages and u not in pages]
    assert missing == []
    orphans = [p for p in pages.values() if p.inlinks == 0 and p.indexable]
    assert orphans, "the mirror has pages nothing links to: found only through the sitemap"

    # Canonicals are honoured: every indexable page names itself (or nothing).
    for page in pages.values():
        if page.indexability == "Indexable" and page.canonical:
            assert page.canonical == page.url
    labels = {p.indexability for p in pages.values()}
    assert {"Indexable", "Redirected"} <= labels
    assert search(IndexReader(settings.index_path), "traci", settings).total > 0
    store.close()
