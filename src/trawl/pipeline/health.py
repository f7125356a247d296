"""Is a crawl whole and healthy enough, host by host, to remove what it did not see?

A crawl's outcome and what it may prune are judged here, once, for the embedded
crawl (crawl_run.py) and for workers sharing a store (workers.py), on what the
store's frontier records: pages carried from a resumed run count as this run's.

A start host's unseen pages (and its pages that answered 5xx) go only when its
part of the run finished uncapped, its robots.txt and its start URL answered,
and its error rate stayed under ``max_error_rate``: an outage of one host, or a
cap that kept the crawl from some of its pages, never empties its part of the index.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from trawl.crawl.frontier import Frontier
from trawl.records import CrawlMark, CrawlUrl, HostTally, Href, MarkKind, Outcome
from trawl.store.base import FrontierLog
from trawl.urls.identity import politeness_host

# The caps that keep URLs out of a crawl; every one makes a host's part capped.
Cap = Literal["max_pages", "max_per_host", "max_depth", "max_pending"]
# Frontier refusals (crawl/frontier.py's ``refused`` reasons) and the cap behind each.
REFUSALS: dict[str, Cap] = {"host cap": "max_per_host", "frontier full": "max_pending"}
CAPPED = "capped: "  # a host verdict's reason when caps kept URLs of the host out


@dataclass(frozen=True, slots=True)
class HostVerdict:
    host: str
    prunable: bool
    reason: str  # why not, or Outcome.COMPLETE
    capped: bool = False  # caps kept URLs of the host out of the run


@dataclass(frozen=True, slots=True)
class Judgement:
    outcome: Outcome
    hosts: tuple[HostVerdict, ...]  # one per start host
    # The (host, port) pairs of the start URLs: pages are stored by host name alone, and
    # a crawl of host:8080 must not prune the pages of the same host on another port.
    origins: frozenset[tuple[str, int]] = frozenset()

    @property
    def prunable(self) -> list[str]:
        """Start hosts whose unseen pages may go."""
        return [v.host for v in self.hosts if v.prunable]

    def prunes(self, url: str) -> bool:
        """Whether ``url``, a page of a prunable host, is on a start URL's port."""
        return _host_port(url) in self.origins


def judge_health(
    tallies: Mapping[str, HostTally],
    start_urls: Sequence[str],
    answered: set[str],
    *,
    max_error_rate: float,
    stopped: bool = False,
    caps: Sequence[Cap] = (),
) -> Judgement:
    """The run's outcome and each start host's verdict. ``answered``: the start URLs that
    answered; ``caps``: caps the run hit as a whole (max_pages), which leave every
    host's part capped."""
    if any("max_pending" in t.caps for t in tallies.values()):
        # The frontier was full: any host may have lost URLs to it, not only the one
        # whose URL was refused.
        caps = sorted({*caps, "max_pending"})
    # Start URLs grouped by host in one pass: a scan of them all for each host was
    # quadratic, 7 CPU-s at the end of a crawl of 1,000 hosts.
    by_host: dict[str, list[str]] = {}
    for url in start_urls:
        by_host.setdefault(urlsplit(url).hostname or "", []).append(url)
    verdicts = []
    for host in sorted(by_host):
        tally = tallies.get(host, HostTally(host))
        verdicts.append(_verdict(tally, by_host[host], answered, max_error_rate, caps))
    every = list(tallies.values())
    fetched = sum(t.fetched for t in every)
    errors = sum(t.failed + t.server_errors for t in every)
    ok = fetched - sum(t.failed for t in every)
    outcome: Outcome
    if stopped:
        outcome = Outcome.STOPPED
    elif caps or any(v.capped for v in verdicts):
        outcome = Outcome.CAPPED
    elif (
        ok <= 0
        or errors > max_error_rate * max(1, fetched)
        or not all(v.prunable for v in verdicts)
    ):
        outcome = Outcome.UNHEALTHY
    else:
        outcome = Outcome.COMPLETE
    if outcome == Outcome.STOPPED:
        verdicts = [HostVerdict(v.host, False, Outcome.STOPPED) for v in verdicts]
    return Judgement(outcome, tuple(verdicts), frozenset(map(_host_port, start_urls)))


def _host_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)


def _verdict(
    tally: HostTally,
    urls: Sequence[str],
    answered: set[str],
    max_error_rate: float,
    caps: Sequence[Cap],
) -> HostVerdict:
    found = sorted({*caps, *tally.caps})
    if found:
        return HostVerdict(tally.host, False, CAPPED + ", ".join(found), capped=True)
    if tally.robots_unanswered:
        return HostVerdict(tally.host, False, "robots.txt did not answer")
    if not all(u in answered for u in urls):
        return HostVerdict(tally.host, False, "start URL did not answer")
    errors = tally.failed + tally.server_errors
    if errors > max_error_rate * max(1, tally.fetched):
        return HostVerdict(tally.host, False, f"{errors} of {tally.fetched} fetches failed")
    return HostVerdict(tally.host, True, Outcome.COMPLETE)


def judge_crawl(
    store: FrontierLog,
    crawl_id: int,
    start_urls: Sequence[str],
    *,
    max_error_rate: float,
    ended: Outcome | None = None,
) -> Judgement:
    """``judge_health`` on what the store records of crawl ``crawl_id``, for every kind
    of run. ``ended``: how its requests ended (``run_crawler``'s answer): stopped,
    capped (max_pages, which leaves every host's part capped), or ran to the end."""
    return judge_health(
        store.host_tallies(crawl_id),
        start_urls,
        store.answered(crawl_id, start_urls),
        max_error_rate=max_error_rate,
        stopped=ended == Outcome.STOPPED,
        caps=["max_pages"] if ended == Outcome.CAPPED else [],
    )


class CapLog:
    """Records in the crawl's frontier, once per host and cap, that a cap kept URLs of
    that host out of the run, so a run that resumes it is judged capped as well (a
    mark of the crawl in the store)."""

    def __init__(self, store: FrontierLog, crawl_id: int) -> None:
        self._store = store
        self._crawl_id = crawl_id
        self._seen: set[tuple[str, str]] = set()

    def hit(self, url: str, cap: Cap) -> None:
        host = politeness_host(url)
        if (host, cap) in self._seen:
            return
        self._seen.add((host, cap))
        self._store.crawl_mark(self._crawl_id, CrawlMark(host, MarkKind.CAP, cap))


def mark_embedded(store: FrontierLog, crawl_id: int, start_url: str) -> None:
    """Record that ``trawl crawl`` runs this crawl alone (its own frontier in memory,
    its own index writer): a ``trawl worker`` must not join it."""
    store.crawl_mark(crawl_id, CrawlMark(politeness_host(start_url), MarkKind.EMBEDDED))


def is_embedded(store: FrontierLog, crawl_id: int) -> bool:
    return any(m.kind == MarkKind.EMBEDDED for m in store.crawl_marks(crawl_id))


class CappedFrontier(Frontier):
    """The embedded crawl's frontier, telling ``caps`` which host each refusal for a
    limit (max_per_host, max_pending) kept URLs from."""

    def __init__(self, caps: CapLog, **options: Any) -> None:
        super().__init__(**options)
        self._caps = caps

    def enqueue(self, item: CrawlUrl) -> bool:
        before = {reason: self.refused[reason] for reason in REFUSALS}
        if super().enqueue(item):
            return True
        for reason, cap in REFUSALS.items():
            if self.refused[reason] > before[reason]:
                self._caps.hit(item.url, cap)
        return False


class DepthCap:
    """Tells ``caps`` when a page at ``max_depth`` links to a URL the crawl wanted
    (in scope, not seen) but may not follow."""

    def __init__(self, caps: CapLog, max_depth: int, wanted: Callable[[str], bool]) -> None:
        self._caps = caps
        self._max_depth = max_depth
        self._wanted = wanted

    def links(self, item: CrawlUrl, follow: Sequence[Href]) -> None:
        if item.depth + 1 <= self._max_depth:
            return
        for href in follow:
            if self._wanted(href.url):
                self._caps.hit(href.url, "max_depth")
                return
