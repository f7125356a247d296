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
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import islice
from multiprocessing import get_all_start_methods
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from trawl.errors import WorkerError
from trawl.pipeline.piped import (
    framed,
    loads,
    reap,
    send_whole,
    start_worker,
    take,
    worker_signals,
)
from trawl.records import PageRecord, ParsedPage
from trawl.settings import Settings

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

# Seconds a worker may spend on one task before it is killed (SIGKILL ends a stopped one
# too) and replaced: a parse in an endless loop, or a stopped worker, held its pages and
# the crawl waiting for them for ever. The task goes to the next worker, as after a death,
# and fails alone the second time; not counted as a death (a slow page is no broken
# install). A parse in this process's thread fails at it. The parse_timeout setting's.
TASK_DEADLINE: float = Settings.parse_timeout

Page = tuple[PageRecord, Sequence[str]]  # a page and the anchor texts of links to it
Fields = dict[str, Any]  # index_fields' answer


def start_pool(
    setting: int,
    *,
    parsing: bool = True,
    pool: StagePool | None = None,
    deadline: float = TASK_DEADLINE,
) -> StagePool:
    """``pool``, or a new pool for the ``parse_workers`` ``setting``, started: how every
    command gets its stage pool.

    Called first thing, before anything starts a thread (the index writer does): a
    process with one thread forks the workers, which inherit every module it has
    imported, where spawned ones import the whole program again. In an event loop, a
    pool that parses in this process loads the parser beside the first requests
    (``warm_up``); ``parsing`` False: a pool that only builds documents. ``deadline``:
    the parse_timeout setting."""
    if pool is None:
        # -1 is "as the work needs": a parsing pool starts its workers when the event
        # loop is busy; one that only builds documents has a batch to build at once.
        on_demand = setting < 0 and parsing
        pool = StagePool(
            workers_for(setting), parsing=parsing, on_demand=on_demand, deadline=deadline
        )
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


# Worker deaths in a row, with no answer between them, after which no worker is started
# again and the stages run in this process: each costs a spawn (a second of imports)
# for a worker that would likely die the same way (a broken install).
MAX_DEATHS = 3
# Tasks in a worker's hands at once: the one it is on, and the next, already in its
# pipe when it answers, so that it does not wait for this process to send one.
IN_HAND = 2
# Times a task is handed to a worker that then dies: a page that kills the parser
# itself (not just its worker, killed from outside) fails alone the second time.
MAX_TRIES = 2


def _serve(conn: Connection, parsing: bool, parent: int) -> None:
    """A worker: warm up, say so, then run each call its pipe brings, one at a time,
    until it brings None (the pool's shutdown) or closes."""
    worker_signals(parent)
    if parsing:
        _warm()
    else:
        _warm_documents()
    send_whole(conn, os.getpid())  # up: the pool hands it work from now on
    while True:
        try:
            call = conn.recv()
        except (EOFError, OSError):
            return
        if call is None:
            return
        function, args = call
        try:
            answer: tuple[bool, Any] = (True, function(*args))
        except Exception as e:
            answer = (False, e)
        try:
            send_whole(conn, answer)
        except OSError:
            return
        except Exception as e:  # an exception that does not pickle: its words do
            send_whole(conn, (False, WorkerError(f"{type(e).__name__}: {e}")))


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


def _told_parse(
    started: asyncio.Future[None],
    body: bytes,
    url: str,
    content_type: str | None,
    content_language: str | None,
) -> tuple[ParsedPage, float]:
    """``_timed_parse`` in a thread, telling ``started``'s loop when it begins."""
    started.get_loop().call_soon_threadsafe(_settle, started)
    return _timed_parse(body, url, content_type, content_language)


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def saturated(cpu: float, wall: float, share: float = BUSY_SHARE) -> bool:
    """Whether a thread that ran ``cpu`` seconds in ``wall`` seconds had no time to spare."""
    return wall > 0 and cpu >= share * wall


def _batches(pages: Iterable[Page], size: int) -> Iterator[list[Page]]:
    it = iter(pages)
    while batch := list(islice(it, size)):
        yield batch


@dataclass(eq=False)
class _Job:
    function: Callable[..., Any]
    args: tuple[Any, ...]
    answer: asyncio.Future[Any]
    tries: int = 0  # workers that died on it
    message: bytes | None = None  # framed, once


@dataclass(eq=False)
class _Worker:
    process: BaseProcess
    conn: Connection
    up: bool = False  # warmed up: it said so on its pipe
    jobs: deque[_Job] = field(default_factory=deque)  # handed to it, answered in order
    received: bytearray = field(default_factory=bytearray)
    outgoing: bytearray = field(default_factory=bytearray)  # the pipe was full
    writing: bool = False  # a writer on the loop sends ``outgoing`` as the pipe drains
    loop: asyncio.AbstractEventLoop | None = None  # the loop reading its pipe
    deadline: asyncio.TimerHandle | None = None  # of the task it is on (jobs[0])


class StagePool:
    """Runs ``parse_page`` and ``index_fields`` in worker processes when ``workers`` > 0,
    in this process otherwise.

    Each worker has a pipe of its own (``piped.py``), written by the caller and read by
    the event loop; a task goes to the first idle worker, in the order they came. A
    worker that dies (kill -9, out of memory) costs no task: its task goes to the next
    worker and a new one is spawned, at most MAX_DEATHS in a row before the stages run
    in this process. A task a worker dies on twice (a page that crashes the parser)
    fails alone, with a ``WorkerError``.
    """

    def __init__(
        self,
        workers: int,
        *,
        parsing: bool = True,
        on_demand: bool = False,
        window: float = BUSY_WINDOW,
        share: float = BUSY_SHARE,
        deadline: float = TASK_DEADLINE,
    ) -> None:
        """``parsing`` False: the pool only builds documents (``trawl index``, evaluation),
        so its workers skip the parser's start-up (the language model, about 0.5 s).
        ``on_demand``: parse in this process, and start the workers only once the event
        loop's thread ran at least ``share`` of a ``window`` (seconds) of wall time.
        ``deadline``: seconds a task may take (TASK_DEADLINE)."""
        self._workers = workers
        self._deadline = deadline
        self._parsing = parsing
        self._on_demand = on_demand and workers > 0
        self._window, self._share = window, share
        # (wall, the loop thread's CPU) at the start of the window being watched
        self._since: tuple[float, float] | None = None
        self._all: list[_Worker] = []
        self._queue: deque[_Job] = deque()  # tasks waiting for an idle worker
        self._deaths = 0  # in a row, with no answer between them
        self._spawned = False  # the workers were started (and not shut down since)
        self._warming: asyncio.Task[None] | None = None
        self._thread_cpu = 0.0  # CPU seconds of parses run in threads (LOOP_PARSE_BYTES)
        # One thread, so one parse at a time as on the loop: each holds a huge page's tree.
        # An executor, not a lock: it is bound to no event loop. Made at its first page.
        self._parse_thread: ThreadPoolExecutor | None = None

    @property
    def workers_started(self) -> bool:
        """Whether worker processes were started (an on-demand pool's may never be)."""
        return self._spawned

    def _gave_up(self) -> bool:
        """Workers died MAX_DEATHS times in a row and none is left: the stages run here."""
        return self._spawned and not self._all

    def parsing_here(self) -> bool:
        """Whether the next page is parsed in this process: no workers, or on demand and
        not yet up (a page does not wait for a worker's start-up; it is parsed here)."""
        if self._workers == 0 or self._gave_up():
            return True
        if not self._on_demand:
            return False
        return not self._spawned or not all(w.up for w in self._all)

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
            self._start_workers()
            self._attach(asyncio.get_running_loop())

    def start(self) -> None:
        """Start the worker processes now (none: nothing to do), so that their start-up
        (imports, the language model) overlaps the crawl's own.

        Before anything starts a thread, so that the workers can be forked: see
        ``start_pool``.
        """
        if self._workers > 0 and not self._spawned and not self._on_demand:
            fork = "fork" in get_all_start_methods() and threading.active_count() == 1
            self._start_workers("fork" if fork else "spawn")

    def _start_workers(self, method: str = "spawn") -> None:
        # Only a single-threaded process may fork safely, so workers started mid-crawl
        # (on demand, or after one died) are spawned.
        if self._spawned:
            return
        self._spawned = True
        for _ in range(self._workers):
            self._spawn(method)

    def _spawn(self, method: str = "spawn") -> None:
        """One more worker, unless the system refuses it (out of processes or memory):
        the pool then runs with fewer, and with none the stages run here."""
        try:
            process, conn = start_worker(
                method, _serve, (self._parsing, os.getpid()), "trawl-stage"
            )
        except Exception:
            log.exception("a stage worker could not be started")
            return
        self._all.append(_Worker(process, conn))

    def warm_up(self) -> None:
        """``start``, or, when parsing in this process, load the parser's modules and
        the language model in a thread beside the first requests. In an event loop."""
        self.start()
        here = self._workers == 0 or (self._on_demand and not self._spawned)
        if here and self._parsing and self._warming is None:
            self._warming = asyncio.create_task(asyncio.to_thread(_warm))

    async def parse(
        self, body: bytes, url: str, content_type: str | None, content_language: str | None
    ) -> ParsedPage:
        """``parse_page``'s answer for one response."""
        if self._on_demand and not self._spawned:
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
                return await self._parse_in_thread(body, url, content_type, content_language)
            return _parse(body, url, content_type, content_language)
        answer: ParsedPage = await self._submit(_parse, body, url, content_type, content_language)
        return answer

    async def _parse_in_thread(
        self, body: bytes, url: str, content_type: str | None, content_language: str | None
    ) -> ParsedPage:
        """A large page's parse, in this process's parse thread, within the deadline
        (from its start: not while it waits for the thread). A thread cannot be killed:
        past the deadline the page fails and the thread is left to end its parse alone;
        a new one takes the pages that waited behind it."""
        loop = asyncio.get_running_loop()
        while True:
            if self._parse_thread is None:
                self._parse_thread = ThreadPoolExecutor(1, thread_name_prefix="trawl-parse")
            thread = self._parse_thread
            started: asyncio.Future[None] = loop.create_future()
            parsing = loop.run_in_executor(
                thread, _told_parse, started, body, url, content_type, content_language
            )
            try:
                await asyncio.wait((started, parsing), return_when=asyncio.FIRST_COMPLETED)
                parsed, cpu = await asyncio.wait_for(parsing, self._deadline)
            except TimeoutError:
                if self._parse_thread is thread:
                    self._parse_thread = None
                    thread.shutdown(wait=False, cancel_futures=True)  # the rest: resent
                log.warning("parsing %s took over %g s: the page fails", url, self._deadline)
                raise WorkerError(f"parse took over {self._deadline:g} s") from None
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if parsing.cancelled() and task is not None and not task.cancelling():
                    continue  # it waited behind a parse dropped at its deadline
                raise
            finally:
                started.cancel()
            self._thread_cpu += cpu
            return parsed

    async def documents(
        self, pages: Iterable[Page], *, batch: int = DOCUMENT_BATCH
    ) -> AsyncIterator[Fields]:
        """``index_fields`` of each page, in order, built ``batch`` pages a task. ``pages``
        is read lazily, a few batches ahead of the workers, so a large crawl's pages are
        never all in memory."""
        if batch < 1:
            raise ValueError(f"pages per task must be at least 1, not {batch}")
        if self._workers == 0 or (self._on_demand and not self._spawned) or self._gave_up():
            for own in _batches(pages, batch):
                for fields in _documents(own):
                    yield fields
            return
        # Two batches per worker are handed out ahead of the one being read.
        ahead = 2 * self._workers
        pending: deque[tuple[list[Page], asyncio.Future[list[Fields]]]] = deque()
        batches = _batches(pages, batch)
        try:
            while True:
                while len(pending) < ahead and (sent := next(batches, None)) is not None:
                    pending.append((sent, self._submit(_documents, sent)))
                if not pending:
                    return
                sent, answer = pending.popleft()
                try:
                    built = await answer
                except WorkerError:
                    # Pure code on text already extracted should not kill a worker; if
                    # it does, twice, the batch is built here.
                    built = _documents(sent)
                for fields in built:
                    yield fields
        finally:
            for _, answer in pending:  # the caller stopped reading: not built for nothing
                answer.cancel()

    def _submit(self, function: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        """``function(*args)``'s answer, from the first idle worker, in the order asked."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[Any] = loop.create_future()
        self._start_workers()
        if self._gave_up():
            try:
                answer.set_result(function(*args))
            except Exception as e:
                answer.set_exception(e)
            return answer
        self._attach(loop)
        self._queue.append(_Job(function, args, answer))
        self._dispatch()
        return answer

    def _attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Have ``loop`` read every worker's pipe: the answers, and a death at once."""
        for worker in self._all:
            if worker.loop is loop:
                continue
            fd = worker.conn.fileno()
            if worker.loop is not None and not worker.loop.is_closed():
                worker.loop.remove_reader(fd)
            os.set_blocking(fd, False)
            loop.add_reader(fd, self._readable, worker)
            worker.loop = loop
            if not worker.up:  # its start-up has the deadline of a task
                if worker.deadline is not None:
                    worker.deadline.cancel()
                worker.deadline = loop.call_later(self._deadline, self._expire, worker, None)

    def _dispatch(self) -> None:
        """Hand waiting tasks to workers, longest waiting first: to an idle one, else
        to one with fewer than IN_HAND tasks in hand."""
        while self._queue:
            job = self._queue[0]
            if job.answer.done():  # its caller stopped waiting
                self._queue.popleft()
                continue
            up = [w for w in self._all if w.up and len(w.jobs) < IN_HAND]
            if not up:
                return
            worker = min(up, key=lambda w: len(w.jobs))
            if job.message is None:
                try:
                    job.message = framed((job.function, job.args))
                except Exception as e:  # arguments that do not pickle: that task's fault
                    self._queue.popleft()
                    job.answer.set_exception(e)
                    continue
            self._queue.popleft()
            worker.jobs.append(job)
            if len(worker.jobs) == 1:
                self._arm(worker)
            worker.outgoing += job.message
            if not self._write(worker):
                return  # it died: its tasks were handed on, and dispatched again

    def _write(self, worker: _Worker) -> bool:
        """Write what ``worker``'s pipe takes without waiting; the rest when it takes
        more (a writer on the loop). Never blocking: the worker may be writing a large
        answer that waits for this loop to read it. False: the worker died."""
        fd = worker.conn.fileno()
        try:
            written = os.write(fd, worker.outgoing)
        except BlockingIOError:
            written = 0
        except OSError:
            self._died(worker)
            return False
        del worker.outgoing[:written]
        loop = worker.loop
        if worker.outgoing and not worker.writing and loop is not None:
            loop.add_writer(fd, self._write, worker)
            worker.writing = True
        elif not worker.outgoing and worker.writing and loop is not None:
            loop.remove_writer(fd)
            worker.writing = False
        return True

    def _readable(self, worker: _Worker) -> None:
        """The event loop's reader of ``worker``'s pipe: takes what it holds, answers
        the tasks whose answer is whole, and notices a death (the pipe closed)."""
        try:
            chunk = os.read(worker.conn.fileno(), 1 << 20)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._died(worker)
            return
        worker.received.extend(chunk)
        while (message := take(worker.received)) is not None:
            if not worker.up:  # its greeting: warmed up
                worker.up = True
                self._arm(worker)  # the start-up's deadline is over
                continue
            job = worker.jobs.popleft()
            self._arm(worker)  # the next task in hand is the one it is on now
            self._deaths = 0
            try:
                done, value = loads(message)
            except Exception as e:  # an exception whose __init__ does not take its args
                # Raised here, the task would wait for ever: it is off the worker's hands.
                done, value = False, WorkerError(f"unreadable answer: {type(e).__name__}: {e}")
            if not job.answer.done():
                if done:
                    job.answer.set_result(value)
                else:
                    job.answer.set_exception(value)
        self._dispatch()

    def _arm(self, worker: _Worker) -> None:
        """Start the deadline of the task ``worker`` is on (none: no deadline)."""
        if worker.deadline is not None:
            worker.deadline.cancel()
            worker.deadline = None
        if worker.jobs and worker.loop is not None:
            worker.deadline = worker.loop.call_later(
                self._deadline, self._expire, worker, worker.jobs[0]
            )

    def _expire(self, worker: _Worker, job: _Job | None) -> None:
        """``worker`` held ``job`` (None: its start-up) past the deadline: killed, and
        its tasks handed on. A start-up that never ends counts as a death."""
        if worker not in self._all:
            return
        if job is None and worker.up:
            return
        if job is not None and (not worker.jobs or worker.jobs[0] is not job):
            return
        log.warning(
            "stage worker %s did not answer in %s s: killed, a new one takes its place",
            worker.process.pid,
            self._deadline,
        )
        with contextlib.suppress(OSError):
            worker.process.kill()
        self._died(worker, death=job is None)

    def _died(self, worker: _Worker, *, death: bool = True) -> None:
        """``worker``'s pipe closed: its task goes to the next worker (or fails, the
        second time), and a new worker takes its place, MAX_DEATHS in a row at most.
        ``death`` False: killed past its deadline, which is not counted as a death."""
        if death:
            log.warning("stage worker %s died: a new one takes its place", worker.process.pid)
        self._forget(worker)
        self._deaths += death
        if worker.jobs:  # the first was being worked on; the next ones wait again
            worker.jobs[0].tries += 1
            first = worker.jobs[0]
            if first.tries >= MAX_TRIES and not first.answer.done():
                first.answer.set_exception(
                    WorkerError(f"a stage worker died on this task {first.tries} times")
                )
            self._queue.extendleft(reversed([j for j in worker.jobs if not j.answer.done()]))
        if self._deaths < MAX_DEATHS:
            self._spawn()
            if worker.loop is not None:
                self._attach(worker.loop)
        elif self._deaths == MAX_DEATHS:
            log.error(
                "%d stage workers in a row died before answering: no more are started",
                self._deaths,
            )
        if self._all:
            self._dispatch()
            return
        # None left: what waited for a worker runs here.
        waiting, self._queue = self._queue, deque()
        for job in waiting:
            if not job.answer.done():
                try:
                    job.answer.set_result(job.function(*job.args))
                except Exception as e:
                    job.answer.set_exception(e)

    def _forget(self, worker: _Worker) -> None:
        if worker.deadline is not None:
            worker.deadline.cancel()
            worker.deadline = None
        if worker in self._all:
            self._all.remove(worker)
        if worker.loop is not None and not worker.loop.is_closed():
            worker.loop.remove_reader(worker.conn.fileno())
            worker.loop.remove_writer(worker.conn.fileno())
        worker.conn.close()
        worker.process.join(timeout=1)
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join()

    async def close(self) -> None:
        if self._warming is not None:
            await self._warming
            self._warming = None
        self.shutdown()

    def shutdown(self) -> None:
        """Stop the workers (again: a no-op). Tasks not answered yet fail with a
        ``WorkerError``, and a worker on one is killed: its answer has no taker."""
        if self._parse_thread is not None:
            self._parse_thread.shutdown(wait=False, cancel_futures=True)
            self._parse_thread = None
        workers, self._all = self._all, []
        waiting, self._queue = self._queue, deque()
        self._spawned = False
        self._deaths = 0
        jobs = [*waiting, *(job for w in workers for job in w.jobs)]
        for job in jobs:
            if not job.answer.done() and not job.answer.get_loop().is_closed():
                job.answer.set_exception(WorkerError("the stage pool was shut down"))
        for worker in workers:
            if worker.deadline is not None:
                worker.deadline.cancel()
            if worker.loop is not None and not worker.loop.is_closed():
                worker.loop.remove_reader(worker.conn.fileno())
                worker.loop.remove_writer(worker.conn.fileno())
            if worker.up and not worker.jobs:
                # Told in words: a forked sibling holds this pipe open too, so the
                # worker would not see it close.
                with contextlib.suppress(OSError):
                    send_whole(worker.conn, None)
            else:  # busy, or still importing: nothing of its to wait for
                worker.process.kill()
            worker.conn.close()
        reap(worker.process for worker in workers)
