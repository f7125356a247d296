"""External header checks: one HEAD request to a URL, under seed 003's rules.

Used for the report's "Check headers" action on external links and for the
resource checks after a crawl. Each check:

- refuses credentials in the URL, non-HTTP(S) schemes, over-long URLs and the
  unsafe URLs of ``trawl.urls.safety``;
- goes through the crawl's one ``Transport`` (``trawl.net.fetcher``), set up
  stricter: every address of the host (at most ``MAX_ADDRESSES``) must be public
  (unless the exact host:port is in ``allowed``, as with the crawler's
  ``--allow-host``), an IPv4-mapped IPv6 answer is refused outright, and the
  connection goes to a checked address: no second lookup can answer differently;
- opens a fresh direct connection (no pool, no proxy, no cookies, no
  authentication, no referrer, no client certificate); HTTPS keeps SNI and
  certificate verification against the host name;
- sends HEAD, reads the first final response's headers (at most 16 KiB of them,
  after at most 4 informational responses) and closes: no body is read or
  decompressed, no redirect followed, no retry with GET;
- has one deadline covering DNS, connect, TLS and headers;
- honours ``host_aliases`` as the crawl does (``trawl.net.aliases``): an aliased
  host's URL is asked of its target over plain HTTP, naming the host in Host, and
  the aliased name is never resolved.

A failure keeps status 0 (shown as 000) and says why in ``error``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit, urlunsplit

import idna

from trawl.errors import FetchError
from trawl.net.addresses import Target
from trawl.net.fetcher import Fetcher
from trawl.net.transport import FetchRequest, Transport
from trawl.records import HeaderCheck
from trawl.urls.safety import MAX_URL_LENGTH, unsafe_reason

MAX_CONCURRENT = 6
DEADLINE = 10.0  # seconds, DNS to last header byte
MAX_ADDRESSES = 64
MAX_HEADER_BLOCK = 16 * 1024
MAX_INFORMATIONAL = 4


class _Refused(Exception):
    """A URL refused before any request; the message is shown."""


def checking_transport(
    *,
    user_agent: str,
    allowed: frozenset[Target] = frozenset(),
    deadline: float = DEADLINE,
    concurrency: int = MAX_CONCURRENT,
    aliases: Mapping[str, Target] | None = None,
) -> Fetcher:
    """The transport set up for header checks (``async with``): the rules above."""
    return Fetcher(
        user_agent=user_agent,
        timeout=deadline,
        concurrency=concurrency,
        host_concurrency=concurrency,
        allowed=allowed,
        aliases=aliases,
        pooled=False,
        head_limits=(MAX_HEADER_BLOCK, MAX_INFORMATIONAL),
        refuse_mapped=True,
        max_addresses=MAX_ADDRESSES,
    )


async def check_headers(
    url: str,
    *,
    user_agent: str,
    allowed: frozenset[Target] = frozenset(),
    deadline: float = DEADLINE,
    aliases: Mapping[str, Target] | None = None,
) -> HeaderCheck:
    """HEAD ``url`` once under the rules above; never raises for a bad URL or server.
    ``aliases``: host name -> the host:port asked instead (``host_aliases``); a private
    target must be in ``allowed``, as for the crawl."""
    async with checking_transport(
        user_agent=user_agent, allowed=allowed, deadline=deadline, concurrency=1, aliases=aliases
    ) as transport:
        return await check_with(transport, url, deadline=deadline)


async def check_many(
    urls: Sequence[str],
    *,
    user_agent: str,
    allowed: frozenset[Target] = frozenset(),
    deadline: float = DEADLINE,
    concurrency: int = MAX_CONCURRENT,
    aliases: Mapping[str, Target] | None = None,
) -> list[HeaderCheck]:
    """Check every URL, at most ``concurrency`` (never over six) at once; results in order."""
    limit = max(1, min(concurrency, MAX_CONCURRENT))
    gate = asyncio.Semaphore(limit)
    async with checking_transport(
        user_agent=user_agent,
        allowed=allowed,
        deadline=deadline,
        concurrency=limit,
        aliases=aliases,
    ) as transport:

        async def one(url: str) -> HeaderCheck:
            async with gate:
                return await check_with(transport, url, deadline=deadline)

        return list(await asyncio.gather(*(one(u) for u in urls)))


async def check_with(transport: Transport, url: str, *, deadline: float = DEADLINE) -> HeaderCheck:
    """HEAD ``url`` through ``transport`` (``checking_transport``'s rules)."""
    started = time.monotonic()
    try:
        request = FetchRequest(_sendable(url), method="HEAD")
        async with asyncio.timeout(deadline):
            result = await transport.fetch(request)
    except TimeoutError:
        return _failed(url, f"timed out after {deadline:g}s", started)
    except _Refused as e:
        return _failed(url, str(e), started)
    except FetchError as e:
        return _failed(url, str(e) or type(e).__name__, started)
    headers = tuple((k.lower(), v) for k, v in result.headers)
    return HeaderCheck(
        url=url,
        status=result.status,
        location=result.location,
        headers=headers,
        error=None,
        elapsed=time.monotonic() - started,
    )


def _failed(url: str, error: str, started: float) -> HeaderCheck:
    return HeaderCheck(
        url=url,
        status=0,
        location=None,
        headers=(),
        error=error[:300],
        elapsed=time.monotonic() - started,
    )


def _sendable(url: str) -> str:
    """``url`` as it is asked, its host in ASCII; _Refused when it is not to be asked."""
    if len(url) > MAX_URL_LENGTH:
        raise _Refused("URL too long")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as e:
        raise _Refused(f"invalid URL: {e}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise _Refused("only http and https URLs are checked")
    if parts.username is not None or parts.password is not None:
        raise _Refused("URL carries credentials")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise _Refused("URL has no host")
    if not host.isascii():
        try:
            host = idna.encode(host, uts46=True).decode("ascii")
        except idna.IDNAError as e:
            raise _Refused(f"invalid host name: {e}") from None
    reason = unsafe_reason(url)
    if reason is not None:
        raise _Refused(f"unsafe URL: {reason}")
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    if any(c in target for c in " \r\n\t") or not target.isascii():
        raise _Refused("URL path has characters that cannot be sent")
    bracketed = f"[{host}]" if ":" in host else host
    netloc = bracketed if port is None else f"{bracketed}:{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))
