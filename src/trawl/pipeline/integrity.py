"""Do the store and the index agree? Every searchable page in the store is in the
index, and the index holds nothing else (a page whose last answer was a server
error keeps its document until a healthy crawl removes it: an outage must not
empty the index).

Two checks: ``quick_check`` compares counts (a count in the store, the index's
document count: /healthz, and a crawl that finds its predecessor died; a page
missing and another extra cancel out there); ``full_check``
compares URL sets and names each page that is missing, extra or indexed twice;
``repair`` mends what it names (``trawl check --repair``). ``stalled_runs`` names
the runs marked running that no process carries on.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from trawl.faults import fault_point
from trawl.index.tantivy_index import IndexReader, IndexWriter, writer_held
from trawl.pipeline.health import is_embedded
from trawl.pipeline.stage_pool import BULK_DOCUMENT_BATCH, Page, StagePool, start_pool
from trawl.records import CrawlRun, Outcome
from trawl.settings import Settings
from trawl.store.base import Agreement, Pages, Store

log = logging.getLogger(__name__)
SAMPLES = 5
RECENT_RUNS = 10  # the crawl log's newest rows looked at for a run marked running


@dataclass(frozen=True)
class Drift:
    """What the store and the index hold, and how they differ."""

    searchable: int  # store: pages the index must hold
    held: int  # pages whose last answer was 5xx that the index may hold (quick: does hold)
    documents: int  # index: documents, a page indexed twice counted twice
    full: bool = False  # the URL sets were compared, not only the counts
    missing: tuple[str, ...] = ()  # searchable, not in the index
    extra: tuple[str, ...] = ()  # in the index, not searchable in the store
    doubled: tuple[str, ...] = ()  # in the index more than once
    seconds: float = 0.0
    samples: dict[str, list[str]] = field(default_factory=dict)

    @property
    def agrees(self) -> bool:
        if self.full:
            return not (self.missing or self.extra or self.doubled)
        return self.documents == self.searchable + self.held

    def summary(self) -> str:
        head = (
            f"store: {self.searchable} searchable pages ({self.held} kept through a server"
            f" error); index: {self.documents} documents"
        )
        if self.agrees:
            return f"{head}: they agree"
        if not self.full:
            return f"{head}: they differ (run `trawl check --repair`)"
        parts = [
            f"{len(urls)} {name}"
            for name, urls in (
                ("missing from the index", self.missing),
                ("in the index but not searchable", self.extra),
                ("indexed twice", self.doubled),
            )
            if urls
        ]
        return f"{head}: " + ", ".join(parts)


def quick_check(store: Agreement, reader: IndexReader) -> Drift:
    """Counts only: the index must hold the searchable pages, plus those of the pages
    kept through a server error that it still holds (looked up one by one: few)."""
    started = time.perf_counter()
    documents = reader.num_docs()
    searchable, _ = store.searchable_counts()
    held = reader.present(store.held_urls())
    return Drift(searchable, held, documents, seconds=time.perf_counter() - started)


def full_check(store: Agreement, reader: IndexReader) -> Drift:
    started = time.perf_counter()
    must: set[str] = set()
    may: set[str] = set()
    for url, required in store.searchable_urls():
        (must if required else may).add(url)
    counted = Counter(reader.urls())
    indexed = set(counted)
    missing = sorted(must - indexed)
    extra = sorted(indexed - must - may)
    doubled = sorted(u for u, n in counted.items() if n > 1)
    return Drift(
        searchable=len(must),
        held=len(may),
        documents=sum(counted.values()),
        full=True,
        missing=tuple(missing),
        extra=tuple(extra),
        doubled=tuple(doubled),
        seconds=time.perf_counter() - started,
        samples={
            name: urls[:SAMPLES]
            for name, urls in (("missing", missing), ("extra", extra), ("doubled", doubled))
            if urls
        },
    )


async def repair(store: Pages, writer: IndexWriter, drift: Drift, pool: StagePool) -> int:
    """Mend what ``drift`` (a full check) names: a missing or doubled page is indexed
    (once), an extra one leaves; committed. Return how many pages changed."""
    for url in drift.extra:
        writer.delete(url)

    def pages() -> Iterator[Page]:
        for url in dict.fromkeys([*drift.missing, *drift.doubled]):
            record = store.page(url)
            if record is not None and record.searchable:
                yield record, store.anchors_to(url)
            else:
                writer.delete(url)

    async for fields in pool.documents(pages(), batch=BULK_DOCUMENT_BATCH):
        writer.upsert_fields(fields)
    fault_point("repair.before_commit")
    writer.commit()
    return len(drift.extra) + len(set(drift.missing) | set(drift.doubled))


async def mend_after_crash(
    store: Store, writer: IndexWriter, reader: IndexReader, pool: StagePool
) -> int:
    """The cheap check, run by a crawl that found its predecessor dead (after its own
    commit); when the counts differ, the full check and a repair. Return the pages
    repaired."""
    drift = quick_check(store, reader)
    if drift.agrees:
        return 0
    drift = full_check(store, reader)
    if drift.agrees:
        return 0
    log.warning("store and index disagreed after a crash: %s; repairing", drift.summary())
    return await repair(store, writer, drift, pool)


def stalled_runs(store: Store, index_path: Path) -> list[CrawlRun]:
    """Runs marked running that no process carries on: killed (kill -9, a power cut)
    and not resumed since. An embedded run (``trawl crawl``, a crawl ``trawl serve``
    started) holds the index writer's lock while it lives, and the kernel drops it with
    the process; so such a run with the lock free is dead. A run of ``trawl worker``s
    holds no lock (a worker between two leases holds nothing in the store either): not
    judged here."""
    running = [r for r in store.crawls(limit=RECENT_RUNS) if r.outcome == Outcome.RUNNING]
    if not running or writer_held(index_path):
        return []
    return [run for run in running if is_embedded(store, run.id)]


def stalled_summary(run: CrawlRun) -> str:
    return (
        f"crawl {run.id} is marked running, but no process runs it (killed?): the same"
        " crawl again resumes it; `trawl check --repair` closes it as interrupted"
    )


@dataclass(frozen=True)
class Checked:
    found: Drift
    repaired: int = 0
    after: Drift | None = None  # the check again, after a repair
    interrupted: int = 0  # runs left `running` by a process that died, marked so


async def check_index(
    store: Store, settings: Settings, *, full: bool = True, mend: bool = False
) -> Checked:
    """``trawl check``: compare store and index (``full``: URL by URL), and with ``mend``
    repair what differs (a missing index is built). SearchIndexError when the index
    cannot be read (and ``mend`` is off)."""
    if mend:
        # The pool first: a worker forked after the writer opened would hold the crawl
        # lock's file, and keep it locked for up to a second after a kill -9 of this
        # command, refusing the next crawl.
        pool = start_pool(settings.parse_workers, parsing=False, deadline=settings.parse_timeout)
        try:
            writer = IndexWriter(settings.index_path)  # made when missing; the crawl lock
        except BaseException:
            await pool.close()
            raise
        try:
            # Holding the crawl lock, a run still marked running has died (a killed
            # `trawl serve` or crawl no one ran again): left so, /healthz would never
            # compare store and index again. The next crawl of it still resumes it.
            interrupted = store.interrupt_running()
            reader = IndexReader(settings.index_path)
            found = full_check(store, reader)
            if found.agrees:
                return Checked(found, interrupted=interrupted)
            repaired = await repair(store, writer, found, pool)
            return Checked(found, repaired, full_check(store, reader), interrupted)
        finally:
            await pool.close()
            writer.close()
    reader = IndexReader(settings.index_path)
    return Checked(full_check(store, reader) if full else quick_check(store, reader))
