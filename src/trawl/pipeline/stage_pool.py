"""Worker processes for the pure stages that cost CPU: parsing HTML, building index documents.

Parsing is most of a crawl's CPU time and building index documents (stemming each
page's text) most of a crawl's end. Run in the event loop's process, either holds
the GIL away from fetching, storing and indexing; in a pool they run on the other
cores. The stages themselves stay pure functions: this module only decides where
they run, and ``trawl.pipeline`` still decides when.

The stages are imported where they run, not when this module is: ``trawl crawl``
starts the pool before it imports the rest of the program, so the workers import
the parser and load the language model while the crawl's own process starts up.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import signal
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from itertools import islice
from multiprocessing import get_all_start_methods, get_context
from typing import Any

from trawl.records import PageRecord, ParsedPage

log = logging.getLogger(__name__)

MAX_WORKERS = 4
# Pages per task when building documents: large enough that pickling and the round
# trip are a small share, small enough that every worker gets a share of a short crawl.
DOCUMENT_BATCH = 32
# Pages per task when a whole index is built (``trawl index``, an evaluation): many
# pages, so fewer and larger tasks. Measured on SciFact's 5,183 documents, two
# workers: 32 a task cost 1.61 CPU-s a build, 256 to 512 cost 1.41 to 1.51.
BULK_DOCUMENT_BATCH = 256
# A crawl's pool on demand (``parse_workers`` -1): pages are parsed in the event loop's
# process until its thread has been busy BUSY_SHARE of a BUSY_WINDOW (seconds), then by
# worker processes. A crawl bound by politeness leaves the loop idle most of the time
# and never starts them: one process, where forked workers tripled the crawl's memory
# (bench/RESULTS.md, "Many hosts: parsing on demand").
BUSY_WINDOW = 2.0
BUSY_SHARE = 0.85
# A body parsed in this process past this size is parsed in a thread: parsing costs up
# to 7 us a byte (a hostile 4 MB page of bare paragraphs took 30 s), and on the event
# loop it held every other request until their timeouts fired. In a thread the loop
# still gets the GIL at each switch interval (5 ms). Smaller pages take under 0.2 s.
LOOP_PARSE_BYTES = 128 * 1024

Page = tuple[PageRecord, Sequence[str]]  # a page and the anchor texts of links to it
Fields = dict[str, Any]  # index_fields' answer


def start_pool(setting: int, *, parsing: bool = True, pool: StagePool | None = None) -> StagePool:
    """``pool``, or a new pool for the ``parse_workers`` ``setting``, started: how every
    command gets its stage pool.

    Called first thing, before anything starts a thread (the index writer does): a
    process with one thread forks the workers, which inherit every module it has
    imported, where spawned ones import the whole program again. In an event loop, a
    pool that parses in this process loads the parser beside the first requests
    (``warm_up``); ``parsing`` False: a pool that only builds documents."""
    if pool is None:
        # -1 is "as the work needs": a parsing pool starts its workers when the event
        # loop is busy; one that only builds documents has a batch to build at once.
        on_demand = setting < 0 and parsing
        pool = StagePool(workers_for(setting), parsing=parsing, on_demand=on_demand)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pool.start()
    else:
        pool.warm_up()
    return pool


def workers_for(setting: int) -> int:
    """Worker processes for the ``parse_workers`` setting.

    -1 (the default) is one per usable core, up to MAX_WORKERS: the event loop's own
    work (fetching, storing, indexing) waits on the network and on the workers much
    of the time, so a worker per core keeps every core busy, where one per spare core
    left one half idle on a two-core machine."""
    if setting >= 0:
        return setting
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(MAX_WORKERS, cpus or 1))


PARENT_CHECK = 1.0  # seconds between a worker's looks at whether its parent still lives


def _worker_start(parsing: bool, parent: int) -> None:
    """A worker process's initializer: watch the parent (pid ``parent``), then warm up.

    Ctrl-C and a SIGTERM to the process group reach the workers too; the parent
    stops the crawl on them and still needs its workers to close it (the end's index
    documents), so they ignore both: the parent's shutdown or death ends them."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _exit_with_parent(parent)
    if parsing:
        _warm()
    else:
        _warm_documents()


def _exit_with_parent(parent: int) -> None:
    """End this worker within PARENT_CHECK seconds of its parent's death (kill -9).

    A forked worker holds the task queue's pipe open itself, so it would never see
    the parent go and would wait on the queue for ever, with the parser's memory.
    """
    if os.getppid() != parent:
        # It died while this worker started (a spawned one imports the whole program
        # first): the worker would have watched its new parent, init, for ever.
        os._exit(0)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK)
        os._exit(0)

    threading.Thread(target=watch, name="trawl-parent-watch", daemon=True).start()


def _warm() -> None:
    """A worker's start-up: the stages' modules and the language model."""
    _warm_documents()
    importlib.import_module("trawl.pipeline.parse")
    importlib.import_module("trawl.extract.language").preload()


def _warm_documents() -> None:
    """The start-up of a worker that only builds documents: no parser, no model."""
    importlib.import_module("trawl.index.documents")


def _parse(
    body: bytes, url: str, content_type: str | None, content_language: str | None
) -> ParsedPage:
    from trawl.pipeline.parse import parse_page  # noqa: PLC0415 - see the module's docstring

    return parse_page(body, url, content_type, content_language)


def _timed_parse(
    body: bytes, url: str, content_type: str | None, content_language: str | None
) -> tuple[ParsedPage, float]:
    """``_parse``'s answer and the CPU seconds its thread spent on it."""
    start = time.thread_time()
    parsed = _parse(body, url, content_type, content_language)
    return parsed, time.thread_time() - start


def _documents(pages: Sequence[Page]) -> list[Fields]:
    from trawl.index.documents import index_fields  # noqa: PLC0415 - see the module's docstring

    return [index_fields(record, anchors) for record, anchors in pages]


def saturated(cpu: float, wall: float, share: float = BUSY_SHARE) -> bool:
    """Whether a thread that ran ``cpu`` seconds in ``wall`` seconds had no time to spare."""
    return wall > 0 and cpu >= share * wall


def _batches(pages: Iterable[Page], size: int) -> Iterator[list[Page]]:
    it = iter(pages)
    while batch := list(islice(it, size)):
        yield batch


class StagePool:
    """Runs ``parse_page`` and ``index_fields`` in worker processes when ``workers`` > 0,
    in this process otherwise.

    A worker that dies (a parser crash on a hostile page) fails that page only: the
    pool is made anew for the next one.
    """

    def __init__(
        self,
        workers: int,
        *,
        parsing: bool = True,
        on_demand: bool = False,
        window: float = BUSY_WINDOW,
        share: float = BUSY_SHARE,
    ) -> None:
        """``parsing`` False: the pool only builds documents (``trawl index``, evaluation),
        so its workers skip the parser's start-up (the language model, about 0.5 s).
        ``on_demand``: parse in this process, and start the workers only once the event
        loop's thread ran at least ``share`` of a ``window`` (seconds) of wall time."""
        self._workers = workers
        self._parsing = parsing
        self._on_demand = on_demand and workers > 0
        self._window, self._share = window, share
        # (wall, the loop thread's CPU) at the start of the window being watched
        self._since: tuple[float, float] | None = None
        self._started: list[Future[int]] = []  # each worker's first task: done once it is up
        self._pool: ProcessPoolExecutor | None = None
        self._warming: asyncio.Task[None] | None = None
        self._thread_cpu = 0.0  # CPU seconds of parses run in threads (LOOP_PARSE_BYTES)
        # One thread, so one parse at a time as on the loop: each holds a huge page's tree.
        # An executor, not a lock: it is bound to no event loop. Made at its first page.
        self._parse_thread: ThreadPoolExecutor | None = None

    @property
    def workers_started(self) -> bool:
        """Whether worker processes were started (an on-demand pool's may never be)."""
        return self._pool is not None

    def parsing_here(self) -> bool:
        """Whether the next page is parsed in this process: no workers, or on demand and
        not yet up (a page does not wait for a worker's start-up; it is parsed here)."""
        if self._workers == 0:
            return True
        if not self._on_demand:
            return False
        return self._pool is None or not all(f.done() for f in self._started)

    def _watch_load(self) -> None:
        """Start the workers when the loop's thread had no time to spare for a window."""
        # A parse run in a thread is the loop's work too: it holds the GIL from it.
        now, cpu = time.monotonic(), time.thread_time() + self._thread_cpu
        if self._since is None or now - self._since[0] < self._window:
            self._since = self._since or (now, cpu)
            return
        wall, busy = now - self._since[0], cpu - self._since[1]
        self._since = (now, cpu)
        if saturated(busy, wall, self._share):
            log.info(
                "parsing moves to %d worker processes: the event loop was busy %.0f%% of %.1f s",
                self._workers,
                100 * busy / wall,
                wall,
            )
            self._launch(self._start_pool())

    def start(self) -> None:
        """Start the worker processes now (none: nothing to do), so that their start-up
        (imports, the language model) overlaps the crawl's own.

        Before anything starts a thread, so that the workers can be forked: see
        ``start_pool``.
        """
        if self._workers > 0 and self._pool is None and not self._on_demand:
            fork = "fork" in get_all_start_methods() and threading.active_count() == 1
            self._launch(self._start_pool("fork" if fork else "spawn"))

    def _launch(self, pool: ProcessPoolExecutor) -> None:
        # A pool starts its processes as tasks come (a spawning one, one per task
        # while none is idle): one now for each, so no page waits for a start-up.
        self._started = [pool.submit(int) for _ in range(self._workers)]

    def warm_up(self) -> None:
        """``start``, or, when parsing in this process, load the parser's modules and
        the language model in a thread beside the first requests. In an event loop."""
        self.start()
        here = self._workers == 0 or (self._on_demand and self._pool is None)
        if here and self._parsing and self._warming is None:
            self._warming = asyncio.create_task(asyncio.to_thread(_warm))

    async def parse(
        self, body: bytes, url: str, content_type: str | None, content_language: str | None
    ) -> ParsedPage:
        """``parse_page``'s answer for one response."""
        if self._on_demand and self._pool is None:
            self._watch_load()
        if self.parsing_here():
            if self._warming is not None and not self._warming.done():
                # The parser's modules are being imported in a thread: parsing now would
                # hold the event loop on the import lock until they are (0.1-0.2 s at a
                # crawl's start, every host's first requests held). Waited for off it; a
                # warm-up that failed fails the parse below, with its own error.
                with contextlib.suppress(Exception):
                    await asyncio.shield(self._warming)
            if len(body) > LOOP_PARSE_BYTES:
                if self._parse_thread is None:
                    self._parse_thread = ThreadPoolExecutor(1, thread_name_prefix="trawl-parse")
                parsed, cpu = await asyncio.get_running_loop().run_in_executor(
                    self._parse_thread, _timed_parse, body, url, content_type, content_language
                )
                self._thread_cpu += cpu
                return parsed
            return _parse(body, url, content_type, content_language)
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(
                self._start_pool(), _parse, body, url, content_type, content_language
            )
        except BrokenProcessPool:
            self._pool = None
            self._started = []
            raise

    async def documents(
        self, pages: Iterable[Page], *, batch: int = DOCUMENT_BATCH
    ) -> AsyncIterator[Fields]:
        """``index_fields`` of each page, in order, built ``batch`` pages a task. ``pages``
        is read lazily, a few batches ahead of the workers, so a large crawl's pages are
        never all in memory."""
        if batch < 1:
            raise ValueError(f"pages per task must be at least 1, not {batch}")
        if self._workers == 0 or (self._on_demand and self._pool is None):
            for own in _batches(pages, batch):
                for fields in _documents(own):
                    yield fields
            return
        for sent, future in self._submitted(pages, batch):
            try:
                built = await asyncio.wrap_future(future)
            except BrokenProcessPool:
                built = self._rebuilt(sent)
            for fields in built:
                yield fields

    def _submitted(
        self, pages: Iterable[Page], size: int
    ) -> Iterator[tuple[list[Page], Future[list[Fields]]]]:
        """Each batch of ``pages`` with the future of its documents, in order; two
        batches per worker are in the pool ahead of the one handed out."""
        ahead = 2 * self._workers
        pending: deque[tuple[list[Page], Future[list[Fields]]]] = deque()
        batches = _batches(pages, size)
        while True:
            while len(pending) < ahead and (batch := next(batches, None)) is not None:
                pending.append((batch, self._start_pool().submit(_documents, batch)))
            if not pending:
                return
            yield pending.popleft()

    def _rebuilt(self, batch: list[Page]) -> list[Fields]:
        # Pure code on text already extracted should not crash a worker; if one
        # does, the batch is built here and the pool made anew for the next ones.
        self._pool = None
        self._started = []
        return _documents(batch)

    def _start_pool(self, method: str = "spawn") -> ProcessPoolExecutor:
        # Only a single-threaded process may fork safely, so a pool made anew
        # mid-crawl (after a worker died) is spawned.
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                self._workers,
                mp_context=get_context(method),
                initializer=_worker_start,
                initargs=(self._parsing, os.getpid()),
            )
        return self._pool

    async def close(self) -> None:
        if self._warming is not None:
            await self._warming
            self._warming = None
        self.shutdown()

    def shutdown(self) -> None:
        """Stop the workers (again: a no-op), cancelling what they have not begun."""
        if self._parse_thread is not None:
            self._parse_thread.shutdown(wait=False, cancel_futures=True)
            self._parse_thread = None
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None
            self._started = []
