"""The store's interface, in roles: each caller is typed against the role it uses
(a crawl log, pages, a frontier, leases, corpus signals, agreement with the index,
administration, the report), and ``Store``, the union of them all, is what
``open_store`` returns. ``sql_store.SqlStore`` implements it on SQLite
(``sqlite.py``, embedded) and PostgreSQL (``postgres.py``, shared by workers on
many machines).

Invariants every backend keeps:
- a page is identified by its normalised URL; saving it again replaces it
  (and its outgoing links) in place, never adds a second row;
- a page fetched by a crawl is saved, and marked in that crawl's frontier,
  in one transaction: after a crash the store holds whole pages only, and a
  resumed run fetches again exactly what was not committed;
- the schema is created and migrated by code when the store opens, and
  opening an up-to-date store changes nothing;
- a frontier URL is leased to one worker at a time, and a host's next allowed
  request time is claimed with it, atomically: workers in other processes or
  on other machines never fetch the same URL at once nor crowd one host.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Protocol

from trawl.records import (
    ApiKey,
    CorpusPage,
    CrawlMark,
    CrawlRun,
    CrawlUrl,
    ExternalLink,
    HeaderCheck,
    HostTally,
    Inlink,
    IssueThresholds,
    KeyScope,
    Link,
    Outcome,
    PageChange,
    PageRecord,
    PageSignals,
    ReportQuery,
    ReportRow,
    ResourceCheck,
    SavedDates,
    Site,
    Skip,
)
from trawl.store.issues import Issue


class CrawlLog(Protocol):
    """The crawl log: a row per run, begun, finished, resumed."""

    def begin_crawl(self, start_urls: Sequence[str], resumed_from: int | None = None) -> int: ...

    def finish_crawl(
        self,
        crawl_id: int,
        *,
        pages_ok: int,
        pages_failed: int,
        outcome: Outcome,
        skipped: Mapping[str, int] | None = None,
        samples: Mapping[str, Sequence[str]] | None = None,
    ) -> None: ...

    def interrupt_running(self) -> int: ...

    def crawls(self, limit: int = 50) -> list[CrawlRun]: ...

    def resumable_crawl(self, start_urls: Sequence[str] | None = None) -> CrawlRun | None: ...


class Pages(Protocol):
    """Pages and their links, saved by the identity of their URL."""

    def save_page(
        self,
        record: PageRecord,
        links: Sequence[Link] = (),
        crawl_id: int | None = None,
        admitted: Sequence[CrawlUrl] = (),
    ) -> None:
        """With ``crawl_id``: the page marked fetched in the crawl's frontier and
        ``admitted`` added to it, in the page's transaction."""
        ...

    def touch_page(self, url: str, crawl_id: int, admitted: Sequence[CrawlUrl] = ()) -> None: ...

    def validators(self, url: str) -> tuple[str | None, str | None]: ...

    def page(self, url: str) -> PageRecord | None: ...

    def pages(self, *, indexable_only: bool = False) -> Iterator[PageRecord]: ...

    def count_pages(self) -> int: ...

    def links_from(self, url: str) -> list[Link]: ...

    def anchors_to(self, url: str, limit: int = 100) -> list[str]: ...

    def count_inlinks(self, hosts: Sequence[str]) -> None: ...

    def host_language(self, host: str) -> str | None: ...

    def unseen_pages(self, crawl_id: int, hosts: Sequence[str]) -> list[str]: ...

    def server_error_pages(self, crawl_id: int) -> list[str]: ...

    def delete_pages(self, urls: Sequence[str]) -> None: ...

    def mark_in_sitemap(self, crawl_id: int, urls: Sequence[str]) -> None: ...

    def saved_dates(self, crawl_id: int, urls: Sequence[str]) -> list[SavedDates]:
        """The dates of those of ``urls`` that crawl ``crawl_id`` has saved."""
        ...

    def redate_pages(self, dates: Sequence[tuple[str, datetime | None, str | None]]) -> None:
        """Set pages' modified date and its source: (URL, modified, source)."""
        ...

    def write_batch(self, pages: int, seconds: float) -> AbstractContextManager[None]:
        """Writes inside commit together, every ``pages`` writes or ``seconds``."""
        ...

    def flush(self, *, due_only: bool = False) -> None:
        """Commit what the open write batch holds (``due_only``: if full or old)."""
        ...


class FrontierLog(Protocol):
    """A crawl's frontier as the store records it: what was queued and what became of
    it, so a run can resume and be judged host by host."""

    def frontier_add(self, crawl_id: int, items: Sequence[CrawlUrl]) -> None: ...

    def frontier_date(self, crawl_id: int, lastmods: Mapping[str, datetime]) -> None:
        """A sitemap's dates for URLs queued already: kept on their rows (the first date
        wins), so a worker that claims one dates its page."""
        ...

    def frontier_mark(
        self, crawl_id: int, url: str, state: str, reason: str | None = None
    ) -> None: ...

    def frontier_skip(self, crawl_id: int, url: str, skip: Skip) -> None:
        """Mark ``url`` skipped, with the kind of reason and its detail."""
        ...

    def frontier_skipped(self, crawl_id: int, url: str) -> Skip | None:
        """Why ``url`` was skipped in the crawl (None: not skipped, or absent)."""
        ...

    def crawl_mark(self, crawl_id: int, mark: CrawlMark) -> None:
        """Record a fact about the crawl (a cap that kept a host's URLs out; an embedded
        crawl); once each. A run that resumes the crawl takes them over."""
        ...

    def crawl_marks(self, crawl_id: int) -> set[CrawlMark]: ...

    def frontier_pending(self, crawl_id: int) -> list[CrawlUrl]: ...

    def frontier_waiting(self, crawl_id: int, host: str) -> list[CrawlUrl]:
        """The URLs of one politeness ``host`` still queued in the crawl's frontier,
        shallowest first: those an embedded crawl keeps out of memory (max_host_queues)."""
        ...

    def frontier_finished(self, crawl_id: int) -> list[str]: ...

    def frontier_starts(self, crawl_id: int) -> list[str]:
        """The URLs at depth 0 the run fetched or gave up on: its start URLs and where
        they redirected (a redirect keeps the depth)."""
        ...

    def frontier_fetched(self, crawl_id: int) -> list[str]:
        """The URLs whose answer the run saved (not those skipped or failed)."""
        ...

    def frontier_counts(self, crawl_id: int) -> dict[str, int]: ...

    def host_tallies(self, crawl_id: int) -> dict[str, HostTally]:
        """Each host's fetches, failures, server errors, robots.txt refusals and caps in
        the crawl's frontier (pages carried from the run it resumes included)."""
        ...

    def answered(self, crawl_id: int, urls: Sequence[str]) -> set[str]:
        """Those of ``urls`` the crawl fetched and that answered (not 5xx, not failed)."""
        ...


class Leases(Protocol):
    """The frontier ``trawl worker``s share: leases, grants and per-host politeness
    (``crawl.shared_frontier.LeaseStore`` is the crawler's view of it)."""

    def join_crawl(self, start_urls: Sequence[str]) -> int:
        """The running crawl of ``start_urls``, begun now if there is none; with no
        start URLs, the latest running crawl (StoreError when there is none)."""
        ...

    def frontier_claim(
        self, crawl_id: int, owner: str, *, lease: float, delay: float, host_concurrency: int
    ) -> CrawlUrl | None:
        """Lease a URL whose host may be fetched now and book the host's next slot
        (``delay`` or its Crawl-delay, whichever is longer). A URL whose lease ran
        out is taken again, also one marked done by a worker that died before
        releasing it (its links may not have been admitted)."""
        ...

    def frontier_release(self, crawl_id: int, url: str, owner: str) -> None: ...

    def crawl_grant(self, crawl_id: int, want: int, cap: int) -> int:
        """Take up to ``want`` more URLs of the crawl's ``cap`` (its max_pages, counted
        over all its workers); return how many were granted, 0 when none are left."""
        ...

    def frontier_renew(self, crawl_id: int, owner: str, *, lease: float) -> None:
        """Extend every lease ``owner`` holds to ``lease`` seconds from now."""
        ...

    def frontier_retry(self, crawl_id: int, item: CrawlUrl, owner: str, not_before: float) -> None:
        """Put a leased URL back and hold its host ``not_before`` seconds (429, 503)."""
        ...

    def frontier_wait(self, crawl_id: int) -> float | None:
        """Seconds until a queued URL's host may be fetched; None if none is queued
        and free (everything left is leased)."""
        ...

    def frontier_active(self, crawl_id: int) -> bool:
        """URLs are queued or leased (leased work may still find more)."""
        ...

    def set_crawl_delay(self, host: str, seconds: float) -> None:
        """A robots.txt Crawl-delay for ``host``: kept with its slot, and the host held
        for it from now on."""
        ...

    def frontier_book(self, url: str, delay: float, within: float) -> float | None:
        """Book the next request slot at ``url``'s host for a request no claim handed
        out (a rendered page's subrequest), ``delay`` or the host's Crawl-delay after
        the one before; return the seconds until it may start, or None, booking
        nothing, when that is more than ``within``."""
        ...

    def host_failed(self, crawl_id: int, host: str) -> int:
        """One more failure in a row at ``host`` in the crawl, whichever worker met it;
        return how many there are now."""
        ...

    def host_answered(self, crawl_id: int, host: str) -> None:
        """``host`` answered in the crawl: its failures in a row start again."""
        ...

    def park_host(self, crawl_id: int, host: str, reason: str) -> list[CrawlUrl]:
        """Give ``host`` up for the crawl: its queued URLs no one holds are skipped
        (SkipKind.PARKED, ``reason`` the detail) and returned, and URLs of it added later
        are skipped as they come."""
        ...


class CorpusSignals(Protocol):
    """What the batch step after a crawl reads and writes (``trawl.pipeline.corpus``)."""

    def link_graph(self) -> Iterator[tuple[str, str, str, bool]]:
        """(from URL, to URL, anchor text, nofollow) of every <a>/<area> link between two
        different URLs."""
        ...

    def corpus_pages(self) -> Iterator[CorpusPage]:
        """Every stored page, in crawl order, as the batch step reads it: the columns
        it needs, the body only where a fingerprint is missing."""
        ...

    def save_signals(self, signals: Sequence[PageSignals]) -> None:
        """Set authority, scored, duplicate_of, canonical_reason and discussed_on by URL;
        ``save_page`` never overwrites these."""
        ...

    def duplicates_of(self, url: str) -> list[str]:
        """URLs whose canonical copy is ``url``, in crawl order."""
        ...


class Agreement(Protocol):
    """What the index must hold, for comparing store and index (``pipeline/integrity.py``)."""

    def searchable_counts(self) -> tuple[int, int]:
        """(pages the index must hold, pages it may hold too: their last answer was 5xx)."""
        ...

    def held_urls(self) -> list[str]:
        """Pages not searchable that answered 5xx last: the index may keep their documents."""
        ...

    def searchable_urls(self) -> Iterator[tuple[str, bool]]:
        """(URL, must be indexed) of each page either count of ``searchable_counts`` holds."""
        ...


class Admin(Protocol):
    """The service's administration: sites, API keys and browser sessions."""

    def add_site(self, start_url: str) -> None: ...

    def sites(self) -> list[Site]: ...

    def set_site_enabled(self, host: str, enabled: bool) -> bool: ...

    def delete_site(self, host: str) -> list[str] | None: ...

    def site_pages(self, host: str) -> list[str] | None: ...

    def add_api_key(
        self,
        name: str,
        digest: str,
        scopes: Sequence[KeyScope] = ...,
        expires_at: float | None = None,
    ) -> int: ...

    def api_key_by_digest(self, digest: str) -> ApiKey | None: ...

    def api_keys(self) -> list[ApiKey]: ...

    def revoke_api_key(self, key_id: int) -> bool: ...

    def add_session(self, digest: str, key_id: int, expires_at: float) -> None: ...

    def session_key(self, digest: str) -> ApiKey | None: ...

    def end_session(self, digest: str) -> bool: ...


class Report(Protocol):
    """The SEO report: the crawl table, links, header and resource checks, charts and
    the comparison of a host's last two crawls."""

    def report_pages(self, query: ReportQuery) -> tuple[int, list[ReportRow]]: ...

    def links_to(self, url: str, limit: int = 2000) -> list[Inlink]: ...

    def external_links(
        self, text: str = "", limit: int = 100, offset: int = 0
    ) -> tuple[int, list[ExternalLink]]: ...

    def save_header_checks(self, checks: Sequence[HeaderCheck]) -> None: ...

    def status_counts(self) -> dict[int, int]: ...

    def depth_counts(self) -> dict[int, int]: ...

    def response_time_counts(self, bounds: Sequence[float]) -> list[int]: ...

    def report_issue_counts(self, thresholds: IssueThresholds) -> dict[Issue, int]: ...

    def compared_crawls(self, host: str) -> tuple[int | None, int | None]: ...

    def history_hosts(self) -> list[str]: ...

    def report_changes(
        self, host: str, before: int, after: int, limit: int = 100, offset: int = 0
    ) -> tuple[int, list[PageChange]]: ...

    def resource_urls(self, crawl_id: int, limit: int) -> list[str]:
        """Distinct resources used by pages this crawl saved, first found first."""
        ...

    def written_forms(self, urls: Sequence[str]) -> dict[str, str]:
        """For each of ``urls`` a link wrote otherwise, the first form written (what is
        requested: seed 003's first exact URL)."""
        ...

    def save_resources(self, checks: Sequence[ResourceCheck]) -> None:
        """Upsert by URL: a check replaces the last one."""
        ...

    def resources(
        self, *, broken_only: bool = False, limit: int = 100, offset: int = 0
    ) -> list[ResourceCheck]:
        """Checked resources by URL; ``broken_only``: status 0 or >= 400."""
        ...

    def resource_pages(self, url: str, limit: int = 100) -> list[str]:
        """The pages that use the resource ``url``."""
        ...


class Store(
    CrawlLog, Pages, FrontierLog, Leases, CorpusSignals, Agreement, Admin, Report, Protocol
):
    """Every role: what ``open_store`` returns and what closes."""

    # Whether methods may run in several threads at once (a connection pool), so
    # callers may wait for slow ones off the event loop.
    threadsafe: bool

    def close(self) -> None: ...
