"""Crawls started from the API or the admin page: one at a time, in the server's loop.

The crawl runs as an asyncio task beside the requests; its live counters come
from the crawler's own stats, so the admin page shows them while it runs: how
far it is, how fast it goes, the URL it fetches, its last errors and an
estimate of what is left.
The index writer's lock is the crawl lock (see pipeline/crawl_run.py): a crawl started
by ``trawl crawl`` in another process makes this one fail with a clear error.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from trawl.crawl.crawler import Crawler, CrawlStats
from trawl.errors import Conflict, TrawlError
from trawl.pipeline.crawl_run import CrawlOutcome, crawl
from trawl.settings import Settings
from trawl.store import open_store
from trawl.store.base import Store

log = logging.getLogger(__name__)

# The settings a crawl started here may be given (the admin form's, `trawl crawl`'s):
# the status shows what the running one was given.
OPTIONS = ("scope", "max_pages", "max_depth", "delay", "concurrency", "host_concurrency", "render")


@dataclass
class _Run:
    start_urls: tuple[str, ...]
    started_at: float
    settings: Settings
    task: asyncio.Task[None] | None = None
    crawl_id: int | None = None  # its row in the crawl log, once made
    crawler: Crawler | None = None
    stats: CrawlStats | None = None


class CrawlManager:
    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._run: _Run | None = None
        self.last_outcome: CrawlOutcome | None = None
        self.last_error: str | None = None
        self.pages_fetched_total = 0  # over every crawl this server ran, for /metrics

    @property
    def running(self) -> bool:
        return self._run is not None and self._run.task is not None and not self._run.task.done()

    def start(self, start_urls: Sequence[str], settings: Settings | None = None) -> None:
        """Start crawling ``start_urls`` (checked by the caller) in the background."""
        self._launch([tuple(start_urls)], settings or self._settings)

    def start_recrawl(self, sites: Sequence[str]) -> None:
        """Crawl each of ``sites`` (start URLs) anew, one after another."""
        self._launch([(s,) for s in sites], self._settings, fresh=True)

    def _launch(
        self, batches: Sequence[tuple[str, ...]], settings: Settings, *, fresh: bool = False
    ) -> None:
        if self.running:
            raise Conflict("a crawl is already running: stop it first")
        self.last_error = None
        run = _Run(batches[0], time.time(), settings)
        self._run = run
        run.task = asyncio.create_task(self._crawl_all(run, batches, settings, fresh))

    def stop(self) -> bool:
        """Ask the running crawl to stop (requests in flight finish); False if none runs."""
        run = self._run
        if not self.running or run is None or run.crawler is None:
            return False
        run.crawler.stop()
        return True

    async def close(self) -> None:
        """Stop a running crawl and wait for it (the server is shutting down)."""
        task = self._run.task if self._run is not None else None
        if task is not None and not task.done():
            self.stop()
            try:
                await asyncio.wait_for(asyncio.shield(task), 30)
            except TimeoutError:
                task.cancel()

    async def _crawl_all(
        self, run: _Run, batches: Sequence[tuple[str, ...]], settings: Settings, fresh: bool
    ) -> None:
        store: Store = open_store(settings)
        try:
            for urls in batches:
                run.start_urls = urls
                self.last_outcome = await crawl(
                    urls,
                    settings,
                    store,
                    on_progress=lambda stats: self._progress(run, stats),
                    on_crawler=lambda crawler: setattr(run, "crawler", crawler),
                    fresh=fresh,
                    # Anyone with an admin key may name a start URL: a private address
                    # is reached only when the operator listed it.
                    allow=settings.admin_targets,
                    trust_start_urls=False,
                    on_begin=lambda crawl_id: setattr(run, "crawl_id", crawl_id),
                )
                self.pages_fetched_total += self.last_outcome.fetched
                if run.crawler is not None and run.crawler.stop_requested:
                    break
        except TrawlError as e:
            self.last_error = str(e)
            log.warning("crawl of %s failed: %s", run.start_urls, e)
        except Exception as e:
            # A bug, not a site: said on the admin page and the API, not lost with the task.
            self.last_error = f"internal error ({type(e).__name__}: {e}); see the server log"[:500]
            log.exception("crawl of %s failed", run.start_urls)
        finally:
            store.close()

    def _progress(self, run: _Run, stats: CrawlStats) -> None:
        run.stats = stats

    def status(self) -> dict[str, Any]:
        """Live counters of the running crawl, or of the last one this server ran."""
        run = self._run
        stats = run.crawler.stats if run is not None and run.crawler is not None else None
        answer: dict[str, Any] = {
            "running": self.running,
            "start_urls": list(run.start_urls) if run else [],
            "started_at": run.started_at if run else None,
            "discovered": 0,
            "crawled": 0,
            "queued": 0,
            "errors": 0,
            "ok": 0,
            "failed": 0,
            "pages_per_second": 0.0,
            "options": {k: getattr(run.settings, k) for k in OPTIONS} if run else {},
            "fetching": "",
            "last_errors": [],
            "left": 0,
            "eta_seconds": None,
            "progress": 0.0,
            "outcome": None,
            "crawl_id": run.crawl_id if run else None,
            "error": self.last_error,
            "note": None,  # when most pages were not indexed for one reason, that reason
        }
        if run is not None and stats is not None:
            answer.update(
                discovered=stats.discovered,
                crawled=stats.fetched,
                queued=stats.queued,
                errors=stats.failed + stats.server_errors,
                ok=stats.ok,
                failed=stats.failed,
                last_errors=[{"url": u, "error": e} for u, e in reversed(stats.last_errors)],
            )
            if self.running:
                answer.update(fetching=stats.fetching, **estimate(stats, run.settings.max_pages))
        if not self.running and self.last_outcome is not None:
            o = self.last_outcome
            answer.update(
                outcome=o.outcome,
                crawl_id=o.crawl_id,
                note=o.main_loss,
                pages_per_second=round(o.pages_per_second, 2),
                progress=1.0,
            )
        return answer


def estimate(stats: CrawlStats, max_pages: int) -> dict[str, Any]:
    """What is left of a running crawl: the pages it will still fetch (what is queued,
    up to max_pages), the share done, and the seconds left at the rate so far.

    Queued URLs are a floor: pages not fetched yet will link to more, so the
    estimate grows while a site is being discovered and shrinks to the end.
    """
    rate = stats.pages_per_second
    left = max(0, min(stats.queued, max_pages - stats.fetched))
    done = stats.fetched + left
    return {
        "pages_per_second": round(rate, 2),
        "left": left,
        "progress": round(stats.fetched / done, 4) if done else 0.0,
        "eta_seconds": round(left / rate) if rate > 0 else None,
    }
