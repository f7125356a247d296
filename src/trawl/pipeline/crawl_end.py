"""The end of a crawl, embedded or shared by workers: prune, the corpus batch step, the
index brought in line and committed, and the crawl-log row closed, in that order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from urllib.parse import urlsplit

from trawl.crawl.crawler import CrawlStats
from trawl.faults import fault_point
from trawl.index.tantivy_index import IndexWriter
from trawl.pipeline.corpus import update_signals
from trawl.pipeline.health import Judgement
from trawl.pipeline.stage_pool import BULK_DOCUMENT_BATCH, DOCUMENT_BATCH, Page, StagePool
from trawl.store.base import Pages, Store


async def link_up(
    store: Store, index: IndexWriter, pool: StagePool, indexed_urls: Sequence[str] | None = None
) -> int:
    """The corpus batch step (authority, duplicates, "Discussed on"), then the index
    brought in line with it; return the documents written (uncommitted).

    At a crawl's end (``indexed_urls``): the indexable pages of this crawl (and of the
    run it resumes) are indexed, once, with the anchor text of every link to them and
    their fresh signals; other pages whose signals changed are indexed again;
    duplicates leave. A page that is not indexable was dealt with when it was fetched
    (a server error waits for close_crawl), so it is left alone here. Without
    ``indexed_urls`` (a rebuild into a fresh index): every searchable page."""
    report = update_signals(store)
    pages: Iterable[Page]
    if indexed_urls is None:
        pages = (
            (record, store.anchors_to(record.url))
            for record in store.pages(indexable_only=True)
            if record.searchable
        )
        batch = BULK_DOCUMENT_BATCH
    else:
        urls = dict.fromkeys([*indexed_urls, *report.changed])
        pages, batch = _searchable_pages(store, index, urls), DOCUMENT_BATCH
    # Documents are built by the stage pool's workers (stemming every page's text is
    # most of this step), while this process reads the next pages and feeds the index.
    count = 0
    async for fields in pool.documents(pages, batch=batch):
        index.upsert_fields(fields)
        count += 1
    # No commit every COMMIT_EVERY pages here, only the one before the crawl's row is
    # closed: a crash before it leaves the crawl open, and its resume indexes what
    # this run fetched. Each commit (about 0.1 s) held up the crawl's end.
    return count


def _searchable_pages(store: Pages, index: IndexWriter, urls: Iterable[str]) -> Iterator[Page]:
    """Each searchable page of ``urls`` with the anchor texts of links to it, read from
    the store once, as the workers ask; an indexable page that is not searchable (a
    duplicate) or is gone leaves the index on the way."""
    for url in urls:
        record = store.page(url)
        if record is None or (record.indexable and not record.searchable):
            index.delete(url)
        elif record.searchable:
            yield record, store.anchors_to(url)


async def close_crawl(
    store: Store,
    pool: StagePool,
    crawl_id: int,
    judgement: Judgement,
    stats: CrawlStats,
    *,
    pages_ok: int,
    pages_failed: int,
    index: IndexWriter | None = None,
    indexed_urls: Sequence[str] = (),
) -> int:
    """Close crawl ``crawl_id`` as ``judgement`` found it: count inlinks, prune what is
    gone from the hosts it lets prune, then (with an ``index``: the embedded crawl) run
    the batch step over the corpus and commit the index, and last close the crawl-log
    row with ``pages_ok``, ``pages_failed`` and the skips of ``stats``. Return the
    pages pruned. Without an index (workers) ``trawl index`` does the batch step.

    A host's unseen pages, and its pages that answered with a server error, leave only
    when its part of the run was whole and healthy (pipeline/health.py): a capped,
    stopped or failing part (an outage) removes nothing. Each step is durable before
    the next begins, so a kill at any instant leaves store and index in agreement or
    the run open, and the run that resumes it does the rest:

    - pruned pages leave the index (committed) before they leave the store: a kill
      between the two leaves them stored and unseen, so the resumed run prunes them;
    - the index is committed before the row is closed: a kill between the two leaves
      the run open, and the resumed run indexes its pages again.
    """
    hosts = [v.host for v in judgement.hosts]
    store.count_inlinks(hosts)
    prunable = judgement.prunable
    unseen = store.unseen_pages(crawl_id, prunable) if prunable else []
    gone = [u for u in unseen if judgement.prunes(u)]
    if prunable:
        if index is not None:
            hosts_pruned = set(prunable)  # a list of 1,000 hosts, asked for every 5xx page
            failing = [
                u
                for u in store.server_error_pages(crawl_id)
                if _host(u) in hosts_pruned and judgement.prunes(u)
            ]
            for url in [*gone, *failing]:
                index.delete(url)
            index.commit()
            fault_point("crawl_end.after_prune_index")
        store.delete_pages(gone)
        fault_point("crawl_end.after_prune_store")
    if index is not None:
        await link_up(store, index, pool, indexed_urls)
        fault_point("crawl_end.before_index_commit")
        index.commit()
        fault_point("crawl_end.after_index_commit")
    store.finish_crawl(
        crawl_id,
        pages_ok=pages_ok,
        pages_failed=pages_failed,
        outcome=judgement.outcome,
        skipped=stats.skipped,
        samples=stats.samples,
    )
    return len(gone)


def _host(url: str) -> str:
    return urlsplit(url).hostname or ""
