"""A mirror crawled as itself: the SUMO docs served as they are (every page names
https://sumo.dlr.de as canonical) on loopback, crawled with and without an alias."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from fixture_sites import shared_data, trawl
from trawl.errors import ConfigError
from trawl.pipeline.crawl_run import CrawlOutcome, crawl
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore
from trawl.urls.start import parse_host_aliases


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def mirror() -> Iterator[tuple[str, int]]:
    """The mirror as is: nothing rewritten, so its pages point at the live site."""
    root = shared_data("site-sumo-docs")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield "127.0.0.1", int(httpd.server_address[1])
    httpd.shutdown()
    httpd.server_close()


def run(tmp_path: Path, start: str, **settings: object) -> CrawlOutcome:
    config = Settings(data=tmp_path, delay=0.0, concurrency=8, host_concurrency=8).replace(
        **settings
    )
    store = SQLiteStore(config.sqlite_path)
    try:
        return asyncio.run(crawl([start], config, store))
    finally:
        store.close()


def test_a_mirror_says_its_pages_are_canonicalised_away(
    mirror: tuple[str, int], tmp_path: Path
) -> None:
    host, port = mirror

    outcome = run(tmp_path, f"http://{host}:{port}/docs/index.html")

    assert outcome.main_loss is not None
    assert outcome.main_loss.endswith(
        "pages canonicalised to sumo.dlr.de (outside the crawl): not indexed"
    )
    assert outcome.indexed < 10


def test_an_alias_crawls_the_mirror_as_the_site(mirror: tuple[str, int], tmp_path: Path) -> None:
    host, port = mirror

    # Every request goes to the loopback mirror; no other address is contacted.
    outcome = run(
        tmp_path, "https://sumo.dlr.de/docs/index.html", host_aliases=f"sumo.dlr.de={host}:{port}"
    )

    assert outcome.outcome == "complete"
    assert outcome.main_loss is None
    assert outcome.indexed > 300
    store = SQLiteStore(tmp_path / "trawl.sqlite")
    page = store.page("https://sumo.dlr.de/docs/index.html")
    store.close()
    assert page is not None and page.indexability == "Indexable"


@pytest.mark.parametrize(
    ("aliases", "problem"),
    [
        (["a.example=127.0.0.1:8001", "A.example.=127.0.0.1:8002"], "a.example is aliased twice"),
        (["a b.example=127.0.0.1:8001"], "not a host name"),
        (["a.example=127.0. 0.1:8001"], "not a host name"),
        (["a.example/x=127.0.0.1:8001"], "not a host name"),
        # int() read "²" as no number: a traceback, not a refusal.
        (["a.example=127.0.0.1:\u00b2"], "HOST=TARGET_HOST:PORT"),
        (["a.example=127.0.0.1:\u0668\u0660"], "HOST=TARGET_HOST:PORT"),
        # A URL's host never has a port: such an alias never applied, without a word.
        (["a.example:8080=127.0.0.1:8001"], "a host name, not a host:port"),
    ],
)
def test_a_repeated_or_malformed_alias_is_refused_before_the_crawl(
    tmp_path: Path, aliases: list[str], problem: str
) -> None:
    flags = [arg for alias in aliases for arg in ("--alias", alias)]
    data = tmp_path / "data"

    # A loopback start URL: the old code crawled it, and never looked a.example up.
    done = trawl("crawl", "http://127.0.0.1:9/", "--data", str(data), *flags)

    assert done.returncode == 2, done.stderr
    assert problem in done.stderr
    assert not data.exists()


def test_an_alias_names_its_host_as_urls_do() -> None:
    # URLs name an IDN host by its punycode: "bücher.example" as written never matched.
    assert parse_host_aliases("B\u00fccher.Example.=127.0.0.1:8001") == {
        "xn--bcher-kva.example": ("127.0.0.1", 8001)
    }
    with pytest.raises(ConfigError, match="aliased twice"):
        parse_host_aliases("b\u00fccher.example=127.0.0.1:1, xn--bcher-kva.example=127.0.0.1:2")
