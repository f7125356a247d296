"""The one ``Transport`` (``trawl.net.transport``), over aiohttp: one request, one hop,
bounded.

Redirects are not followed here: the crawler sees each Location and runs the
same scope, robots and safety checks on it as on any other link. Bodies are
read only for the content types a caller asks for, and never past a byte cap,
so a huge or endless response costs at most ``max_bytes``. The address policy
(``trawl.net.addresses``) is applied here once, to the addresses aiohttp then
connects to (``SafeResolver``; IP literals before any connection). Library
errors are translated into ``trawl.errors.FetchError`` at this boundary.
"""

from __future__ import annotations

import asyncio
import re
import time
import zlib
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any

import aiohttp
import yarl

from trawl.errors import (
    BadResponse,
    BlockedAddress,
    ConnectionLost,
    FetchError,
    FetchTimeout,
    HostUnreachable,
    ResponseTooLarge,
)
from trawl.net.addresses import Target, is_ip_literal
from trawl.net.aliases import aliased, unaliased
from trawl.net.resolver import ForbiddenAddress, SafeResolver
from trawl.net.transport import FetchRequest
from trawl.records import FetchResult
from trawl.urls.identity import host_port

_CHUNK = 64 * 1024
# Header limits: a hostile server cannot make us buffer megabytes of headers.
MAX_HEADER_LINE = 8_190
MAX_HEADERS = 100
# Printable ASCII, no space: a URL already percent-encoded (every identity and
# request form of trawl.urls.identity), which is sent byte for byte.
_ENCODED = re.compile(r"[!-~]+", re.ASCII)
# A 1xx status line: an informational answer, another header block to come.
_INFORMATIONAL = re.compile(rb"HTTP/\d\.\d 1(?!01)\d\d")
# The codings undone here (aiohttp undoes none): zlib reads gzip and zlib streams alike.
_ZLIB_CODINGS = frozenset({"gzip", "x-gzip", "deflate"})


class Fetcher:
    """A pooled HTTP client: one connection pool shared by every request of a crawl.

    ``pooled=False`` opens a fresh connection per request and closes it after (the
    header checks: nothing of one answer reaches the next); only then may
    ``head_limits`` (header block bytes, 1xx answers) bound a HEAD's answer
    (``_HeadGuard``). ``refuse_mapped`` and ``max_addresses`` make the address policy
    stricter (``SafeResolver``).
    """

    def __init__(
        self,
        *,
        user_agent: str,
        timeout: float,
        concurrency: int,
        host_concurrency: int,
        allowed: frozenset[Target] = frozenset(),
        aliases: Mapping[str, Target] | None = None,
        pooled: bool = True,
        head_limits: tuple[int, int] | None = None,
        refuse_mapped: bool = False,
        max_addresses: int | None = None,
    ) -> None:
        """``aliases``: host name -> the host:port its requests go to, over plain HTTP
        (``host_aliases``); the targets must be in ``allowed`` when private."""
        self._allowed = allowed
        self._aliases = dict(aliases or {})
        self._user_agent = user_agent
        self._timeout = aiohttp.ClientTimeout(total=timeout, sock_connect=min(timeout, 10.0))
        self._limits = (concurrency, host_concurrency)
        self._pooled = pooled
        if head_limits is not None and pooled:
            raise ValueError("head_limits hold for connections that serve one request")
        self._head_limits = head_limits
        self._refuse_mapped = refuse_mapped
        self._max_addresses = max_addresses
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> Fetcher:
        self.resolver = SafeResolver(
            self._allowed, refuse_mapped=self._refuse_mapped, max_addresses=self._max_addresses
        )
        connector = aiohttp.TCPConnector(
            limit=self._limits[0],
            limit_per_host=self._limits[1],
            resolver=self.resolver,
            ttl_dns_cache=300,
            # Unpooled: each request resolves, connects and closes on its own.
            use_dns_cache=self._pooled,
            force_close=not self._pooled,
        )
        options: dict[str, Any] = {}
        if self._head_limits is not None:
            options["request_class"] = _guarded_request(*self._head_limits)
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=self._timeout,
            headers={"User-Agent": self._user_agent, "Accept-Encoding": "gzip, deflate"},
            cookie_jar=aiohttp.DummyCookieJar(),  # a crawler keeps no session state
            # Every coding is undone here, within max_bytes (_undo_codings): aiohttp
            # undoes at most one, and its C and Python parsers disagree on which
            # Content-Encoding line names it (the last, the first).
            auto_decompress=False,
            max_line_size=MAX_HEADER_LINE,
            max_field_size=MAX_HEADER_LINE,
            max_headers=MAX_HEADERS,
            **options,
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def fetch(self, request: FetchRequest) -> FetchResult:
        """``request``'s answer, without following redirects (``Transport.fetch``).
        Raises FetchError when no usable HTTP response arrived."""
        if self._session is None:
            raise RuntimeError("Fetcher used outside 'async with'")
        url = request.url
        headers = dict(request.headers)
        host, port = host_port(url)
        request_url, alias = url, self._aliases.get(host)
        if alias is not None:
            request_url, site = aliased(url, alias)
            headers["Host"] = site
            host, port = alias
        # aiohttp skips the resolver for IP literals, so the policy is applied here too.
        if is_ip_literal(host) and not self.resolver.permits(host, port, host):
            raise BlockedAddress(f"{host} is a non-public address")
        started = time.monotonic()
        try:
            async with self._session.request(
                request.method, _exact(request_url), allow_redirects=False, headers=headers
            ) as response:
                if response.status < 100:
                    # 000 (or 099) is no HTTP status; stored, it would read as no answer.
                    raise BadResponse(f"bad response: status {response.status:03d}")
                received = tuple((_text(k), _value(k, v)) for k, v in response.raw_headers)
                if alias is not None:
                    received = unaliased(received, url, alias)
                media_type = response.content_type.lower()
                body, truncated = b"", False
                wanted = "*" in request.read_types or media_type in request.read_types
                if request.method != "HEAD" and wanted:
                    declared = response.content_length
                    over = declared is not None and declared > request.max_bytes
                    if over and not request.cut_declared:
                        raise ResponseTooLarge(
                            f"Content-Length {declared} is over the {request.max_bytes}-byte cap"
                        )
                    body, truncated = await _read_capped(response, request.max_bytes)
                    body, truncated = _undo_codings(
                        _codings_left(response.raw_headers), body, truncated, request.max_bytes
                    )
                return FetchResult(
                    url=url,
                    status=response.status,
                    headers=received,
                    body=body,
                    truncated=truncated,
                    elapsed=time.monotonic() - started,
                    fetched_at=time.time(),
                )
        except TimeoutError as e:
            raise FetchTimeout(f"timed out after {time.monotonic() - started:.1f}s") from e
        except aiohttp.ClientConnectorError as e:
            raise _connect_error(e) from e
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as e:
            raise ConnectionLost(_one_line(f"connection lost: {e}")) from e
        except aiohttp.ClientPayloadError as e:
            raise ConnectionLost(_one_line(f"answer cut short: {e}")) from e
        except aiohttp.ClientResponseError as e:
            # The status line or headers broke HTTP or went past a header limit.
            raise BadResponse(_one_line(f"bad response: {e.message}")) from e
        except (aiohttp.ClientError, asyncio.IncompleteReadError, ValueError, LookupError) as e:
            # ValueError, LookupError: malformed headers or an unknown content encoding.
            raise FetchError(_one_line(f"{type(e).__name__}: {e}")) from e


def _guarded_request(max_header_block: int, max_informational: int) -> type[aiohttp.ClientRequest]:
    """aiohttp's request, whose HEAD answers pass through a ``_HeadGuard`` first.

    aiohttp caps headers line by line only and skips 1xx answers without a limit, and
    it parses whatever follows a HEAD's answer on the connection as the next answer:
    a server that sends a body after HEAD makes it drop the answer it already had. No
    hook of aiohttp's sees those bytes, so the connection's ``data_received`` is
    wrapped before the request is sent (each such connection serves one request)."""

    class GuardedRequest(aiohttp.ClientRequest):
        async def send(self, conn: Any) -> aiohttp.ClientResponse:
            protocol = conn.protocol
            if self.method == "HEAD" and protocol is not None:
                protocol.data_received = _HeadGuard(protocol, max_header_block, max_informational)
            return await super().send(conn)

    return GuardedRequest


class _HeadGuard:
    """The bytes of a HEAD's answer up to the end of its final header block.

    Each header block (the 1xx answers', then the final one's) may be at most
    ``max_block`` bytes, and at most ``max_informational`` 1xx answers may come
    first; past either the request ends with BadResponse, having buffered no more
    than one block. Whatever follows the final block (a body a HEAD must not have)
    is dropped unread.
    """

    def __init__(self, protocol: Any, max_block: int, max_informational: int) -> None:
        self._protocol = protocol
        self._inner: Callable[[bytes], None] = protocol.data_received
        self._max_block = max_block
        self._max_informational = max_informational
        self._block = b""  # the current header block so far
        self._informational = 0
        self._done = False

    def __call__(self, data: bytes) -> None:
        if self._done:
            return
        seen = len(self._block)
        buffer = self._block + data
        start = 0
        while True:
            end = buffer.find(b"\r\n\r\n", start)
            if end < 0:
                self._block = buffer[start:]
                if len(self._block) > self._max_block:
                    self._fail(f"bad response: headers over {self._max_block} bytes")
                    return
                self._inner(data)
                return
            end += 4
            if end - start > self._max_block:
                self._fail(f"bad response: headers over {self._max_block} bytes")
                return
            if not _INFORMATIONAL.match(buffer, start):
                self._done = True
                self._inner(data[: end - seen])
                return
            self._informational += 1
            if self._informational > self._max_informational:
                self._fail(f"more than {self._max_informational} informational responses")
                return
            start = end

    def _fail(self, message: str) -> None:
        self._done = True
        self._protocol.set_exception(BadResponse(message))
        if self._protocol.transport is not None:
            self._protocol.transport.close()


def _exact(url: str) -> yarl.URL | str:
    """``url`` as aiohttp must send it. Given a string, aiohttp requotes it: ``%7e``
    becomes ``~`` and ``%2f`` becomes ``/``, so the server would be asked another URL
    than the page wrote (a signed query fails, a path changes); an encoded URL is
    passed as it is."""
    return yarl.URL(url, encoded=True) if _ENCODED.fullmatch(url) else url


def _connect_error(e: aiohttp.ClientConnectorError) -> FetchError:
    """Why no server answered, in words an operator acts on."""
    if isinstance(e.os_error, ForbiddenAddress):
        return BlockedAddress(str(e.os_error))
    if isinstance(e, aiohttp.ClientSSLError):
        return HostUnreachable(f"TLS failure: {e.os_error}"[:300])
    if isinstance(e, aiohttp.ClientConnectorDNSError):
        return HostUnreachable(f"unknown host name: {e.host}")
    if isinstance(e.os_error, ConnectionRefusedError):
        return HostUnreachable(f"cannot connect to {e.host}:{e.port}: connection refused")
    reason = e.os_error.strerror or str(e.os_error) or type(e.os_error).__name__
    return HostUnreachable(f"cannot connect to {e.host}:{e.port}: {reason}")


def _one_line(message: str) -> str:
    """An aiohttp error's message in one line of at most 300 characters: its parser
    draws the bad line with a caret under it, and the message goes to the log, the
    frontier and the crawl's summary."""
    return " ".join(message.split())[:300]


def _text(raw: bytes) -> str:
    """A header's bytes as text, losslessly: UTF-8 when they are, else Latin-1 (what
    RFC 9110 5.5 says old servers send). aiohttp's own decoding leaves surrogates
    for such bytes, which no store can encode."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _value(name: bytes, raw: bytes) -> str:
    """A header's value as text; a Location that is no UTF-8 with its non-ASCII bytes
    percent-encoded as they came, which is the URL browsers request (WPT
    fetch/api/redirect/redirect-location-escape: \\xff is %FF). Read as Latin-1, "\\xe9"
    would be re-encoded as UTF-8 (%C3%A9): a URL the server never meant."""
    if name.lower() != b"location":
        return _text(raw)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return "".join(chr(b) if b < 0x80 else f"%{b:02X}" for b in raw)


def _codings_left(raw_headers: tuple[tuple[bytes, bytes], ...]) -> list[str]:
    """The content codings of an answer, in the order they were applied: a stack
    ("gzip, gzip", or two lines) is RFC 9110's too (8.4)."""
    lines = [_text(v).strip().lower() for k, v in raw_headers if k.lower() == b"content-encoding"]
    codings = [c.strip() for line in lines for c in line.split(",")]
    return [c for c in codings if c not in ("", "identity")]


def _undo_codings(
    codings: list[str], body: bytes, truncated: bool, max_bytes: int
) -> tuple[bytes, bool]:
    """``body`` with ``codings`` undone, last applied first, never past ``max_bytes``
    (a bomb inside a bomb costs no more than one)."""
    for coding in reversed(codings):
        if coding not in _ZLIB_CODINGS:
            raise BadResponse(f"bad response: content coding {coding[:40]!r} not supported")
        try:
            decoded = zlib.decompressobj(32 + zlib.MAX_WBITS).decompress(body, max_bytes + 1)
        except zlib.error:
            try:  # "deflate" sent raw, without zlib's wrapper, as some servers do
                decoded = zlib.decompressobj(-zlib.MAX_WBITS).decompress(body, max_bytes + 1)
            except zlib.error as e:
                raise BadResponse(f"bad response: {coding} body does not decode: {e}") from e
        body, truncated = decoded[:max_bytes], truncated or len(decoded) > max_bytes
    return body, truncated


async def _read_capped(response: aiohttp.ClientResponse, max_bytes: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(_CHUNK):
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            return b"".join(chunks)[:max_bytes], True
    return b"".join(chunks), False
