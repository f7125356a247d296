"""The shared store: PostgreSQL through psycopg 3 and a connection pool.

Workers on many machines point at one database. Each method takes a pooled
connection for one transaction, so a method is atomic and threads or tasks
never share a connection. Time for leases and host slots is the database's
clock, the one clock every worker sees. SQL is written with qmark
placeholders, as in the SQLite store, and ``_pg`` turns them into psycopg's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool, PoolTimeout

from trawl.errors import StoreError
from trawl.records import CrawlRun, CrawlUrl, Link, PageRecord, Site
from trawl.store import shared_sql
from trawl.store.base import politeness_host
from trawl.store.schema import SCHEMA_VERSION, postgres_migration
from trawl.store.sqlite import (
    _CRAWL_COLUMNS,
    _PAGE_COLUMNS,
    _UPSERT_PAGE,
    RESUMABLE,
    _crawl_run,
    _page_record,
    _page_values,
)

_MIGRATION_LOCK = 0x7472_6177_6C00  # pg_advisory_lock key: one migrating process at a time
_JOIN_LOCK = 0x7472_6177_6C01  # one worker at a time decides which crawl is running
_NOW = "SELECT extract(epoch FROM clock_timestamp())::float8"
_CONNECT_TIMEOUT = 10.0


def _pg(sql: str) -> str:
    # Our SQL has no other question marks and no percent signs.
    return sql.replace("?", "%s")


def _clean(value: Any) -> Any:
    # PostgreSQL text cannot hold NUL, which a hostile page may contain; SQLite can.
    return value.replace("\x00", "") if isinstance(value, str) else value


def describe(url: str) -> str:
    """The database's address without credentials, for messages."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "postgresql://(unparsable address)"
    host = parts.get("host") or "localhost"
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{host}{port}/{parts.get('dbname') or ''}"


class PostgresStore:
    def __init__(self, url: str, *, max_connections: int = 4) -> None:
        self._where = describe(url)
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
                migrate(conn)
            self._pool = ConnectionPool(
                url, min_size=1, max_size=max_connections, open=False, name="trawl"
            )
            self._pool.open(wait=True, timeout=_CONNECT_TIMEOUT)
        except (psycopg.Error, PoolTimeout) as e:
            raise StoreError(f"cannot open store {self._where}: {e}") from e

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[Any]]:
        """One transaction: committed when the block ends, rolled back on an error."""
        try:
            with self._pool.connection() as conn:
                yield conn
        except (psycopg.Error, PoolTimeout) as e:
            raise StoreError(f"store {self._where}: {e}") from e

    def _one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        with self._conn() as conn:
            return conn.execute(_pg(sql), params).fetchone()

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._conn() as conn:
            return conn.execute(_pg(sql), params).fetchall()

    def _run(self, sql: str, params: Sequence[Any] = ()) -> int:
        with self._conn() as conn:
            return conn.execute(_pg(sql), params).rowcount

    # -- sites and crawls ---------------------------------------------------

    def add_site(self, start_url: str) -> None:
        host = start_url.split("://", 1)[-1].split("/", 1)[0]
        self._run(
            "INSERT INTO sites (host, start_url, created_at) VALUES (?, ?, ?)"
            " ON CONFLICT (host) DO NOTHING",
            (host, start_url, time.time()),
        )

    def sites(self) -> list[Site]:
        rows = self._all("SELECT host, start_url, enabled FROM sites ORDER BY id")
        return [Site(h, u, bool(e)) for h, u, e in rows]

    def begin_crawl(self, start_urls: Sequence[str], resumed_from: int | None = None) -> int:
        with self._conn() as conn:
            row = conn.execute(
                _pg(shared_sql.BEGIN_CRAWL),
                (time.time(), json.dumps(list(start_urls)), resumed_from),
            ).fetchone()
            assert row is not None
            crawl_id = int(row[0])
            if resumed_from is not None:
                conn.execute(
                    _pg(
                        "INSERT INTO frontier (crawl_id, url, depth, source, state, reason, host,"
                        " retries) SELECT ?, url, depth, source, state, reason, host, retries"
                        " FROM frontier WHERE crawl_id = ?"
                    ),
                    (crawl_id, resumed_from),
                )
                conn.execute(
                    _pg("UPDATE pages SET crawl_id = ? WHERE crawl_id = ?"),
                    (crawl_id, resumed_from),
                )
        return crawl_id

    def finish_crawl(
        self,
        crawl_id: int,
        *,
        pages_ok: int,
        pages_failed: int,
        outcome: str,
        skipped: Mapping[str, int] | None = None,
        samples: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self._run(
            "UPDATE crawls SET finished_at = ?, pages_ok = ?, pages_failed = ?, outcome = ?,"
            " skipped = ?, samples = ? WHERE id = ?",
            (
                time.time(),
                pages_ok,
                pages_failed,
                outcome,
                json.dumps(dict(skipped or {})),
                json.dumps({k: list(v) for k, v in (samples or {}).items()}),
                crawl_id,
            ),
        )

    def interrupt_running(self) -> int:
        return self._run(
            "UPDATE crawls SET outcome = 'interrupted', finished_at = ? WHERE outcome = 'running'",
            (time.time(),),
        )

    def crawls(self, limit: int = 50) -> list[CrawlRun]:
        rows = self._all(
            f"SELECT {_CRAWL_COLUMNS} FROM crawls ORDER BY id DESC LIMIT ?",  # noqa: S608
            (limit,),
        )
        return [_crawl_run(r) for r in rows]

    def resumable_crawl(self, start_urls: Sequence[str] | None = None) -> CrawlRun | None:
        query = f"SELECT {_CRAWL_COLUMNS} FROM crawls"  # noqa: S608 - constant columns
        if start_urls is None:
            row = self._one(query + " ORDER BY id DESC LIMIT 1")
        else:
            row = self._one(
                query + " WHERE start_urls = ? ORDER BY id DESC LIMIT 1",
                (json.dumps(list(start_urls)),),
            )
        run = _crawl_run(row) if row else None
        return run if run is not None and run.outcome in RESUMABLE else None

    # -- frontier -----------------------------------------------------------

    def frontier_add(self, crawl_id: int, items: Sequence[CrawlUrl]) -> None:
        rows = [
            (crawl_id, _clean(i.url), i.depth, _clean(i.source), politeness_host(i.url))
            for i in items
        ]
        if not rows:
            return
        with self._conn() as conn, conn.cursor() as cur:
            # Hosts in a fixed order: two workers adding the same hosts never deadlock.
            cur.executemany(_pg(shared_sql.HOST_ADD), sorted({(r[4],) for r in rows}))
            cur.executemany(_pg(shared_sql.FRONTIER_ADD), rows)

    def frontier_mark(self, crawl_id: int, url: str, state: str, reason: str | None = None) -> None:
        with self._conn() as conn:
            _mark(conn, crawl_id, url, state, reason)

    def frontier_pending(self, crawl_id: int) -> list[CrawlUrl]:
        rows = self._all(
            "SELECT url, depth, source FROM frontier WHERE crawl_id = ? AND state = 'queued'",
            (crawl_id,),
        )
        return [CrawlUrl(u, d, s) for u, d, s in rows]

    def frontier_finished(self, crawl_id: int) -> list[str]:
        rows = self._all(
            "SELECT url FROM frontier WHERE crawl_id = ? AND state != 'queued'", (crawl_id,)
        )
        return [u for (u,) in rows]

    def frontier_counts(self, crawl_id: int) -> dict[str, int]:
        rows = self._all(
            "SELECT state, count(*) FROM frontier WHERE crawl_id = ? GROUP BY state", (crawl_id,)
        )
        return {state: int(n) for state, n in rows}

    # -- the frontier shared by workers ----------------------------------------

    def join_crawl(self, start_urls: Sequence[str]) -> int:
        with self._conn() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_JOIN_LOCK,))
            if not start_urls:
                row = conn.execute(shared_sql.LATEST_RUNNING).fetchone()
                if row is None:
                    raise StoreError("no running crawl to join: give start URLs")
                return int(row[0])
            urls = json.dumps(list(start_urls))
            row = conn.execute(_pg(shared_sql.RUNNING_OF), (urls,)).fetchone()
            if row is None:
                row = conn.execute(
                    _pg(shared_sql.BEGIN_CRAWL), (time.time(), urls, None)
                ).fetchone()
            assert row is not None
            return int(row[0])

    def frontier_claim(
        self, crawl_id: int, owner: str, *, lease: float, delay: float, host_concurrency: int
    ) -> CrawlUrl | None:
        with self._conn() as conn:
            now = _now(conn)
            # SKIP LOCKED: a host another worker is claiming right now is passed
            # over, not waited for; its row's lock makes the slot booking atomic.
            slot = conn.execute(
                _pg(shared_sql.CLAIM_HOST) + " FOR UPDATE SKIP LOCKED",
                (now, crawl_id, now, crawl_id, now, host_concurrency),
            ).fetchone()
            if slot is None:
                return None
            host, crawl_delay = slot
            row = conn.execute(
                _pg(shared_sql.CLAIM_URL) + " FOR UPDATE SKIP LOCKED", (crawl_id, host, now)
            ).fetchone()
            if row is None:
                return None
            url, depth, source, retries = row
            conn.execute(_pg(shared_sql.LEASE), (owner, now + lease, crawl_id, url))
            conn.execute(_pg(shared_sql.BOOK_HOST), (now + max(delay, crawl_delay), host))
        return CrawlUrl(url, depth, source, retries=retries)

    def frontier_release(self, crawl_id: int, url: str, owner: str) -> None:
        self._run(shared_sql.RELEASE, (crawl_id, url, owner))

    def frontier_retry(self, crawl_id: int, item: CrawlUrl, owner: str, not_before: float) -> None:
        with self._conn() as conn:
            conn.execute(_pg(shared_sql.RETRY), (item.retries, crawl_id, item.url, owner))
            conn.execute(
                _pg("UPDATE host_slots SET next_time = GREATEST(next_time, ?) WHERE host = ?"),
                (_now(conn) + not_before, politeness_host(item.url)),
            )

    def frontier_wait(self, crawl_id: int) -> float | None:
        with self._conn() as conn:
            now = _now(conn)
            row = conn.execute(_pg(shared_sql.NEXT_HOST_TIME), (crawl_id, now)).fetchone()
        return None if row is None or row[0] is None else max(0.0, float(row[0]) - now)

    def frontier_active(self, crawl_id: int) -> bool:
        return bool(self._one(shared_sql.ACTIVE, (crawl_id, crawl_id))[0])

    def set_crawl_delay(self, host: str, seconds: float) -> None:
        self._run(shared_sql.SET_CRAWL_DELAY, (host, seconds))

    # -- pages and links ----------------------------------------------------

    def save_page(
        self, record: PageRecord, links: Sequence[Link] = (), crawl_id: int | None = None
    ) -> None:
        values = tuple(_clean(v) for v in (*_page_values(record), crawl_id))
        with self._conn() as conn, conn.cursor() as cur:
            row = cur.execute(_pg(_UPSERT_PAGE), values).fetchone()
            assert row is not None
            page_id = row[0]
            cur.execute("DELETE FROM links WHERE from_page = %s", (page_id,))
            cur.executemany(
                "INSERT INTO links (from_page, to_url, anchor, nofollow, element, attribute, rel,"
                " heading) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                [
                    (
                        page_id,
                        _clean(link.url),
                        _clean(link.anchor),
                        int(link.nofollow),
                        _clean(link.element),
                        _clean(link.attribute),
                        _clean(link.rel),
                        _clean(link.heading),
                    )
                    for link in links
                ],
            )
            if crawl_id is not None:
                _mark(conn, crawl_id, record.url, "fetched", None)

    def touch_page(self, url: str, crawl_id: int) -> None:
        with self._conn() as conn:
            conn.execute(
                _pg("UPDATE pages SET crawl_id = ?, fetched_at = ? WHERE url = ?"),
                (crawl_id, time.time(), url),
            )
            _mark(conn, crawl_id, url, "fetched", "not modified")

    def validators(self, url: str) -> tuple[str | None, str | None]:
        row = self._one(
            "SELECT etag, last_modified FROM pages WHERE url = ? AND indexable = 1", (url,)
        )
        return (row[0], row[1]) if row else (None, None)

    def unseen_pages(self, crawl_id: int, hosts: Sequence[str]) -> list[str]:
        rows = self._all(
            "SELECT url FROM pages WHERE host = ANY(?) AND (crawl_id IS NULL OR crawl_id != ?)",
            (list(hosts), crawl_id),
        )
        return [u for (u,) in rows]

    def server_error_pages(self, crawl_id: int) -> list[str]:
        rows = self._all("SELECT url FROM pages WHERE crawl_id = ? AND status >= 500", (crawl_id,))
        return [u for (u,) in rows]

    def delete_pages(self, urls: Sequence[str]) -> None:
        self._run("DELETE FROM pages WHERE url = ANY(?)", (list(urls),))

    def page(self, url: str) -> PageRecord | None:
        row = self._one(
            f"SELECT {_PAGE_COLUMNS} FROM pages WHERE url = ?",  # noqa: S608 - constant columns
            (url,),
        )
        return _page_record(row) if row else None

    def pages(self, *, indexable_only: bool = False) -> Iterator[PageRecord]:
        where = " WHERE indexable = 1" if indexable_only else ""
        with self._conn() as conn, conn.cursor(name="trawl_pages") as cursor:
            # A server-side cursor: the pages stream in batches, never all in memory.
            cursor.itersize = 500
            cursor.execute(f"SELECT {_PAGE_COLUMNS} FROM pages{where} ORDER BY id")  # noqa: S608
            for row in cursor:
                yield _page_record(row)

    def count_pages(self) -> int:
        return int(self._one("SELECT count(*) FROM pages")[0])

    def links_from(self, url: str) -> list[Link]:
        rows = self._all(
            "SELECT l.to_url, l.anchor, l.nofollow, l.element, l.attribute, l.rel, l.heading"
            " FROM links l JOIN pages p ON p.id = l.from_page WHERE p.url = ? ORDER BY l.id",
            (url,),
        )
        return [Link(u, a, bool(n), e, at, r, h) for u, a, n, e, at, r, h in rows]

    def anchors_to(self, url: str, limit: int = 100) -> list[str]:
        rows = self._all(
            "SELECT DISTINCT l.anchor FROM links l JOIN pages p ON p.id = l.from_page"
            " WHERE l.to_url = ? AND p.url != ? AND l.element IN ('a', 'area') AND l.anchor != ''"
            " LIMIT ?",
            (url, url, limit),
        )
        return [a for (a,) in rows]

    def count_inlinks(self, hosts: Sequence[str]) -> None:
        self._run(
            "UPDATE pages SET inlinks = (SELECT count(*) FROM links l JOIN pages src"
            " ON src.id = l.from_page WHERE l.to_url = pages.url AND src.url != pages.url"
            " AND l.element IN ('a', 'area')) WHERE host = ANY(?)",
            (list(hosts),),
        )

    def host_language(self, host: str) -> str | None:
        row = self._one(
            "SELECT lang FROM pages WHERE host = ? AND lang IS NOT NULL AND indexable = 1"
            " GROUP BY lang ORDER BY count(*) DESC, lang LIMIT 1",
            (host,),
        )
        return row[0] if row else None

    def close(self) -> None:
        self._pool.close()


def _mark(
    conn: psycopg.Connection[Any], crawl_id: int, url: str, state: str, reason: str | None
) -> None:
    conn.execute(
        "UPDATE frontier SET state = %s, reason = %s WHERE crawl_id = %s AND url = %s",
        (state, _clean(reason), crawl_id, url),
    )


def _now(conn: psycopg.Connection[Any]) -> float:
    row = conn.execute(_NOW).fetchone()
    assert row is not None
    return float(row[0])


def migrate(conn: psycopg.Connection[Any]) -> int:
    """Bring the database to SCHEMA_VERSION (``conn`` in autocommit); return the
    number of migrations applied. An advisory lock lets one process migrate while
    workers starting at the same moment wait for it."""
    conn.execute("SELECT pg_advisory_lock(%s)", (_MIGRATION_LOCK,))
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
        current = (row[0] if row else None) or 0
        if current > SCHEMA_VERSION:
            raise StoreError(
                f"store schema version {current} is newer than this Trawl ({SCHEMA_VERSION})"
            )
        for version in range(current + 1, SCHEMA_VERSION + 1):
            with conn.transaction():
                conn.execute(postgres_migration(version).encode())
                conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATION_LOCK,))
    return SCHEMA_VERSION - current
