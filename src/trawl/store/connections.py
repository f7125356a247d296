"""A long-running process's store, opened once and lent out per task.

``trawl serve`` answers each request in one of a pool of threads. Opening the
store for each request would check the schema every time and, on PostgreSQL,
build a new connection pool: that is the cost this module removes. The store is
opened once (migrations checked once); a request borrows a connection:

- SQLite: a connection serves one thread at a time, so a request takes an idle
  one (or opens one, the schema already checked) and gives it back: there are
  never more than the requests that ran at once, whatever threads come and go;
- PostgreSQL: the store is a pool and thread-safe, so every request shares it.

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
        self._idle: list[Store] = []  # SQLite connections no request holds

    def open(self) -> None:
        """Open the store and check its schema, unless that is done (a StoreError
        leaves it closed: the next ``connection`` tries again)."""
        with self._lock:
            if self._first is None:
                self._first = open_store(self._settings)
                self._opened.append(self._first)
                if not self._first.threadsafe:
                    self._idle.append(self._first)

    @contextmanager
    def connection(self) -> Iterator[Store]:
        """A store for one task, given back when it ends (never closed by it)."""
        self.open()
        first = self._first
        if first is not None and first.threadsafe:
            yield first
            return
        with self._lock:
            lent = self._idle.pop() if self._idle else None
        if lent is None:
            lent = open_store(self._settings, check_schema=False)
            with self._lock:
                self._opened.append(lent)
        try:
            yield lent
        finally:
            with self._lock:
                if any(s is lent for s in self._opened):  # not closed meanwhile
                    self._idle.append(lent)

    def close(self) -> None:
        with self._lock:
            opened, self._opened, self._idle, self._first = self._opened, [], [], None
        for store in opened:
            store.close()
