"""What the server's admin side asks of the store: sites, API keys, the SEO report,
header checks and resource checks.

A mixin of ``sql_store.SqlStore``, under the same rules for its SQL: both
databases must read it, and the store tests run every method on both.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

from trawl.errors import StoreError
from trawl.records import (
    KEY_SCOPES,
    REPORT_SORTS,
    ApiKey,
    ExternalLink,
    HeaderCheck,
    Inlink,
    IssueThresholds,
    KeyScope,
    PageChange,
    ReportQuery,
    ReportRow,
    ResourceCheck,
)
from trawl.store.database import Database
from trawl.store.issues import Issue

# Which link occurrences are resources worth a header check: every URL-bearing
# element but anchors, and <link> only with a rel that makes the browser load it
# (not canonical, alternate, next...). Constant SQL, no input in it.
_LOADED_RELS = ("stylesheet", "icon", "apple-touch-icon", "manifest", "preload", "modulepreload")


def _resource_occurrence(like: str) -> str:
    return (
        "(l.element IN ('img', 'script', 'source', 'video', 'audio', 'track', 'embed', 'object',"
        " 'iframe', 'frame') OR (l.element = 'link' AND ("
        + " OR ".join(f"(' ' || l.rel || ' ') {like} '% {rel} %'" for rel in _LOADED_RELS)
        + ")))"
    )


_RESOURCE_COLUMNS = "url, status, content_type, content_length, error, checked_at"


class AdminQueries:
    _db: Database
    _like: str  # the dialect's case-blind LIKE

    def _transaction(self, mode: str = "") -> AbstractContextManager[Any]:
        raise NotImplementedError  # the store's own

    # -- sites, for the admin ---------------------------------------------

    def set_site_enabled(self, host: str, enabled: bool) -> bool:
        cur = self._db.execute("UPDATE sites SET enabled = ? WHERE host = ?", (int(enabled), host))
        return cur.rowcount > 0

    def delete_site(self, host: str) -> list[str] | None:
        """Forget a site and its pages; return the pages' URLs (None: no such site)."""
        with self._transaction():
            if self._db.execute("DELETE FROM sites WHERE host = ?", (host,)).rowcount == 0:
                return None
            rows = self._db.execute(
                f"DELETE FROM pages WHERE {self._site_urls()} RETURNING url",  # noqa: S608
                _site_patterns(host),
            )
            urls = [u for (u,) in rows]
            self._db.execute(
                f"DELETE FROM page_history WHERE {self._site_urls()}",  # noqa: S608
                _site_patterns(host),
            )
            return urls

    def site_pages(self, host: str) -> list[str] | None:
        """The URLs ``delete_site`` would remove (None: no such site), removing nothing."""
        if self._db.execute("SELECT 1 FROM sites WHERE host = ?", (host,)).fetchone() is None:
            return None
        rows = self._db.execute(
            f"SELECT url FROM pages WHERE {self._site_urls()}",  # noqa: S608
            _site_patterns(host),
        )
        return [u for (u,) in rows]

    def _site_urls(self) -> str:
        """The condition ``_site_patterns``'s two parameters fill."""
        return f"url {self._like} ? ESCAPE '\\' OR url {self._like} ? ESCAPE '\\'"

    # -- store and index in agreement (pipeline/integrity.py) ---------------

    def searchable_counts(self) -> tuple[int, int]:
        """Pages the index must hold (indexable, not a duplicate), and pages it may hold
        as well: those whose last answer was a server error keep their document until a
        healthy crawl removes it."""
        row = self._db.execute(
            "SELECT sum(CASE WHEN indexable = 1 AND duplicate_of IS NULL THEN 1 ELSE 0 END),"
            " sum(CASE WHEN status >= 500 THEN 1 ELSE 0 END) FROM pages"
        ).fetchone()
        return int(row[0] or 0), int(row[1] or 0)

    def held_urls(self) -> list[str]:
        """Pages not searchable whose last answer was a server error: the index may still
        hold their documents."""
        rows = self._db.execute(
            "SELECT url FROM pages WHERE status >= 500"
            " AND NOT (indexable = 1 AND duplicate_of IS NULL)"
        )
        return [u for (u,) in rows]

    def searchable_urls(self) -> Iterator[tuple[str, bool]]:
        """(URL, must be indexed) of every page ``searchable_counts`` counts."""
        rows = self._db.execute(
            "SELECT url, CASE WHEN indexable = 1 AND duplicate_of IS NULL THEN 1 ELSE 0 END"
            " FROM pages WHERE (indexable = 1 AND duplicate_of IS NULL) OR status >= 500"
        )
        for url, must in rows:
            yield url, bool(must)

    # -- API keys and admin sessions ----------------------------------------

    def add_api_key(
        self,
        name: str,
        digest: str,
        scopes: Sequence[KeyScope] = KEY_SCOPES,
        expires_at: float | None = None,
    ) -> int:
        row = self._db.execute(
            "INSERT INTO api_keys (name, digest, created_at, scopes, expires_at)"
            " VALUES (?, ?, ?, ?, ?) RETURNING id",
            (name, digest, time.time(), " ".join(scopes), expires_at),
        ).fetchone()
        return int(row[0])

    def api_key_by_digest(self, digest: str) -> ApiKey | None:
        """The key with this digest, marked as used now (expired or not: the caller says)."""
        row = self._db.execute(
            f"UPDATE api_keys SET last_used = ? WHERE digest = ? RETURNING {_KEY_COLUMNS}",  # noqa: S608
            (time.time(), digest),
        ).fetchone()
        return _api_key(row) if row else None

    def api_keys(self) -> list[ApiKey]:
        rows = self._db.execute(f"SELECT {_KEY_COLUMNS} FROM api_keys ORDER BY id")  # noqa: S608
        return [_api_key(r) for r in rows]

    def revoke_api_key(self, key_id: int) -> bool:
        """Delete the key; its sessions go with it (ON DELETE CASCADE)."""
        return self._db.execute("DELETE FROM api_keys WHERE id = ?", (key_id,)).rowcount > 0

    def add_session(self, digest: str, key_id: int, expires_at: float) -> None:
        """A login: the digest of its cookie's token, for the key that logged in. Sessions
        past their expiry are cleared on the way, so the table holds live ones only."""
        now = time.time()
        with self._transaction():
            self._db.execute("DELETE FROM sessions WHERE expires_at <= ?", (now,))
            self._db.execute(
                "INSERT INTO sessions (digest, key_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                (digest, key_id, now, expires_at),
            )

    def session_key(self, digest: str) -> ApiKey | None:
        """The key behind a live session (None: unknown, expired or logged out)."""
        columns = ", ".join("k." + c for c in _KEY_COLUMNS.split(", "))
        row = self._db.execute(
            f"SELECT {columns} FROM sessions s JOIN api_keys k ON k.id = s.key_id"  # noqa: S608
            " WHERE s.digest = ? AND s.expires_at > ?",
            (digest, time.time()),
        ).fetchone()
        return _api_key(row) if row else None

    def end_session(self, digest: str) -> bool:
        return self._db.execute("DELETE FROM sessions WHERE digest = ?", (digest,)).rowcount > 0

    # -- the SEO report -----------------------------------------------------

    def report_pages(self, query: ReportQuery) -> tuple[int, list[ReportRow]]:
        """One window of the crawl table and the number of rows the filters match."""
        if query.sort not in REPORT_SORTS:
            raise StoreError(f"cannot sort by {query.sort!r}")
        where, params = _report_filters(query, self._like)
        total = self._db.execute(
            f"SELECT count(*) FROM pages{where}",  # noqa: S608 - placeholders only
            params,
        ).fetchone()[0]
        # Ties broken by rowid, which every index holds: the whole order comes from
        # the column's index, read forwards or backwards, and LIMIT stops the scan early.
        direction = "DESC" if query.descending else "ASC"
        order = f"{query.sort} {direction}, id {direction}"
        if query.sort in _NULLABLE_SORTS:
            # Missing values sort as the smallest on both stores (SQLite's way; PostgreSQL
            # would put them first in a descending sort).
            order = f"{query.sort} {direction} NULLS {'LAST' if query.descending else 'FIRST'}"
            order += f", id {direction}"
        rows = self._db.execute(
            f"SELECT {_REPORT_COLUMNS} FROM pages{where} ORDER BY {order}"  # noqa: S608
            " LIMIT ? OFFSET ?",
            (*params, query.limit, query.offset),
        )
        return int(total), [ReportRow(*r) for r in rows]

    def links_to(self, url: str, limit: int = 2000) -> list[Inlink]:
        """Links and resource references to ``url`` from other pages."""
        rows = self._db.execute(
            "SELECT p.url, l.anchor, l.element, l.nofollow, l.heading FROM links l"
            " JOIN pages p ON p.id = l.from_page WHERE l.to_url = ? ORDER BY p.url LIMIT ?",
            (url, limit),
        )
        return [Inlink(s, a, e, bool(n), h) for s, a, e, n, h in rows]

    def external_links(
        self, text: str = "", limit: int = 100, offset: int = 0
    ) -> tuple[int, list[ExternalLink]]:
        """Link targets on hosts other than their page's, with their last header check."""
        like = f"%{_escape_like(text)}%"
        total = self._db.execute(
            f"SELECT count(DISTINCT l.to_url) {_external_from(self._like)}", (like,)
        ).fetchone()[0]
        rows = self._db.execute(
            "SELECT l.to_url, count(*), count(DISTINCT l.from_page), min(p.url),"
            " c.status, c.location, c.error, c.checked_at"
            f" {_external_from(self._like, _JOIN_CHECKS)}"
            # The check's columns too: one row per URL, which PostgreSQL cannot tell.
            " GROUP BY l.to_url, c.status, c.location, c.error, c.checked_at"
            " ORDER BY l.to_url LIMIT ? OFFSET ?",
            (like, limit, offset),
        )
        return int(total), [ExternalLink(*r) for r in rows]

    def save_header_checks(self, checks: Sequence[HeaderCheck]) -> None:
        with self._transaction():
            self._db.executemany(
                "INSERT INTO header_checks (url, status, location, error, headers, checked_at)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (url) DO UPDATE SET"
                " status = excluded.status, location = excluded.location,"
                " error = excluded.error, headers = excluded.headers,"
                " checked_at = excluded.checked_at",
                [
                    (
                        c.url,
                        c.status,
                        c.location,
                        c.error,
                        json.dumps([list(h) for h in c.headers], ensure_ascii=False),
                        time.time(),
                    )
                    for c in checks
                ],
            )

    # -- resource checks ----------------------------------------------------

    def resource_urls(self, crawl_id: int, limit: int) -> list[str]:
        rows = self._db.execute(
            "SELECT l.to_url FROM links l JOIN pages p ON p.id = l.from_page"  # noqa: S608
            f" WHERE p.crawl_id = ? AND {_resource_occurrence(self._like)}"
            " GROUP BY l.to_url ORDER BY min(l.rowid) LIMIT ?",
            (crawl_id, limit),
        )
        return [u for (u,) in rows]

    def written_forms(self, urls: Sequence[str]) -> dict[str, str]:
        forms: dict[str, str] = {}
        for at in range(0, len(urls), 500):
            chunk = urls[at : at + 500]
            marks = ", ".join("?" * len(chunk))
            rows = self._db.execute(
                "SELECT to_url, request_url FROM links"  # noqa: S608 - placeholders only
                f" WHERE to_url IN ({marks}) AND request_url IS NOT NULL ORDER BY rowid",
                tuple(chunk),
            )
            for url, request in rows:
                forms.setdefault(url, request)  # the first occurrence's
        return forms

    def save_resources(self, checks: Sequence[ResourceCheck]) -> None:
        with self._transaction():
            self._db.executemany(
                f"INSERT INTO resources ({_RESOURCE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"  # noqa: S608
                " ON CONFLICT(url) DO UPDATE SET status = excluded.status,"
                " content_type = excluded.content_type,"
                " content_length = excluded.content_length, error = excluded.error,"
                " checked_at = excluded.checked_at",
                [
                    (c.url, c.status, c.content_type, c.content_length, c.error, c.checked_at)
                    for c in checks
                ],
            )

    def status_counts(self) -> dict[int, int]:
        rows = self._db.execute("SELECT status, count(*) FROM pages GROUP BY status")
        return {int(s): int(n) for s, n in rows}

    def depth_counts(self) -> dict[int, int]:
        rows = self._db.execute("SELECT depth, count(*) FROM pages GROUP BY depth")
        return {int(d): int(n) for d, n in rows}

    def response_time_counts(self, bounds: Sequence[float]) -> list[int]:
        """Pages with a response by time: one count per bucket up to each of the sorted
        ``bounds`` (seconds), and one past the last."""
        cases = " ".join(f"WHEN response_time <= ? THEN {i}" for i in range(len(bounds)))
        rows = self._db.execute(
            f"SELECT CASE {cases} ELSE {len(bounds)} END AS bucket, count(*)"  # noqa: S608
            " FROM pages WHERE response_time IS NOT NULL GROUP BY bucket",
            tuple(bounds),
        )
        counts = [0] * (len(bounds) + 1)
        for bucket, n in rows:
            counts[int(bucket)] = int(n)
        return counts

    # -- the report's issues, sitemaps and crawl comparison ---------------------

    def report_issue_counts(self, thresholds: IssueThresholds) -> dict[Issue, int]:
        """How many pages have each issue, in one scan of the table."""
        sums = ", ".join(f"sum(CASE WHEN {issue.condition} THEN 1 ELSE 0 END)" for issue in Issue)
        params = tuple(p for issue in Issue for p in issue.params(thresholds))
        row = self._db.execute(f"SELECT {sums} FROM pages", params).fetchone()  # noqa: S608
        return {issue: int(n or 0) for issue, n in zip(Issue, row, strict=True)}

    def mark_in_sitemap(self, crawl_id: int, urls: Sequence[str]) -> None:
        """A sitemap lists ``urls``: those this crawl has saved say so."""
        with self._transaction():
            self._db.executemany(
                "UPDATE pages SET in_sitemap = 1 WHERE url = ? AND crawl_id = ?",
                [(u, crawl_id) for u in urls],
            )

    def compared_crawls(self, host: str) -> tuple[int | None, int | None]:
        """The host's last crawl with a snapshot and the one before it (None: none)."""
        rows = self._db.execute(
            "SELECT DISTINCT crawl_id FROM page_history WHERE host = ?"
            " ORDER BY crawl_id DESC LIMIT 2",
            (host,),
        ).fetchall()
        ids = [int(r[0]) for r in rows]
        return (ids[0] if ids else None), (ids[1] if len(ids) > 1 else None)

    def history_hosts(self) -> list[str]:
        rows = self._db.execute("SELECT DISTINCT host FROM page_history ORDER BY host")
        return [h for (h,) in rows]

    def report_changes(
        self, host: str, before: int, after: int, limit: int = 100, offset: int = 0
    ) -> tuple[int, list[PageChange]]:
        """What changed on ``host`` from crawl ``before`` to crawl ``after``: pages new,
        gone, or with another status, title or indexability; by URL."""
        where = (
            " WHERE a.url IS NULL OR b.url IS NULL OR a.status != b.status"
            " OR a.title != b.title OR coalesce(a.indexability, '') != coalesce(b.indexability, '')"
        )
        join = (
            " FROM (SELECT * FROM page_history WHERE crawl_id = ? AND host = ?) b"
            " FULL OUTER JOIN (SELECT * FROM page_history WHERE crawl_id = ? AND host = ?) a"
            " ON a.url = b.url"
        )
        params = (before, host, after, host)
        total = self._db.execute(f"SELECT count(*){join}{where}", params).fetchone()[0]
        rows = self._db.execute(
            "SELECT coalesce(a.url, b.url) AS u, b.status, a.status, b.title, a.title,"
            f" b.indexability, a.indexability{join}{where} ORDER BY u LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        return int(total), [PageChange(*r) for r in rows]

    def resources(
        self, *, broken_only: bool = False, limit: int = 100, offset: int = 0
    ) -> list[ResourceCheck]:
        where = " WHERE status = 0 OR status >= 400" if broken_only else ""
        rows = self._db.execute(
            f"SELECT {_RESOURCE_COLUMNS} FROM resources{where}"  # noqa: S608 - constants
            " ORDER BY url LIMIT ? OFFSET ?",
            (limit, offset),
        )
        return [ResourceCheck(*row) for row in rows]

    def resource_pages(self, url: str, limit: int = 100) -> list[str]:
        rows = self._db.execute(
            "SELECT DISTINCT p.url FROM links l JOIN pages p ON p.id = l.from_page"
            " WHERE l.to_url = ? AND l.element NOT IN ('a', 'area') ORDER BY p.url LIMIT ?",
            (url, limit),
        )
        return [u for (u,) in rows]


_NULLABLE_SORTS = frozenset(
    {"indexability", "lang", "published", "modified", "response_time", "size"}
)
_KEY_COLUMNS = "id, name, created_at, last_used, scopes, expires_at"


def _api_key(row: Sequence[Any]) -> ApiKey:
    key_id, name, created_at, last_used, scopes, expires_at = row
    known = tuple(s for s in KEY_SCOPES if s in str(scopes).split())
    return ApiKey(int(key_id), name, created_at, last_used, known, expires_at)


_REPORT_COLUMNS = (
    "url, status, indexability, title, word_count, depth, inlinks, redirect_to, canonical,"
    " lang, published, modified, modified_source, fetched_at, content_type, error,"
    " response_time, size"
)
# A link is external when its target's authority (host and port) is not its page's.
# Normalised URLs always read scheme://authority/..., so "authority/" is cut out by text.
_PAGE_AUTHORITY = (
    "substr(substr(p.url, instr(p.url, '://') + 3), 1,"
    " instr(substr(p.url, instr(p.url, '://') + 3), '/'))"
)


def _external_from(like: str, join: str = "") -> str:
    """The links to other hosts whose target matches a LIKE pattern (the parameter),
    with ``join`` before the condition."""
    return (
        f"FROM links l JOIN pages p ON p.id = l.from_page {join}"
        f" WHERE l.element IN ('a', 'area') AND l.to_url {like} ? ESCAPE '\\'"
        f" AND substr(l.to_url, instr(l.to_url, '://') + 3, length({_PAGE_AUTHORITY}))"
        f" != {_PAGE_AUTHORITY}"
    )


_JOIN_CHECKS = "LEFT JOIN header_checks c ON c.url = l.to_url"


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _report_filters(query: ReportQuery, like: str) -> tuple[str, tuple[Any, ...]]:
    clauses: list[str] = []
    params: list[Any] = []
    if query.text:
        clauses.append(f"(url {like} ? ESCAPE '\\' OR title {like} ? ESCAPE '\\')")
        like = f"%{_escape_like(query.text)}%"
        params += [like, like]
    status = query.status.strip().lower()
    if len(status) == 3 and status[0] in "12345" and status[1:] == "xx":
        low = int(status[0]) * 100
        clauses.append("status BETWEEN ? AND ?")
        params += [low, low + 99]
    elif status.isdigit():
        clauses.append("status = ?")
        params.append(int(status))
    if query.issue:
        issue = Issue.from_slug(query.issue)
        if issue is None:
            raise StoreError(f"no issue {query.issue!r}")
        clauses.append(f"({issue.condition})")
        params += issue.params(query.thresholds)
    for column, value in (
        ("indexability", query.indexability),
        ("lang", query.lang),
        ("host", query.host),
    ):
        if value:
            clauses.append(f"{column} = ?")
            params.append(value)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), tuple(params)


def _site_patterns(host: str) -> tuple[str, str]:
    # The site's host carries its port when it has one; pages keep the bare name.
    prefix = _escape_like(host) + "/%"
    return "http://" + prefix, "https://" + prefix
