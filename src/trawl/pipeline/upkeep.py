"""Store and index upkeep outside a crawl: rebuild the index, re-crawl every site,
evict pages the eviction rules name.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from trawl.faults import fault_point
from trawl.index.tantivy_index import IndexWriter
from trawl.pipeline.crawl_end import link_up
from trawl.pipeline.crawl_run import CrawlOutcome, crawl
from trawl.pipeline.pages import COMMIT_EVERY
from trawl.pipeline.stage_pool import start_pool
from trawl.pipeline.vectors import refresh_vectors
from trawl.settings import Settings
from trawl.store.base import Pages, Store
from trawl.understand.eviction import (
    EvictionRules,
    eviction_reason,
    host_languages,
    parse_languages,
)


async def rebuild_index(store: Store, settings: Settings) -> int:
    """Run the corpus batch step, then rebuild the index from the store's searchable
    pages (indexable, not a duplicate); return how many were indexed.

    One commit at the end: a search server reading the index meanwhile answers from
    the old one until the new one is whole (the writer spills segments to disk as
    its memory fills, uncommitted), and a rebuild that fails publishes nothing.
    """
    # Before the index writer.
    pool = start_pool(settings.parse_workers, parsing=False, deadline=settings.parse_timeout)
    count = 0
    try:
        index = IndexWriter(settings.index_path, fresh=True)
        try:
            count = await link_up(store, index, pool)
            fault_point("index_rebuild.before_commit")
            index.commit()  # even with no page at all: the old index must go
            fault_point("index_rebuild.after_commit")
        except BaseException:
            index.rollback()
            raise
        finally:
            index.close()
    finally:
        await pool.close()
    await asyncio.to_thread(refresh_vectors, settings)  # after the commit: see pipeline/vectors
    return count


async def recrawl_sites(settings: Settings, store: Store) -> list[CrawlOutcome]:
    """Crawl every enabled site again, one after another."""
    return [
        await crawl([site.start_url], settings, store, fresh=True)
        for site in store.sites()
        if site.enabled
    ]


@dataclass(frozen=True)
class Eviction:
    counts: dict[str, int]  # rule -> pages
    samples: dict[str, list[str]]  # rule -> a few of them
    removed: int  # 0 on a dry run


EVICTION_SAMPLES = 5


def evict(store: Pages, settings: Settings, *, dry_run: bool) -> Eviction:
    """Apply the eviction rules (trawl.understand.eviction) to every stored page; unless
    ``dry_run``, remove what they name from store and index."""
    rules = EvictionRules(
        min_quality=settings.evict_min_quality,
        min_authority=settings.evict_min_authority,
        languages=parse_languages(settings.evict_languages),
    )
    languages = host_languages((r.host, r.lang) for r in store.pages(indexable_only=True))
    counts: dict[str, int] = {}
    samples: dict[str, list[str]] = {}
    doomed: list[str] = []
    for record in store.pages():
        reason = eviction_reason(record, languages.get(record.host), rules)
        if reason is None:
            continue
        counts[reason] = counts.get(reason, 0) + 1
        if len(samples.setdefault(reason, [])) < EVICTION_SAMPLES:
            samples[reason].append(record.url)
        doomed.append(record.url)
    if dry_run or not doomed:
        return Eviction(counts, samples, 0)
    # The index first, committed, then the store: a kill in between leaves the pages
    # stored but not searchable, and the same command run again finds them and finishes.
    # (The other way round a kill left them gone from the store but still searchable,
    # and a second evict found nothing to do.)
    index = IndexWriter(settings.index_path)
    try:
        for url in doomed:
            index.delete(url)
            if index.pending >= COMMIT_EVERY * 10:
                index.commit()
        index.commit()
        fault_point("evict.after_index_commit")
        store.delete_pages(doomed)
    finally:
        index.close()
    return Eviction(counts, samples, len(doomed))
