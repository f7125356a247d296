"""Fixtures: real HTTP servers on loopback, stopped after each test; a real
PostgreSQL server for the session, a fresh database per test; the store on both."""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from fixture_sites import Route, SiteServer
from postgres_server import PostgresServer, server_binaries
from tiers import guard, mark_slow_items
from trawl.store.base import Store
from trawl.store.postgres import PostgresStore
from trawl.store.sqlite import SQLiteStore


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the slow tier (tests/tiers.py says which tests are slow and why)."""
    mark_slow_items(items)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    """A test outside the slow tier may not listen on a socket or start a process,
    in its fixtures of any scope included."""
    if item.get_closest_marker("slow") is not None:
        return (yield)
    with pytest.MonkeyPatch.context() as patch:
        guard(patch)
        return (yield)


@pytest.fixture
def serve() -> Iterator[Callable[..., SiteServer]]:
    """Start a SiteServer (``serve(routes, host=..., dynamic=...)``), stopped after the test."""
    started: list[SiteServer] = []

    def start(routes: dict[str, Route], **options: Any) -> SiteServer:
        server = SiteServer(routes, **options).__enter__()
        started.append(server)
        return server

    yield start
    for server in started:
        server.__exit__()


class _QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def serve_directory() -> Iterator[Callable[[Path], str]]:
    """Serve a folder of static files on loopback; returns the base URL."""
    servers: list[ThreadingHTTPServer] = []

    def start(directory: Path) -> str:
        def handler(*args: Any, **kwargs: Any) -> _QuietFiles:
            return _QuietFiles(*args, directory=str(directory), **kwargs)

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        httpd.daemon_threads = True
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}"

    yield start
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One real PostgreSQL server for the whole test session."""
    bindir = server_binaries()
    if bindir is None:
        pytest.skip(
            "PostgreSQL server binaries not found (pg_config --bindir): install Debian's"
            " postgresql package"
        )
    server = PostgresServer(bindir).start()
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A fresh, empty database for one test."""
    url = postgres_server.new_database()
    yield url
    postgres_server.drop_database(url)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Store]]:
    """Opens the same store again (as another process would): a SQLite file, or a
    PostgreSQL database. Tests that take it run on every backend."""
    opened: list[Store] = []
    url = request.getfixturevalue("postgres_url") if request.param == "postgresql" else None

    def opener() -> Store:
        new: Store = SQLiteStore(tmp_path / "trawl.sqlite") if url is None else PostgresStore(url)
        opened.append(new)
        return new

    yield opener
    for each in opened:
        each.close()


@pytest.fixture
def store(open_store: Callable[[], Store]) -> Store:
    return open_store()
