"""A long-running process's store, opened once and lent out per task.

``trawl serve`` answers each request in one of a pool of threads. Opening the
store for each request would check the schema every time and, on PostgreSQL,
build a new connection pool: that is the cost this module removes. The store is
opened once (migrations checked once); a request borrows a connection:

- SQLite: a connection belongs to one thread at a time, so each thread opens
  its own the first time it asks and keeps it (the schema already checked);
- PostgreSQL: the store is a pool and thread-safe, so every thread shares it.

Everything is closed together by ``close``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from trawl.store import open_store

if TYPE_CHECKING:
    from trawl.settings import Settings
    from trawl.store.base import Store


class StoreConnections:
    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._lock = threading.Lock()
        self._first: Store | None = None  # the one that checked the schema
        self._opened: list[Store] = []
        self._local = threading.local()

    def open(self) -> None:
        """Open the store and check its schema, unless that is done (a StoreError
        leaves it closed: the next ``connection`` tries again)."""
        with self._lock:
            if self._first is None:
                self._first = open_store(self._settings)
                self._opened.append(self._first)
                if not self._first.threadsafe:
                    self._local.store = self._first

    @contextmanager
    def connection(self) -> Iterator[Store]:
        """The store for the calling thread's task; it stays open for the next one."""
        self.open()
        first = self._first
        assert first is not None
        if first.threadsafe:
            yield first
            return
        mine: Store | None = getattr(self._local, "store", None)
        if mine is None:
            mine = open_store(self._settings, check_schema=False)
            with self._lock:
                self._opened.append(mine)
            self._local.store = mine
        yield mine

    def close(self) -> None:
        with self._lock:
            opened, self._opened, self._first = self._opened, [], None
            self._local = threading.local()
        for store in opened:
            store.close()
