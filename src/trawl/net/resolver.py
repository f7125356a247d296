"""An aiohttp resolver that refuses hosts whose addresses the SSRF policy forbids.

Filtering at the resolver covers every request the crawler makes (pages,
robots.txt, sitemaps, redirects) and re-checks each resolution; aiohttp then
connects to exactly the addresses returned here, so there is no second lookup
a hostile DNS server could answer differently. One forbidden address in an
answer refuses the whole answer: a name that mixes public and private
addresses is a rebinding attempt, not a site.

Failed lookups are remembered for ``negative_ttl`` seconds, so a dead host
costs one lookup per TTL, not one per URL (seed 002).
"""

from __future__ import annotations

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
    ) -> None:
        self._allowed = allowed
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
        forbidden = [
            r["host"] for r in results if not may_connect(host, port, r["host"], self._allowed)
        ]
        if forbidden or not results:
            raise ForbiddenAddress(
                f"{host} resolves to non-public address {forbidden[0] if forbidden else '(none)'}"
            )
        return results

    async def close(self) -> None:
        await self._inner.close()
