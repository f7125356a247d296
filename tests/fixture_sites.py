"""Test helpers: a scriptable HTTP server on loopback, and the shared test data."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def shared_data(relative: str) -> Path:
    """A path in ../shared/data, or skip the test with the reason when it is absent."""
    path = SHARED_DATA / relative
    if not path.exists():
        pytest.skip(f"needs the shared test data at {path} (not part of a plain clone)")
    return path


HOUSEKEEPING = frozenset({"/robots.txt", "/sitemap.xml", "/sitemap_index.xml"})


@dataclass
class Route:
    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/html"})
    delay: float = 0.0  # seconds before answering: for timeout tests
    # Instead of ``body``: chunks sent one by one (no Content-Length, connection
    # closed at the end), with ``chunk_delay`` seconds between them.
    chunks: Iterable[bytes] | None = None
    chunk_delay: float = 0.0
    etag: str | None = None  # sent, and answered with 304 when the client sends it back


def html_page(title: str, body: str, *, head: str = "") -> Route:
    doc = (
        f"<!doctype html><html lang=en><head><title>{title}</title>{head}</head>"
        f"<body>{body}</body></html>"
    )
    return Route(doc.encode())


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up mid-answer is what the crawler's limits do on purpose.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class SiteServer:
    """A threaded HTTP server answering from a dict of path -> Route, logging each request."""

    def __init__(
        self,
        routes: dict[str, Route],
        *,
        host: str = "127.0.0.1",
        dynamic: Callable[[str], Route | None] | None = None,
    ) -> None:
        """``dynamic`` answers paths not in ``routes`` (an endless calendar, say)."""
        self.routes = routes
        self.host = host
        self.requests: list[tuple[float, str, str]] = []  # (time, method, path)
        self.request_headers: list[dict[str, str]] = []
        self.request_lines: list[str] = []  # each request line as it came, byte for byte
        self.bytes_sent = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self._answer(send_body=True)

            def do_HEAD(self) -> None:
                self._answer(send_body=False)

            def _answer(self, *, send_body: bool) -> None:
                with server._lock:
                    server.requests.append((time.monotonic(), self.command, self.path))
                    server.request_lines.append(self.requestline)
                    server.request_headers.append(dict(self.headers.items()))
                route = server.routes.get(self.path)
                if route is None and dynamic is not None:
                    route = dynamic(self.path)
                if route is None:
                    route = Route(b"not found", 404, {"Content-Type": "text/plain"})
                if route.delay:
                    time.sleep(route.delay)
                if route.etag is not None and self.headers.get("If-None-Match") == route.etag:
                    self.send_response(304)
                    self.send_header("ETag", route.etag)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(route.status)
                if route.etag is not None:
                    self.send_header("ETag", route.etag)
                for name, value in route.headers.items():
                    self.send_header(name, value)
                if route.chunks is None:
                    self.send_header("Content-Length", str(len(route.body)))
                else:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                if not send_body:
                    return
                # The client may stop reading: exactly what a size cap does.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    for chunk in [route.body] if route.chunks is None else route.chunks:
                        self.wfile.write(chunk)
                        self.wfile.flush()
                        with server._lock:
                            server.bytes_sent += len(chunk)
                        if route.chunk_delay:
                            time.sleep(route.chunk_delay)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = _QuietServer((host, 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"

    def url(self, path: str) -> str:
        return self.base + path

    def paths(self) -> list[str]:
        """Every path requested, in order."""
        with self._lock:
            return [p for _, _, p in self.requests]

    def page_paths(self) -> list[str]:
        """Requested paths other than robots.txt and the sitemap locations tried by default."""
        return [p for p in self.paths() if p not in HOUSEKEEPING]

    def __enter__(self) -> SiteServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def trawl(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the `trawl` command in a child process, as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "trawl", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        check=False,
    )
