"""The connection the store's SQL runs on: sqlite3's, or PostgreSQL's behind a pool.

``sqlite.SQLiteStore`` and its query mixin ``admin_queries.AdminQueries`` are
written against these two protocols; ``postgres.PooledDatabase`` speaks them too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol


class Rows(Protocol):
    """What a statement gives back: sqlite3's cursor, or PostgreSQL's rows."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Database(Protocol):
    """The part of sqlite3's connection the store methods use."""

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Rows: ...

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Any: ...

    def close(self) -> None: ...
