"""An aiohttp resolver that drops addresses the SSRF policy forbids.

Filtering at the resolver covers every request the crawler makes (pages,
robots.txt, redirects) and re-checks each resolution, so a host cannot pass
a check with one address and connect with another.
"""

from __future__ import annotations

import socket

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from trawl.net.addresses import Target, may_connect


class ForbiddenAddress(OSError):
    """Raised inside aiohttp's connector; the fetcher turns it into BlockedAddress."""


class SafeResolver(AbstractResolver):
    def __init__(self, allowed: frozenset[Target], inner: AbstractResolver | None = None) -> None:
        self._allowed = allowed
        self._inner = inner or DefaultResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        results = await self._inner.resolve(host, port, family)
        safe = [r for r in results if may_connect(host, port, r["host"], self._allowed)]
        if not safe:
            raise ForbiddenAddress(f"{host} resolves only to non-public addresses")
        return safe

    async def close(self) -> None:
        await self._inner.close()

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"SafeResolver(allowed={sorted(self._allowed)!r})"
