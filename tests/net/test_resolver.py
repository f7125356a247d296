"""The SSRF resolver. DNS answers cannot be staged for real here (no DNS server of
our own), so an inner resolver with fixed answers stands in for the network."""

from __future__ import annotations

import socket

import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

from trawl.net.resolver import ForbiddenAddress, SafeResolver


class FixedAnswers(AbstractResolver):
    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers
        self.calls = 0

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        self.calls += 1
        if host not in self.answers:
            raise OSError(f"no such host {host}")
        return [
            ResolveResult(hostname=host, host=a, port=port, family=family, proto=0, flags=0)
            for a in self.answers[host]
        ]

    async def close(self) -> None:
        pass


async def test_public_answers_pass() -> None:
    resolver = SafeResolver(frozenset(), FixedAnswers({"example.com": ["93.184.216.34"]}))
    answers = await resolver.resolve("example.com", 80)
    assert [a["host"] for a in answers] == ["93.184.216.34"]


@pytest.mark.parametrize(
    "addresses",
    [
        ["127.0.0.1"],
        ["10.0.0.5"],
        ["192.168.1.1"],
        ["172.16.0.1"],
        ["169.254.169.254"],  # cloud metadata
        ["100.64.0.1"],  # carrier-grade NAT
        ["224.0.0.1"],  # multicast
        ["0.0.0.0"],
        ["::1"],
        ["fe80::1"],
        ["fc00::1"],
        ["::ffff:127.0.0.1"],  # IPv4-mapped IPv6
        ["::7f00:1"],  # IPv4-compatible ::127.0.0.1
        ["64:ff9b::a9fe:a9fe"],  # NAT64 to 169.254.169.254
        ["2002:a00:1::1"],  # 6to4 of 10.0.0.1
        ["fec0::1"],  # site-local
        ["93.184.216.34", "127.0.0.1"],  # mixed: a rebinding attempt
    ],
)
async def test_forbidden_answers_refuse_the_host(addresses: list[str]) -> None:
    resolver = SafeResolver(frozenset(), FixedAnswers({"evil.example": addresses}))
    with pytest.raises(ForbiddenAddress):
        await resolver.resolve("evil.example", 80)


async def test_a_named_target_may_be_private() -> None:
    resolver = SafeResolver(
        frozenset({("intranet.local", 8080)}), FixedAnswers({"intranet.local": ["10.1.2.3"]})
    )
    assert [a["host"] for a in await resolver.resolve("intranet.local", 8080)] == ["10.1.2.3"]
    with pytest.raises(ForbiddenAddress):
        await resolver.resolve("intranet.local", 8081)


async def test_failed_lookups_are_cached() -> None:
    inner = FixedAnswers({})
    resolver = SafeResolver(frozenset(), inner, negative_ttl=300)
    for _ in range(5):
        with pytest.raises(OSError, match="no such host"):
            await resolver.resolve("gone.example", 80)
    assert inner.calls == 1 and resolver.lookups == 1


async def test_negative_cache_expires() -> None:
    inner = FixedAnswers({})
    resolver = SafeResolver(frozenset(), inner, negative_ttl=0)
    for _ in range(3):
        with pytest.raises(OSError):
            await resolver.resolve("gone.example", 80)
    assert inner.calls == 3


async def test_the_header_checks_refuse_a_mapped_answer_even_when_public() -> None:
    answers = FixedAnswers({"mapped.test": ["::ffff:93.184.216.34"]})
    crawl = SafeResolver(frozenset(), answers)
    assert [a["host"] for a in await crawl.resolve("mapped.test", 80)] == ["::ffff:93.184.216.34"]
    checks = SafeResolver(frozenset(), answers, refuse_mapped=True)
    with pytest.raises(ForbiddenAddress, match=r"non-public address ::ffff:93\.184\.216\.34"):
        await checks.resolve("mapped.test", 80)
    named = SafeResolver(frozenset({("mapped.test", 80)}), answers, refuse_mapped=True)
    assert len(await named.resolve("mapped.test", 80)) == 1  # the user named it


async def test_the_header_checks_refuse_a_name_with_too_many_addresses() -> None:
    many = [f"93.184.{n // 250}.{n % 250 + 1}" for n in range(65)]
    answers = FixedAnswers({"many.test": many, "some.test": many[:64]})
    resolver = SafeResolver(frozenset(), answers, max_addresses=64)
    assert len(await resolver.resolve("some.test", 80)) == 64
    with pytest.raises(ForbiddenAddress, match="more than 64 addresses"):
        await resolver.resolve("many.test", 80)
