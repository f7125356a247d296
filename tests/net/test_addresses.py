"""The address policy (trawl.net.addresses) on the IPv6 forms that lead to an IPv4 address."""

from __future__ import annotations

import pytest

from trawl.errors import BlockedAddress
from trawl.net.addresses import is_public
from trawl.net.fetcher import Fetcher
from trawl.net.transport import FetchRequest


@pytest.mark.parametrize(
    "address",
    [
        "::7f00:1",  # ::127.0.0.1, IPv4-compatible
        "::127.0.0.1",
        "::a00:1",  # ::10.0.0.1
        "::a9fe:a9fe",  # ::169.254.169.254, cloud metadata
        "::ffff:127.0.0.1",  # IPv4-mapped
        "::ffff:0:7f00:1",  # IPv4-translated (SIIT, RFC 6145) of 127.0.0.1
        "::ffff:0:a9fe:a9fe",  # of 169.254.169.254
        "64:ff9b::7f00:1",  # NAT64 well-known prefix to 127.0.0.1
        "64:ff9b::c0a8:101",  # to 192.168.1.1
        "64:ff9b:1::1",  # local-use NAT64
        "64:ff9b:1:ffff::8.8.8.8",
        "2002:7f00:1::1",  # 6to4 of 127.0.0.1
        "2002:a00:1::",  # 6to4 of 10.0.0.1
        "2002:c0a8:101::1",  # 6to4 of 192.168.1.1
        "fec0::1",  # site-local
        "feff::1",
        "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo: client 127.0.0.1
        "::",
        "::1",
        "[::7f00:1]",
    ],
)
def test_ipv6_forms_of_private_ipv4_are_not_public(address: str) -> None:
    assert not is_public(address)


@pytest.mark.parametrize(
    "address",
    ["2606:4700::1111", "64:ff9b::808:808", "2002:808:808::1", "93.184.216.34", "::ffff:8.8.8.8"],
)
def test_public_addresses_and_their_embeddings_stay_public(address: str) -> None:
    assert is_public(address)


@pytest.mark.parametrize("literal", ["[::7f00:1]", "[64:ff9b::7f00:1]", "[2002:7f00:1::1]"])
async def test_the_fetcher_refuses_them_before_connecting(literal: str) -> None:
    async with Fetcher(user_agent="TrawlTest", timeout=5, concurrency=1, host_concurrency=1) as f:
        with pytest.raises(BlockedAddress, match="non-public address"):
            await f.fetch(FetchRequest(f"http://{literal}:9/", max_bytes=100))
