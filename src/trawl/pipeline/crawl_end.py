"""The end of an embedded crawl: prune, the corpus batch step, the index brought in
line, and the crawl-log row closed, in that order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from urllib.parse import urlsplit

from trawl.corpus import update_signals
from trawl.crawl.crawler import CrawlStats
from trawl.index.tantivy_index import IndexWriter
from trawl.stage_pool import Page, StagePool
from trawl.store.base import Store


async def _link_up(
    store: Store, index: IndexWriter, pool: StagePool, indexed_urls: Sequence[str]
) -> None:
    """The corpus batch step (authority, duplicates, "Discussed on"), then the index
    brought in line with it: the indexable pages of this crawl (and of the run it
    resumes) are indexed, once, with the anchor text of every link to them and their
    fresh signals; other pages whose signals changed are indexed again; duplicates
    leave. A page that is not indexable was dealt with when it was fetched (a server
    error waits for finish_crawl), so it is left alone here."""
    report = update_signals(store)
    urls = dict.fromkeys([*indexed_urls, *report.changed])
    # Documents are built by the stage pool's workers (stemming every page's text is
    # most of this step), while this process reads the next pages and feeds the index.
    async for fields in pool.documents(_searchable_pages(store, index, urls)):
        index.upsert_fields(fields)
    # No commit every COMMIT_EVERY pages here, only the one when the crawl closes
    # the index: a crash before it leaves the crawl open, and its resume indexes
    # what this run fetched. Each commit (about 0.1 s) held up the crawl's end.


def _searchable_pages(store: Store, index: IndexWriter, urls: Iterable[str]) -> Iterator[Page]:
    """Each searchable page of ``urls`` with the anchor texts of links to it, read from
    the store once, as the workers ask; an indexable page that is not searchable (a
    duplicate) or is gone leaves the index on the way."""
    for url in urls:
        record = store.page(url)
        if record is None or (record.indexable and not record.searchable):
            index.delete(url)
        elif record.searchable:
            yield record, store.anchors_to(url)


async def finish_crawl(
    store: Store,
    index: IndexWriter,
    pool: StagePool,
    crawl_id: int,
    *,
    start_urls: Sequence[str],
    stats: CrawlStats,
    outcome: str,
    indexed_urls: Sequence[str],
) -> int:
    """Prune what is gone (after a complete, healthy run), run the batch step over the
    corpus, then close the crawl-log row.

    Only a complete run removes pages the run did not reach, and pages that answered
    with a server error: a capped, stopped or unhealthy run (an outage) removes nothing.
    The row is closed last, so a run killed during the batch step is resumed.
    """
    hosts = sorted({urlsplit(u).hostname or "" for u in start_urls})
    store.count_inlinks(hosts)
    pruned = 0
    if outcome == "complete":
        gone = store.unseen_pages(crawl_id, hosts)
        store.delete_pages(gone)
        for url in [*gone, *store.server_error_pages(crawl_id)]:
            index.delete(url)
        pruned = len(gone)
    await _link_up(store, index, pool, indexed_urls)
    store.finish_crawl(
        crawl_id,
        pages_ok=stats.ok,
        pages_failed=stats.failed,
        outcome=outcome,
        skipped=stats.skipped,
        samples=stats.samples,
    )
    return pruned
