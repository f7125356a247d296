"""Rate limits: searches per client address, admin calls per API key.

A moving window in memory (the ``limits`` library): a single server process
holds all the counts, which is what ``trawl serve`` is.
"""

from __future__ import annotations

import math
import time

from limits import RateLimitItem, parse
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter

from trawl.errors import ConfigError, RateLimited


def parse_rate(name: str, text: str) -> RateLimitItem:
    try:
        return parse(text)
    except ValueError as e:
        raise ConfigError(f"setting {name!r}: {text!r} is not a rate such as 60/minute") from e


class RateLimits:
    def __init__(self, search: str, admin: str) -> None:
        self.search = parse_rate("search_rate_limit", search)
        self.admin = parse_rate("admin_rate_limit", admin)
        self._limiter = MovingWindowRateLimiter(MemoryStorage())

    def hit(self, item: RateLimitItem, who: str) -> None:
        """Count one request by ``who``; raise RateLimited when it is one too many."""
        if not self._limiter.hit(item, who):
            reset = self._limiter.get_window_stats(item, who).reset_time
            raise RateLimited(max(1, math.ceil(reset - time.time())))
