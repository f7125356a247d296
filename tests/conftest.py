"""Fixtures: real HTTP servers on loopback, stopped after each test."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from fixture_sites import Route, SiteServer


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
