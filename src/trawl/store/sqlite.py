"""The embedded store: one SQLite file in WAL mode.

WAL lets ``trawl serve`` read while a crawl writes. With synchronous=NORMAL
a commit does not wait for the disk; a power cut can lose the last commits
but never corrupts the file, which is the right trade for a re-crawlable cache.

The store's methods are ``sql_store.SqlStore``'s; this module opens the file
and gives them sqlite3's connection with its errors translated.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trawl.errors import DiskFull, StoreError
from trawl.faults import fault_point
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


@dataclass
class _Batch:
    """The write batch open on a connection: its bounds, and what it holds so far."""

    pages: int  # commit once this many writes (a page, a frontier mark...) are held
    seconds: float  # ... or once the oldest has waited this long
    held: int = 0
    began: float = 0.0
    committed: float = float("-inf")  # when it last committed (monotonic)
    lost: StoreError | None = None  # a failure rolled back writes it held


# After a batch commits, its writes commit one by one for this long before the next
# batch takes the write lock: another connection waiting for it (the server's
# requests, a header check) polls at most every 100 ms in SQLite's busy handler, and
# a batch taken again at once starved it for the whole busy timeout.
YIELD_SECONDS = 0.11


class _Fetched(_Rows):
    """A write's rows, read to the end at once."""

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._rows = iter(cursor.fetchall())
        self._count = cursor.rowcount

    @property
    def rowcount(self) -> int:
        return self._count

    def fetchone(self) -> Any:
        return next(self._rows, None)

    def fetchall(self) -> list[Any]:
        return list(self._rows)

    def __iter__(self) -> Iterator[Any]:
        return self._rows


class SQLiteDatabase:
    """sqlite3's connection as the store methods use it, with sqlite3's errors translated
    where they cross into Trawl: a damaged trawl.sqlite or a full disk is a StoreError
    with the file's name, not a traceback.

    In a write batch (``write_batch``) every write joins one open transaction, each
    store transaction a savepoint in it (still all or nothing), committed by
    ``flush`` (``due_only``: once ``pages`` writes or ``seconds`` are held): one
    commit, not one a page. A kill loses the whole open batch and nothing else, as
    if its writes had never been made."""

    threadsafe = False  # one connection: one transaction at a time

    def __init__(self, db: sqlite3.Connection, where: str) -> None:
        self._sqlite = db
        self._where = where
        self._batch: _Batch | None = None

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> _Rows:
        batched = self._batch is not None and not sql.startswith("SELECT")
        try:
            if batched:
                self._begin_batch()
            cursor = self._sqlite.execute(sql, parameters)
            # A write's rows (RETURNING) are read at once: no statement is left in
            # progress when the batch commits below.
            rows = _Rows(cursor, self._where) if not batched else _Fetched(cursor)
        except sqlite3.Error as e:
            raise _store_error(self._where, e) from e
        if batched:
            self._held()
        return rows

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Any:
        batched = self._batch is not None
        try:
            if batched:
                self._begin_batch()
            cursor = self._sqlite.executemany(sql, parameters)
        except sqlite3.Error as e:
            raise _store_error(self._where, e) from e
        if batched:
            self._held()
        return cursor

    def stream(self, sql: str, parameters: Sequence[Any] = (), /) -> Iterator[Any]:
        return iter(self.execute(sql, parameters))

    @contextmanager
    def transaction(self, mode: str = "") -> Iterator[SQLiteDatabase]:
        if self._batch is not None:
            with self._savepoint():
                yield self
            return
        # In autocommit mode the connection's context manager does not open a
        # transaction, so BEGIN explicitly; its __exit__ commits or rolls back.
        try:
            self._sqlite.execute(f"BEGIN {mode}")
            with self._sqlite:
                yield self
        except sqlite3.Error as e:
            raise _store_error(self._where, e) from e

    @contextmanager
    def _savepoint(self) -> Iterator[None]:
        """A store transaction inside the batch: undone alone if it fails."""
        batch, self._batch = self._batch, None  # its statements are this savepoint's
        alone = False
        try:
            try:
                alone = not self._begin_batch(batch)  # the batch yields: its own
                if alone:
                    self._sqlite.execute("BEGIN IMMEDIATE")
                self._sqlite.execute("SAVEPOINT store_write")
            except sqlite3.Error as e:
                raise _store_error(self._where, e) from e
            try:
                yield
            except BaseException as e:
                # A full disk may have rolled the whole batch back already.
                if self._sqlite.in_transaction:
                    self._sqlite.execute("ROLLBACK TO store_write")
                    self._sqlite.execute("RELEASE store_write")
                elif batch is not None and not alone and batch.held:
                    # Writes done before this one went with it: the next flush says
                    # so, before an index commits pages the store no longer holds.
                    batch.lost = StoreError(f"store {self._where}: a write batch was lost ({e})")
                if alone:
                    self._rollback()
                raise
            try:
                self._sqlite.execute("RELEASE store_write")
                if alone:
                    self._sqlite.execute("COMMIT")
            except sqlite3.Error as e:
                if alone:
                    self._rollback()
                raise _store_error(self._where, e) from e
        finally:
            self._batch = batch
        self._held()

    @contextmanager
    def write_batch(self, pages: int, seconds: float) -> Iterator[None]:
        """Writes made inside commit together, every ``pages`` writes or ``seconds``
        (and at the end, and at each ``flush``)."""
        if self._batch is not None:
            yield  # one open already: join it
            return
        self._batch = _Batch(pages, seconds)
        try:
            yield
        except BaseException as failure:
            # What the batch holds is whole (each write its own savepoint): keep it,
            # unless the failure left nothing to keep (a full disk). Then the loss is
            # what the caller must hear: a crawl rolls its index back for a StoreError
            # only, or the index would commit pages this batch never kept.
            try:
                self.flush()
            except StoreError as lost:
                self._rollback()
                raise lost from failure
            raise
        finally:
            self._batch = None
        self.flush()

    def flush(self, *, due_only: bool = False) -> None:
        """Commit the open batch's writes now (before an index commit: the index
        never holds a page the store could still lose). ``due_only``: only if it is
        full or old enough, and not while a read is in progress (a timer's)."""
        if due_only:
            self._flush_due()
        else:
            if self._batch is not None and self._batch.lost is not None:
                raise self._batch.lost  # part of the batch is gone: nothing may build on it
            self._commit(must=True)

    def _commit(self, *, must: bool) -> None:
        """Commit the open batch. When not ``must``, a read still in progress (a
        cursor not yet exhausted) only delays the commit to the next write or tick."""
        if not self._sqlite.in_transaction:
            return
        try:
            self._sqlite.execute("COMMIT")
        except sqlite3.Error as e:
            if getattr(e, "sqlite_errorcode", None) == sqlite3.SQLITE_BUSY:
                if not must:
                    return  # the transaction stands, whole: committed later
            else:
                self._rollback()
                if self._batch is not None:
                    self._batch.lost = _store_error(self._where, e)
                    raise self._batch.lost from e
            raise _store_error(self._where, e) from e
        if self._batch is not None:
            self._batch.held = 0
            self._batch.committed = time.monotonic()

    def _flush_due(self) -> None:
        """Commit the open batch if it is full or old enough (the crawl's timer)."""
        batch = self._batch
        if batch is None or not self._sqlite.in_transaction:
            return
        if batch.held >= batch.pages or time.monotonic() - batch.began >= batch.seconds:
            self._commit(must=False)

    def _rollback(self) -> None:
        if self._sqlite.in_transaction:
            self._sqlite.execute("ROLLBACK")

    def _begin_batch(self, batch: _Batch | None = None) -> bool:
        """Open the batch's transaction unless it is open; False while the batch yields
        the write lock after a commit (YIELD_SECONDS): the write commits alone."""
        batch = batch or self._batch
        if batch is not None and not self._sqlite.in_transaction:
            now = time.monotonic()
            if now - batch.committed < YIELD_SECONDS:
                return False
            # IMMEDIATE: the write lock now, never a deferred upgrade that fails busy.
            self._sqlite.execute("BEGIN IMMEDIATE")
            batch.held = 0
            batch.began = now
        return True

    def _held(self) -> None:
        """One more write in the batch. Never a commit here: only ``flush`` commits, so
        the caller decides where one may fall (a crawl: between its events, never
        between a page's save and its links' admission)."""
        batch = self._batch
        if batch is None or not self._sqlite.in_transaction:
            return
        batch.held += 1
        if batch.held == 3:
            fault_point("store.mid_write_batch")  # two writes held, none committed

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
    applied = 0
    for version in range(current + 1, SCHEMA_VERSION + 1):
        # The write lock first, then the version again: another process (a server and a
        # crawl started together after an upgrade) may have run this migration since
        # the read above, and running it twice fails ("duplicate column name").
        db.execute("BEGIN IMMEDIATE")
        try:
            done = db.execute("SELECT max(version) FROM schema_version").fetchone()[0] or 0
            if done >= version:
                db.execute("COMMIT")
                continue
            for statement in MIGRATIONS[version - 1].split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
            db.execute("COMMIT")
            applied += 1
        except sqlite3.Error:
            # SQLite may have rolled back already (a full disk, an I/O error): a second
            # ROLLBACK would raise and hide why the migration failed.
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
    return applied
