"""Test helpers: a scriptable HTTP server on loopback, and the shared test data."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time
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


@dataclass
class Route:
    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/html"})
    delay: float = 0.0  # seconds before answering: for timeout tests


def html_page(title: str, body: str, *, head: str = "") -> Route:
    doc = (
        f"<!doctype html><html lang=en><head><title>{title}</title>{head}</head>"
        f"<body>{body}</body></html>"
    )
    return Route(doc.encode())


class SiteServer:
    """A threaded HTTP server answering from a dict of path -> Route, logging each request."""

    def __init__(self, routes: dict[str, Route]) -> None:
        self.routes = routes
        self.requests: list[tuple[float, str, str]] = []  # (time, method, path)
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
                route = server.routes.get(self.path)
                if route is None:
                    route = Route(b"not found", 404, {"Content-Type": "text/plain"})
                if route.delay:
                    time.sleep(route.delay)
                self.send_response(route.status)
                for name, value in route.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(route.body)))
                self.end_headers()
                if send_body:
                    # The client may stop reading: exactly what a size cap does.
                    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                        self.wfile.write(route.body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        return self.base + path

    def paths(self) -> list[str]:
        with self._lock:
            return [p for _, _, p in self.requests]

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
