"""The shared store: PostgreSQL through psycopg 3 and a connection pool.

Workers on many machines point at one database. The store methods are the
SQLite store's, written in SQL both databases read; they run here through
``PooledDatabase``, which speaks sqlite3's connection interface over a pool:
outside a transaction each statement takes a pooled connection and commits,
inside one (``_transaction``) every statement of the thread uses the same
connection. This class overrides only what differs: the clock (the database's,
the one every worker sees), row locks for claims, a lock for joining a crawl,
and streaming pages through a server-side cursor.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from functools import lru_cache
from typing import Any

from trawl.errors import StoreError
from trawl.extras import reraise_missing

try:
    import psycopg
    from psycopg.conninfo import conninfo_to_dict
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as e:
    reraise_missing(e, "postgres")
    raise

from trawl.records import CrawlUrl, PageRecord
from trawl.store.schema import SCHEMA_VERSION, postgres_migration
from trawl.store.sqlite import _SELECT_PAGE, SQLiteStore, _page_record

_MIGRATION_LOCK = 0x7472_6177_6C00  # pg_advisory_lock key: one migrating process at a time
_JOIN_LOCK = 0x7472_6177_6C01  # one worker at a time decides which crawl is running
_CONNECT_TIMEOUT = 10.0
_FREE = (
    "((f.state = 'queued' AND f.lease_owner IS NULL)"
    " OR (f.lease_owner IS NOT NULL AND f.lease_until < now.t))"
)
# shared_sql.CLAIM_HOST, CLAIM_URL, LEASE and BOOK_HOST in one statement. SKIP LOCKED:
# a host or URL another worker is claiming right now is passed over, not waited
# for; the host row's lock makes its slot booking atomic.
_CLAIM = f"""
WITH now AS (SELECT extract(epoch FROM clock_timestamp())::float8 AS t),
slot AS (
    SELECT h.host, h.crawl_delay FROM host_slots h, now
    WHERE h.next_time <= now.t
      AND EXISTS (SELECT 1 FROM frontier f
                  WHERE f.crawl_id = %(crawl)s AND f.host = h.host AND {_FREE})
      AND (SELECT count(*) FROM frontier g
           WHERE g.crawl_id = %(crawl)s AND g.host = h.host
             AND g.lease_owner IS NOT NULL AND g.lease_until >= now.t) < %(limit)s
    ORDER BY h.next_time
    LIMIT 1
    FOR UPDATE OF h SKIP LOCKED
),
pick AS (
    SELECT f.url, f.depth, f.source, f.retries, f.request_url FROM frontier f, slot, now
    WHERE f.crawl_id = %(crawl)s AND f.host = slot.host AND {_FREE}
    ORDER BY f.depth
    LIMIT 1
    FOR UPDATE OF f SKIP LOCKED
),
leased AS (
    UPDATE frontier SET lease_owner = %(owner)s, lease_until = now.t + %(lease)s
    FROM pick, now
    WHERE frontier.crawl_id = %(crawl)s AND frontier.url = pick.url
    RETURNING frontier.url
),
booked AS (
    UPDATE host_slots SET next_time = now.t + GREATEST(%(delay)s, slot.crawl_delay)
    FROM slot, now, leased
    WHERE host_slots.host = slot.host
)
SELECT pick.url, pick.depth, pick.source, pick.retries, pick.request_url FROM pick, leased
"""  # noqa: S608 - constant text only


_GRANT = """
WITH old AS (SELECT granted FROM crawls WHERE id = %(crawl)s FOR UPDATE),
new AS (
    UPDATE crawls SET granted = GREATEST(old.granted, LEAST(old.granted + %(want)s, %(cap)s))
    FROM old WHERE crawls.id = %(crawl)s
    RETURNING crawls.granted
)
SELECT new.granted - old.granted FROM new, old
"""

_LIKE = re.compile(r"\bLIKE\b")
_OR_IGNORE = re.compile(r"^\s*INSERT OR IGNORE INTO\b", re.IGNORECASE)


@lru_cache(maxsize=512)
def _pg(sql: str) -> str:
    """The store's SQL as psycopg wants it: qmark placeholders as ``%s`` (a literal
    percent sign doubled), and the SQLite words PostgreSQL reads otherwise: LIKE is
    case-insensitive in SQLite (ILIKE here), INSERT OR IGNORE is ON CONFLICT DO
    NOTHING."""
    if _OR_IGNORE.match(sql):
        sql = _OR_IGNORE.sub("INSERT INTO", sql) + " ON CONFLICT DO NOTHING"
    sql = _LIKE.sub("ILIKE", sql)
    return sql.replace("%", "%%").replace("?", "%s")


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


class _Rows:
    """A statement's rows, read whole before its connection went back to the pool."""

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows = rows
        self._rowcount = rowcount

    @property
    def rowcount(self) -> int:
        return self._rowcount

    def fetchone(self) -> Any:
        return self._rows[0] if self._rows else None

    def fetchall(self) -> list[Any]:
        return self._rows

    def __iter__(self) -> Iterator[Any]:
        return iter(self._rows)


class PooledDatabase:
    """sqlite3's connection interface over a psycopg pool (see the module text)."""

    def __init__(self, pool: ConnectionPool[Any], where: str) -> None:
        self._pool = pool
        self._where = where
        self._local = threading.local()

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """The thread's transaction's connection, or a pooled one committed at the end."""
        pinned = getattr(self._local, "conn", None)
        if pinned is not None:
            yield pinned
            return
        try:
            with self._pool.connection() as conn:
                yield conn
        except (psycopg.Error, PoolTimeout) as e:
            raise StoreError(f"store {self._where}: {e}") from e

    @contextmanager
    def transaction(self) -> Iterator[PooledDatabase]:
        if getattr(self._local, "conn", None) is not None:
            yield self  # already inside one: join it
            return
        with self.connection() as conn, conn.transaction():
            self._local.conn = conn
            try:
                yield self
            finally:
                self._local.conn = None

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> _Rows:
        with self.connection() as conn:
            try:
                cursor = conn.execute(_pg(sql), [_clean(p) for p in parameters])
            except psycopg.Error as e:
                raise StoreError(f"store {self._where}: {e}") from e
            rows = cursor.fetchall() if cursor.description is not None else []
            return _Rows(rows, cursor.rowcount)

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> None:
        rows = [[_clean(p) for p in row] for row in parameters]
        if not rows:
            return
        with self.connection() as conn, conn.cursor() as cursor:
            try:
                cursor.executemany(_pg(sql), rows)
            except psycopg.Error as e:
                raise StoreError(f"store {self._where}: {e}") from e

    def close(self) -> None:
        self._pool.close()


class PostgresStore(SQLiteStore):
    threadsafe = True  # a pooled connection per thread's transaction

    def __init__(self, url: str, *, max_connections: int = 8) -> None:
        # Not SQLiteStore.__init__: no file, another connection.
        where = describe(url)
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
                migrate(conn)
            # Autocommit: a lone statement is one round trip, not BEGIN, it and COMMIT;
            # transactions say BEGIN themselves (``PooledDatabase.transaction``).
            pool: ConnectionPool[Any] = ConnectionPool(
                url,
                min_size=1,
                max_size=max_connections,
                open=False,
                name="trawl",
                kwargs={"autocommit": True},
            )
            pool.open(wait=True, timeout=_CONNECT_TIMEOUT)
        except (psycopg.Error, PoolTimeout) as e:
            raise StoreError(f"cannot open store {where}: {e}") from e
        self._pooled = PooledDatabase(pool, where)
        self._db = self._pooled

    def frontier_claim(
        self, crawl_id: int, owner: str, *, lease: float, delay: float, host_concurrency: int
    ) -> CrawlUrl | None:
        # The same claim as SQLite's, as one statement: one round trip, not seven.
        params = {
            "crawl": crawl_id,
            "owner": owner,
            "lease": lease,
            "delay": delay,
            "limit": host_concurrency,
        }
        with self._pooled.connection() as conn:
            row = conn.execute(_CLAIM, params).fetchone()
        if row is None:
            return None
        url, depth, source, retries, request = row
        return CrawlUrl(url, depth, source, retries=retries, request=request)

    def crawl_grant(self, crawl_id: int, want: int, cap: int) -> int:
        # One statement: the crawl's row is locked from the read to the write, so two
        # workers asking at once are granted one after the other, never past the cap.
        params = {"crawl": crawl_id, "want": want, "cap": cap}
        with self._pooled.connection() as conn:
            row = conn.execute(_GRANT, params).fetchone()
        return int(row[0]) if row else 0

    def _transaction(self, mode: str = "") -> AbstractContextManager[Any]:
        return self._pooled.transaction()

    def _now(self) -> float:
        return float(self._db.execute("SELECT extract(epoch FROM clock_timestamp())").fetchone()[0])

    def _lock_joining(self) -> None:
        self._db.execute("SELECT pg_advisory_xact_lock(?)", (_JOIN_LOCK,))

    def pages(self, *, indexable_only: bool = False) -> Iterator[PageRecord]:
        where = " WHERE indexable = 1" if indexable_only else ""
        # A server-side cursor: pages stream in batches, never all in memory.
        with (
            self._pooled.connection() as conn,
            conn.transaction(),
            conn.cursor(name="trawl_pages") as cursor,
        ):
            cursor.itersize = 500
            cursor.execute(f"{_SELECT_PAGE}{where} ORDER BY id")
            for row in cursor:
                yield _page_record(row)


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
                sql = postgres_migration(version)
                if sql.strip():  # a number reserved by another branch may be empty
                    conn.execute(sql.encode())
                conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATION_LOCK,))
    return SCHEMA_VERSION - current
