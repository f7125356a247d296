"""The stage pool: the pure CPU stages in worker processes give what they give in-process."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from fixture_sites import Route, html_page
from stage_faults import SLOW, held_parse, raising_parse, unreadable_answer_parse
from trawl.errors import WorkerError
from trawl.index.documents import index_fields
from trawl.pipeline import stage_pool
from trawl.pipeline.crawl_run import crawl
from trawl.pipeline.parse import parse_page
from trawl.pipeline.stage_pool import (
    DOCUMENT_BATCH,
    MAX_WORKERS,
    Page,
    StagePool,
    saturated,
    start_pool,
    workers_for,
)
from trawl.records import Discussion, Outcome, PageRecord
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore


def page(n: int) -> PageRecord:
    return PageRecord(
        url=f"http://example.test/herons-{n}",
        host="example.test",
        status=200,
        depth=1,
        fetched_at=0.0,
        title=f"Heron {n}",
        headings=("Grey herons", "Nests"),
        text=f"Grey herons nest in colonies; this is page number {n}. " * 20,
        lang="en",
        indexable=True,
        modified=datetime(2025, 3, 1, tzinfo=UTC),
        authority=0.5,
        discussed_on=(Discussion("forum.test", "http://forum.test/t/1", "herons"),),
    )


def test_workers_for_the_setting() -> None:
    assert workers_for(0) == 0  # parse in the event loop's process
    assert workers_for(3) == 3
    assert 1 <= workers_for(-1) <= MAX_WORKERS


async def test_start_pool_starts_the_workers_before_the_first_page() -> None:
    before = {p.pid for p in multiprocessing.active_children()}
    pool = start_pool(2)
    try:
        # The processes exist before any page is parsed: their start-up (forked when
        # this process has one thread, spawned otherwise) overlaps the first requests.
        started = [p for p in multiprocessing.active_children() if p.pid not in before]
        assert len(started) == 2
        body = html_page("Parsed apart", "<p>Okapis live in the forest of Ituri.</p>").body
        url = "http://127.0.0.1:1/okapi"
        pooled = await pool.parse(body, url, "text/html; charset=utf-8", None)
        assert pooled == parse_page(body, url, "text/html; charset=utf-8", None)
        assert pooled.text == "Okapis live in the forest of Ituri."
    finally:
        await pool.close()
    assert not [p for p in multiprocessing.active_children() if p.pid not in before]


def test_start_pool_outside_an_event_loop_starts_the_workers_too() -> None:
    # `trawl crawl` starts its pool before its event loop runs, and hands it on.
    before = {p.pid for p in multiprocessing.active_children()}
    pool = start_pool(1, parsing=False)
    try:
        assert len([p for p in multiprocessing.active_children() if p.pid not in before]) == 1
        assert start_pool(1, pool=pool) is pool  # started again in the loop: the same pool
    finally:
        pool.shutdown()
    in_process = start_pool(0)
    assert in_process is not pool
    in_process.shutdown()


async def test_documents_from_workers_match_and_keep_order() -> None:
    pages: list[Page] = [
        (page(n), [f"anchor {n}", "herons"]) for n in range(3 * DOCUMENT_BATCH + 5)
    ]
    expected = [index_fields(record, anchors) for record, anchors in pages]
    for workers in (0, 2):
        pool = StagePool(workers)
        try:
            built = [fields async for fields in pool.documents(pages)]
        finally:
            await pool.close()
        assert built == expected, f"workers={workers}"


async def test_documents_read_pages_a_few_batches_ahead_only() -> None:
    read = 0

    def pages() -> Iterator[Page]:
        nonlocal read
        for n in range(50 * DOCUMENT_BATCH):
            read += 1
            yield page(n), []

    pool = StagePool(2)
    try:
        documents = pool.documents(pages())
        first = await anext(documents)
        assert first["url"] == "http://example.test/herons-0"
        # Two batches per worker in flight: the rest of the pages are not read yet,
        # so a crawl of a million pages is never all in memory.
        assert read <= 2 * 2 * DOCUMENT_BATCH + DOCUMENT_BATCH
        rest = [fields["url"] async for fields in documents]
        assert len(rest) == 50 * DOCUMENT_BATCH - 1
        assert read == 50 * DOCUMENT_BATCH
    finally:
        await pool.close()


async def test_documents_survive_a_worker_killed_midway() -> None:
    pages: list[Page] = [(page(n), []) for n in range(20 * DOCUMENT_BATCH)]
    before = {p.pid for p in multiprocessing.active_children()}
    pool = StagePool(1)
    pool.start()
    try:
        documents = pool.documents(pages)
        built = [await anext(documents)]
        # The worker dies with batches still queued for it: they are built again
        # (here, or by a new pool), none is lost and the order holds.
        for child in multiprocessing.active_children():
            if child.pid is not None and child.pid not in before:
                os.kill(child.pid, signal.SIGKILL)
        built += [fields async for fields in documents]
    finally:
        await pool.close()
    assert [f["url"] for f in built] == [record.url for record, _ in pages]


async def test_documents_refuse_an_empty_batch() -> None:
    # Zero pages a task would build nothing and leave an empty index without a word.
    pool = StagePool(0)
    with pytest.raises(ValueError, match="at least 1"):
        _ = [fields async for fields in pool.documents([(page(1), [])], batch=0)]


def test_a_thread_is_saturated_when_it_ran_most_of_the_time() -> None:
    assert saturated(0.9, 1.0)
    assert saturated(1.7, 2.0)
    assert not saturated(0.5, 1.0)  # a crawl waiting on politeness: the loop idles
    assert not saturated(0.0, 0.0)
    assert saturated(0.5, 1.0, share=0.4)


async def test_the_default_pool_parses_here_until_the_loop_is_busy() -> None:
    # parse_workers -1: a crawl bound by politeness keeps one process (forked workers
    # tripled its memory); the workers come only when the event loop has no time left.
    before = {p.pid for p in multiprocessing.active_children()}
    pool = start_pool(-1)
    try:
        body = html_page("Parsed here", "<p>Okapis live in the forest of Ituri.</p>").body
        url = "http://127.0.0.1:1/okapi"
        for _ in range(3):
            parsed = await pool.parse(body, url, "text/html; charset=utf-8", None)
            assert parsed == parse_page(body, url, "text/html; charset=utf-8", None)
            await asyncio.sleep(0.05)
        assert not pool.workers_started
        assert not [p for p in multiprocessing.active_children() if p.pid not in before]
    finally:
        await pool.close()


async def test_a_page_parsed_during_the_warm_up_leaves_the_event_loop_free() -> None:
    # The first answers of a crawl come while a thread still imports the parser: a parse
    # then waited on the import lock, and no request went out meanwhile.
    pool = start_pool(-1)
    turns = 0

    async def count_turns() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    counting = asyncio.create_task(count_turns())
    try:
        body = html_page("Warm", "<p>Okapis live in the forest of Ituri.</p>").body
        url = "http://127.0.0.1:1/okapi"
        parsed = await pool.parse(body, url, "text/html; charset=utf-8", None)
        # The loop turned while the warm-up ended, and the answer is the parser's.
        assert turns > 0
        assert parsed == parse_page(body, url, "text/html; charset=utf-8", None)
    finally:
        counting.cancel()
        await pool.close()


async def test_a_large_page_parsed_here_leaves_the_event_loop_free() -> None:
    # A hostile page of 600,000 paragraphs (4 MB, within max_bytes) took 30 s to
    # parse; parsed on the event loop, every other request of the crawl timed out
    # meanwhile and was recorded as the host's failure.
    pool = StagePool(0)
    ticks: list[float] = []

    async def tick() -> None:
        while True:
            await asyncio.sleep(0.01)
            ticks.append(time.monotonic())

    body = b"<html><body>" + b"<p>a b " * 30_000 + b"</body></html>"
    url = "http://127.0.0.1:1/heavy"
    ticking = asyncio.create_task(tick())
    try:
        await asyncio.sleep(0.05)
        started = time.monotonic()
        parsed = await pool.parse(body, url, "text/html", None)
        ended = time.monotonic()
    finally:
        ticking.cancel()
        await pool.close()
    assert parsed.word_count > 0
    # The loop kept taking turns while the page parsed. Counted, not timed: a parse on
    # the loop lets no tick run until it is done, however fast or loaded the machine;
    # parsed beside the loop, the loop ticks between the parser's GIL switches.
    during = [t for t in ticks if started < t < ended]
    assert len(during) >= 3, (len(during), ended - started)


async def test_an_on_demand_pool_starts_its_workers_once_the_loop_is_busy() -> None:
    before = {p.pid for p in multiprocessing.active_children()}
    # Any use of the loop's thread in a window counts as busy here (share 0).
    pool = StagePool(2, on_demand=True, window=0.05, share=0.0)
    body = html_page("Parsed apart", "<p>Okapis live in the forest of Ituri.</p>").body
    url = "http://127.0.0.1:1/okapi"
    expected = parse_page(body, url, "text/html; charset=utf-8", None)
    try:
        assert await pool.parse(body, url, "text/html; charset=utf-8", None) == expected
        assert not [p for p in multiprocessing.active_children() if p.pid not in before]
        await asyncio.sleep(0.1)
        # The window is over and the loop was "busy": the workers start, and the page
        # is parsed here meanwhile, not held for their start-up.
        assert await pool.parse(body, url, "text/html; charset=utf-8", None) == expected
        assert pool.workers_started
        started = [p for p in multiprocessing.active_children() if p.pid not in before]
        assert len(started) == 2
        for _ in range(600):  # the workers' start-up: a minute at most
            if not pool.parsing_here():
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("the workers never came up")
        assert await pool.parse(body, url, "text/html; charset=utf-8", None) == expected
    finally:
        await pool.close()
    assert not [p for p in multiprocessing.active_children() if p.pid not in before]


DIES_AT_ONCE = """
import os, signal
from trawl.pipeline.stage_pool import StagePool
pool = StagePool(1)
pool._start_workers("spawn")  # the worker imports the program: seconds
os.kill(os.getpid(), signal.SIGKILL)
"""


def _marked(mark: str) -> list[int]:
    """The processes whose environment holds ``mark``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if mark.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_a_worker_whose_parent_died_while_it_started_exits() -> None:
    """The parent killed before its spawned worker ran its initializer: the worker
    took init for its parent and watched it for ever, an orphan holding the parser's
    memory (found after `trawl serve` was killed mid-start by bench/kill_anywhere.py)."""
    mark = f"TRAWL_TEST_ORPHAN={os.getpid()}-{time.monotonic_ns()}"
    name, value = mark.split("=")
    parent = subprocess.run(
        [sys.executable, "-c", DIES_AT_ONCE],
        env={**os.environ, name: value},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    assert parent.returncode == -signal.SIGKILL
    deadline = time.monotonic() + 60  # the worker's start-up, then one look at its parent
    while _marked(mark) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = _marked(mark)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, "the worker outlived its parent"


# -- workers behind pipes: a death, a parser that raises, a shutdown -------------------


def _new_children(before: set[int | None]) -> list[multiprocessing.process.BaseProcess]:
    return [p for p in multiprocessing.active_children() if p.pid not in before]


def _started(folder: Path) -> set[int]:
    """The workers that took a held page."""
    return {int(p.name.split("-")[1]) for p in folder.glob("started-*")}


async def _until(check: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds} s")
        await asyncio.sleep(0.02)


BODY = html_page("Parsed apart", "<p>Okapis live in the forest of Ituri.</p>").body
HTML = "text/html; charset=utf-8"


async def test_a_worker_killed_mid_parse_loses_no_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SLOW, str(tmp_path))
    monkeypatch.setattr(stage_pool, "_parse", held_parse)
    (tmp_path / "hold").touch()
    before = {p.pid for p in multiprocessing.active_children()}
    pool = StagePool(1)
    pool.start()
    try:
        urls = [f"http://127.0.0.1:1/okapi-{n}" for n in range(4)]
        parsing = [asyncio.ensure_future(pool.parse(BODY, url, HTML, None)) for url in urls]
        await _until(lambda: any(tmp_path.glob("started-*")), "the worker took a page")
        (worker,) = _new_children(before)
        (tmp_path / "hold").unlink()
        assert worker.pid is not None
        os.kill(worker.pid, signal.SIGKILL)  # with the first page in hand, three waiting
        parsed = await asyncio.wait_for(asyncio.gather(*parsing), 120)
        assert parsed == [parse_page(BODY, url, HTML, None) for url in urls]
        # A new worker parsed them: the page in hand when its worker died included.
        (replacement,) = _new_children(before)
        assert replacement.pid != worker.pid
        assert (tmp_path / f"started-{replacement.pid}").exists()
        assert not pool.parsing_here()
    finally:
        await pool.close()
    assert not _new_children(before)


async def test_a_stopped_worker_is_killed_past_the_deadline_and_its_page_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A worker that never answers (SIGSTOP here; an endless loop in a parse) held its
    # pages, and the crawl waiting for them, for ever.
    monkeypatch.setenv(SLOW, str(tmp_path))
    monkeypatch.setattr(stage_pool, "_parse", held_parse)
    (tmp_path / "hold").touch()
    before = {p.pid for p in multiprocessing.active_children()}
    pool = StagePool(1, deadline=3.0)
    pool.start()
    try:
        urls = [f"http://127.0.0.1:1/okapi-{n}" for n in range(3)]
        parsing = [asyncio.ensure_future(pool.parse(BODY, url, HTML, None)) for url in urls]
        await _until(lambda: any(tmp_path.glob("started-*")), "the worker took a page")
        (worker,) = _new_children(before)
        assert worker.pid is not None
        os.kill(worker.pid, signal.SIGSTOP)
        (tmp_path / "hold").unlink()
        parsed = await asyncio.wait_for(asyncio.gather(*parsing), 60)
        assert parsed == [parse_page(BODY, url, HTML, None) for url in urls]
        (replacement,) = _new_children(before)
        assert replacement.pid != worker.pid
        assert not pool.parsing_here()  # a worker past its deadline is not a death
    finally:
        await pool.close()
    assert not _new_children(before)


async def test_a_worker_stopped_in_its_start_up_is_replaced() -> None:
    # Stopped before it said it was up (a start-up that never ends): no page was
    # ever handed to it, nor to anyone, and the crawl waited for ever.
    before = {p.pid for p in multiprocessing.active_children()}
    pool = StagePool(1, deadline=3.0)
    pool.start()
    try:
        (worker,) = _new_children(before)
        assert worker.pid is not None
        os.kill(worker.pid, signal.SIGSTOP)
        url = "http://127.0.0.1:1/okapi"
        parsed = await asyncio.wait_for(pool.parse(BODY, url, HTML, None), 60)
        assert parsed == parse_page(BODY, url, HTML, None)
        (replacement,) = _new_children(before)
        assert replacement.pid != worker.pid
    finally:
        await pool.close()
    assert not _new_children(before)


async def test_a_page_that_breaks_the_parser_fails_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(stage_pool, "_parse", raising_parse)
    before = {p.pid for p in multiprocessing.active_children()}
    pool = StagePool(1)
    pool.start()
    try:
        with pytest.raises(ValueError, match=r"the parser broke on http://127.0.0.1:1/boom"):
            await pool.parse(BODY, "http://127.0.0.1:1/boom", HTML, None)
        # The same worker goes on with the next page.
        (worker,) = _new_children(before)
        url = "http://127.0.0.1:1/okapi"
        assert await pool.parse(BODY, url, HTML, None) == parse_page(BODY, url, HTML, None)
        assert [p.pid for p in _new_children(before)] == [worker.pid]
    finally:
        await pool.close()


async def test_an_answer_that_does_not_unpickle_fails_its_page_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The pool read the answer after taking its page off the worker's hands: an
    # answer that did not unpickle (an exception whose __init__ takes other arguments
    # than its args) raised in the loop's reader, and its page waited for ever.
    monkeypatch.setattr(stage_pool, "_parse", unreadable_answer_parse)
    before = {p.pid for p in multiprocessing.active_children()}
    pool = StagePool(1)
    pool.start()
    try:
        urls = ["http://127.0.0.1:1/odd", "http://127.0.0.1:1/okapi"]
        odd, fine = (asyncio.ensure_future(pool.parse(BODY, url, HTML, None)) for url in urls)
        with pytest.raises(WorkerError, match="_OddError"):
            await asyncio.wait_for(odd, 60)
        assert await asyncio.wait_for(fine, 60) == parse_page(BODY, urls[1], HTML, None)
    finally:
        await pool.close()
    assert not _new_children(before)


async def test_a_page_its_worker_dies_on_twice_fails_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A page that kills the parser itself (a crash in C) would kill every worker it is
    # handed to: the second death fails that page, and the pool goes on.
    monkeypatch.setenv(SLOW, str(tmp_path))
    monkeypatch.setattr(stage_pool, "_parse", held_parse)
    (tmp_path / "hold").touch()
    before = {p.pid for p in multiprocessing.active_children()}
    pool = StagePool(1)
    pool.start()
    try:
        parsing = asyncio.ensure_future(pool.parse(BODY, "http://127.0.0.1:1/x", HTML, None))
        killed: set[int] = set()
        for _ in range(stage_pool.MAX_TRIES):
            await _until(
                lambda: bool(_started(tmp_path) - killed),
                "a worker took the page",
            )
            (pid,) = _started(tmp_path) - killed
            os.kill(pid, signal.SIGKILL)
            killed.add(pid)
        with pytest.raises(WorkerError, match="died on this task 2 times"):
            await asyncio.wait_for(parsing, 120)
        (tmp_path / "hold").unlink()
        url = "http://127.0.0.1:1/okapi"
        parsed = await asyncio.wait_for(pool.parse(BODY, url, HTML, None), 120)
        assert parsed == parse_page(BODY, url, HTML, None)
    finally:
        await pool.close()
    assert not _new_children(before)


async def test_shutdown_with_pages_in_flight_fails_them_and_ends_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SLOW, str(tmp_path))
    monkeypatch.setattr(stage_pool, "_parse", held_parse)
    (tmp_path / "hold").touch()
    before = {p.pid for p in multiprocessing.active_children()}
    pool = StagePool(2)
    pool.start()
    urls = [f"http://127.0.0.1:1/okapi-{n}" for n in range(6)]
    parsing = [asyncio.ensure_future(pool.parse(BODY, url, HTML, None)) for url in urls]
    await _until(lambda: len(list(tmp_path.glob("started-*"))) == 2, "both workers took a page")
    started = time.monotonic()
    await pool.close()  # two pages in the workers' hands, four waiting
    answers = await asyncio.wait_for(asyncio.gather(*parsing, return_exceptions=True), 10)
    assert all(isinstance(a, WorkerError) for a in answers), answers
    assert time.monotonic() - started < 5  # not held for the pages being parsed
    assert not _new_children(before)


async def test_pages_larger_than_the_pipe_pass_both_ways_without_a_deadlock() -> None:
    # A worker writing a large answer waits for the loop to read it; were the loop
    # waiting meanwhile to write it the next large page, neither would go on.
    pool = StagePool(1)
    pool.start()
    words = " ".join(f"okapi{n}" for n in range(100_000))  # ~1 MB each way
    pages = [
        (html_page(f"Big {n}", f"<p>{words} {n}</p>").body, f"http://127.0.0.1:1/{n}")
        for n in range(4)
    ]
    try:
        parsed = await asyncio.wait_for(
            asyncio.gather(*(pool.parse(body, url, HTML, None) for body, url in pages)), 120
        )
    finally:
        await pool.close()
    assert parsed == [parse_page(body, url, HTML, None) for body, url in pages]


# A hostile page: 800 KB of bare paragraphs, ~8 s of parsing (10 us a byte, loaded).
# 1.6 MB of bare paragraphs: several seconds to parse on a quiet machine (10 us a byte
# at load), far past the test's 1 s deadline; 100,000 took under 3 s when quiet.
HOSTILE = ("<html><body>" + "<p>word " * 200_000 + "</body></html>").encode()


async def test_a_parse_in_this_process_past_the_deadline_fails_its_page(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    """A page over LOOP_PARSE_BYTES parsed in the crawl's own process (no workers, or
    on demand before they start) runs in a thread, which had no deadline: a parse that
    never ended held the crawl for ever. The parse_timeout setting bounds it: the page
    fails, the crawl goes on, a new thread takes the next large page."""
    pages = {f"/p{n}": html_page(f"Page {n}", f"<p>kiwi number {n}</p>") for n in range(3)}
    links = "".join(f'<a href="{p}">{p}</a>' for p in (*pages, "/hostile", "/large"))
    large = html_page("Large", "<p>" + "kiwi grows on vines. " * 8_000 + "</p>")
    assert len(large.body) > stage_pool.LOOP_PARSE_BYTES
    site = serve(
        {"/": html_page("Home", links), **pages, "/hostile": Route(HOSTILE), "/large": large}
    )
    settings = Settings(data=tmp_path / "data", delay=0, parse_workers=0, parse_timeout=1)
    store = SQLiteStore(settings.sqlite_path)
    started = time.monotonic()
    try:
        outcome = await crawl([site.url("/")], settings, store)
        saved = {p.url: p for p in store.pages()}
    finally:
        store.close()
    assert time.monotonic() - started < 30
    assert outcome.outcome == Outcome.COMPLETE
    assert outcome.internal_errors == 1  # the page's parse, at 1 s of its several
    assert outcome.samples["internal error (see the log)"] == [site.url("/hostile")]
    assert not saved[site.url("/hostile")].searchable
    searchable = {url for url, page in saved.items() if page.searchable}
    assert {site.url(p) for p in (*pages, "/large")} <= searchable
