"""The background header check: batches saved as they come, one job at a time, a cancel
that keeps what was checked (trawl.server.header_checks)."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from fixture_sites import Route, SiteServer, html_page
from service_fixtures import crawl_site, service_settings
from trawl.errors import Conflict, FetchError, Unavailable
from trawl.pipeline.resource_checks import check_external_headers
from trawl.records import HeaderCheck
from trawl.server.header_checks import HeaderChecker, HeaderCheckJobs
from trawl.settings import Settings
from trawl.store import open_store

Serve = Callable[..., SiteServer]
TARGETS = [f"http://10.255.255.1:9/{name}" for name in ("a", "b", "c")]


def _crawled(serve: Serve, tmp_path: Path) -> Settings:
    """A data folder whose one page links to the three TARGETS."""
    links = "".join(f'<a href="{url}">{url}</a>' for url in TARGETS)
    site = serve({"/": html_page("Links out", f"<p>Three links out.</p>{links}")})
    settings = service_settings(tmp_path)
    crawl_site(site, settings)
    return settings


def _checked(settings: Settings) -> dict[str, int | None]:
    store = open_store(settings)
    try:
        _, rows = store.external_links("", 10, 0)
    finally:
        store.close()
    return {row.url: row.status for row in rows}


def _answers(urls: Sequence[str], status: int) -> list[HeaderCheck]:
    return [HeaderCheck(url, status, None, (), None, 0.0) for url in urls]


def _run_to_end(settings: Settings, checker: HeaderChecker, batch: int) -> dict[str, Any]:
    """Check every target with ``checker`` and wait for the job to end; its status."""

    async def run() -> dict[str, Any]:
        jobs = HeaderCheckJobs(settings, checker, batch=batch)
        jobs.start(TARGETS)
        await jobs.finished()
        return jobs.status()

    return asyncio.run(run())


def test_a_cancelled_check_keeps_every_batch_it_finished(serve: Serve, tmp_path: Path) -> None:
    settings = _crawled(serve, tmp_path)
    asked: list[list[str]] = []

    async def run() -> dict[str, object]:
        second_asked = asyncio.Event()

        async def first_batch_only(urls: Sequence[str], _: Settings) -> list[HeaderCheck]:
            asked.append(list(urls))
            if len(asked) > 1:  # the first batch is saved by now
                second_asked.set()
                await asyncio.sleep(3600)  # the second batch's target never answers
            return _answers(urls, 204)

        jobs = HeaderCheckJobs(settings, first_batch_only, batch=1)
        assert jobs.start(TARGETS) == 3
        await second_asked.wait()
        assert jobs.status()["running"] and jobs.status()["checked"] == 1
        with pytest.raises(Conflict):
            jobs.start(TARGETS)
        assert jobs.cancel()
        await jobs.close()
        return jobs.status()

    status = asyncio.run(run())
    assert status["checked"] == 1 and status["total"] == 3 and status["cancelled"]
    assert not status["running"] and status["finished_at"] is not None
    assert asked == [[TARGETS[0]], [TARGETS[1]]]
    assert _checked(settings) == {TARGETS[0]: 204, TARGETS[1]: None, TARGETS[2]: None}


def test_a_check_runs_every_batch_to_the_end(serve: Serve, tmp_path: Path) -> None:
    settings = _crawled(serve, tmp_path)
    sizes: list[int] = []

    async def answer(urls: Sequence[str], _: Settings) -> list[HeaderCheck]:
        sizes.append(len(urls))
        return _answers(urls, 200)

    status = _run_to_end(settings, answer, batch=2)
    assert status["checked"] == 3 and not status["cancelled"] and status["error"] is None
    assert sizes == [2, 1]
    assert _checked(settings) == dict.fromkeys(TARGETS, 200)


def test_without_a_checker_nothing_starts(tmp_path: Path) -> None:
    jobs = HeaderCheckJobs(service_settings(tmp_path), None)
    assert not jobs.available
    with pytest.raises(Unavailable):
        jobs.start(TARGETS)
    assert jobs.status()["total"] == 0 and not jobs.cancel()


def test_a_failing_check_says_why_and_keeps_what_it_saved(serve: Serve, tmp_path: Path) -> None:
    settings = _crawled(serve, tmp_path)

    async def fails_after_one_batch(urls: Sequence[str], _: Settings) -> list[HeaderCheck]:
        if urls[0] != TARGETS[0]:
            raise FetchError("the network went away")
        return _answers(urls, 200)

    status = _run_to_end(settings, fails_after_one_batch, batch=1)
    assert status["error"] == "the network went away" and status["checked"] == 1
    assert not status["running"] and not status["cancelled"]
    assert _checked(settings) == {TARGETS[0]: 200, TARGETS[1]: None, TARGETS[2]: None}


def test_an_external_link_is_asked_as_the_page_wrote_it(serve: Serve, tmp_path: Path) -> None:
    written = "/x?b=2&a=1&utm_source=news"  # seed 003: the identity is /x?a=1&b=2
    outside = serve({written: Route(b"fine")}, host="127.0.0.2")
    site = serve({"/": html_page("Links out", f'<a href="{outside.url(written)}">out</a>')})
    settings = service_settings(tmp_path)
    crawl_site(site, settings)
    identity = outside.url("/x?a=1&b=2")

    async def check(urls: Sequence[str], settings: Settings) -> list[HeaderCheck]:
        return await check_external_headers(urls, settings, allow=[(outside.host, outside.port)])

    async def run() -> None:
        jobs = HeaderCheckJobs(settings, check)
        assert jobs.start([identity]) == 1
        await jobs.finished()

    asyncio.run(run())
    assert outside.request_lines == [f"HEAD {written} HTTP/1.1"]
    assert _checked(settings) == {identity: 200}  # kept by identity, as the report names it


def test_a_check_saves_beside_a_server_crawls_open_write_batch(
    serve: Serve, tmp_path: Path
) -> None:
    # A crawl `trawl serve` runs holds SQLite's write lock between its events, on the
    # server's event loop, until its timer commits (store.write_batch). A check that
    # saved on that loop waited in SQLite's busy handler: the loop, the crawl's timer
    # and every request froze for busy_timeout (10 s), then the check failed, locked.
    settings = _crawled(serve, tmp_path)

    async def run() -> tuple[dict[str, Any], float]:
        crawl_store = open_store(settings)
        lags: list[float] = []

        async def crawl_timer() -> None:  # as crawl_run._flush_every
            while True:
                before = time.monotonic()
                await asyncio.sleep(0.1)
                lags.append(time.monotonic() - before - 0.1)
                crawl_store.flush(due_only=True)

        try:
            with crawl_store.write_batch(100, 0.5):
                crawl_store.add_site("http://batch.example/")  # the batch holds the lock
                timer = asyncio.create_task(crawl_timer())
                jobs = HeaderCheckJobs(settings, lambda urls, _: _async(_answers(urls, 200)))
                jobs.start(TARGETS)
                await asyncio.wait_for(jobs.finished(), 30)
                timer.cancel()
        finally:
            crawl_store.close()
        return jobs.status(), max(lags)

    status, lag = asyncio.run(run())
    assert status["error"] is None and status["checked"] == 3
    assert lag < 1.0  # the loop was never held by a busy wait
    assert _checked(settings) == dict.fromkeys(TARGETS, 200)


async def _async(value: Any) -> Any:
    return value


def test_a_check_cancelled_while_it_saves_closes_its_store_after_the_save(
    serve: Serve, tmp_path: Path
) -> None:
    # The save runs in a thread, which a cancel cannot stop. Closed under it, sqlite3
    # freed the connection the thread was still writing with: a segfault of the server
    # (found by tests/server/test_hostile_clients.py). Here another connection holds the
    # write lock, so the save waits in SQLite's busy handler while the job is cancelled.
    settings = _crawled(serve, tmp_path)
    db = sqlite3.connect(settings.sqlite_path, isolation_level=None)

    async def run() -> dict[str, Any]:
        asked = asyncio.Event()

        async def answer(urls: Sequence[str], _: Settings) -> list[HeaderCheck]:
            asked.set()
            return _answers(urls, 204)

        db.execute("BEGIN IMMEDIATE")
        jobs = HeaderCheckJobs(settings, answer, batch=3)
        jobs.start(TARGETS)
        await asked.wait()
        await asyncio.sleep(0.3)  # the save is in its thread, waiting for the lock
        assert jobs.cancel()
        await asyncio.sleep(0.3)
        done_before_the_lock_went = not jobs.status()["running"]
        db.execute("COMMIT")
        await jobs.finished()
        status = jobs.status()
        status["early"] = done_before_the_lock_went
        return status

    try:
        status = asyncio.run(run())
    finally:
        db.close()
    assert not status["early"], "the job ended (and closed its store) while its save ran"
    assert status["cancelled"] and status["error"] is None
    assert _checked(settings) == dict.fromkeys(TARGETS, 204)  # the save it waited for
