"""An aiohttp resolver that refuses hosts whose addresses the SSRF policy forbids.

Filtering at the resolver covers every request the crawler makes (pages,
robots.txt, sitemaps, redirects) and re-checks each resolution; aiohttp then
connects to exactly the addresses returned here, so there is no second lookup
a hostile DNS server could answer differently. One forbidden address in an
answer refuses the whole answer: a name that mixes public and private
addresses is a rebinding attempt, not a site.

The header checks ask for more (``refuse_mapped``, ``max_addresses``): an
IPv4-mapped IPv6 answer is refused outright unless its host:port was named,
and a name with too many addresses is refused whole.

Failed lookups are remembered for ``negative_ttl`` seconds, so a dead host
costs one lookup per TTL, not one per URL (seed 002).
"""

from __future__ import annotations

import ipaddress
import socket
import time

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from trawl.net.addresses import Target, may_connect


class ForbiddenAddress(OSError):
    """Raised inside aiohttp's connector; the fetcher turns it into BlockedAddress."""


class SafeResolver(AbstractResolver):
    def __init__(
        self,
        allowed: frozenset[Target],
        inner: AbstractResolver | None = None,
        negative_ttl: float = 300.0,
        *,
        refuse_mapped: bool = False,
        max_addresses: int | None = None,
    ) -> None:
        self._allowed = allowed
        self._refuse_mapped = refuse_mapped
        self._max_addresses = max_addresses
        self._inner = inner or DefaultResolver()
        self._negative_ttl = negative_ttl
        self._failures: dict[tuple[str, int], tuple[float, OSError]] = {}
        self.lookups = 0  # real lookups made: tests and stats read it

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        key = (host, family)
        failure = self._failures.get(key)
        if failure is not None:
            if failure[0] > time.monotonic():
                raise failure[1]
            del self._failures[key]
        self.lookups += 1
        try:
            results = await self._inner.resolve(host, port, family)
        except OSError as e:
            self._failures[key] = (time.monotonic() + self._negative_ttl, e)
            raise
        if self._max_addresses is not None and len(results) > self._max_addresses:
            raise ForbiddenAddress(f"{host} has more than {self._max_addresses} addresses")
        forbidden = [r["host"] for r in results if not self.permits(host, port, r["host"])]
        if forbidden or not results:
            raise ForbiddenAddress(
                f"{host} resolves to non-public address {forbidden[0] if forbidden else '(none)'}"
            )
        return results

    def permits(self, host: str, port: int, address: str) -> bool:
        """A connection to ``address`` for ``host:port`` is allowed (for an IP literal,
        which aiohttp never resolves, the fetcher asks this itself)."""
        if not may_connect(host, port, address, self._allowed):
            return False
        return not (
            self._refuse_mapped
            and (host.strip("[]").lower(), port) not in self._allowed
            and _mapped(address)
        )

    async def close(self) -> None:
        await self._inner.close()


def _mapped(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    return isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None
