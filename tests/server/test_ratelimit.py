"""The moving window of the rate limits, on a clock the test moves."""

from __future__ import annotations

import threading

import pytest

from trawl.errors import ConfigError, RateLimited
from trawl.server import ratelimit
from trawl.server.ratelimit import RateLimits


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_client_gets_its_rate_in_any_window_and_not_one_more() -> None:
    clock = Clock()
    limits = RateLimits("3/minute", "600/minute", clock=clock)
    for step in (0, 10, 20):
        clock.now = 1000.0 + step
        limits.hit(limits.search, "client:a")
    clock.now = 1030.0
    with pytest.raises(RateLimited) as refused:
        limits.hit(limits.search, "client:a")
    assert refused.value.retry_after == 30  # the first hit leaves the window at 1060
    limits.hit(limits.search, "client:b")  # counted per client
    clock.now = 1060.5
    limits.hit(limits.search, "client:a")  # one slot free again, not three
    with pytest.raises(RateLimited):
        limits.hit(limits.search, "client:a")


def test_a_refused_hit_is_not_counted() -> None:
    clock = Clock()
    limits = RateLimits("1/second", "600/minute", clock=clock)
    limits.hit(limits.search, "client:a")
    for _ in range(5):
        clock.now += 0.1
        with pytest.raises(RateLimited):
            limits.hit(limits.search, "client:a")
    clock.now = 1001.0
    limits.hit(limits.search, "client:a")


def test_clients_gone_quiet_are_forgotten(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ratelimit, "SWEEP_EVERY", 10)
    clock = Clock()
    limits = RateLimits("5/minute", "5/second", clock=clock)
    for n in range(9):
        limits.hit(limits.search, f"client:{n}")
    assert len(limits) == 9
    clock.now += 61
    limits.hit(limits.search, "client:new")  # the tenth hit sweeps
    assert len(limits) == 1


def test_threads_never_get_more_than_the_rate() -> None:
    limits = RateLimits("100/hour", "600/minute")
    allowed: list[int] = []

    def client() -> None:
        for _ in range(50):
            try:
                limits.hit(limits.search, "client:shared")
                allowed.append(1)
            except RateLimited:
                pass

    threads = [threading.Thread(target=client) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(allowed) == 100


def test_a_bad_rate_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        RateLimits("lots", "600/minute")


@pytest.mark.parametrize(
    ("host", "key"),
    [
        ("203.0.113.9", "203.0.113.9"),
        ("::ffff:203.0.113.9", "203.0.113.9"),
        ("2001:DB8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"),
        ("2001:db8:1:2::1", "2001:db8:1:2::/64"),
        ("fe80::1%eth0", "fe80::/64"),
        ("testclient", "testclient"),  # no address: counted as given
    ],
)
def test_a_client_is_counted_by_its_ipv4_address_or_its_ipv6_64(host: str, key: str) -> None:
    assert ratelimit.client_key(host) == key
