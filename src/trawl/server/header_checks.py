"""The report's "Check headers", run in the background: progress, cancel, nothing lost.

Checking every external link takes minutes on a large site (HEAD requests, six
at once, each with its own deadline). Inside one HTTP request it outlived
browsers' and proxies' timeouts, could not be stopped, and saved nothing until
its end. Here one job at a time checks the targets in batches and saves each
batch as it comes back: the report fills in while it runs, the status says how
far it got, and a cancel (or a server stopping) keeps every batch already done.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from trawl.errors import Conflict, TrawlError, Unavailable
from trawl.records import HeaderCheck
from trawl.settings import Settings
from trawl.store import open_store

log = logging.getLogger(__name__)

# Checks URLs with header-only requests under seed 003's rules
# (trawl.pipeline.resource_checks.check_external_headers, by default).
HeaderChecker = Callable[[Sequence[str], Settings], Awaitable[list[HeaderCheck]]]

BATCH = 60  # URLs checked, then saved, at a time: ten rounds of the checker's six at once


@dataclass
class _Job:
    total: int
    started_at: float
    checked: int = 0
    finished_at: float | None = None
    cancelled: bool = False
    error: str | None = None
    task: asyncio.Task[None] | None = None


class HeaderCheckJobs:
    """Runs one header-check job at a time in the server's event loop."""

    def __init__(
        self, settings: Settings, checker: HeaderChecker | None, *, batch: int = BATCH
    ) -> None:
        """``checker`` None: this build offers no header checks (starting one is a 501)."""
        self._settings = settings
        self._checker = checker
        self._batch = batch
        self._job: _Job | None = None

    @property
    def available(self) -> bool:
        return self._checker is not None

    @property
    def running(self) -> bool:
        job = self._job
        return job is not None and job.task is not None and not job.task.done()

    def start(self, urls: Sequence[str]) -> int:
        """Start checking ``urls`` in the background; return how many will be checked."""
        if self._checker is None:
            raise Unavailable("header checks are not part of this build yet")
        if self.running:
            raise Conflict("a header check is already running: cancel it or wait for it")
        job = _Job(total=len(urls), started_at=time.time())
        self._job = job
        job.task = asyncio.create_task(self._run(job, list(urls), self._checker))
        return job.total

    def cancel(self) -> bool:
        """Stop the running job (its saved batches stay); False when none runs."""
        job = self._job
        if job is None or job.task is None or job.task.done():
            return False
        job.cancelled = True
        job.task.cancel()
        return True

    async def finished(self) -> None:
        """Wait until the job that runs, if any, has ended (done or cancelled)."""
        task = self._job.task if self._job is not None else None
        if task is not None:
            await asyncio.wait({task})

    async def close(self) -> None:
        """Cancel a running job and wait for it to end (the server is shutting down)."""
        self.cancel()
        await self.finished()

    def status(self) -> dict[str, Any]:
        """The running job's progress, or the last job's result."""
        job = self._job
        return {
            "available": self.available,
            "running": self.running,
            "total": job.total if job else 0,
            "checked": job.checked if job else 0,
            "started_at": job.started_at if job else None,
            "finished_at": job.finished_at if job else None,
            "cancelled": job.cancelled if job else False,
            "error": job.error if job else None,
        }

    async def _run(self, job: _Job, urls: list[str], checker: HeaderChecker) -> None:
        store = None
        saving: asyncio.Future[None] | None = None
        try:
            store = open_store(self._settings)
            for start in range(0, len(urls), self._batch):
                batch = urls[start : start + self._batch]
                written = store.written_forms(batch)
                # Asked as the page wrote it (seed 003), kept by identity as the report
                # names it: resource checks do the same.
                checks = await checker([written.get(u, u) for u in batch], self._settings)
                checks = [replace(c, url=u) for u, c in zip(batch, checks, strict=True)]
                # In a thread: a crawl this server runs holds SQLite's write lock on
                # this loop until its batch's timer commits; waited for here, the
                # loop (and that timer) would freeze for the store's busy timeout.
                saving = asyncio.ensure_future(asyncio.to_thread(store.save_header_checks, checks))
                await asyncio.shield(saving)
                job.checked += len(checks)
        except TrawlError as e:
            job.error = str(e)
            log.warning("header check stopped: %s", e)
        except Exception as e:  # a bug: shown in the status, not lost in the task's result
            job.error = f"{type(e).__name__}: {e}"
            log.exception("header check failed")
        finally:
            if saving is not None and not saving.done():
                # A cancel cannot stop the thread: closing the store under it made
                # sqlite3 free a connection still in use (a segfault). Its batch is
                # saved, as a cancel promises for every batch already checked.
                await asyncio.wait({saving})
                if saving.exception() is not None:
                    job.error = str(saving.exception())
            job.finished_at = time.time()
            if store is not None:
                store.close()
