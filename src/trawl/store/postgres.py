"""The shared store: PostgreSQL through psycopg 3 and a connection pool.

Workers on many machines point at one database. The store methods are
``sql_store.SqlStore``'s, with the PostgreSQL ``Dialect`` (the database's clock,
row locks for claims, a lock for joining a crawl); they run here through
``PooledDatabase``, the store's connection interface over a pool: outside a
transaction each statement takes a pooled connection and commits, inside one
(``transaction``) every statement of the thread uses the same connection.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from trawl.errors import DiskFull, StoreError
from trawl.extras import reraise_missing

try:
    import psycopg
    from psycopg.conninfo import conninfo_to_dict
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as e:
    reraise_missing(e, "postgres")
    raise

from trawl.store.dialect import POSTGRESQL
from trawl.store.schema import SCHEMA_VERSION, postgres_migration
from trawl.store.sql_store import SqlStore

_MIGRATION_LOCK = 0x7472_6177_6C00  # pg_advisory_lock key: one migrating process at a time
_CONNECT_TIMEOUT = 10.0


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
    """The store's connection interface over a psycopg pool (see the module text)."""

    threadsafe = True  # a pooled connection per thread's transaction

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
            raise _store_error(self._where, e) from e

    @contextmanager
    def transaction(self, mode: str = "") -> Iterator[PooledDatabase]:
        # ``mode`` is SQLite's: PostgreSQL's row locks do what BEGIN IMMEDIATE does there.
        if getattr(self._local, "conn", None) is not None:
            yield self  # already inside one: join it
            return
        with self.connection() as conn, conn.transaction():
            self._local.conn = conn
            try:
                yield self
            finally:
                self._local.conn = None

    @contextmanager
    def write_batch(self, pages: int, seconds: float) -> Iterator[None]:
        # Each write commits as it always did: a pool's writes run in threads (see
        # PagePipeline), off the event loop, on as many connections.
        yield

    def flush(self, *, due_only: bool = False) -> None:
        pass

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> _Rows:
        with self.connection() as conn:
            try:
                cursor = conn.execute(_sql(sql), [_clean(p) for p in parameters])
            except psycopg.Error as e:
                raise _store_error(self._where, e) from e
            rows = cursor.fetchall() if cursor.description is not None else []
            return _Rows(rows, cursor.rowcount)

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> None:
        rows = [[_clean(p) for p in row] for row in parameters]
        if not rows:
            return
        with self.connection() as conn, conn.cursor() as cursor:
            try:
                cursor.executemany(_sql(sql), rows)
            except psycopg.Error as e:
                raise _store_error(self._where, e) from e

    def stream(self, sql: str, parameters: Sequence[Any] = (), /) -> Iterator[Any]:
        # A server-side cursor in its own transaction: rows come in batches.
        with (
            self.connection() as conn,
            conn.transaction(),
            conn.cursor(name="trawl_stream") as cursor,
        ):
            cursor.itersize = 500
            try:
                cursor.execute(_sql(sql), [_clean(p) for p in parameters])
                yield from cursor
            except psycopg.Error as e:
                raise _store_error(self._where, e) from e

    def close(self) -> None:
        self._pool.close()


def _store_error(where: str, error: Exception) -> StoreError:
    # SQLSTATE class 53: the server ran out of disk (53100), memory or connections.
    if isinstance(error, psycopg.errors.DiskFull):
        return DiskFull(f"store {where}: cannot write, the server's disk is full ({error})")
    return StoreError(f"store {where}: {error}")


def _sql(sql: str) -> str:
    return POSTGRESQL.placeholders(sql)


class PostgresStore(SqlStore):
    """The store in the PostgreSQL database at ``url``, through a pool of at most
    ``max_connections`` connections."""

    def __init__(self, url: str, *, max_connections: int = 8) -> None:
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
        super().__init__(PooledDatabase(pool, where), POSTGRESQL)


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
