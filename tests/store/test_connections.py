"""StoreConnections: the server's store, opened once and lent per request."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from trawl.errors import StoreError
from trawl.settings import Settings
from trawl.store.base import Store
from trawl.store.connections import StoreConnections


def _borrow_in_thread(stores: StoreConnections, seen: list[Store]) -> None:
    def borrow() -> None:
        with stores.connection() as store:
            store.count_pages()
            seen.append(store)

    thread = threading.Thread(target=borrow)
    thread.start()
    thread.join()


def test_sqlite_connections_outlive_the_threads_that_used_them(tmp_path: Path) -> None:
    # A server's worker threads come and go: each new one must not leave a connection
    # behind (one per thread, never closed, would grow for as long as the server runs).
    stores = StoreConnections(Settings(data=tmp_path))
    seen: list[Store] = []
    for _ in range(20):
        _borrow_in_thread(stores, seen)

    assert len({id(s) for s in seen}) == 1
    stores.close()


def test_sqlite_requests_at_once_each_get_their_own(tmp_path: Path) -> None:
    stores = StoreConnections(Settings(data=tmp_path))
    with stores.connection() as one, stores.connection() as two:
        assert one is not two
        one.add_site("https://example.com/")
        assert [s.host for s in two.sites()] == ["example.com"]
    with stores.connection() as again:
        assert again in (one, two)
    stores.close()


def test_close_closes_every_connection_lent(tmp_path: Path) -> None:
    stores = StoreConnections(Settings(data=tmp_path))
    with stores.connection() as one, stores.connection() as two:
        pass
    stores.close()

    for store in (one, two):
        with pytest.raises(StoreError):
            store.count_pages()


@pytest.mark.slow
def test_postgres_requests_share_the_pool(tmp_path: Path, postgres_url: str) -> None:
    stores = StoreConnections(Settings(data=tmp_path, store=postgres_url))
    seen: list[Store] = []
    for _ in range(3):
        _borrow_in_thread(stores, seen)
    with stores.connection() as one, stores.connection() as two:
        assert one is two is seen[0]
    stores.close()
