"""A worker process behind a pipe of its own: how the stage pool (parsing, index
documents) and the search pool (``server/search_pool.py``) reach their workers.

``concurrent.futures.ProcessPoolExecutor`` passes every task through two helper
threads of the caller (its manager and its queue's feeder), which take the GIL in
turn with the event loop: handing a page to a parse worker cost the crawl's process
0.4-0.5 ms of CPU that way, a round trip of a search 0.43 ms, against 0.1-0.2 and
0.07 ms over a bare pipe that the caller writes and the event loop reads itself
(bench/RESULTS.md, "Parse workers behind pipes"). Here each worker has one duplex
pipe; a message is multiprocessing's own framing (``Connection.recv`` reads it),
written whole in one write, so that the event loop can take the bytes as they come
(``take``) and never blocks on half an answer.
"""

from __future__ import annotations

import os
import signal
import struct
import threading
import time
from collections.abc import Callable, Iterable
from multiprocessing import get_context
from multiprocessing.connection import Connection
from multiprocessing.context import DefaultContext
from multiprocessing.process import BaseProcess
from multiprocessing.reduction import ForkingPickler
from typing import Any

PARENT_CHECK = 1.0  # seconds between a worker's looks at whether its parent still lives

# multiprocessing.Connection's framing: a 4-byte signed size (-1: an 8-byte size
# follows), then the pickle.
_SIZE = struct.Struct("!i")
_LONG_SIZE = struct.Struct("!Q")


def framed(message: object) -> bytes:
    """``message`` pickled and framed as ``Connection.send`` frames it."""
    payload = ForkingPickler.dumps(message)
    if len(payload) > 0x7FFFFFFF:
        return b"".join((_SIZE.pack(-1), _LONG_SIZE.pack(len(payload)), payload))
    return b"".join((_SIZE.pack(len(payload)), payload))


def send_whole(conn: Connection, message: object) -> None:
    """Send ``message`` in one write where it fits (``Connection.send`` writes one over
    16 KB in two, and wakes the reader twice). On a pipe the event loop reads, and so
    non-blocking, the rest of a large message is written blocking: the worker at the
    other end is reading it, not writing."""
    write_whole(conn, framed(message))


def write_whole(conn: Connection, message: bytes) -> None:
    """``send_whole`` of a message ``framed`` already."""
    view = memoryview(message)
    fd = conn.fileno()
    blocked = False
    try:
        while view:
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:
                os.set_blocking(fd, True)
                blocked = True
    finally:
        if blocked:
            os.set_blocking(fd, False)


def take(received: bytearray) -> bytes | None:
    """The first whole message in ``received`` (removed from it), or None while the
    rest of it is on its way."""
    if len(received) < _SIZE.size:
        return None
    (size,) = _SIZE.unpack_from(received)
    start = _SIZE.size
    if size == -1:
        if len(received) < start + _LONG_SIZE.size:
            return None
        (size,) = _LONG_SIZE.unpack_from(received, start)
        start += _LONG_SIZE.size
    if len(received) < start + size:
        return None
    message = bytes(received[start : start + size])
    del received[: start + size]
    return message


def loads(message: bytes) -> Any:
    """A message ``take`` gave: from our own worker, unpickled as ``recv`` would."""
    return ForkingPickler.loads(message)


def start_worker(
    method: str, target: Callable[..., None], args: tuple[Any, ...], name: str
) -> tuple[BaseProcess, Connection]:
    """A process started by ``method`` (fork, spawn) running ``target(conn, *args)``,
    and our end of its pipe ``conn``."""
    # typeshed types a context got by a runtime name as BaseContext, without Process
    context: DefaultContext = get_context(method)  # type: ignore[assignment]
    ours, theirs = context.Pipe()
    process = context.Process(target=target, args=(theirs, *args), name=name, daemon=True)
    try:
        process.start()
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
    return process, ours


def reap(processes: Iterable[BaseProcess], timeout: float = 10.0) -> None:
    """Wait for each of ``processes`` to leave; one still there after ``timeout``
    seconds (stuck in a parse, a search) is killed."""
    for process in processes:
        process.join(timeout=timeout)
        if process.is_alive():
            process.kill()
            process.join()


def worker_signals(parent: int) -> None:
    """A worker's start: Ctrl-C and a SIGTERM to the process group are its parent's to
    handle (it still needs its workers to stop cleanly), so they are ignored here; the
    parent's shutdown or death ends the worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    exit_with_parent(parent)


def exit_with_parent(parent: int) -> None:
    """End this worker within PARENT_CHECK seconds of its parent's death (kill -9).

    A forked worker holds its siblings' pipes open itself, so it would not see the
    parent go by its own pipe closing, and would wait for ever with the parser's memory.
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
