"""The connection the store's SQL runs on: sqlite3's, or PostgreSQL's behind a pool.

``sql_store.SqlStore`` and its query mixins are written against these two
protocols; ``sqlite.SQLiteDatabase`` and ``postgres.PooledDatabase`` speak them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol


class Rows(Protocol):
    """What a statement gives back: sqlite3's cursor, or PostgreSQL's rows."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Database(Protocol):
    """A connection (or a pool of them) as the store methods use it; statements
    are written with ``?`` placeholders whatever the database."""

    # Whether several threads may use it at once (a pool: one connection each).
    threadsafe: bool

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Rows: ...

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Any: ...

    def stream(self, sql: str, parameters: Sequence[Any] = (), /) -> Iterator[Any]:
        """The rows of a long result a few at a time, never all in memory."""
        ...

    def transaction(self, mode: str = "") -> AbstractContextManager[Any]:
        """Statements of this thread inside it commit together (``mode``: SQLite's
        BEGIN mode, IMMEDIATE to take the write lock first)."""
        ...

    def write_batch(self, pages: int, seconds: float) -> AbstractContextManager[None]:
        """Writes inside may commit together, every ``pages`` writes or ``seconds``;
        a kill loses the batch not yet committed, whole. (A pool: each write commits.)"""
        ...

    def flush(self, *, due_only: bool = False) -> None:
        """Commit what the open write batch holds (``due_only``: if full or old)."""
        ...

    def close(self) -> None: ...
