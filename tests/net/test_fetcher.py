"""The fetcher against real loopback servers: limits, timeouts, the address policy."""

from __future__ import annotations

import socket
from collections.abc import Callable

import pytest

from fixture_sites import Route, SiteServer
from trawl.errors import BlockedAddress, FetchError, FetchTimeout
from trawl.net.fetcher import Fetcher
from trawl.net.transport import FetchRequest

Serve = Callable[[dict[str, Route]], SiteServer]


def fetcher(allowed: frozenset[tuple[str, int]], timeout: float = 5.0) -> Fetcher:
    return Fetcher(
        user_agent="TrawlTest/1.0",
        timeout=timeout,
        concurrency=4,
        host_concurrency=2,
        allowed=allowed,
    )


def allow(site: SiteServer, host: str = "127.0.0.1") -> frozenset[tuple[str, int]]:
    return frozenset({(host, site.port)})


async def test_reads_html_and_does_not_follow_redirects(serve: Serve) -> None:
    site = serve(
        {
            "/": Route(b"<p>hello</p>", headers={"Content-Type": "text/html; charset=utf-8"}),
            "/moved": Route(b"", 302, {"Location": "/", "Content-Type": "text/html"}),
        }
    )
    async with fetcher(allow(site)) as f:
        page = await f.fetch(FetchRequest(site.url("/"), max_bytes=1000))
        moved = await f.fetch(FetchRequest(site.url("/moved"), max_bytes=1000))

    assert (page.status, page.body, page.is_html) == (200, b"<p>hello</p>", True)
    assert (moved.status, moved.location) == (302, "/")
    assert site.paths() == ["/", "/moved"]


async def test_streamed_body_is_cut_at_the_byte_cap(serve: Serve) -> None:
    site = serve({"/big": Route(chunks=[b"x" * 100_000] * 5)})
    async with fetcher(allow(site)) as f:
        result = await f.fetch(FetchRequest(site.url("/big"), max_bytes=10_000))

    assert result.truncated
    assert len(result.body) == 10_000


async def test_non_html_body_is_not_read(serve: Serve) -> None:
    site = serve({"/file.zip": Route(b"PK" * 1000, headers={"Content-Type": "application/zip"})})
    async with fetcher(allow(site)) as f:
        result = await f.fetch(FetchRequest(site.url("/file.zip"), max_bytes=10_000))

    assert result.status == 200
    assert result.body == b""
    assert result.content_type == "application/zip"


async def test_slow_response_times_out(serve: Serve) -> None:
    site = serve({"/slow": Route(b"late", delay=2.0)})
    async with fetcher(allow(site), timeout=0.3) as f:
        with pytest.raises(FetchTimeout):
            await f.fetch(FetchRequest(site.url("/slow"), max_bytes=1000))


async def test_private_address_is_refused_unless_named(serve: Serve) -> None:
    site = serve({"/": Route(b"<p>intranet</p>")})
    async with fetcher(frozenset()) as f:
        with pytest.raises(BlockedAddress):
            await f.fetch(FetchRequest(site.url("/"), max_bytes=1000))
    assert site.paths() == []


async def test_named_target_opens_only_that_port(serve: Serve) -> None:
    site = serve({"/": Route(b"<p>a</p>")})
    other = serve({"/": Route(b"<p>b</p>")})
    async with fetcher(allow(site)) as f:
        assert (await f.fetch(FetchRequest(site.url("/"), max_bytes=1000))).status == 200
        with pytest.raises(BlockedAddress):
            await f.fetch(FetchRequest(other.url("/"), max_bytes=1000))
    assert other.paths() == []


async def test_host_name_resolving_to_loopback_is_refused(serve: Serve) -> None:
    # The resolver drops private answers: a public-looking name cannot reach loopback.
    site = serve({"/": Route(b"<p>secret</p>")})
    async with fetcher(frozenset()) as f:
        with pytest.raises(BlockedAddress):
            await f.fetch(FetchRequest(f"http://localhost:{site.port}/", max_bytes=1000))
    async with fetcher(allow(site, "localhost")) as f:
        named = await f.fetch(FetchRequest(f"http://localhost:{site.port}/", max_bytes=1000))
        assert named.status == 200


async def test_connection_refused_is_a_fetch_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: the connection is refused
        async with fetcher(frozenset({("127.0.0.1", port)})) as f:
            with pytest.raises(FetchError):
                await f.fetch(FetchRequest(f"http://127.0.0.1:{port}/", max_bytes=1000))


async def test_head_goes_through_the_same_transport_and_reads_no_body(serve: Serve) -> None:
    site = serve({"/": Route(b"<p>hello</p>", headers={"Content-Type": "text/html"})})
    async with fetcher(allow(site)) as f:
        result = await f.fetch(FetchRequest(site.url("/"), method="HEAD", max_bytes=1000))

    assert (result.status, result.body, result.header("content-type")) == (200, b"", "text/html")
    assert [(m, p) for _, m, p in site.requests] == [("HEAD", "/")]


def test_head_limits_are_only_for_connections_that_serve_one_request() -> None:
    # The guard drops what follows a HEAD's answer: on a pooled connection that
    # would be the next answer's start.
    with pytest.raises(ValueError, match="one request"):
        Fetcher(user_agent="T", timeout=1, concurrency=1, host_concurrency=1, head_limits=(1, 1))
