"""The server opens its store once, in its lifespan, and lends a connection per request:
no request checks the schema again, none opens a PostgreSQL pool, and requests at once
work on both stores."""

from __future__ import annotations

import json
import sqlite3
import threading
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg
import pytest

from service_fixtures import LiveServer
from trawl.server.app import create_app
from trawl.server.auth import create_key
from trawl.settings import Settings
from trawl.store import open_store

REQUESTS = 30


def _sites(base: str, key: str) -> list[Any]:
    request = urllib.request.Request(base + "/api/admin/sites", headers={"X-API-Key": key})
    with urllib.request.urlopen(request, timeout=30) as r:
        assert r.status == 200
        sites: list[Any] = json.loads(r.read())
        return sites


@pytest.fixture
def counted_sqlite(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, int]]:
    """Counts SQLite connections opened and schema checks run (statements reading
    ``schema_version``), whoever opens them."""
    counts = {"connections": 0, "schema_checks": 0}
    lock = threading.Lock()
    connect = sqlite3.connect

    def trace(sql: str) -> None:
        if "schema_version" in sql:
            with lock:
                counts["schema_checks"] += 1

    def counting_connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn: sqlite3.Connection = connect(*args, **kwargs)
        conn.set_trace_callback(trace)
        with lock:
            counts["connections"] += 1
        return conn

    monkeypatch.setattr(sqlite3, "connect", counting_connect)
    yield counts


@pytest.fixture
def counted_postgres(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, int]]:
    """Counts PostgreSQL connections opened (a pool's included)."""
    counts = {"connections": 0}
    lock = threading.Lock()
    connect: Callable[..., Any] = psycopg.Connection.connect

    def counting_connect(cls: Any, *args: Any, **kwargs: Any) -> Any:
        with lock:
            counts["connections"] += 1
        return connect.__func__(cls, *args, **kwargs)  # type: ignore[attr-defined]

    monkeypatch.setattr(psycopg.Connection, "connect", classmethod(counting_connect))
    yield counts


def _key(settings: Settings) -> str:
    store = open_store(settings)
    try:
        return create_key(store, "tests")[1]
    finally:
        store.close()


@pytest.mark.slow
def test_requests_on_sqlite_reuse_the_store_opened_at_start(
    tmp_path: Path, counted_sqlite: dict[str, int]
) -> None:
    settings = Settings(data=tmp_path)
    key = _key(settings)
    with LiveServer(create_app(settings, header_checker=None)) as base:
        _sites(base, key)  # the thread's connection opened
        counted_sqlite.update(connections=0, schema_checks=0)
        for _ in range(REQUESTS):
            assert _sites(base, key) == []
        assert counted_sqlite["schema_checks"] == 0
        assert counted_sqlite["connections"] == 0  # one at a time: the one opened
        with ThreadPoolExecutor(8) as clients:
            answers = list(clients.map(lambda _: _sites(base, key), range(8 * REQUESTS)))
        assert answers == [[]] * (8 * REQUESTS)
        assert counted_sqlite["schema_checks"] == 0
        # No more than the requests that ran at once: 8 clients, each request taking
        # one for its key and one for its answer.
        assert counted_sqlite["connections"] <= 16


@pytest.mark.slow
def test_requests_on_postgres_share_one_pool(
    tmp_path: Path, postgres_url: str, counted_postgres: dict[str, int]
) -> None:
    settings = Settings(data=tmp_path, store=postgres_url)
    key = _key(settings)
    counted_postgres["connections"] = 0
    with LiveServer(create_app(settings, header_checker=None)) as base:
        opened_at_start = counted_postgres["connections"]
        assert 1 <= opened_at_start <= 3  # the schema check's and the pool's first
        for _ in range(REQUESTS):
            assert _sites(base, key) == []
        with ThreadPoolExecutor(8) as clients:
            answers = list(clients.map(lambda _: _sites(base, key), range(8 * REQUESTS)))
        assert answers == [[]] * (8 * REQUESTS)
        # One pool of at most 8 connections, the one that checked the schema before it.
        assert counted_postgres["connections"] <= 1 + 8
