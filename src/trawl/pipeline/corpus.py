"""The batch step after a crawl: what does the corpus as a whole say about each page?

Reads every page and link from the store, then, in memory:

1. PageRank over the followed links between stored pages (a link to a
   redirect counts for the redirect's target; trawl.graph.links) -> ``authority``
   in [0, 1];
2. clusters of exact and near copies, and each cluster's canonical
   (trawl.dedup.clusters), using the fresh authority: every page is scored
   before any canonical is chosen;
3. "Discussed on" entries from community pages (trawl.understand.community),
   credited to the canonical of the copy they link to;

and writes the results back with ``Store.save_signals``. It returns the pages
whose place in the index changed, so the caller (trawl.pipeline) re-indexes them.
Only the store's interface is used: this module does no I/O of its own, and each
computation is a pure function of its stage; here they are only put together.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

from trawl.dedup.clusters import corpus_verdicts, fingerprinted
from trawl.graph.links import link_authority
from trawl.records import CorpusPage, PageSignals
from trawl.store.base import CorpusSignals
from trawl.understand.community import discussions

AUTHORITY_STEP = 0.01  # an authority change smaller than this does not re-index a page


@dataclass(frozen=True, slots=True)
class CorpusReport:
    pages: int
    links: int  # followed links between stored pages, after redirects
    clusters: int
    duplicates: int  # pages that are a copy of another page's canonical
    discussed: int  # pages with at least one "Discussed on" entry
    changed: tuple[str, ...]  # pages whose index document must be rebuilt or removed
    seconds: float


def update_signals(store: CorpusSignals) -> CorpusReport:
    started = time.perf_counter()
    # Pages saved before fingerprints existed get them here, in memory (the store
    # hands over their text, and only theirs).
    pages = [fingerprinted(p) for p in store.corpus_pages()]
    redirects = {p.url: p.redirect_to for p in pages if p.redirect_to}
    community_pages = {p.url for p in pages if p.community}
    community_links: list[tuple[str, str, str]] = []

    def links() -> Iterator[tuple[str, str, bool]]:
        # One pass over the store's links: a community page's are kept aside for
        # "Discussed on" as the graph reads them.
        for source, target, anchor, nofollow in store.link_graph():
            if source in community_pages:
                community_links.append((source, target, anchor))
            yield source, target, nofollow

    ranked = link_authority([p.url for p in pages], redirects, links())
    scores = ranked.scores
    verdicts = {v.url: v for v in corpus_verdicts(pages, scores)}
    canonical_of = {v.url: v.duplicate_of for v in verdicts.values() if v.duplicate_of}
    community = {p.url: (p.host, scores[i]) for i, p in enumerate(pages) if p.community}
    discussed = discussions(community_links, community, canonical_of)

    signals = []
    changed = []
    for i, page in enumerate(pages):
        verdict = verdicts.get(page.url)
        signal = PageSignals(
            url=page.url,
            authority=round(scores[i], 6),
            scored=True,
            duplicate_of=verdict.duplicate_of if verdict else None,
            canonical_reason=verdict.reason if verdict else None,
            discussed_on=discussed.get(page.url, ()),
        )
        signals.append(signal)
        if _matters(page, signal):
            changed.append(page.url)
    store.save_signals(signals)
    return CorpusReport(
        pages=len(pages),
        links=ranked.links,
        clusters=len({v.duplicate_of or v.url for v in verdicts.values()}),
        duplicates=len(canonical_of),
        discussed=len(discussed),
        changed=tuple(changed),
        seconds=time.perf_counter() - started,
    )


def _matters(page: CorpusPage, signal: PageSignals) -> bool:
    """Whether the page's index document (if it has one) is out of date."""
    if not page.indexable:
        return False
    return (
        page.duplicate_of != signal.duplicate_of
        or page.discussed_on != signal.discussed_on
        or not page.scored
        or abs(page.authority - signal.authority) >= AUTHORITY_STEP
    )
