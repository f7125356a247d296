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
the server's process and a new worker takes its place.

Each worker has a pipe of its own, and a route's thread talks to an idle worker
directly. ``concurrent.futures.ProcessPoolExecutor`` passes every task through two
helper threads of the server (its manager and its queue's feeder), which contend
for the GIL with the routes: a round trip cost the server 0.43 ms of CPU there
against 0.07 ms over a bare pipe (a 20-result answer, spawned worker, load 13).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import signal
import threading
from dataclasses import dataclass
from multiprocessing import get_context
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from trawl.errors import TrawlError
from trawl.index.tantivy_index import CommitMark, IndexReader
from trawl.pipeline.stage_pool import _exit_with_parent
from trawl.search.request import SearchRequest
from trawl.search.searcher import search
from trawl.server.answers import page_json
from trawl.settings import Settings

log = logging.getLogger(__name__)
_SPAWN = get_context("spawn")

Answer = dict[str, Any]
# What a search answers: the index commit it read, the API's answer, the process
# that ran it (for the tests: proof that it ran elsewhere).
Searched = tuple[CommitMark | None, Answer, int]


def _worker_main(conn: Connection, settings: Settings, parent: int) -> None:
    """A worker: answer each request its pipe brings until the pipe closes (the
    server closed the pool or died). Ctrl-C to the process group is the server's to
    handle; its shutdown or death ends the workers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _exit_with_parent(parent)
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
        conn.send(answer)


def search_here(reader: IndexReader, request: SearchRequest, settings: Settings) -> Searched:
    reader.reload()  # a stat: the commit mark returned is the one search() reads
    return reader.generation, page_json(search(reader, request, settings)), os.getpid()


@dataclass
class _Process:
    process: BaseProcess
    conn: Connection


class SearchPool:
    """``workers`` processes running search(); 0: none, every search in the caller."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self.workers = settings.search_workers
        self._idle: queue.SimpleQueue[_Process] = queue.SimpleQueue()
        self._all: list[_Process] = []
        self._lock = threading.Lock()
        self._started = False
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def start(self) -> None:
        """Start the workers now, so the first searches do not wait for their imports."""
        with self._lock:
            if self._started or self._closed:
                return
            self._started = True
            for _ in range(self.workers):
                self._idle.put(self._spawn())

    def _spawn(self) -> _Process:
        # Spawned: the server runs threads (routes, the store's), and only a process
        # with one thread may fork safely.
        ours, theirs = _SPAWN.Pipe()
        process = _SPAWN.Process(
            target=_worker_main,
            args=(theirs, self._settings, os.getpid()),
            name="trawl-search",
            daemon=True,
        )
        process.start()
        theirs.close()
        worker = _Process(process, ours)
        self._all.append(worker)
        return worker

    def search(self, reader: IndexReader, request: SearchRequest) -> Searched:
        """The answer to ``request``, from an idle worker (waiting for one while all are
        busy), or from ``reader`` here: without workers, or when the worker died."""
        if not self.workers or self._closed:
            return search_here(reader, request, self._settings)
        self.start()
        while True:  # all busy: wait for one, unless the pool closes meanwhile
            try:
                worker = self._idle.get(timeout=1.0)
                break
            except queue.Empty:
                if self.closed:  # (a property: mypy takes the flag as still False)
                    return search_here(reader, request, self._settings)
        try:
            worker.conn.send(request)
            answer: Searched | None = worker.conn.recv()
        except (EOFError, OSError):
            log.warning("search worker %s died: a new one takes its place", worker.process.pid)
            self._replace(worker)
            return search_here(reader, request, self._settings)
        self._idle.put(worker)
        return search_here(reader, request, self._settings) if answer is None else answer

    def _replace(self, dead: _Process) -> None:
        dead.conn.close()
        dead.process.join(timeout=5)
        with self._lock:
            if dead in self._all:  # not when the pool closed meanwhile
                self._all.remove(dead)
            if not self._closed:
                self._idle.put(self._spawn())

    def pids(self) -> list[int]:
        """The workers' process ids."""
        return sorted(w.process.pid for w in list(self._all) if w.process.pid is not None)

    def close(self) -> None:
        """Stop the workers: each sees its pipe close after the search it is on."""
        with self._lock:
            self._closed = True
            workers, self._all = self._all, []
        for worker in workers:
            worker.conn.close()
        for worker in workers:
            worker.process.join(timeout=10)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
