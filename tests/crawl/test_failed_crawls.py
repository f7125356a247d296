"""The truth about a failed crawl: an unreachable host is reported as such, its pages
carry the error. Real loopback sockets, through the real pipeline."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from fixture_sites import SiteServer, html_page
from trawl.pipeline.crawl_run import CrawlOutcome, crawl
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


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed on leaving: connections are refused


def page_error(tmp_path: Path, url: str) -> str | None:
    store = SQLiteStore(tmp_path / "data" / "trawl.sqlite")
    try:
        page = store.page(url)
    finally:
        store.close()
    assert page is not None
    return page.error


@pytest.mark.slow  # the crawl starts its worker processes
async def test_a_refused_connection_is_reported_as_unreachable(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/"

    outcome = await run(tmp_path, url)

    assert (outcome.blocked, outcome.failed, outcome.indexed) == (0, 1, 0)
    assert outcome.skipped == {"host unreachable (connection refused)": 1}
    error = page_error(tmp_path, url)
    assert error is not None and "cannot connect" in error


async def test_a_tls_failure_is_reported_as_unreachable(serve: Serve, tmp_path: Path) -> None:
    site = serve({"/": html_page("Plain", "no TLS here")})
    url = f"https://127.0.0.1:{site.port}/"  # a plain-HTTP server: the handshake fails

    outcome = await run(tmp_path, url)

    assert (outcome.blocked, outcome.failed) == (0, 1)
    assert outcome.skipped == {"host unreachable (TLS failure)": 1}
    error = page_error(tmp_path, url)
    assert error is not None and error.startswith("TLS failure")
