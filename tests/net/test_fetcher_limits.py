"""Hostile responses against the fetcher: huge bodies, bombs, drips, odd IP notations."""

from __future__ import annotations

import asyncio
import gzip
import io
import zlib
from collections.abc import Callable, Iterator

import pytest
from aiohttp import client_proto
from aiohttp.http_parser import HttpResponseParserPy

from fixture_sites import Route, SiteServer
from trawl.errors import BadResponse, BlockedAddress, FetchTimeout, ResponseTooLarge
from trawl.net.fetcher import Fetcher
from trawl.net.transport import FetchRequest

Serve = Callable[[dict[str, Route]], SiteServer]
MB = 1024 * 1024


def fetcher(port: int, timeout: float = 10.0) -> Fetcher:
    return Fetcher(
        user_agent="TrawlTest/1.0",
        timeout=timeout,
        concurrency=2,
        host_concurrency=2,
        allowed=frozenset({("127.0.0.1", port)}),
    )


def zeros(total: int, chunk: int = MB) -> Iterator[bytes]:
    for _ in range(total // chunk):
        yield b"\0" * chunk


def gzip_bomb(size: int) -> bytes:
    """``size`` zero bytes, gzipped (about 1000:1), built without holding them."""
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9) as gz:
        for block in zeros(size):
            gz.write(block)
    return out.getvalue()


async def test_declared_50mb_body_is_not_read(serve: Serve) -> None:
    site = serve({"/big": Route(b"<p>" + b"x" * (50 * MB))})
    async with fetcher(site.port) as f:
        with pytest.raises(ResponseTooLarge):
            await f.fetch(FetchRequest(site.url("/big"), max_bytes=MB))
    assert site.bytes_sent < 50 * MB


async def test_streamed_50mb_body_is_cut_at_the_cap(serve: Serve) -> None:
    site = serve({"/stream": Route(chunks=zeros(50 * MB))})
    async with fetcher(site.port) as f:
        result = await f.fetch(FetchRequest(site.url("/stream"), max_bytes=2 * MB))

    assert result.truncated and len(result.body) == 2 * MB
    assert site.bytes_sent < 20 * MB  # we hung up long before the end


async def test_gzip_bomb_is_cut_at_the_cap(serve: Serve) -> None:
    bomb = gzip_bomb(256 * MB)  # 256 MiB of zeros in about 256 KB on the wire
    site = serve(
        {"/bomb": Route(bomb, headers={"Content-Type": "text/html", "Content-Encoding": "gzip"})}
    )
    async with fetcher(site.port) as f:
        result = await f.fetch(FetchRequest(site.url("/bomb"), max_bytes=5 * MB))

    assert len(bomb) < MB
    assert result.truncated and len(result.body) == 5 * MB


async def test_slow_drip_hits_the_total_deadline(serve: Serve) -> None:
    drip = Route(chunks=(b"<p>" for _ in range(100)), chunk_delay=0.2)
    site = serve({"/drip": drip})
    async with fetcher(site.port, timeout=1.0) as f:
        with pytest.raises(FetchTimeout):
            await f.fetch(FetchRequest(site.url("/drip"), max_bytes=MB))
    assert site.bytes_sent < 100 * 3


async def test_huge_header_is_refused(serve: Serve) -> None:
    site = serve({"/h": Route(b"ok", headers={"Content-Type": "text/html", "X-Big": "a" * 20_000})})
    async with fetcher(site.port) as f:
        with pytest.raises(Exception) as caught:
            await f.fetch(FetchRequest(site.url("/h"), max_bytes=MB))
    assert type(caught.value).__module__.startswith("trawl")


@pytest.mark.parametrize(
    "host",
    [
        "2130706433",
        "0x7f000001",
        "0177.0.0.1",
        "127.1",
        "0x7f.0.0.1",
        "[::ffff:127.0.0.1]",
        "[::1]",
    ],
)
async def test_loopback_in_any_notation_is_blocked_unless_named(serve: Serve, host: str) -> None:
    site = serve({"/": Route(b"<p>secret</p>")})
    async with Fetcher(
        user_agent="TrawlTest/1.0", timeout=5, concurrency=1, host_concurrency=1
    ) as f:
        with pytest.raises(BlockedAddress):
            await f.fetch(FetchRequest(f"http://{host}:{site.port}/", max_bytes=MB))
    assert site.paths() == []


@pytest.mark.slow  # a raw asyncio server: aiohttp would not send this status line
async def test_a_malformed_answer_is_a_bad_response_told_in_one_line() -> None:
    # aiohttp's parser errors draw the bad line with a caret under it, over several
    # lines; the message goes to the log, the frontier and the crawl's summary.
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 2OO OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server, fetcher(port) as f:
        with pytest.raises(BadResponse) as caught:
            await f.fetch(FetchRequest(f"http://127.0.0.1:{port}/", max_bytes=MB))
    message = str(caught.value)
    assert "\n" not in message and "2OO" in message


async def _raw_server(answer: bytes) -> tuple[asyncio.Server, int]:
    async def respond(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(answer)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(respond, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


def _encoded(body: bytes, *encodings: bytes) -> bytes:
    head = b"".join(b"Content-Encoding: " + e + b"\r\n" for e in encodings)
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
        + head
        + b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
        + body
    )


PAGE = b"<title>Stacked</title><p>words of the page</p>"


@pytest.mark.slow  # raw asyncio servers: two Content-Encoding lines
@pytest.mark.parametrize(
    ("body", "encodings"),
    [
        (gzip.compress(gzip.compress(PAGE)), [b"gzip, gzip"]),
        (gzip.compress(zlib.compress(PAGE)), [b"deflate", b"gzip"]),  # two header lines
        (gzip.compress(PAGE), [b"identity, gzip"]),
        (zlib.compress(gzip.compress(PAGE)), [b"x-gzip,deflate"]),
        # aiohttp reads the first line, not the last: it undid none of these three.
        (gzip.compress(gzip.compress(gzip.compress(PAGE))), [b"gzip, gzip", b"gzip"]),
        # ... and one of these (the outer), which the last line made look like none.
        (gzip.compress(gzip.compress(gzip.compress(PAGE))), [b"gzip", b"gzip, gzip"]),
    ],
    ids=[
        "gzip-in-gzip",
        "two-lines",
        "identity-listed",
        "gzip-in-deflate",
        "stack-then-one",
        "one-then-stack",
    ],
)
@pytest.mark.parametrize("parser", ["C", "Python"])
async def test_stacked_content_codings_are_all_undone(
    body: bytes, encodings: list[bytes], parser: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # aiohttp undid one coding when a Content-Encoding line named exactly one: "gzip,
    # gzip" reached the index as compressed bytes, a page of garbage words with no
    # title. Its two parsers disagree on which line (C: the last; Python, used without
    # its compiled extension or with AIOHTTP_NO_EXTENSIONS: the first), so each is used.
    if parser == "Python":
        monkeypatch.setattr(client_proto, "HttpResponseParser", HttpResponseParserPy)
    server, port = await _raw_server(_encoded(body, *encodings))
    async with server, fetcher(port) as f:
        result = await f.fetch(FetchRequest(f"http://127.0.0.1:{port}/", max_bytes=MB))
    assert result.body == PAGE and not result.truncated


@pytest.mark.slow
async def test_a_stacked_bomb_is_cut_at_the_cap() -> None:
    bomb = gzip.compress(gzip_bomb(64 * MB))
    server, port = await _raw_server(_encoded(bomb, b"gzip, gzip"))
    async with server, fetcher(port) as f:
        result = await f.fetch(FetchRequest(f"http://127.0.0.1:{port}/", max_bytes=2 * MB))
    assert result.truncated and len(result.body) == 2 * MB


@pytest.mark.slow
async def test_an_unknown_coding_in_a_stack_is_a_bad_response() -> None:
    server, port = await _raw_server(_encoded(gzip.compress(PAGE), b"compress, gzip"))
    async with server, fetcher(port) as f:
        with pytest.raises(BadResponse, match="compress"):
            await f.fetch(FetchRequest(f"http://127.0.0.1:{port}/", max_bytes=MB))


@pytest.mark.slow  # a raw asyncio server: no HTTP library sends status 000
async def test_status_000_is_a_bad_response_not_a_page() -> None:
    # 000 parsed as a status was stored as 0, which the store reads as "no response",
    # with no error: the page counted as fetched, neither indexed nor failed.
    answer = b"HTTP/1.1 000 Zero\r\nContent-Type: text/html\r\nContent-Length: 4\r\n\r\nzero"
    server, port = await _raw_server(answer)
    async with server, fetcher(port) as f:
        with pytest.raises(BadResponse, match="status 000"):
            await f.fetch(FetchRequest(f"http://127.0.0.1:{port}/", max_bytes=MB))
