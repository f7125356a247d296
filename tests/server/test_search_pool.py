"""Searches in worker processes (``search_workers``): the same answers as in the
server's process, from the newest commit, and a dead worker costs no request."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from service_fixtures import index_guide
from trawl.index.tantivy_index import IndexReader
from trawl.search.request import search_request
from trawl.server import api_search
from trawl.server.app import create_app
from trawl.server.context import Context
from trawl.settings import Settings

pytestmark = pytest.mark.slow  # worker processes


@pytest.fixture
def pooled(tmp_path: Path) -> Iterator[Context]:
    """A server's context with two search workers, no result cache (every search runs)."""
    settings = Settings(data=tmp_path, search_workers=2, search_cache_size=0)
    index_guide(settings, range(3))
    ctx = Context(settings)
    yield ctx
    ctx.search_pool.close()


def _searched_in(ctx: Context, text: str) -> tuple[int, dict[str, object]]:
    reader = ctx.index.get()
    _, answer, pid = ctx.search_pool.search(reader, search_request(text))
    return pid, answer


def test_searches_run_in_the_workers_and_answer_as_the_server_would(pooled: Context) -> None:
    local = Context(Settings(data=pooled.settings.data, search_cache_size=0))
    for text in ("tortoise", "shallow water", "page 2", "nothing-matches-this"):
        pid, answer = _searched_in(pooled, text)
        assert pid != os.getpid() and pid in pooled.search_pool.pids()
        here = api_search.run_search(local, search_request(text), source="api")
        assert {k: v for k, v in answer.items() if k != "took_ms"} == {
            k: v for k, v in here.items() if k != "took_ms"
        }


def test_a_commit_is_seen_by_every_worker(pooled: Context) -> None:
    for _ in range(4):  # both workers have opened the index at the old commit
        assert _searched_in(pooled, "tortoise")[1]["total"] == 3
    index_guide(pooled.settings, range(3, 5))  # a crawl commits two more pages
    seen = {}
    for _ in range(8):
        pid, answer = _searched_in(pooled, "tortoise")
        seen[pid] = answer["total"]
    assert set(seen.values()) == {5}


def test_a_killed_worker_costs_no_request(pooled: Context) -> None:
    _searched_in(pooled, "tortoise")
    pids = pooled.search_pool.pids()
    assert pids
    os.kill(pids[0], signal.SIGKILL)
    for _ in range(4):  # the first answer comes from the server's process, then a new pool
        assert api_search.run_search(pooled, search_request("tortoise"), source="api")["total"] == 3
    assert _searched_in(pooled, "tortoise")[0] != os.getpid()
    assert pids[0] not in pooled.search_pool.pids()


def test_the_api_with_workers_answers_searches_and_refuses_bad_input(tmp_path: Path) -> None:
    settings = Settings(data=tmp_path, search_workers=1)
    with TestClient(create_app(settings, header_checker=None)) as client:
        # No index yet: the worker's error comes back as the server's own would.
        empty = client.get("/api/search", params={"q": "tortoise"})
        index_guide(settings, range(2))
        found = client.get("/api/search", params={"q": "tortoise"})
        bad = [
            client.get("/api/search", params={"q": "x" * 2000}),
            client.get("/api/search", params={"q": "a", "page": "0"}),
            client.get("/api/search", params={"q": '"unclosed AND ( site:'}),
        ]
    with TestClient(create_app(Settings(data=tmp_path / "other"), header_checker=None)) as c:
        alone = c.get("/api/search", params={"q": "tortoise"})
    assert empty.status_code == alone.status_code and empty.json() == alone.json()
    assert found.status_code == 200 and found.json()["total"] == 2
    assert [r.status_code // 100 for r in bad][:2] == [4, 4] and bad[2].status_code < 500


def test_the_pool_is_closed_with_the_app(tmp_path: Path) -> None:
    settings = Settings(data=tmp_path, search_workers=1)
    index_guide(settings, range(1))
    app = create_app(settings, header_checker=None)
    with TestClient(app) as client:
        assert client.get("/api/search", params={"q": "tortoise"}).status_code == 200
        pids = app.state.context.search_pool.pids()
        assert pids
    for pid in pids:  # reaped by the pool's shutdown
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_without_workers_searches_run_here(tmp_path: Path) -> None:
    settings = Settings(data=tmp_path)
    index_guide(settings, range(1))
    ctx = Context(settings)
    _, _, pid = ctx.search_pool.search(IndexReader(settings.index_path), search_request("x"))
    assert pid == os.getpid() and ctx.search_pool.pids() == []


def test_the_rate_limit_holds_with_workers(tmp_path: Path) -> None:
    """Limits are counted in the server's one process, before a search is handed on."""
    settings = Settings(data=tmp_path, search_workers=2, search_rate_limit="3/minute")
    index_guide(settings, range(1))
    with TestClient(create_app(settings, header_checker=None)) as client:
        codes = [client.get("/api/search", params={"q": f"tortoise {n}"}) for n in range(5)]
    assert [r.status_code for r in codes] == [200, 200, 200, 429, 429]


def test_a_search_after_the_pool_closed_runs_here(pooled: Context) -> None:
    """A request still in flight at shutdown gets its answer, from the server itself."""
    assert _searched_in(pooled, "tortoise")[0] != os.getpid()
    pooled.search_pool.close()
    pid, answer = _searched_in(pooled, "tortoise")
    assert pid == os.getpid() and answer["total"] == 3 and pooled.search_pool.pids() == []
