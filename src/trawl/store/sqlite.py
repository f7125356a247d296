"""The embedded store: one SQLite file in WAL mode.

WAL lets ``trawl serve`` read while a crawl writes. With synchronous=NORMAL
a commit does not wait for the disk; a power cut can lose the last commits
but never corrupts the file, which is the right trade for a re-crawlable cache.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from trawl.errors import StoreError
from trawl.records import CrawlRun, CrawlUrl, Link, PageRecord
from trawl.store.schema import MIGRATIONS, SCHEMA_VERSION

_PAGE_COLUMNS = (
    "url, host, status, depth, fetched_at, content_type, title, description, headings,"
    " body, lang, word_count, redirect_to, error, indexable"
)


class SQLiteStore:
    def __init__(self, path: Path) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.execute("PRAGMA busy_timeout=10000")
            migrate(self._db)
        except (sqlite3.Error, OSError) as e:
            raise StoreError(f"cannot open store {path}: {e}") from e

    # -- sites and crawls ---------------------------------------------------

    def add_site(self, start_url: str) -> None:
        host = start_url.split("://", 1)[-1].split("/", 1)[0]
        self._db.execute(
            "INSERT INTO sites (host, start_url, created_at) VALUES (?, ?, ?)"
            " ON CONFLICT(host) DO NOTHING",
            (host, start_url, time.time()),
        )

    def begin_crawl(self, start_urls: Sequence[str]) -> int:
        cur = self._db.execute(
            "INSERT INTO crawls (started_at, start_urls) VALUES (?, ?)",
            (time.time(), json.dumps(list(start_urls))),
        )
        assert cur.lastrowid is not None
        return cur.lastrowid

    def finish_crawl(
        self, crawl_id: int, *, pages_ok: int, pages_failed: int, outcome: str
    ) -> None:
        self._db.execute(
            "UPDATE crawls SET finished_at = ?, pages_ok = ?, pages_failed = ?, outcome = ?"
            " WHERE id = ?",
            (time.time(), pages_ok, pages_failed, outcome, crawl_id),
        )

    def crawls(self, limit: int = 50) -> list[CrawlRun]:
        rows = self._db.execute(
            "SELECT id, started_at, finished_at, start_urls, pages_ok, pages_failed, outcome"
            " FROM crawls ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        return [CrawlRun(r[0], r[1], r[2], tuple(json.loads(r[3])), r[4], r[5], r[6]) for r in rows]

    # -- frontier -----------------------------------------------------------

    def frontier_add(self, crawl_id: int, items: Sequence[CrawlUrl]) -> None:
        with self._transaction():
            self._db.executemany(
                "INSERT OR IGNORE INTO frontier (crawl_id, url, depth, source) VALUES (?, ?, ?, ?)",
                [(crawl_id, i.url, i.depth, i.source) for i in items],
            )

    def frontier_mark(self, crawl_id: int, url: str, state: str, reason: str | None = None) -> None:
        self._db.execute(
            "UPDATE frontier SET state = ?, reason = ? WHERE crawl_id = ? AND url = ?",
            (state, reason, crawl_id, url),
        )

    def frontier_counts(self, crawl_id: int) -> dict[str, int]:
        rows = self._db.execute(
            "SELECT state, count(*) FROM frontier WHERE crawl_id = ? GROUP BY state", (crawl_id,)
        )
        return dict(rows)

    # -- pages and links ----------------------------------------------------

    def save_page(self, record: PageRecord, links: Sequence[Link] = ()) -> None:
        values = _page_values(record)
        with self._transaction():
            row = self._db.execute(
                f"INSERT INTO pages ({_PAGE_COLUMNS}) VALUES ({', '.join('?' * len(values))})"  # noqa: S608 - column list is a constant
                " ON CONFLICT(url) DO UPDATE SET "
                + ", ".join(f"{c} = excluded.{c}" for c in _PAGE_COLUMNS.split(", ")[1:])
                + " RETURNING id",
                values,
            ).fetchone()
            page_id = row[0]
            self._db.execute("DELETE FROM links WHERE from_page = ?", (page_id,))
            self._db.executemany(
                "INSERT INTO links (from_page, to_url, anchor, nofollow) VALUES (?, ?, ?, ?)",
                [(page_id, link.url, link.anchor, int(link.nofollow)) for link in links],
            )

    def page(self, url: str) -> PageRecord | None:
        row = self._db.execute(
            f"SELECT {_PAGE_COLUMNS} FROM pages WHERE url = ?",  # noqa: S608 - constant columns
            (url,),
        ).fetchone()
        return _page_record(row) if row else None

    def pages(self, *, indexable_only: bool = False) -> Iterator[PageRecord]:
        where = " WHERE indexable = 1" if indexable_only else ""
        cursor = self._db.execute(f"SELECT {_PAGE_COLUMNS} FROM pages{where} ORDER BY id")  # noqa: S608
        for row in cursor:
            yield _page_record(row)

    def count_pages(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM pages").fetchone()[0])

    def links_from(self, url: str) -> list[Link]:
        rows = self._db.execute(
            "SELECT l.to_url, l.anchor, l.nofollow FROM links l JOIN pages p ON p.id = l.from_page"
            " WHERE p.url = ? ORDER BY l.rowid",
            (url,),
        )
        return [Link(u, a, bool(n)) for u, a, n in rows]

    def close(self) -> None:
        self._db.close()

    def _transaction(self) -> sqlite3.Connection:
        # In autocommit mode the connection's context manager does not open a
        # transaction, so BEGIN explicitly; __exit__ commits or rolls back.
        self._db.execute("BEGIN")
        return self._db


def migrate(db: sqlite3.Connection) -> int:
    """Bring ``db`` to SCHEMA_VERSION; return the number of migrations applied."""
    db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = db.execute("SELECT max(version) FROM schema_version").fetchone()
    current = row[0] or 0
    if current > SCHEMA_VERSION:
        raise StoreError(
            f"store schema version {current} is newer than this Trawl ({SCHEMA_VERSION})"
        )
    for version in range(current + 1, SCHEMA_VERSION + 1):
        db.execute("BEGIN")
        try:
            for statement in MIGRATIONS[version - 1].split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
            db.execute("COMMIT")
        except sqlite3.Error:
            db.execute("ROLLBACK")
            raise
    return SCHEMA_VERSION - current


def _page_values(r: PageRecord) -> tuple[Any, ...]:
    return (
        r.url,
        r.host,
        r.status,
        r.depth,
        r.fetched_at,
        r.content_type,
        r.title,
        r.description,
        json.dumps(list(r.headings), ensure_ascii=False),
        r.text,
        r.lang,
        r.word_count,
        r.redirect_to,
        r.error,
        int(r.indexable),
    )


def _page_record(row: Sequence[Any]) -> PageRecord:
    return PageRecord(
        url=row[0],
        host=row[1],
        status=row[2],
        depth=row[3],
        fetched_at=row[4],
        content_type=row[5],
        title=row[6],
        description=row[7],
        headings=tuple(json.loads(row[8])),
        text=row[9],
        lang=row[10],
        word_count=row[11],
        redirect_to=row[12],
        error=row[13],
        indexable=bool(row[14]),
    )
