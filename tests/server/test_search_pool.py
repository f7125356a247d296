"""Searches in worker processes (``search_workers``): the same answers as in the
server's process, from the newest commit, and a dead worker costs no request."""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import signal
import threading
import time
from collections.abc import Callable, Iterator
from multiprocessing import Pipe, resource_tracker
from pathlib import Path
from typing import Any, cast

import pytest
from fastapi.testclient import TestClient

from service_fixtures import index_guide
from trawl.errors import SearchTimeout
from trawl.index.tantivy_index import IndexReader
from trawl.pipeline.piped import send_whole, take
from trawl.search.request import search_request
from trawl.server import api_search, search_pool
from trawl.server.app import create_app
from trawl.server.context import Context
from trawl.server.search_pool import MAX_DEATHS, SearchPool
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


def test_a_killed_worker_costs_no_api_request(tmp_path: Path) -> None:
    """/api/search waits on the worker's pipe on the event loop: a worker killed under
    it is seen there too, the request answered here and the worker replaced."""
    settings = Settings(data=tmp_path, search_workers=1, search_cache_size=0)
    index_guide(settings, range(3))
    app = create_app(settings, header_checker=None)
    pool = app.state.context.search_pool
    with TestClient(app) as client:
        assert client.get("/api/search", params={"q": "tortoise"}).json()["total"] == 3
        (pid,) = pool.pids()
        os.kill(pid, signal.SIGKILL)
        answers = [client.get("/api/search", params={"q": "tortoise"}) for _ in range(4)]
        assert [(a.status_code, a.json()["total"]) for a in answers] == [(200, 3)] * 4
        assert pool.pids() and pid not in pool.pids()


def test_concurrent_api_searches_all_run_in_the_one_worker(pooled: Context) -> None:
    """More searches at once than workers: each waits for the worker in turn, on the loop."""
    reader = pooled.index.get()
    pooled.search_pool.workers = 1
    texts = ["tortoise", "shallow water", "page 2", "nothing-matches-this"] * 3

    async def all_at_once() -> list[tuple[int, dict[str, object]]]:
        answers = await asyncio.gather(
            *(pooled.search_pool.asearch(reader, search_request(t)) for t in texts)
        )
        return [(pid, answer) for _, answer, pid in answers]

    answers = asyncio.run(all_at_once())
    (worker,) = pooled.search_pool.pids()
    assert {pid for pid, _ in answers} == {worker}
    here = Context(Settings(data=pooled.settings.data, search_cache_size=0))
    for text, (_, answer) in zip(texts, answers, strict=True):
        expected = api_search.run_search(here, search_request(text), source="api")
        assert answer["total"] == expected["total"] and answer["results"] == expected["results"]


def test_a_free_worker_goes_to_the_longest_waiting_caller(tmp_path: Path) -> None:
    pool = SearchPool(Settings(data=tmp_path, search_workers=1))
    woken: list[str] = []

    def waiter(name: str) -> Callable[[object], bool]:
        def wake(_: object) -> bool:
            woken.append(name)
            return True

        return wake

    for name in ("first", "second", "third"):
        assert pool._take(waiter(name)) is None
    for _ in range(3):
        pool._release(cast(Any, object()))
    assert woken == ["first", "second", "third"]


def test_callers_waiting_when_the_pool_closes_search_themselves(pooled: Context) -> None:
    pooled.search_pool.workers = 1
    reader = pooled.index.get()

    async def close_while_waiting() -> list[int]:
        searches = [
            asyncio.ensure_future(pooled.search_pool.asearch(reader, search_request("tortoise")))
            for _ in range(4)
        ]
        await asyncio.sleep(0)
        await asyncio.to_thread(pooled.search_pool.close)
        return [pid for _, _, pid in await asyncio.gather(*searches)]

    pids = asyncio.run(close_while_waiting())
    assert len(pids) == 4 and os.getpid() in pids


def test_a_worker_killed_mid_search_costs_the_loop_no_request(pooled: Context) -> None:
    """Killed after the request went down its pipe: the loop sees the pipe end, the
    search runs here and a new worker takes the dead one's place."""
    pooled.search_pool.workers = 1
    reader = pooled.index.get()
    pooled.search_pool.start()
    (pid,) = pooled.search_pool.pids()

    async def kill_mid_search() -> tuple[int, dict[str, Any]]:
        os.kill(pid, signal.SIGSTOP)  # it holds the request unanswered until killed
        searching = asyncio.ensure_future(
            pooled.search_pool.asearch(reader, search_request("tortoise"))
        )
        await asyncio.sleep(0.5)
        assert not searching.done()
        os.kill(pid, signal.SIGKILL)
        _, answer, by = await asyncio.wait_for(searching, 60)
        return by, answer

    by, answer = asyncio.run(kill_mid_search())
    assert by == os.getpid() and answer["total"] == 3
    for _ in range(100):  # the replacement is spawned off the loop
        if pooled.search_pool.pids() and pid not in pooled.search_pool.pids():
            break
        time.sleep(0.1)
    assert pooled.search_pool.pids() and pid not in pooled.search_pool.pids()
    assert _searched_in(pooled, "tortoise")[0] in pooled.search_pool.pids()


def test_an_answer_is_read_whole_however_the_pipe_splits_it() -> None:
    """The loop reads what the pipe holds: an answer arriving in pieces waits for the
    rest, framed as multiprocessing's own recv() reads it."""
    ours, theirs = Pipe()
    answer = (None, {"results": ["x" * 40_000]}, 1)  # over 16 KB: Connection splits it
    send_whole(theirs, answer)
    framed = os.read(ours.fileno(), 1 << 20)
    received = bytearray()
    for n in range(0, len(framed) - 1, 4096):
        received.extend(framed[n : n + 4096])
        if len(received) < len(framed):
            assert take(received) is None
    received.extend(framed[len(received) :])
    message = take(received)
    assert message is not None and pickle.loads(message) == answer
    send_whole(theirs, answer)
    assert ours.recv() == answer  # the thread path reads the same framing


def _refuse_spawn(pool: SearchPool, monkeypatch: pytest.MonkeyPatch) -> None:
    # A fault we cannot cause on demand here: the system refusing a process (EAGAIN).
    def refused() -> None:
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(pool, "_spawn", refused)


def _answered_in_threads(ctx: Context, callers: int) -> list[int]:
    reader = ctx.index.get()
    pids: list[int] = []
    threads = [
        threading.Thread(
            target=lambda: pids.append(
                ctx.search_pool.search(reader, search_request("tortoise"))[2]
            ),
            daemon=True,  # a stranded caller must not hold the test run at exit
        )
        for _ in range(callers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads), "a caller waits for no worker"
    return pids


def test_workers_the_system_refuses_leave_searches_to_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(data=tmp_path, search_workers=2, search_cache_size=0)
    index_guide(settings, range(3))
    ctx = Context(settings)
    _refuse_spawn(ctx.search_pool, monkeypatch)
    assert _answered_in_threads(ctx, 3) == [os.getpid()] * 3
    _, _, pid = asyncio.run(ctx.search_pool.asearch(ctx.index.get(), search_request("tortoise")))
    assert pid == os.getpid()
    ctx.search_pool.close()


def test_a_dead_worker_that_cannot_be_replaced_strands_no_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(data=tmp_path, search_workers=1, search_cache_size=0)
    index_guide(settings, range(3))
    ctx = Context(settings)
    assert _searched_in(ctx, "tortoise")[0] != os.getpid()  # the one worker runs
    _refuse_spawn(ctx.search_pool, monkeypatch)
    os.kill(ctx.search_pool.pids()[0], signal.SIGKILL)
    assert _answered_in_threads(ctx, 4) == [os.getpid()] * 4
    ctx.search_pool.close()


def test_a_caller_cancelled_as_a_worker_is_handed_to_it_gives_the_worker_back(
    pooled: Context,
) -> None:
    """A client gone (its task cancelled) in the moment between a worker being handed to
    it and its task running keeps no worker: the next search still gets one."""
    pool = pooled.search_pool
    pool.workers = 1
    reader = pooled.index.get()
    pool.start()

    async def cancel_as_handed() -> int:
        held = pool._take(lambda _: False)  # the one worker, busy elsewhere
        assert held is not None
        waiting = asyncio.ensure_future(pool.asearch(reader, search_request("tortoise")))
        await asyncio.sleep(0.05)  # queued for the worker
        pool._release(held)  # handed to it: its delivery runs on the loop's next turn
        asyncio.get_running_loop().call_soon(waiting.cancel)  # and the client leaves then
        with pytest.raises(asyncio.CancelledError):
            await waiting
        _, _, pid = await asyncio.wait_for(pool.asearch(reader, search_request("tortoise")), 10)
        return pid

    assert asyncio.run(cancel_as_handed()) in pool.pids()


def _stopped_worker(tmp_path: Path) -> tuple[Context, int]:
    """A pool whose one worker is stopped (SIGSTOP): it takes a request and never answers."""
    settings = Settings(
        data=tmp_path, search_workers=1, search_cache_size=0, search_worker_timeout=2
    )
    index_guide(settings, range(3))
    ctx = Context(settings)
    ctx.search_pool.start()
    (pid,) = ctx.search_pool.pids()
    os.kill(pid, signal.SIGSTOP)
    return ctx, pid


def _replaced(pool: SearchPool, pid: int) -> None:
    for _ in range(100):  # the loop's path replaces it off the loop
        if pool.pids() and pid not in pool.pids():
            break
        time.sleep(0.1)
    assert pool.pids() and pid not in pool.pids()
    with pytest.raises(ProcessLookupError):  # killed and reaped
        os.kill(pid, 0)


@contextlib.contextmanager
def _cleaned(ctx: Context, pid: int) -> Iterator[None]:
    try:
        yield
    finally:  # without the deadline the stopped worker would outlive the test
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        ctx.search_pool.close()


def test_a_stopped_worker_holds_a_search_only_until_the_deadline(tmp_path: Path) -> None:
    ctx, pid = _stopped_worker(tmp_path)
    with _cleaned(ctx, pid):
        started = time.monotonic()
        with pytest.raises(SearchTimeout):  # told, not searched a second time here
            ctx.search_pool.search(ctx.index.get(), search_request("tortoise"))
        assert time.monotonic() - started < 2 + 5 + 5  # the deadline, a join, a spawn
        _replaced(ctx.search_pool, pid)


def test_a_stopped_worker_holds_a_loop_search_only_until_the_deadline(tmp_path: Path) -> None:
    ctx, pid = _stopped_worker(tmp_path)
    with _cleaned(ctx, pid):
        search = ctx.search_pool.asearch(ctx.index.get(), search_request("tortoise"))
        with pytest.raises(SearchTimeout):
            asyncio.run(asyncio.wait_for(search, 30))
        _replaced(ctx.search_pool, pid)


def _stopped_app(tmp_path: Path) -> tuple[TestClient, SearchPool, int]:
    """A real app (lifespan, pool started) whose one search worker is stopped: it takes
    the next search and never answers, as a worker on a query that never ends."""
    settings = Settings(
        data=tmp_path, search_workers=1, search_cache_size=0, search_worker_timeout=1
    )
    index_guide(settings, range(3))
    app = create_app(settings, header_checker=None)
    pool: SearchPool = app.state.context.search_pool
    client = TestClient(app)
    client.__enter__()
    (pid,) = pool.pids()
    os.kill(pid, signal.SIGSTOP)
    return client, pool, pid


@pytest.mark.parametrize(
    ("path", "params"), [("/api/search", {"q": "tortoise"}), ("/", {"q": "tortoise"})]
)
def test_a_search_that_times_out_in_a_worker_answers_503_and_is_not_run_again(
    tmp_path: Path, path: str, params: dict[str, str]
) -> None:
    """The API (the loop's path) and the search page (a thread's): past the deadline
    the client is told the search took too long, at the deadline, rather than the
    server running the same search again with no bound; the worker is killed and
    replaced, and the next search is answered by the new one."""
    client, pool, pid = _stopped_app(tmp_path)
    try:
        started = time.monotonic()
        timed_out = client.get(path, params=params)
        took = time.monotonic() - started
        assert timed_out.status_code == 503
        assert "search took too long" in timed_out.text
        assert took < 1 + 5 + 5  # the deadline, then at most a join and a spawn
        _replaced(pool, pid)
        again = client.get("/api/search", params={"q": "tortoise"})
        assert again.status_code == 200 and again.json()["total"] == 3
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        client.__exit__(None, None, None)


def test_an_api_search_in_the_server_has_the_same_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without workers an API search runs in a thread of the server, which cannot be
    killed: the client still gets its 503 at the deadline, and the thread finishes
    the search on its own. A search slower than 0.1 s on a 3-page index is a fault
    we cannot cause, so the search itself is slowed."""
    settings = Settings(data=tmp_path, search_workers=0, search_cache_size=0,
                        search_worker_timeout=0.5)  # fmt: skip
    index_guide(settings, range(3))
    release = threading.Event()
    runs: list[float] = []
    real = search_pool.search_here

    def slow(*args: Any) -> Any:
        runs.append(time.monotonic())
        release.wait(30)
        return real(*args)

    monkeypatch.setattr(search_pool, "search_here", slow)
    try:
        with TestClient(create_app(settings, header_checker=None)) as client:
            started = time.monotonic()
            timed_out = client.get("/api/search", params={"q": "tortoise"})
            took = time.monotonic() - started
            release.set()
            assert timed_out.status_code == 503, timed_out.text
            assert "search took too long" in timed_out.json()["error"]
            assert 0.5 <= took < 10 and len(runs) == 1
            assert client.get("/api/search", params={"q": "tortoise"}).json()["total"] == 3
    finally:
        release.set()


def test_a_stopped_worker_is_killed_when_its_caller_has_left(tmp_path: Path) -> None:
    """The client gone (its task cancelled), the worker it held is still killed and
    replaced at the deadline, or the pool would have lost it for good."""
    ctx, pid = _stopped_worker(tmp_path)

    async def leave() -> None:
        search = asyncio.ensure_future(
            ctx.search_pool.asearch(ctx.index.get(), search_request("tortoise"))
        )
        await asyncio.sleep(0.2)
        search.cancel()
        await asyncio.sleep(4)  # past the deadline, the loop still running

    with _cleaned(ctx, pid):
        asyncio.run(leave())
        _replaced(ctx.search_pool, pid)


def test_workers_dying_at_birth_are_not_replaced_for_ever(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A worker whose interpreter cannot start (a broken install) dies at once: after
    MAX_DEATHS in a row no more are spawned, said once, and the server searches."""
    settings = Settings(data=tmp_path, search_workers=1, search_cache_size=0)
    index_guide(settings, range(3))
    ctx = Context(settings)
    resource_tracker.ensure_running()  # a process spawn needs, started while it can start
    monkeypatch.setenv("PYTHONHOME", str(tmp_path / "no-python-here"))  # real deaths
    try:
        for _ in range(MAX_DEATHS + 3):
            assert _answered_in_threads(ctx, 1) == [os.getpid()]
        _, _, pid = asyncio.run(ctx.search_pool.asearch(ctx.index.get(), search_request("x")))
        assert pid == os.getpid() and ctx.search_pool.pids() == []
        said = [r.getMessage() for r in caplog.records if "in a row died" in r.getMessage()]
        assert len(said) == 1
    finally:
        ctx.search_pool.close()
