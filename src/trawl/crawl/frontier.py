"""The crawl frontier: a FIFO queue per host, handed out politely.

Hosts wait in two places (seed 002): a ready queue of hosts that may be
fetched now, and a cooldown heap ordered by the time each host may next be
fetched. A host is handed out when it has queued URLs, fewer than
``host_concurrency`` requests in flight, and its delay has passed since its
last request started. Every URL is admitted at most once per crawl.

Pure: the caller passes the clock in, so tests need no sleeping.
Interface after Scrapy's scheduler: ``enqueue``, ``next``, ``has_pending``;
plus ``done`` to hand a host's slot back and ``wake_at`` to know when to look again.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from trawl.records import CrawlUrl


@dataclass
class _Host:
    delay: float
    queue: deque[CrawlUrl] = field(default_factory=deque)
    in_flight: int = 0
    last_start: float | None = None
    next_time: float = 0.0
    scheduled: bool = False


class Frontier:
    def __init__(self, *, delay: float, host_concurrency: int) -> None:
        self._delay = delay
        self._host_concurrency = host_concurrency
        self._hosts: dict[str, _Host] = {}
        self._seen: set[str] = set()
        self._ready: deque[str] = deque()
        self._cooldown: list[tuple[float, int, str]] = []
        self._tie = itertools.count()
        self._queued = 0
        self._in_flight = 0

    # -- the three-method interface -----------------------------------------

    def enqueue(self, item: CrawlUrl) -> bool:
        """Admit ``item`` unless its URL was admitted before; True when admitted."""
        if item.url in self._seen:
            return False
        self._seen.add(item.url)
        state = self._host(_host_key(item.url))
        state.queue.append(item)
        self._queued += 1
        self._schedule(_host_key(item.url), state, state.next_time)
        return True

    def next(self, now: float) -> CrawlUrl | None:
        """The next URL whose host may be fetched at ``now``, or None."""
        while self._cooldown and self._cooldown[0][0] <= now:
            self._ready.append(heapq.heappop(self._cooldown)[2])
        while self._ready:
            key = self._ready.popleft()
            state = self._hosts[key]
            state.scheduled = False
            if now < state.next_time:  # the host was slowed down while it waited
                self._schedule(key, state, state.next_time)
                continue
            if not state.queue or state.in_flight >= self._host_concurrency:
                continue
            item = state.queue.popleft()
            self._queued -= 1
            state.in_flight += 1
            self._in_flight += 1
            state.last_start = now
            state.next_time = now + state.delay
            self._schedule(key, state, state.next_time)
            return item
        return None

    def has_pending(self) -> bool:
        """URLs are queued or in flight (in-flight work may discover more)."""
        return self._queued > 0 or self._in_flight > 0

    # -- bookkeeping --------------------------------------------------------

    def done(self, item: CrawlUrl, now: float) -> None:
        """The request for ``item`` finished: its host's slot is free again."""
        key = _host_key(item.url)
        state = self._hosts[key]
        state.in_flight -= 1
        self._in_flight -= 1
        self._schedule(key, state, max(now, state.next_time))

    def wake_at(self) -> float | None:
        """Earliest time a host becomes ready; None when nothing waits for time."""
        if self._ready:
            return 0.0
        return self._cooldown[0][0] if self._cooldown else None

    def set_delay(self, url: str, delay: float) -> None:
        """Change one host's delay (a robots.txt Crawl-delay longer than ours).

        It applies from the host's last request on, also when the host is
        already waiting for its turn.
        """
        state = self._host(_host_key(url))
        state.delay = delay
        if state.last_start is not None:
            state.next_time = state.last_start + delay

    def seen(self, url: str) -> bool:
        return url in self._seen

    @property
    def queued(self) -> int:
        return self._queued

    def _host(self, key: str) -> _Host:
        state = self._hosts.get(key)
        if state is None:
            state = self._hosts[key] = _Host(delay=self._delay)
        return state

    def _schedule(self, key: str, state: _Host, at: float) -> None:
        if state.scheduled or not state.queue or state.in_flight >= self._host_concurrency:
            return
        state.scheduled = True
        heapq.heappush(self._cooldown, (at, next(self._tie), key))


def _host_key(url: str) -> str:
    # Politeness is per server: http and https of one host share one budget.
    return urlsplit(url).hostname or ""
