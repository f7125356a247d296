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
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from trawl.errors import ConfigError
from trawl.records import CrawlUrl, HostTally, Outcome
from trawl.store import shared_sql
from trawl.store.database import Database
from trawl.store.dialect import Dialect
from trawl.urls.identity import politeness_host

# Frontier reasons the crawl's health is judged on (pipeline/health.py writes the caps).
MARKER = "marker"  # the state of a row that records a fact about the crawl, not a URL
CAPPED = "capped: "  # a marker's reason: a cap kept URLs of its host out of the crawl
# robots/policy.py's reason for a robots.txt that did not answer (5xx, no connection).
ROBOTS_UNANSWERED = "robots.txt:%nothing allowed"


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
        # In URL order: two workers adding the same URLs lock them in the same order
        # (PostgreSQL waits on a row another transaction is inserting) and never deadlock.
        rows = sorted(
            (crawl_id, i.url, i.depth, i.source, politeness_host(i.url), i.request) for i in items
        )
        hosts = sorted({r[4] for r in rows})
        with self._transaction():
            self._db.executemany(shared_sql.HOST_ADD, [(h,) for h in hosts])
            # A host the crawl's workers gave up on takes no more work: its URLs come
            # in skipped, so no worker claims them and the crawl can end.
            parked = self._parked(crawl_id, hosts)
            self._db.executemany(
                shared_sql.FRONTIER_ADD,
                [
                    (*r, "skipped", parked[r[4]]) if r[4] in parked else (*r, "queued", None)
                    for r in rows
                ],
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

    def _mark(self, crawl_id: int, url: str, state: str, reason: str | None) -> None:
        self._db.execute(
            "UPDATE frontier SET state = ?, reason = ? WHERE crawl_id = ? AND url = ?",
            (state, reason, crawl_id, url),
        )

    def frontier_pending(self, crawl_id: int) -> list[CrawlUrl]:
        rows = self._db.execute(
            "SELECT url, depth, source, request_url FROM frontier"
            " WHERE crawl_id = ? AND state = 'queued'",
            (crawl_id,),
        )
        return [CrawlUrl(u, d, s, request=r) for u, d, s, r in rows]

    def frontier_waiting(self, crawl_id: int, host: str) -> list[CrawlUrl]:
        rows = self._db.execute(
            "SELECT url, depth, source, request_url FROM frontier WHERE crawl_id = ?"
            " AND host = ? AND state = 'queued' AND lease_owner IS NULL ORDER BY depth",
            (crawl_id, host),
        )
        return [CrawlUrl(u, d, s, request=r) for u, d, s, r in rows]

    def frontier_finished(self, crawl_id: int) -> list[str]:
        rows = self._db.execute(
            "SELECT url FROM frontier WHERE crawl_id = ? AND state NOT IN ('queued', ?)",
            (crawl_id, MARKER),
        )
        return [u for (u,) in rows]

    def frontier_counts(self, crawl_id: int) -> dict[str, int]:
        rows = self._db.execute(
            "SELECT state, count(*) FROM frontier WHERE crawl_id = ? AND state != ? GROUP BY state",
            (crawl_id, MARKER),
        )
        return dict(rows)

    def host_tallies(self, crawl_id: int) -> dict[str, HostTally]:
        rows = self._db.execute(
            f"SELECT f.host, f.state, f.reason {self._like} ? AS unanswered,"  # noqa: S608
            f" f.reason {self._like} ? AS cap, CASE WHEN f.reason {self._like} ? THEN f.reason END,"
            " count(*),"
            " sum(CASE WHEN p.status >= 500 AND p.crawl_id = f.crawl_id THEN 1 ELSE 0 END)"
            " FROM frontier f LEFT JOIN pages p ON p.url = f.url WHERE f.crawl_id = ?"
            " GROUP BY 1, 2, 3, 4, 5",
            (ROBOTS_UNANSWERED, CAPPED + "%", CAPPED + "%", crawl_id),
        )
        found: dict[str, dict[str, Any]] = {}
        for host, state, unanswered, cap, reason, count, server_errors in rows:
            tally = found.setdefault(
                host,
                {"fetched": 0, "failed": 0, "server_errors": 0, "robots_unanswered": 0, "caps": []},
            )
            if state in ("fetched", "failed") and not cap:
                tally["fetched"] += count
                tally["failed"] += count if state == "failed" else 0
                tally["server_errors"] += server_errors or 0
            elif state == "skipped" and unanswered:
                tally["robots_unanswered"] += count
            if cap and reason:
                tally["caps"].append(reason.removeprefix(CAPPED))
        return {
            host: HostTally(host, **{**t, "caps": tuple(sorted(t["caps"]))})
            for host, t in found.items()
        }

    def frontier_reason(self, crawl_id: int, url: str) -> str | None:
        row = self._db.execute(
            "SELECT reason FROM frontier WHERE crawl_id = ? AND url = ?", (crawl_id, url)
        ).fetchone()
        return row[0] if row else None

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
            url, depth, source, retries, request = found
            return CrawlUrl(url, depth, source, retries=retries, request=request)
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
            url, depth, source, retries, request = row
            self._db.execute(shared_sql.LEASE, (owner, now + lease, crawl_id, url))
            self._db.execute(shared_sql.BOOK_HOST, (now + max(delay, crawl_delay), host))
        return CrawlUrl(url, depth, source, retries=retries, request=request)

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
                shared_sql.PARK_QUEUED, (reason, crawl_id, host, self._now())
            ).fetchall()
        return [CrawlUrl(u, d, s, retries=r, request=q) for u, d, s, r, q in rows]

    def set_crawl_delay(self, host: str, seconds: float) -> None:
        self._db.execute(shared_sql.SET_CRAWL_DELAY, (host, seconds, self._now() + seconds))
