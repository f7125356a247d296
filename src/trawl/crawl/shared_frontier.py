"""The frontier of a crawl shared by workers: it lives in the store, not in memory.

Workers in many processes, on many machines, crawl one frontier held by one
store (PostgreSQL, or a SQLite file on one machine). ``next`` leases a URL
and books its host's next slot in one atomic claim, so politeness holds across
all workers: every host's next allowed start time lives in the store. A
lease expires: when a worker is killed, the URLs it held go to the others.
A lease is released only in ``done``, after the page is saved and its links
are queued; a page saved by a worker that died before that is taken again.
A live worker renews its leases (``renew``), so only a dead worker's expire.

URLs reach the store through the sink's ``admitted`` (the pipeline writes
every admitted URL to the store's frontier, as it does for an embedded crawl
that may be resumed), so ``enqueue`` only remembers what this worker has seen;
the store refuses a URL it already holds. Same interface as ``Frontier``.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Protocol

from trawl.records import CrawlUrl
from trawl.urls.identity import politeness_host

POLL = 0.25  # seconds between looks when every queued URL is leased to someone
# URLs of the crawl's max_pages a worker takes from the store at a time: one store
# round trip per GRANT claims, and a worker that dies leaves at most this many unused.
GRANT = 16
BUSY = 0.02  # a host is due but was not handed out: its concurrency is used up, or
# another worker is claiming it this instant; this worker's own releases wake it sooner


class LeaseStore(Protocol):
    """The part of the store (``trawl.store.base.Store``) this frontier uses."""

    def frontier_claim(
        self, crawl_id: int, owner: str, *, lease: float, delay: float, host_concurrency: int
    ) -> CrawlUrl | None: ...

    def frontier_release(self, crawl_id: int, url: str, owner: str) -> None: ...

    def frontier_renew(self, crawl_id: int, owner: str, *, lease: float) -> None: ...

    def crawl_grant(self, crawl_id: int, want: int, cap: int) -> int: ...

    def frontier_retry(
        self, crawl_id: int, item: CrawlUrl, owner: str, not_before: float
    ) -> None: ...

    def frontier_wait(self, crawl_id: int) -> float | None: ...

    def frontier_active(self, crawl_id: int) -> bool: ...

    def set_crawl_delay(self, host: str, seconds: float) -> None: ...

    def frontier_book(self, url: str, delay: float, within: float) -> float | None: ...

    def host_failed(self, crawl_id: int, host: str) -> int: ...

    def host_answered(self, crawl_id: int, host: str) -> None: ...

    def park_host(self, crawl_id: int, host: str, reason: str) -> list[CrawlUrl]: ...


class SharedFrontier:
    def __init__(
        self,
        store: LeaseStore,
        crawl_id: int,
        owner: str,
        *,
        delay: float,
        host_concurrency: int,
        lease: float,
        max_pages: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``owner`` names this worker in its leases; ``max_pages`` caps the URLs all
        the crawl's workers take together (each takes its share GRANT at a time from
        the store); ``clock`` is the event loop's (asyncio's default uses
        ``time.monotonic``)."""
        self._store = store
        self._crawl_id = crawl_id
        self._owner = owner
        self._delay = delay
        self._host_concurrency = host_concurrency
        self._lease = lease
        self._clock = clock
        self._seen: set[int] = set()
        self._in_flight = 0
        self._wake: float | None = None
        self._max_pages = max_pages
        self._granted = 0  # URLs of max_pages this worker may still claim
        self.capped = False  # the crawl's workers have taken max_pages URLs between them
        self.refused: Counter[str] = Counter()  # the store has no limits to refuse for
        # Hosts whose count of failures in a row this worker made, or saw, above none:
        # only these cost a store write when they answer.
        self._failing: set[str] = set()

    def enqueue(self, item: CrawlUrl) -> bool:
        key = hash(item.url)
        if key in self._seen:
            return False
        self._seen.add(key)
        return True

    def next(self, now: float) -> CrawlUrl | None:
        if not self._may_claim():
            return None
        item = self._store.frontier_claim(
            self._crawl_id,
            self._owner,
            lease=self._lease,
            delay=self._delay,
            host_concurrency=self._host_concurrency,
        )
        if item is not None:
            self._in_flight += 1
            self._granted -= 1
            self._seen.add(hash(item.url))
            return item
        wait = self._store.frontier_wait(self._crawl_id)
        self._wake = now + (POLL if wait is None else min(max(wait, BUSY), POLL))
        return None

    def _may_claim(self) -> bool:
        if self._max_pages is None:
            self._granted = 1  # unlimited: every claim may go ahead
            return True
        if self._granted <= 0 and not self.capped:
            self._granted = self._store.crawl_grant(self._crawl_id, GRANT, self._max_pages)
            self.capped = self._granted == 0
        return self._granted > 0

    def has_pending(self) -> bool:
        if self.capped:
            return self._in_flight > 0
        return self._in_flight > 0 or self._store.frontier_active(self._crawl_id)

    def done(self, item: CrawlUrl, now: float) -> None:
        self._in_flight -= 1
        self._store.frontier_release(self._crawl_id, item.url, self._owner)

    def renew(self) -> None:
        """Extend this worker's leases by a whole lease. The worker calls it every
        third of a lease, so a page that takes longer than one (a slow server, a
        chain of redirects) is never handed to another worker while it is fetched."""
        if self._in_flight:
            self._store.frontier_renew(self._crawl_id, self._owner, lease=self._lease)

    def retry(self, item: CrawlUrl, not_before: float) -> None:
        wait = max(0.0, not_before - self._clock())
        self._store.frontier_retry(self._crawl_id, item, self._owner, wait)

    def wake_at(self) -> float | None:
        return self._wake

    def set_delay(self, url: str, delay: float, now: float) -> None:
        # The store keeps the delay with the host's slot and holds the host for it from
        # its own clock's now: the page that waited for robots.txt goes out now.
        self._store.set_crawl_delay(politeness_host(url), delay)

    def started(self, url: str, now: float) -> None:
        # The store took the host's slot at the claim, on its own clock; a robots.txt
        # wait shortens the first gap there (a Crawl-delay is held from set_crawl_delay).
        return None

    def reserve(self, url: str, now: float, within: float) -> float | None:
        # Booked in the store, on its clock, like a claim: every worker sees the slot.
        return self._store.frontier_book(url, self._delay, within)

    def seen(self, url: str) -> bool:
        return hash(url) in self._seen

    def host_failed(self, url: str) -> int:
        # Counted in the store: a host failing for every worker is parked after the
        # same number of failures as in an embedded crawl, not that many per worker.
        host = politeness_host(url)
        self._failing.add(host)
        return self._store.host_failed(self._crawl_id, host)

    def host_answered(self, url: str) -> None:
        if self._failing:
            host = politeness_host(url)
            if host in self._failing:
                self._failing.discard(host)
                self._store.host_answered(self._crawl_id, host)

    def park(self, url: str, reason: str) -> list[CrawlUrl]:
        """Parked in the store, for every worker: its queued URLs are skipped there (and
        returned), and URLs of it that any worker adds later come in skipped."""
        return self._store.park_host(self._crawl_id, politeness_host(url), reason)

    def mark_seen(self, url: str) -> None:
        self._seen.add(hash(url))

    @property
    def queued(self) -> int:
        """1 while the crawl has work left anywhere, else 0 (a count would cost a scan)."""
        return int(self._store.frontier_active(self._crawl_id))
