"""search() in worker processes, so one server answers searches on every core.

A Python process runs one thread at a time: with 8 clients, results pages (~7 ms
of CPU each on the PostgreSQL manual, mostly Python: ranking and snippets) queue
on one core however many the machine has. tantivy's own search is ~1 ms of it,
so threads would not help. With ``search_workers`` > 0 the search alone runs in a
pool of processes; everything that holds state (rate limits, sessions, the setup
link, crawls, header checks, metrics, the result cache) stays in the server's one
process, so nothing has to be shared between processes, and HTTP stays there too.

Each worker opens the index itself and reloads it before every search (a stat),
so it answers from the newest commit, as the server's own reader does; the answer
comes back with the commit mark it was searched at, which keys the result cache.
A worker that dies (kill -9, out of memory) costs no request: that search runs in
the server's process and a new worker takes its place. One that holds a search past
``search_worker_timeout`` (a slow query, a stopped or stuck worker) is killed and
replaced too, but that search answers SearchTimeout (503) and is not run again: a
query that slow would be as slow in the server, holding its client twice as long,
with nothing left to bound it. Workers
that keep dying before any answer (a broken install, a missing library) are not
replaced for ever: after MAX_DEATHS in a row the pool stops spawning and the server
searches itself.

Each worker has a pipe of its own, and a route's thread talks to an idle worker
directly. ``concurrent.futures.ProcessPoolExecutor`` passes every task through two
helper threads of the server (its manager and its queue's feeder), which contend
for the GIL with the routes: a round trip cost the server 0.43 ms of CPU there
against 0.07 ms over a bare pipe (a 20-result answer, spawned worker, load 13).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from trawl.errors import SearchTimeout, TrawlError
from trawl.index.tantivy_index import CommitMark, IndexReader
from trawl.pipeline.piped import loads, reap, send_whole, start_worker, take, worker_signals
from trawl.search.request import SearchRequest
from trawl.search.searcher import search
from trawl.server.answers import page_json
from trawl.settings import Settings

log = logging.getLogger(__name__)

Answer = dict[str, Any]
# What a search answers: the index commit it read, the API's answer, the process
# that ran it (for the tests: proof that it ran elsewhere).
Searched = tuple[CommitMark | None, Answer, int]


# Most search workers -1 (auto) runs. Past ~3, the server's own process is the limit:
# it spends ~2 CPU-ms a request (HTTP, the rate limit, the JSON) against ~5-7 for the
# search itself (bench/RESULTS.md), and each worker holds ~50 MB.
MAX_AUTO_WORKERS = 4

# Worker deaths in a row, with no answer from any worker between them, after which
# the pool spawns no more: each costs a spawn (~50 MB, a second of imports) and a
# request's round trip, for a worker that dies the same way.
MAX_DEATHS = 3


def serving_workers(setting: int, cores: int | None = None) -> int:
    """Search workers `trawl serve` runs for the ``search_workers`` setting.

    -1 (auto) is one per usable core (``cores``: this process's), at most
    MAX_AUTO_WORKERS, and none on one core: there a worker only adds a pipe's
    round trip and its memory. On a quiet 2-core machine, 8 clients: p95 63 ms in
    the server's process, 42 ms with 2 workers (1 client: 8.3 against 9.5 ms); with
    the cores busy with other work, fewer searches a second than none
    (bench/RESULTS.md, "Served search by default")."""
    if setting >= 0:
        return setting
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        cores = cores or os.cpu_count() or 1
    return 0 if cores < 2 else min(MAX_AUTO_WORKERS, cores)


def _worker_main(conn: Connection, settings: Settings, parent: int) -> None:
    """A worker: answer each request its pipe brings until the pipe closes (the
    server closed the pool or died). Ctrl-C to the process group is the server's to
    handle; its shutdown or death ends the workers."""
    worker_signals(parent)
    reader: IndexReader | None = None
    with contextlib.suppress(TrawlError):  # opened ahead of the first search, if there
        reader = IndexReader(settings.index_path)  # is an index yet (else the search says)
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        answer: Searched | None = None
        # A failed search (no index yet, a broken one) answers None: the server runs it
        # itself and raises what it raises there, without pickling exceptions.
        with contextlib.suppress(Exception):
            if reader is None:
                reader = IndexReader(settings.index_path)
            answer = search_here(reader, request, settings)
        send_whole(conn, answer)


def search_here(reader: IndexReader, request: SearchRequest, settings: Settings) -> Searched:
    reader.reload()  # a stat: the commit mark returned is the one search() reads
    return reader.generation, page_json(search(reader, request, settings)), os.getpid()


@dataclass(eq=False)
class _Process:
    process: BaseProcess
    conn: Connection


# Takes an idle worker (None: the pool closed); answers False when its caller is gone.
_Waiter = Callable[["_Process | None"], bool]


class SearchPool:
    """``workers`` processes running search(); 0: none, every search in the caller.

    An idle worker goes to the caller that has waited longest (a queue of waiters,
    first come first served), whether it waits in a thread (``search``, the search
    page) or on the event loop (``asearch``, /api/search). A worker busy when the
    pool closes is closed by whoever holds it, after its answer."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        # -1 (auto) is resolved by `trawl serve` (serving_workers); an app made
        # in-process, a test's, searches in its own process unless it names a number.
        self.workers = max(0, settings.search_workers)
        self._idle: deque[_Process] = deque()
        self._waiters: deque[_Waiter] = deque()
        self._all: list[_Process] = []
        self._lock = threading.Lock()
        self._started = False
        self._closed = False
        self._deaths = 0  # in a row, with no answer between them

    @property
    def closed(self) -> bool:
        return self._closed

    def start(self) -> None:
        """Start the workers now, so the first searches do not wait for their imports."""
        with self._lock:
            if self._started or self._closed:
                return
            self._started = True
            spawned = []
            for _ in range(self.workers):
                fresh = self._spawn_or_none()
                if fresh is None:
                    break
                spawned.append(fresh)
        for worker in spawned:
            self._release(worker)

    def _spawn(self) -> _Process:
        # Spawned: the server runs threads (routes, the store's), and only a process
        # with one thread may fork safely.
        process, conn = start_worker(
            "spawn", _worker_main, (self._settings, os.getpid()), "trawl-search"
        )
        worker = _Process(process, conn)
        self._all.append(worker)
        return worker

    def _spawn_or_none(self) -> _Process | None:
        """A new worker, or None when the system refuses one (out of processes or
        memory): the pool runs with fewer, and with none the callers search here."""
        try:
            return self._spawn()
        except Exception:
            log.exception("a search worker could not be started")
            return None

    def _take(self, waiter: _Waiter) -> _Process | None:
        """An idle worker now, or None with ``waiter`` queued for the next one (or,
        when no worker lives to be freed, told at once to search itself)."""
        with self._lock:
            if self._idle:
                return self._idle.popleft()
            if self._all or not self._started:
                self._waiters.append(waiter)
                return None
        waiter(None)
        return None

    def _release(self, worker: _Process) -> None:
        """``worker`` is free: to the longest waiting caller, else idle."""
        with self._lock:
            if self._closed:
                worker.conn.close()  # the worker ends; close() joins it
                return
            while self._waiters:
                if self._waiters.popleft()(worker):
                    return
            self._idle.append(worker)

    def search(self, reader: IndexReader, request: SearchRequest) -> Searched:
        """The answer to ``request``, from an idle worker (waiting for one while all are
        busy), or from ``reader`` here: without workers, or when the worker died.
        SearchTimeout when the worker does not answer by ``search_worker_timeout``."""
        if not self.workers or self._closed:
            return search_here(reader, request, self._settings)
        self.start()
        handed: queue.SimpleQueue[_Process | None] = queue.SimpleQueue()

        def wake(worker: _Process | None) -> bool:
            handed.put(worker)
            return True

        worker = self._take(wake)
        if worker is None:
            worker = handed.get()
            if worker is None:  # the pool closed meanwhile
                return search_here(reader, request, self._settings)
        try:
            worker.conn.send(request)
            if not worker.conn.poll(self._settings.search_worker_timeout):
                self._expire(worker)
                raise SearchTimeout(self._settings.search_worker_timeout)
            answer: Searched | None = worker.conn.recv()
        except (EOFError, OSError):
            self._died(worker)
            return search_here(reader, request, self._settings)
        self._answered(worker)
        return search_here(reader, request, self._settings) if answer is None else answer

    async def asearch(self, reader: IndexReader, request: SearchRequest) -> Searched:
        """``search`` for the event loop: the request goes down a worker's pipe and the
        loop reads the answer when the pipe is readable, so the server spends no thread
        and no GIL hand-over on a search it does not run. Without a worker (none, the
        pool closed, it died) the search runs here, in a thread. SearchTimeout past
        ``search_worker_timeout``, in a worker or here."""
        timeout = self._settings.search_worker_timeout

        async def here() -> Searched:
            # Bounded as a worker is: past the deadline the client gets SearchTimeout.
            # The thread cannot be killed, so it runs the search to its end and holds
            # one of the loop's executor threads until then; only the wait is bounded.
            # (The search page's thread path, ``search``, waits unbounded: bounding it
            # would cost every search a second thread.)
            try:
                return await asyncio.wait_for(
                    asyncio.to_thread(search_here, reader, request, self._settings), timeout
                )
            except TimeoutError:
                raise SearchTimeout(timeout) from None

        if not self.workers or self._closed:
            return await here()
        self.start()
        loop = asyncio.get_running_loop()
        handed: asyncio.Future[_Process | None] = loop.create_future()

        def deliver(worker: _Process | None) -> None:  # on the loop
            if handed.cancelled() and worker is not None:
                self._release(worker)  # its caller left while it waited
            elif not handed.done():
                handed.set_result(worker)

        def wake(worker: _Process | None) -> bool:  # on whichever thread released it
            try:
                loop.call_soon_threadsafe(deliver, worker)
            except RuntimeError:  # the loop has closed: its caller is gone
                return False
            return True

        worker = self._take(wake)
        if worker is None:
            try:
                worker = await handed
            except asyncio.CancelledError:
                # Cancelled after ``deliver`` handed it a worker but before it ran: the
                # worker is its to give back, or no search would get it again.
                given = handed.result() if handed.done() and not handed.cancelled() else None
                if given is not None:
                    self._release(given)
                raise
            if worker is None:
                return await here()
        answered: asyncio.Future[Searched | None] = loop.create_future()
        fd = worker.conn.fileno()

        received = bytearray()

        # Owns the worker from here, whether or not its caller still waits. Reads what
        # the pipe holds and returns: a blocking recv() here would stall every request
        # whenever the worker is descheduled halfway through writing its answer.
        def readable() -> None:
            answer: Searched | None = None
            try:
                chunk = os.read(fd, 1 << 20)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if chunk:
                received.extend(chunk)
                message = take(received)
                if message is None:
                    return  # the rest is on its way
                loop.remove_reader(fd)
                os.set_blocking(fd, True)  # as the thread path (search) expects it
                answer = loads(message)
                self._answered(worker)
            else:
                loop.remove_reader(fd)
                loop.run_in_executor(None, self._died, worker)
            deadline.cancel()
            if not answered.done():
                answered.set_result(answer)

        # Past the deadline the worker is killed, whether or not its caller still waits
        # (cancelled, ``answered`` is done): a stopped worker would be held for ever.
        def expire() -> None:
            loop.remove_reader(fd)
            loop.run_in_executor(None, self._expire, worker)
            if not answered.done():  # its caller waits: told, the search not run again
                answered.set_exception(SearchTimeout(timeout))

        try:
            worker.conn.send(request)  # a few hundred bytes to an idle reader: no wait
        except OSError:
            await asyncio.to_thread(self._died, worker)
            return await here()
        os.set_blocking(fd, False)
        deadline = loop.call_later(timeout, expire)
        loop.add_reader(fd, readable)
        answer = await answered
        return await here() if answer is None else answer

    def _answered(self, worker: _Process) -> None:
        """``worker`` answered: it is free, and the run of deaths at birth is broken."""
        with self._lock:
            self._deaths = 0
        self._release(worker)

    def _died(self, worker: _Process) -> None:
        log.warning("search worker %s died: a new one takes its place", worker.process.pid)
        self._replace(worker, died=True)

    def _expire(self, worker: _Process) -> None:
        """``worker`` held a search past the deadline: killed (SIGKILL ends a stopped
        process too) and replaced; not a death, which a slow query must not count as."""
        log.warning(
            "search worker %s did not answer in %s s: killed, a new one takes its place",
            worker.process.pid,
            self._settings.search_worker_timeout,
        )
        with contextlib.suppress(OSError):
            worker.process.kill()
        self._replace(worker)

    def _replace(self, dead: _Process, died: bool = False) -> None:
        dead.conn.close()
        dead.process.join(timeout=5)
        stranded: list[_Waiter] = []
        fresh: _Process | None = None
        with self._lock:
            if dead in self._all:  # not when the pool closed meanwhile
                self._all.remove(dead)
            if self._closed:
                return
            self._deaths += died
            if self._deaths < MAX_DEATHS:
                fresh = self._spawn_or_none()
            elif died and self._deaths == MAX_DEATHS:
                log.error(
                    "%d search workers in a row died before answering: no more are"
                    " started, searches run in the server's process",
                    self._deaths,
                )
            if fresh is None and not self._all:  # no worker left to free them
                stranded = list(self._waiters)
                self._waiters.clear()
        for waiter in stranded:
            waiter(None)
        if fresh is not None:
            self._release(fresh)

    def pids(self) -> list[int]:
        """The workers' process ids."""
        return sorted(w.process.pid for w in list(self._all) if w.process.pid is not None)

    def close(self) -> None:
        """Stop the workers: an idle one sees its pipe close now, a busy one after the
        search it is on (its caller closes the pipe); waiting callers search themselves."""
        with self._lock:
            self._closed = True
            workers, self._all = self._all, []
            idle, waiters = list(self._idle), list(self._waiters)
            self._idle.clear()
            self._waiters.clear()
        for waiter in waiters:
            waiter(None)
        for worker in idle:
            worker.conn.close()
        reap(worker.process for worker in workers)
