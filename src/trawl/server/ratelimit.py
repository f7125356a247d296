"""Rate limits: searches per client address, admin calls per API key.

Rates are parsed by the ``limits`` library ("60/minute"); the counting is a
moving window kept here: per client, the times of its last ``amount`` hits,
and a hit is refused while the oldest of them is still inside the window.
``limits``' own memory storage starts a timer thread for its expiry pass on
each hit that comes over 10 ms after the last (every search, one client at a time):
that cost ~1 ms of CPU a request over HTTP, a fifth of the served overhead
(bench/RESULTS.md, "Served search"). A single server process holds all the
counts, which is what ``trawl serve`` is.
"""

from __future__ import annotations

import ipaddress
import math
import threading
import time
from collections import deque
from collections.abc import Callable

from limits import RateLimitItem, parse

from trawl.errors import ConfigError, RateLimited

SWEEP_EVERY = 4096  # hits between passes that forget clients whose window is empty


def parse_rate(name: str, text: str) -> RateLimitItem:
    try:
        return parse(text)
    except ValueError as e:
        raise ConfigError(f"setting {name!r}: {text!r} is not a rate such as 60/minute") from e


def client_key(host: str) -> str:
    """The address a client is counted under: an IPv4 address (also written as
    IPv4-mapped IPv6) as itself, an IPv6 address by its /64. A /64 is the least a
    network hands one subscriber (RFC 6177), so its 2**64 addresses are one client;
    counted one by one they would never meet the limit."""
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])  # a zone id names no client
    except ValueError:
        return host  # not an address ("testclient", a Unix socket): counted as given
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


class RateLimits:
    def __init__(
        self, search: str, admin: str, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.search = parse_rate("search_rate_limit", search)
        self.admin = parse_rate("admin_rate_limit", admin)
        self._clock = clock
        self._hits: dict[tuple[str, str], deque[float]] = {}
        self._lock = threading.Lock()
        self._since_sweep = 0

    def hit(self, item: RateLimitItem, who: str) -> None:
        """Count one request by ``who``; raise RateLimited when it is one too many."""
        window = float(item.get_expiry())
        with self._lock:
            now = self._clock()
            self._since_sweep += 1
            if self._since_sweep >= SWEEP_EVERY:
                self._sweep(now)
            hits = self._hits.setdefault((item.key_for(), who), deque(maxlen=item.amount))
            if len(hits) >= item.amount and hits[0] > now - window:
                raise RateLimited(max(1, math.ceil(hits[0] + window - now)))
            hits.append(now)  # the deque's bound drops the oldest

    def _sweep(self, now: float) -> None:
        self._since_sweep = 0
        longest = max(float(self.search.get_expiry()), float(self.admin.get_expiry()))
        for key in [k for k, hits in self._hits.items() if not hits or hits[-1] <= now - longest]:
            del self._hits[key]

    def __len__(self) -> int:
        """Clients counted now (bounded by the sweep)."""
        return len(self._hits)
