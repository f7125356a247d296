"""One HTTP request, one hop, bounded: the crawler's only door to the network.

Redirects are not followed here: the crawler sees each Location and runs the
same scope, robots and safety checks on it as on any other link. Bodies are
read only for the content types a caller asks for, and never past a byte cap,
so a huge or endless response costs at most ``max_bytes``. Library errors are
translated into ``trawl.errors.FetchError`` at this boundary.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Collection, Mapping
from types import TracebackType

import aiohttp
import yarl

from trawl.errors import (
    BlockedAddress,
    ConnectionLost,
    FetchError,
    FetchTimeout,
    HostUnreachable,
    ResponseTooLarge,
)
from trawl.net.addresses import Target, is_ip_literal, may_connect
from trawl.net.aliases import aliased, unaliased
from trawl.net.resolver import ForbiddenAddress, SafeResolver
from trawl.records import FetchResult
from trawl.urls.identity import host_port

_CHUNK = 64 * 1024
# Header limits: a hostile server cannot make us buffer megabytes of headers.
MAX_HEADER_LINE = 8_190
MAX_HEADERS = 100
# What the crawler reads as HTML (FetchResult.is_html): XHTML's body is wanted too.
HTML_TYPES = ("text/html", "application/xhtml+xml")
# Printable ASCII, no space: a URL already percent-encoded (every identity and
# request form of trawl.urls.identity), which is sent byte for byte.
_ENCODED = re.compile(r"[!-~]+", re.ASCII)


class Fetcher:
    """A pooled HTTP client: one connection pool shared by every request of a crawl."""

    def __init__(
        self,
        *,
        user_agent: str,
        timeout: float,
        concurrency: int,
        host_concurrency: int,
        allowed: frozenset[Target] = frozenset(),
        aliases: Mapping[str, Target] | None = None,
    ) -> None:
        """``aliases``: host name -> the host:port its requests go to, over plain HTTP
        (``host_aliases``); the targets must be in ``allowed`` when private."""
        self._allowed = allowed
        self._aliases = dict(aliases or {})
        self._user_agent = user_agent
        self._timeout = aiohttp.ClientTimeout(total=timeout, sock_connect=min(timeout, 10.0))
        self._limits = (concurrency, host_concurrency)
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> Fetcher:
        self.resolver = SafeResolver(self._allowed)
        connector = aiohttp.TCPConnector(
            limit=self._limits[0],
            limit_per_host=self._limits[1],
            resolver=self.resolver,
            ttl_dns_cache=300,
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=self._timeout,
            headers={"User-Agent": self._user_agent, "Accept-Encoding": "gzip, deflate"},
            cookie_jar=aiohttp.DummyCookieJar(),  # a crawler keeps no session state
            # Decompression is streamed in bounded chunks (aiohttp >= 3.12), and we
            # stop reading at max_bytes of decoded body: a gzip bomb costs little.
            auto_decompress=True,
            max_line_size=MAX_HEADER_LINE,
            max_field_size=MAX_HEADER_LINE,
            max_headers=MAX_HEADERS,
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

    async def get(
        self,
        url: str,
        *,
        max_bytes: int,
        read_types: Collection[str] = HTML_TYPES,
        headers: Mapping[str, str] | None = None,
    ) -> FetchResult:
        """GET ``url`` without following redirects.

        The body is read (up to ``max_bytes``) only when the response's media
        type is in ``read_types``, or ``read_types`` contains ``"*"``; a body
        whose Content-Length already says it is larger is not read at all.
        ``headers`` are added to the request (conditional requests).
        Raises FetchError when no usable HTTP response arrived.
        """
        if self._session is None:
            raise RuntimeError("Fetcher used outside 'async with'")
        host, port = host_port(url)
        request_url, alias = url, self._aliases.get(host)
        if alias is not None:
            request_url, site = aliased(url, alias)
            headers = {**(headers or {}), "Host": site}
            host, port = alias
        # aiohttp skips the resolver for IP literals, so the policy is applied here too.
        if is_ip_literal(host) and not may_connect(host, port, host, self._allowed):
            raise BlockedAddress(f"{host} is not a public address")
        started = time.monotonic()
        try:
            async with self._session.get(
                _exact(request_url), allow_redirects=False, headers=headers
            ) as response:
                received = tuple((_text(k), _text(v)) for k, v in response.raw_headers)
                if alias is not None:
                    received = unaliased(received, url, alias)
                media_type = response.content_type.lower()
                body, truncated = b"", False
                if "*" in read_types or media_type in read_types:
                    declared = response.content_length
                    if declared is not None and declared > max_bytes:
                        raise ResponseTooLarge(
                            f"Content-Length {declared} is over the {max_bytes}-byte cap"
                        )
                    body, truncated = await _read_capped(response, max_bytes)
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
            raise ConnectionLost(f"connection lost: {e}"[:300]) from e
        except aiohttp.ClientPayloadError as e:
            raise ConnectionLost(f"answer cut short: {e}"[:300]) from e
        except (aiohttp.ClientError, asyncio.IncompleteReadError, ValueError, LookupError) as e:
            # ValueError, LookupError: malformed headers or an unknown content encoding.
            raise FetchError(f"{type(e).__name__}: {e}"[:300]) from e


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


def _text(raw: bytes) -> str:
    """A header's bytes as text, losslessly: UTF-8 when they are, else Latin-1 (what
    RFC 9110 5.5 says old servers send). aiohttp's own decoding leaves surrogates
    for such bytes, which no store can encode."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


async def _read_capped(response: aiohttp.ClientResponse, max_bytes: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(_CHUNK):
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            return b"".join(chunks)[:max_bytes], True
    return b"".join(chunks), False
