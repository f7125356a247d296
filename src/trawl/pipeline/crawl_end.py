"""The end of an embedded crawl: prune, the corpus batch step, the index brought in
line and committed, and the crawl-log row closed, in that order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from urllib.parse import urlsplit

from trawl.crawl.crawler import CrawlStats
from trawl.faults import fault_point
from trawl.index.tantivy_index import IndexWriter
from trawl.pipeline.corpus import update_signals
from trawl.pipeline.health import Judgement
from trawl.pipeline.stage_pool import Page, StagePool
from trawl.store.base import Pages, Store


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
    # No commit every COMMIT_EVERY pages here, only the one before the crawl's row is
    # closed: a crash before it leaves the crawl open, and its resume indexes what
    # this run fetched. Each commit (about 0.1 s) held up the crawl's end.


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


async def finish_crawl(
    store: Store,
    index: IndexWriter,
    pool: StagePool,
    crawl_id: int,
    *,
    judgement: Judgement,
    stats: CrawlStats,
    indexed_urls: Sequence[str],
) -> int:
    """Prune what is gone from the hosts the ``judgement`` lets prune, run the batch step
    over the corpus, commit the index, then close the crawl-log row.

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
    gone = store.unseen_pages(crawl_id, prunable) if prunable else []
    if prunable:
        failing = [u for u in store.server_error_pages(crawl_id) if _host(u) in prunable]
        for url in [*gone, *failing]:
            index.delete(url)
        index.commit()
        fault_point("crawl_end.after_prune_index")
        store.delete_pages(gone)
        fault_point("crawl_end.after_prune_store")
    await _link_up(store, index, pool, indexed_urls)
    fault_point("crawl_end.before_index_commit")
    index.commit()
    fault_point("crawl_end.after_index_commit")
    store.finish_crawl(
        crawl_id,
        pages_ok=stats.ok,
        pages_failed=stats.failed,
        outcome=judgement.outcome,
        skipped=stats.skipped,
        samples=stats.samples,
    )
    return len(gone)


def _host(url: str) -> str:
    return urlsplit(url).hostname or ""
