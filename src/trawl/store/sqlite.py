"""The embedded store: one SQLite file in WAL mode.

WAL lets ``trawl serve`` read while a crawl writes. With synchronous=NORMAL
a commit does not wait for the disk; a power cut can lose the last commits
but never corrupts the file, which is the right trade for a re-crawlable cache.

The store's methods are ``sql_store.SqlStore``'s; this module opens the file
and gives them sqlite3's connection with its errors translated.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from trawl.errors import DiskFull, StoreError
from trawl.store.dialect import SQLITE
from trawl.store.schema import MIGRATIONS, SCHEMA_VERSION
from trawl.store.sql_store import SqlStore


class SQLiteStore(SqlStore):
    """The store in the SQLite file at ``path``. With ``check_schema`` false the file
    is taken as migrated already (another connection of this process checked it)."""

    def __init__(self, path: Path, *, check_schema: bool = True) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
            db.execute("PRAGMA busy_timeout=10000")
            if check_schema:
                migrate(db)
        except sqlite3.Error as e:
            raise _store_error(str(path), e, "cannot open store") from e
        except OSError as e:
            raise StoreError(f"cannot open store {path}: {e}") from e
        super().__init__(SQLiteDatabase(db, str(path)), SQLITE)


class _Rows:
    """sqlite3's cursor, its errors (a damaged file, a full disk) as StoreError."""

    def __init__(self, cursor: sqlite3.Cursor, where: str) -> None:
        self._cursor = cursor
        self._where = where

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    def fetchone(self) -> Any:
        try:
            return self._cursor.fetchone()
        except sqlite3.Error as e:
            raise _store_error(self._where, e) from e

    def fetchall(self) -> list[Any]:
        try:
            return self._cursor.fetchall()
        except sqlite3.Error as e:
            raise _store_error(self._where, e) from e

    def __iter__(self) -> Iterator[Any]:
        try:
            yield from self._cursor
        except sqlite3.Error as e:
            raise _store_error(self._where, e) from e


class SQLiteDatabase:
    """sqlite3's connection as the store methods use it, with sqlite3's errors translated
    where they cross into Trawl: a damaged trawl.sqlite or a full disk is a StoreError
    with the file's name, not a traceback."""

    threadsafe = False  # one connection: one transaction at a time

    def __init__(self, db: sqlite3.Connection, where: str) -> None:
        self._sqlite = db
        self._where = where

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> _Rows:
        try:
            return _Rows(self._sqlite.execute(sql, parameters), self._where)
        except sqlite3.Error as e:
            raise _store_error(self._where, e) from e

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Any:
        try:
            return self._sqlite.executemany(sql, parameters)
        except sqlite3.Error as e:
            raise _store_error(self._where, e) from e

    def stream(self, sql: str, parameters: Sequence[Any] = (), /) -> Iterator[Any]:
        return iter(self.execute(sql, parameters))

    @contextmanager
    def transaction(self, mode: str = "") -> Iterator[SQLiteDatabase]:
        # In autocommit mode the connection's context manager does not open a
        # transaction, so BEGIN explicitly; its __exit__ commits or rolls back.
        try:
            self._sqlite.execute(f"BEGIN {mode}")
            with self._sqlite:
                yield self
        except sqlite3.Error as e:
            raise _store_error(self._where, e) from e

    def close(self) -> None:
        self._sqlite.close()


# SQLite's answers to a write that found no room: SQLITE_FULL (ENOSPC) and a failed
# write (EFBIG past a file size limit, EIO), extended code SQLITE_IOERR_WRITE.
_NO_ROOM = frozenset({sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR_WRITE})


def _store_error(where: str, error: sqlite3.Error, doing: str = "store") -> StoreError:
    if getattr(error, "sqlite_errorcode", None) in _NO_ROOM:
        return DiskFull(f"{doing} {where}: cannot write, the disk is full ({error})")
    return StoreError(f"{doing} {where}: {error}")


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
            # SQLite may have rolled back already (a full disk, an I/O error): a second
            # ROLLBACK would raise and hide why the migration failed.
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
    return SCHEMA_VERSION - current
