"""The crawl frontier: a FIFO queue per host, handed out politely.

Hosts wait in two places (seed 002): a ready queue of hosts that may be
fetched now, and a cooldown heap ordered by the time each host may next be
fetched. A host is handed out when it has queued URLs, fewer than
``host_concurrency`` requests in flight, and its delay has passed since its
last request started. Every URL is admitted at most once per crawl.

Memory is bounded: at most ``max_pending`` URLs wait (more are refused and
counted), at most ``max_per_host`` are admitted per host, and the seen set
keeps 64-bit hashes of URLs, not the URLs (about 60 bytes a URL; two URLs
collide with odds near 1 in 10^10 per million, and a collision only skips a URL).
With an ``overflow`` (the store's record of the crawl's frontier), at most
``max_host_queues`` hosts have URLs in memory (seed 002's MAX_HOST_QUEUES): a URL
of another host is admitted and counted, but waits in the store, and its host's
URLs are read back in when a queue in memory empties. A host with nothing left
to fetch is forgotten once its delay has passed (it would be fetched at once
anyway), so an open-web crawl does not keep every host it ever met.

Pure: the caller passes the clock in, so tests need no sleeping.
Interface after Scrapy's scheduler: ``enqueue``, ``next``, ``has_pending``;
plus ``done`` to hand a host's slot back, ``retry`` to put a URL back after a
429 or 503, and ``wake_at`` to know when to look again. ``CrawlFrontier`` names
that interface; ``shared_frontier.py`` implements it over a store, for workers.
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from trawl.records import CrawlUrl
from trawl.urls.identity import politeness_host


class CrawlFrontier(Protocol):
    """What the crawler asks of a frontier. Times are the event loop's clock."""

    refused: Counter[str]  # reason -> URLs refused for a limit

    def enqueue(self, item: CrawlUrl) -> bool: ...

    def next(self, now: float) -> CrawlUrl | None: ...

    def has_pending(self) -> bool: ...

    def done(self, item: CrawlUrl, now: float) -> None: ...

    def retry(self, item: CrawlUrl, not_before: float) -> None: ...

    def wake_at(self) -> float | None: ...

    def set_delay(self, url: str, delay: float, now: float) -> None: ...

    def started(self, url: str, now: float) -> None:
        """The request handed out for ``url`` goes out only ``now`` (it waited for its
        origin's robots.txt): the host's delay counts from ``now``."""
        ...

    def reserve(self, url: str, now: float, within: float) -> float | None: ...

    def seen(self, url: str) -> bool: ...

    def mark_seen(self, url: str) -> None: ...

    def host_failed(self, url: str) -> int:
        """One more failure in a row at ``url``'s host; how many there are now."""
        ...

    def host_answered(self, url: str) -> None:
        """``url``'s host answered: its failures in a row start again from none."""
        ...

    def park(self, url: str, reason: str) -> list[CrawlUrl]:
        """Give ``url``'s host up for the run: its queued URLs are taken out (and
        returned), and none is handed out again."""
        ...

    @property
    def queued(self) -> int: ...


@dataclass(slots=True)
class _Host:
    delay: float
    queue: deque[CrawlUrl] = field(default_factory=deque)
    in_flight: int = 0
    last_start: float | None = None
    next_time: float = 0.0
    scheduled: bool = False
    admitted: int = 0


# URLs waiting in the store that carry more than the store keeps (a redirect chain) are
# held here whole, up to this many; past it they lose the rest.
MAX_HELD = 100_000


class Frontier:
    def __init__(
        self,
        *,
        delay: float,
        host_concurrency: int,
        max_per_host: int = 0,
        max_pending: int = 0,
        max_host_queues: int = 0,
        overflow: Callable[[str], Sequence[CrawlUrl]] | None = None,
    ) -> None:
        """``max_per_host``, ``max_pending`` and ``max_host_queues``: 0 means no limit.
        ``overflow(host)``: the URLs of ``host`` that were admitted but wait in the
        store (state queued); without it every host's queue is kept in memory."""
        self._delay = delay
        self._host_concurrency = host_concurrency
        self._max_per_host = max_per_host
        self._max_pending = max_pending
        self._max_host_queues = max_host_queues if overflow is not None else 0
        self._overflow = overflow
        self._waiting: dict[str, int] = {}  # host -> URLs in the store, oldest host first
        self._held: dict[str, CrawlUrl] = {}
        self._live = 0  # hosts with URLs queued or in flight in memory
        self._idle: list[tuple[float, str]] = []  # (when its delay ends, host) to forget
        self._hosts: dict[str, _Host] = {}
        self._seen: set[int] = set()
        self.refused: Counter[str] = Counter()
        self._ready: deque[str] = deque()
        self._cooldown: list[tuple[float, int, str]] = []
        self._tie = itertools.count()
        self._queued = 0
        self._in_flight = 0
        self._failures: dict[str, int] = {}  # politeness host -> failures in a row

    # -- the three-method interface -----------------------------------------

    def enqueue(self, item: CrawlUrl) -> bool:
        """Admit ``item`` unless seen before or over a limit; True when admitted.

        A refusal for a limit is counted in ``refused``; the URL is not marked
        seen, so it may be admitted later when there is room.
        """
        key = hash(item.url)
        if key in self._seen:
            return False
        if self._max_pending and self._queued >= self._max_pending:
            self.refused["frontier full"] += 1
            return False
        host = politeness_host(item.url)
        state = self._hosts.get(host)
        waiting = self._waiting.get(host, 0)
        admitted = waiting + (state.admitted if state is not None else 0)
        if self._max_per_host and admitted >= self._max_per_host:
            self.refused["host cap"] += 1
            return False
        self._seen.add(key)
        self._queued += 1
        if waiting or (
            self._max_host_queues
            and self._live >= self._max_host_queues
            and (state is None or not _active(state))
        ):
            # Every host queue in memory is taken: the URL waits in the store, where the
            # caller records every admitted URL, until its host's turn comes.
            self._waiting[host] = waiting + 1
            kept = CrawlUrl(
                item.url, item.depth, item.source, lastmod=item.lastmod, request=item.request
            )
            if len(self._held) < MAX_HELD and item != kept:
                self._held[item.url] = item
            return True
        if state is None:
            state = self._host(host)
        if not _active(state):
            self._live += 1
        state.admitted += 1
        state.queue.append(item)
        self._schedule(host, state, state.next_time)
        return True

    def mark_seen(self, url: str) -> None:
        """Never admit ``url`` (already crawled in the run being resumed)."""
        self._seen.add(hash(url))

    def next(self, now: float) -> CrawlUrl | None:
        """The next URL whose host may be fetched at ``now``, or None."""
        while self._idle and self._idle[0][0] <= now:
            self._forget(heapq.heappop(self._idle)[1], now)
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
        key = politeness_host(item.url)
        state = self._hosts[key]
        state.in_flight -= 1
        self._in_flight -= 1
        self._schedule(key, state, max(now, state.next_time))
        self._settle(key, state)

    def retry(self, item: CrawlUrl, not_before: float) -> None:
        """Put ``item`` back at the head of its host's queue and hold the host
        until ``not_before`` (a 429 or 503 answer). Call before ``done``."""
        state = self._hosts[politeness_host(item.url)]
        state.queue.appendleft(item)
        self._queued += 1
        state.next_time = max(state.next_time, not_before)

    def wake_at(self) -> float | None:
        """Earliest time a host becomes ready; None when nothing waits for time."""
        if self._ready:
            return 0.0
        return self._cooldown[0][0] if self._cooldown else None

    def set_delay(self, url: str, delay: float, now: float) -> None:
        """Change one host's delay (a robots.txt Crawl-delay longer than ours), at ``now``.

        It applies from the host's last request on, also when the host is
        already waiting for its turn. A request in flight counts from ``now``:
        it is the one that waited for robots.txt, and it goes out only now (a
        slow robots.txt would otherwise eat into the delay before the next one).
        """
        state = self._host(politeness_host(url))
        state.delay = delay
        if state.in_flight:
            state.last_start = now
        if state.last_start is not None:
            # Never earlier than a slot ``reserve`` booked already.
            state.next_time = max(state.next_time, state.last_start + delay)

    def started(self, url: str, now: float) -> None:
        """The host's first page waited for robots.txt, fetched as its prerequisite (no
        delay of its own before the page): the page's request starts ``now``, and the
        host's next one waits its delay from here, not from the hand-out."""
        state = self._host(politeness_host(url))
        state.last_start = now
        state.next_time = max(state.next_time, now + state.delay)

    def reserve(self, url: str, now: float, within: float) -> float | None:
        """Book a slot at ``url``'s host for a request this frontier does not hand out
        (a rendered page's subrequest); return the seconds from ``now`` until it may
        start, or None, booking nothing, when that is more than ``within`` (the page
        would be gone by then). The host's pages wait their delay after it, as after
        one of theirs: pages and subrequests share one pace."""
        state = self._host(politeness_host(url))
        start = max(now, state.next_time)
        if start - now > within:
            return None
        state.last_start = start
        state.next_time = start + state.delay
        return start - now

    def seen(self, url: str) -> bool:
        return hash(url) in self._seen

    def drop_host(self, url: str) -> list[CrawlUrl]:
        """Take every URL queued for ``url``'s host out (a host parked for the run)."""
        state = self._hosts.get(politeness_host(url))
        if state is None:
            return []
        dropped = list(state.queue)
        state.queue.clear()
        self._queued -= len(dropped)
        if dropped:
            self._settle(politeness_host(url), state)
        return dropped

    def host_failed(self, url: str) -> int:
        key = politeness_host(url)
        failures = self._failures[key] = self._failures.get(key, 0) + 1
        return failures

    def host_answered(self, url: str) -> None:
        if self._failures:
            self._failures.pop(politeness_host(url), None)

    def park(self, url: str, reason: str) -> list[CrawlUrl]:
        """The host's queued URLs taken out; the crawler skips its later URLs itself."""
        return self.drop_host(url)

    @property
    def queued(self) -> int:
        return self._queued

    @property
    def hosts_held(self) -> int:
        """Hosts whose state (queue, pace) is in memory."""
        return len(self._hosts)

    def _host(self, key: str) -> _Host:
        state = self._hosts.get(key)
        if state is None:
            state = self._hosts[key] = _Host(delay=self._delay)
        return state

    def _settle(self, key: str, state: _Host) -> None:
        """After ``key``'s host may have run out of work: its queue leaves memory, a
        waiting host's URLs come in from the store, and the host is forgotten once its
        delay has passed."""
        if _active(state):
            return
        self._live -= 1
        self._refill()
        if not _active(state) and state.delay == self._delay and not self._max_per_host:
            heapq.heappush(self._idle, (state.next_time, key))

    def _forget(self, key: str, now: float) -> None:
        state = self._hosts.get(key)
        # Only a host with nothing to do, no delay of its own and no slot booked ahead:
        # made anew, it behaves the same.
        if (
            state is not None
            and not _active(state)
            and not state.scheduled
            and state.delay == self._delay
            and state.next_time <= now
        ):
            del self._hosts[key]

    def _refill(self) -> None:
        """Read waiting hosts' URLs back from the store while queues in memory are free."""
        while self._waiting and self._live < self._max_host_queues and self._overflow:
            host = next(iter(self._waiting))
            count = self._waiting.pop(host)
            items = [self._held.pop(i.url, i) for i in self._overflow(host)]
            self._queued += len(items) - count  # the store is the truth about what waits
            if not items:
                continue
            state = self._host(host)
            self._live += 1
            state.admitted += len(items)
            state.queue.extend(items)
            self._schedule(host, state, state.next_time)

    def _schedule(self, key: str, state: _Host, at: float) -> None:
        if state.scheduled or not state.queue or state.in_flight >= self._host_concurrency:
            return
        state.scheduled = True
        heapq.heappush(self._cooldown, (at, next(self._tie), key))


def _active(state: _Host) -> bool:
    """The host holds a queue in memory: URLs queued or in flight."""
    return bool(state.queue) or state.in_flight > 0
