"""The crawl frontier in the store: an embedded crawl's record of what it queued
and fetched (so a crawl can resume), and the frontier ``trawl worker`` processes
share, where every claim leases a URL and books its host's next slot.

A mixin of ``sql_store.SqlStore``, under the same rules for its SQL: both
databases must read it, and the store tests run every method on both. A dialect
may replace the claim and the grant with one statement each (PostgreSQL's).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

from trawl.errors import ConfigError
from trawl.records import CrawlMark, CrawlUrl, HostTally, MarkKind, Outcome, Skip, SkipKind
from trawl.store import shared_sql
from trawl.store.database import Database
from trawl.store.dialect import Dialect
from trawl.urls.identity import politeness_host


class FrontierQueries:
    _db: Database
    _dialect: Dialect
    _like: str

    def _transaction(self, mode: str = "") -> AbstractContextManager[Any]:
        raise NotImplementedError  # the store's own

    def _now(self) -> float:
        raise NotImplementedError  # the store's own

    def _lock_joining(self) -> None:
        raise NotImplementedError  # the store's own

    # -- frontier -----------------------------------------------------------

    def frontier_add(self, crawl_id: int, items: Sequence[CrawlUrl]) -> None:
        with self._transaction():
            self._frontier_add(crawl_id, items)

    def _frontier_add(self, crawl_id: int, items: Sequence[CrawlUrl]) -> None:
        """``frontier_add`` inside the caller's transaction (a page's save)."""
        # In URL order: two workers adding the same URLs lock them in the same order
        # (PostgreSQL waits on a row another transaction is inserting) and never deadlock.
        rows = sorted(
            (crawl_id, i.url, i.depth, i.source, politeness_host(i.url), i.request, _iso(i.lastmod))
            for i in items
        )
        if not rows:
            return
        hosts = sorted({r[4] for r in rows})
        self._db.executemany(shared_sql.HOST_ADD, [(h,) for h in hosts])
        # A host the crawl's workers gave up on takes no more work: its URLs come
        # in skipped, so no worker claims them and the crawl can end.
        parked = self._parked(crawl_id, hosts)
        self._db.executemany(
            shared_sql.FRONTIER_ADD,
            [
                (*r, "skipped", SkipKind.PARKED, parked[r[4]])
                if r[4] in parked
                else (*r, "queued", None, None)
                for r in rows
            ],
        )
        # A URL queued already (a link found it first, here or in another worker) takes a
        # sitemap's date onto its row, so whichever worker claims it carries the date.
        self._frontier_date(crawl_id, [(r[1], r[6]) for r in rows if r[6] is not None])

    def frontier_date(self, crawl_id: int, lastmods: Mapping[str, datetime]) -> None:
        with self._transaction():
            self._frontier_date(crawl_id, sorted((u, _iso(d)) for u, d in lastmods.items()))

    def _frontier_date(self, crawl_id: int, dated: Sequence[tuple[str, str | None]]) -> None:
        if dated:
            self._db.executemany(
                shared_sql.FRONTIER_DATE, [(lastmod, crawl_id, url) for url, lastmod in dated]
            )

    def _parked(self, crawl_id: int, hosts: Sequence[str]) -> dict[str, str]:
        """Which of ``hosts`` the crawl gave up on, and why."""
        parked: dict[str, str] = {}
        for at in range(0, len(hosts), 500):
            chunk = hosts[at : at + 500]
            marks = ", ".join("?" * len(chunk))
            rows = self._db.execute(
                "SELECT host, parked_reason FROM host_slots"  # noqa: S608 - placeholders only
                f" WHERE parked_by = ? AND host IN ({marks})",
                (crawl_id, *chunk),
            )
            parked.update(rows)
        return parked

    def frontier_mark(self, crawl_id: int, url: str, state: str, reason: str | None = None) -> None:
        self._mark(crawl_id, url, state, reason)

    def frontier_skip(self, crawl_id: int, url: str, skip: Skip) -> None:
        self._mark(crawl_id, url, "skipped", skip.detail, skip.kind)

    def _mark(
        self, crawl_id: int, url: str, state: str, reason: str | None, kind: SkipKind | None = None
    ) -> None:
        self._db.execute(
            "UPDATE frontier SET state = ?, kind = ?, reason = ? WHERE crawl_id = ? AND url = ?",
            (state, kind, reason, crawl_id, url),
        )

    def frontier_skipped(self, crawl_id: int, url: str) -> Skip | None:
        row = self._db.execute(
            "SELECT kind, reason FROM frontier WHERE crawl_id = ? AND url = ? AND kind IS NOT NULL",
            (crawl_id, url),
        ).fetchone()
        return Skip(SkipKind(row[0]), row[1] or "") if row else None

    def crawl_mark(self, crawl_id: int, mark: CrawlMark) -> None:
        self._db.execute(
            "INSERT INTO crawl_marks (crawl_id, host, kind, detail) VALUES (?, ?, ?, ?)"
            " ON CONFLICT DO NOTHING",
            (crawl_id, mark.host, mark.kind, mark.detail),
        )

    def crawl_marks(self, crawl_id: int) -> set[CrawlMark]:
        rows = self._db.execute(
            "SELECT host, kind, detail FROM crawl_marks WHERE crawl_id = ?", (crawl_id,)
        )
        return {CrawlMark(h, MarkKind(k), d) for h, k, d in rows}

    def frontier_pending(self, crawl_id: int) -> list[CrawlUrl]:
        rows = self._db.execute(
            "SELECT url, depth, source, request_url, lastmod FROM frontier"
            " WHERE crawl_id = ? AND state = 'queued'",
            (crawl_id,),
        )
        return [
            CrawlUrl(u, d, s, request=r, lastmod=datetime.fromisoformat(m) if m else None)
            for u, d, s, r, m in rows
        ]

    def frontier_waiting(self, crawl_id: int, host: str) -> list[CrawlUrl]:
        rows = self._db.execute(
            "SELECT url, depth, source, request_url, lastmod FROM frontier WHERE crawl_id = ?"
            " AND host = ? AND state = 'queued' AND lease_owner IS NULL ORDER BY depth",
            (crawl_id, host),
        )
        return [
            CrawlUrl(u, d, s, request=r, lastmod=datetime.fromisoformat(m) if m else None)
            for u, d, s, r, m in rows
        ]

    def frontier_finished(self, crawl_id: int) -> list[str]:
        rows = self._db.execute(
            "SELECT url FROM frontier WHERE crawl_id = ? AND state != 'queued'", (crawl_id,)
        )
        return [u for (u,) in rows]

    def frontier_starts(self, crawl_id: int) -> list[str]:
        rows = self._db.execute(
            "SELECT url FROM frontier WHERE crawl_id = ? AND depth = 0 AND state != 'queued'",
            (crawl_id,),
        )
        return [u for (u,) in rows]

    def frontier_fetched(self, crawl_id: int) -> list[str]:
        rows = self._db.execute(
            "SELECT url FROM frontier WHERE crawl_id = ? AND state = 'fetched'", (crawl_id,)
        )
        return [u for (u,) in rows]

    def frontier_counts(self, crawl_id: int) -> dict[str, int]:
        rows = self._db.execute(
            "SELECT state, count(*) FROM frontier WHERE crawl_id = ? GROUP BY state", (crawl_id,)
        )
        return dict(rows)

    def host_tallies(self, crawl_id: int) -> dict[str, HostTally]:
        rows = self._db.execute(
            "SELECT f.host, f.state, f.kind, count(*),"
            " sum(CASE WHEN p.status >= 500 AND p.crawl_id = f.crawl_id THEN 1 ELSE 0 END)"
            " FROM frontier f LEFT JOIN pages p ON p.url = f.url WHERE f.crawl_id = ?"
            " GROUP BY 1, 2, 3",
            (crawl_id,),
        )
        found: dict[str, dict[str, Any]] = {}

        def tally_of(host: str) -> dict[str, Any]:
            empty = {"fetched": 0, "failed": 0, "server_errors": 0, "robots_unanswered": 0}
            return found.setdefault(host, {**empty, "caps": []})

        for host, state, kind, count, server_errors in rows:
            tally = tally_of(host)
            if state in ("fetched", "failed"):
                tally["fetched"] += count
                tally["failed"] += count if state == "failed" else 0
                tally["server_errors"] += server_errors or 0
            elif state == "skipped" and kind == SkipKind.ROBOTS_UNANSWERED:
                tally["robots_unanswered"] += count
        for mark in self.crawl_marks(crawl_id):
            if mark.kind == MarkKind.CAP:
                tally_of(mark.host)["caps"].append(mark.detail)
        return {
            host: HostTally(host, **{**t, "caps": tuple(sorted(t["caps"]))})
            for host, t in found.items()
        }

    def answered(self, crawl_id: int, urls: Sequence[str]) -> set[str]:
        if not urls:
            return set()
        marks = ", ".join("?" * len(urls))
        rows = self._db.execute(
            "SELECT f.url FROM frontier f JOIN pages p ON p.url = f.url"  # noqa: S608
            f" WHERE f.crawl_id = ? AND f.state = 'fetched' AND f.url IN ({marks})"
            " AND p.status > 0 AND p.status < 500",
            (crawl_id, *urls),
        )
        return {u for (u,) in rows}

    # -- the frontier shared by workers ----------------------------------------
    # Several worker processes on one machine may share a SQLite file: BEGIN
    # IMMEDIATE takes the write lock before reading, so two claims never interleave.

    def join_crawl(self, start_urls: Sequence[str]) -> int:
        with self._transaction("IMMEDIATE"):
            self._lock_joining()
            if not start_urls:
                row = self._db.execute(shared_sql.LATEST_RUNNING, (Outcome.RUNNING,)).fetchone()
                if row is None:
                    # What the worker was told to do, not the store, is at fault (exit 2).
                    raise ConfigError("no running crawl to join: give start URLs")
                return int(row[0])
            urls = json.dumps(list(start_urls))
            row = self._db.execute(shared_sql.RUNNING_OF, (Outcome.RUNNING, urls)).fetchone()
            if row is not None:
                return int(row[0])
            row = self._db.execute(shared_sql.BEGIN_CRAWL, (time.time(), urls, None)).fetchone()
            return int(row[0])

    def frontier_claim(
        self, crawl_id: int, owner: str, *, lease: float, delay: float, host_concurrency: int
    ) -> CrawlUrl | None:
        if self._dialect.claim is not None:  # one statement: one round trip, not seven
            params = (crawl_id, owner, lease, delay, host_concurrency)
            found = self._db.execute(self._dialect.claim, params).fetchone()
            if found is None:
                return None
            return _claimed(found)
        with self._transaction("IMMEDIATE"):
            now = self._now()
            slot = self._db.execute(
                shared_sql.CLAIM_HOST,
                (now, crawl_id, now, crawl_id, now, host_concurrency),
            ).fetchone()
            if slot is None:
                return None
            host, crawl_delay = slot
            row = self._db.execute(shared_sql.CLAIM_URL, (crawl_id, host, now)).fetchone()
            if row is None:
                return None
            self._db.execute(shared_sql.LEASE, (owner, now + lease, crawl_id, row[0]))
            self._db.execute(shared_sql.BOOK_HOST, (now + max(delay, crawl_delay), host))
        return _claimed(row)

    def frontier_release(self, crawl_id: int, url: str, owner: str) -> None:
        self._db.execute(shared_sql.RELEASE, (crawl_id, url, owner))

    def crawl_grant(self, crawl_id: int, want: int, cap: int) -> int:
        if self._dialect.grant is not None:
            granted_now = self._db.execute(self._dialect.grant, (crawl_id, want, cap)).fetchone()
            return int(granted_now[0]) if granted_now else 0
        with self._transaction("IMMEDIATE"):
            row = self._db.execute("SELECT granted FROM crawls WHERE id = ?", (crawl_id,))
            taken = row.fetchone()
            granted = max(0, min(want, cap - taken[0])) if taken else 0
            if granted:
                self._db.execute(
                    "UPDATE crawls SET granted = granted + ? WHERE id = ?", (granted, crawl_id)
                )
        return granted

    def frontier_book(self, url: str, delay: float, within: float) -> float | None:
        now = self._now()
        host = politeness_host(url)
        params = (host, now + delay, now, now, delay, delay, now + within, delay, delay)
        booked = self._db.execute(shared_sql.BOOK_SLOT, params).fetchone()
        return None if booked is None else max(0.0, float(booked[0]) - now)

    def frontier_renew(self, crawl_id: int, owner: str, *, lease: float) -> None:
        self._db.execute(shared_sql.RENEW, (self._now() + lease, crawl_id, owner))

    def frontier_retry(self, crawl_id: int, item: CrawlUrl, owner: str, not_before: float) -> None:
        with self._transaction("IMMEDIATE"):
            self._db.execute(shared_sql.RETRY, (item.retries, crawl_id, item.url, owner))
            until = self._now() + not_before
            self._db.execute(
                "UPDATE host_slots SET next_time = CASE WHEN next_time > ? THEN next_time"
                " ELSE ? END WHERE host = ?",
                (until, until, politeness_host(item.url)),
            )

    def frontier_wait(self, crawl_id: int) -> float | None:
        now = self._now()
        row = self._db.execute(shared_sql.NEXT_HOST_TIME, (crawl_id, now)).fetchone()
        return None if row[0] is None else max(0.0, float(row[0]) - now)

    def frontier_active(self, crawl_id: int) -> bool:
        return bool(self._db.execute(shared_sql.ACTIVE, (crawl_id, crawl_id)).fetchone()[0])

    def host_failed(self, crawl_id: int, host: str) -> int:
        row = self._db.execute(shared_sql.HOST_FAILED, (host, crawl_id)).fetchone()
        return int(row[0])

    def host_answered(self, crawl_id: int, host: str) -> None:
        self._db.execute(
            "UPDATE host_slots SET failures = 0 WHERE host = ? AND failures_crawl = ?",
            (host, crawl_id),
        )

    def park_host(self, crawl_id: int, host: str, reason: str) -> list[CrawlUrl]:
        with self._transaction("IMMEDIATE"):
            self._db.execute(
                "UPDATE host_slots SET parked_by = ?, parked_reason = ? WHERE host = ?",
                (crawl_id, reason, host),
            )
            rows = self._db.execute(
                shared_sql.PARK_QUEUED, (SkipKind.PARKED, reason, crawl_id, host, self._now())
            ).fetchall()
        return [CrawlUrl(u, d, s, retries=r, request=q) for u, d, s, r, q in rows]

    def set_crawl_delay(self, host: str, seconds: float) -> None:
        self._db.execute(shared_sql.SET_CRAWL_DELAY, (host, seconds, self._now() + seconds))


def _iso(lastmod: datetime | None) -> str | None:
    return lastmod.isoformat() if lastmod is not None else None


def _claimed(row: Sequence[Any]) -> CrawlUrl:
    """A claim's row: (url, depth, source, retries, request_url, lastmod)."""
    url, depth, source, retries, request, lastmod = row
    when = datetime.fromisoformat(lastmod) if lastmod else None
    return CrawlUrl(url, depth, source, retries=retries, request=request, lastmod=when)
