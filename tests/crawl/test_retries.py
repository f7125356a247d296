"""Server errors and lost connections: retried at most twice with back-off per host; a
host that keeps failing is slowed, then parked and named. Real loopback servers."""

from __future__ import annotations

import itertools
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fixture_sites import Route, SiteServer, html_page
from trawl.crawl.policy import PARK_AFTER
from trawl.pipeline.crawl_run import CrawlOutcome, crawl
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

Serve = Callable[..., SiteServer]


async def run(tmp_path: Path, *urls: str, **settings: object) -> CrawlOutcome:
    config = Settings(data=tmp_path / "data", delay=0.0).replace(**settings)
    store = SQLiteStore(config.sqlite_path)
    try:
        return await crawl(list(urls), config, store, on_crawler=_quick_backoff)
    finally:
        store.close()


def _quick_backoff(crawler: object) -> None:
    # The back-off's shape is what is tested, not its one-second base.
    limits = crawler._limits  # type: ignore[attr-defined]
    from dataclasses import replace

    crawler._limits = replace(limits, retry_backoff=0.05)  # type: ignore[attr-defined]


def links(*paths: str) -> str:
    return "".join(f'<a href="{p}">{p}</a>' for p in paths)


def failing_then(path: str, status: int, times: int, then: Route) -> Callable[[str], Route | None]:
    answers = iter([Route(b"oops", status, {"Content-Type": "text/plain"})] * times)
    return lambda p: next(answers, then) if p == path else None


@pytest.mark.parametrize("status", [500, 502, 503, 504])
async def test_a_passing_server_error_is_retried(serve: Serve, tmp_path: Path, status: int) -> None:
    site = serve(
        {"/": html_page("Home", links("/flaky"))},
        dynamic=failing_then("/flaky", status, 2, html_page("Flaky", "<p>finally</p>")),
    )

    outcome = await run(tmp_path, site.url("/"), host_concurrency=1)

    assert site.page_paths().count("/flaky") == 3
    assert outcome.indexed == 2 and outcome.failed == 0


async def test_a_lasting_server_error_is_tried_three_times_with_growing_waits(
    serve: Serve, tmp_path: Path
) -> None:
    site = serve(
        {"/": html_page("Home", links("/down"))}, dynamic=failing_then("/down", 500, 99, Route())
    )

    outcome = await run(tmp_path, site.url("/"), host_concurrency=1)

    times = [t for t, _, p in site.requests if p == "/down"]
    assert len(times) == 3
    first, second = times[1] - times[0], times[2] - times[1]
    assert first >= 0.04 and second >= 0.09  # 0.05 s, then 0.1 s
    assert outcome.indexed == 1


class ResettingServer:
    """HTTP on loopback whose first ``resets`` page requests are answered with a TCP
    reset (SO_LINGER 0), then served; robots.txt answers 404."""

    def __init__(self, resets: int) -> None:
        self._resets = resets
        self.page_requests = 0
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self.port = self._sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with conn:
                request = conn.recv(65536).decode("latin-1")
                path = request.split(" ", 2)[1] if " " in request else "/"
                if path == "/robots.txt" or path.startswith("/sitemap"):
                    conn.sendall(
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    )
                    continue
                self.page_requests += 1
                if self.page_requests <= self._resets:
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    continue
                body = b"<html><head><title>Back</title></head><body>numbat</body></html>"
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close"
                    b"\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
                )

    def close(self) -> None:
        self._sock.close()


@pytest.fixture
def resetting() -> Iterator[Callable[[int], ResettingServer]]:
    servers: list[ResettingServer] = []

    def start(resets: int) -> ResettingServer:
        servers.append(ResettingServer(resets))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


async def test_a_reset_connection_is_retried(
    resetting: Callable[[int], ResettingServer], tmp_path: Path
) -> None:
    server = resetting(2)

    outcome = await run(tmp_path, f"http://127.0.0.1:{server.port}/", host_concurrency=1)

    assert server.page_requests == 3
    assert outcome.indexed == 1 and outcome.failed == 0


async def test_a_host_that_keeps_failing_is_parked_and_named(serve: Serve, tmp_path: Path) -> None:
    broken = Route(b"down", 502, {"Content-Type": "text/plain"})
    pages = [f"/p{i}" for i in range(20)]
    site = serve({"/": html_page("Home", links(*pages)), **dict.fromkeys(pages, broken)})

    outcome = await run(tmp_path, site.url("/"), host_concurrency=1)

    requested = [p for p in site.page_paths() if p != "/"]
    assert len(requested) == PARK_AFTER  # three pages, three tries each, then no more
    assert list(outcome.parked_hosts) == ["127.0.0.1"]  # politeness is per host name
    assert "9 failures in a row, the last HTTP 502" in outcome.parked_hosts["127.0.0.1"]
    assert outcome.skipped["host parked after repeated failures"] == 20 - PARK_AFTER // 3


async def test_a_host_failing_three_times_in_a_row_is_slowed(serve: Serve, tmp_path: Path) -> None:
    broken = Route(b"down", 502, {"Content-Type": "text/plain"})
    site = serve({"/": html_page("Home", links("/a", "/b")), "/a": broken, "/b": broken})

    await run(tmp_path, site.url("/"), host_concurrency=1)

    times = [t for t, _, p in site.requests if p in ("/a", "/b")]
    assert len(times) == 6  # two pages, three tries each: not yet parked
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    # Past SLOW_AFTER (3) failures the host's delay is the back-off doubled each time
    # (0.1 s, 0.2 s, 0.4 s): /b's first try waits for it, where the crawl's delay is 0.
    assert gaps[2] >= 0.09
    assert gaps[3] >= 0.19 and gaps[4] >= 0.39
