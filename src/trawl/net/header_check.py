"""External header checks: one HEAD request to a URL, under seed 003's rules.

Used for the report's "Check headers" action on external links and for the
resource checks after a crawl. Each check:

- refuses credentials in the URL, non-HTTP(S) schemes, over-long URLs and the
  unsafe URLs of ``trawl.urls.safety``;
- resolves the host itself (A and AAAA, at most ``MAX_ADDRESSES`` answers),
  refuses the whole answer when any address is not public (unless the exact
  host:port is in ``allowed``, as with the crawler's ``--allow-host``), and
  connects to one checked address: no second lookup can be answered differently;
- opens a fresh direct connection (no pool, no proxy, no cookies, no
  authentication, no referrer, no client certificate); HTTPS keeps SNI and
  certificate verification against the host name;
- sends HEAD, reads the first final response's headers and closes: no body is
  read or decompressed, no redirect followed, no retry with GET;
- has one deadline covering DNS, connect, TLS and headers;
- honours ``host_aliases`` as the crawl does (``trawl.net.aliases``): an aliased
  host's URL is asked of its target over plain HTTP, naming the host in Host, and
  the aliased name is never resolved.

Why h11 and not aiohttp: the checker needs a hard cap on the whole header
block (16 KiB) and on informational responses (4), and a connection to an
address it picked itself; h11's ``max_incomplete_event_size`` gives the first
exactly, and a plain asyncio stream the rest. h11 does the HTTP parsing.

A failure keeps status 0 (shown as 000) and says why in ``error``.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
import time
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

import h11
import idna

from trawl.net.addresses import Target, is_ip_literal, may_connect
from trawl.net.aliases import unaliased
from trawl.records import HeaderCheck
from trawl.urls.safety import MAX_URL_LENGTH, unsafe_reason

MAX_CONCURRENT = 6
DEADLINE = 10.0  # seconds, DNS to last header byte
MAX_ADDRESSES = 64
MAX_HEADER_BLOCK = 16 * 1024
MAX_INFORMATIONAL = 4
_READ = 4096


class _Refused(Exception):
    """A check that ends before or instead of a response; the message is shown."""


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
    started = time.monotonic()
    try:
        async with asyncio.timeout(deadline):
            status, headers = await _head(url, user_agent, allowed, aliases or {})
    except TimeoutError:
        return _failed(url, f"timed out after {deadline:g}s", started)
    except _Refused as e:
        return _failed(url, str(e), started)
    except ssl.SSLError as e:
        return _failed(url, f"TLS: {e.reason or e}", started)
    except OSError as e:
        return _failed(url, f"cannot connect: {e.strerror or e}", started)
    except h11.RemoteProtocolError as e:
        return _failed(url, f"bad response: {e}", started)
    location = next((v for k, v in headers if k == "location"), None)
    return HeaderCheck(
        url=url,
        status=status,
        location=location if 300 <= status < 400 else None,
        headers=headers,
        error=None,
        elapsed=time.monotonic() - started,
    )


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
    gate = asyncio.Semaphore(max(1, min(concurrency, MAX_CONCURRENT)))

    async def one(url: str) -> HeaderCheck:
        async with gate:
            return await check_headers(
                url, user_agent=user_agent, allowed=allowed, deadline=deadline, aliases=aliases
            )

    return list(await asyncio.gather(*(one(u) for u in urls)))


def _failed(url: str, error: str, started: float) -> HeaderCheck:
    return HeaderCheck(
        url=url,
        status=0,
        location=None,
        headers=(),
        error=error[:300],
        elapsed=time.monotonic() - started,
    )


async def _head(
    url: str, user_agent: str, allowed: frozenset[Target], aliases: Mapping[str, Target]
) -> tuple[int, tuple[tuple[str, str], ...]]:
    scheme, host, port, target = _parts(url)
    alias = aliases.get(host)
    if alias is None:
        address, to_port = await _checked_address(host, port, allowed), port
        tls = ssl.create_default_context() if scheme == "https" else None
    else:
        # The site's name stays in Host; the connection goes where the user said.
        address, to_port = await _checked_address(*alias, allowed), alias[1]
        tls = None
    reader, writer = await asyncio.open_connection(
        address, to_port, ssl=tls, server_hostname=host if tls else None
    )
    try:
        http = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEADER_BLOCK)
        default_port = 443 if scheme == "https" else 80
        bracketed = f"[{host}]" if ":" in host else host
        host_header = bracketed if port == default_port else f"{bracketed}:{port}"
        request = h11.Request(
            method="HEAD",
            target=target,
            headers=[
                ("Host", host_header),
                ("User-Agent", user_agent),
                ("Accept", "*/*"),
                ("Connection", "close"),
            ],
        )
        writer.write(http.send(request) + http.send(h11.EndOfMessage()))
        await writer.drain()
        informational = 0
        while True:
            event = http.next_event()
            if event is h11.NEED_DATA:
                data = await reader.read(_READ)
                http.receive_data(data)  # b"" tells h11 the server closed
                continue
            if isinstance(event, h11.InformationalResponse):
                informational += 1
                if informational > MAX_INFORMATIONAL:
                    raise _Refused(f"more than {MAX_INFORMATIONAL} informational responses")
                continue
            if isinstance(event, h11.Response):
                headers = tuple(
                    (k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in event.headers
                )
                if alias is not None:
                    headers = unaliased(headers, url, alias)
                return event.status_code, headers
            raise _Refused("connection closed before a response")
    finally:
        # Closed at once: whatever body a server sends after HEAD is never read.
        writer.transport.abort()


def _parts(url: str) -> tuple[str, str, int, str]:
    """Scheme, host, port and request target of ``url``; _Refused when unusable."""
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
    return scheme, host, port or (443 if scheme == "https" else 80), target


async def _checked_address(host: str, port: int, allowed: frozenset[Target]) -> str:
    """One address of ``host`` that may be connected to; _Refused when none or any is bad."""
    if is_ip_literal(host):
        addresses = [host.strip("[]")]
    else:
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as e:
            raise _Refused(f"DNS: {e.strerror or e}") from None
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        if len(addresses) > MAX_ADDRESSES:
            raise _Refused(f"DNS: more than {MAX_ADDRESSES} addresses")
    if not addresses:
        raise _Refused("DNS: no address")
    # Any forbidden address refuses the whole answer: a name mixing public and
    # private addresses is a rebinding attempt.
    for address in addresses:
        if not may_connect(host, port, address, allowed) or (
            (host, port) not in allowed and _mapped(address)
        ):
            raise _Refused(f"{host} resolves to non-public address {address}")
    return addresses[0]


def _mapped(address: str) -> bool:
    # IPv4-mapped IPv6 answers are refused outright (seed 003), public or not.
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    return isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None
