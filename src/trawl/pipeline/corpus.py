"""The batch step after a crawl: what does the corpus as a whole say about each page?

Reads every page and link from the store, then, in memory:

1. PageRank over the followed links between stored pages (a link to a
   redirect counts for the redirect's target) -> ``authority`` in [0, 1];
2. clusters of exact and near copies, and each cluster's canonical
   (trawl.dedup.clusters), using the fresh authority: every page is scored
   before any canonical is chosen;
3. "Discussed on" entries from community pages (trawl.understand.community),
   credited to the canonical of the copy they link to;

and writes the results back with ``Store.save_signals``. It returns the pages
whose place in the index changed, so the caller (trawl.pipeline) re-indexes them.
Only the store's interface is used: this module does no I/O of its own.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from trawl.dedup.clusters import Copy, canonical_verdicts
from trawl.dedup.simhash import simhash, text_hash
from trawl.graph.pagerank import authority, pagerank
from trawl.records import CorpusPage, PageSignals
from trawl.store.base import CorpusSignals
from trawl.understand.community import discussions

AUTHORITY_STEP = 0.01  # an authority change smaller than this does not re-index a page
MAX_REDIRECT_HOPS = 5


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
    pages = [p if p.text is None else _fingerprinted(p) for p in store.corpus_pages()]
    position = {p.url: i for i, p in enumerate(pages)}
    redirects = {p.url: p.redirect_to for p in pages if p.redirect_to}
    sources: list[int] = []
    targets: list[int] = []
    community_links: list[tuple[str, str, str]] = []
    for source, target, anchor, nofollow in store.link_graph():
        s = position.get(source)
        if s is None:
            continue
        if pages[s].community:
            community_links.append((source, target, anchor))
        t = position.get(_resolve(target, redirects))
        if t is not None and not nofollow:
            sources.append(s)
            targets.append(t)
    scores = authority(pagerank(len(pages), np.array(sources), np.array(targets)))

    copies = [
        Copy(
            url=p.url,
            text_hash=p.text_hash,
            simhash=p.simhash,
            indexable=p.indexable,
            declared_canonical=p.canonical,
            authority=float(scores[i]),
            quality=p.quality,
            scored=True,
            duplicate_of=p.duplicate_of,
        )
        for i, p in enumerate(pages)
    ]
    verdicts = {v.url: v for v in canonical_verdicts(copies)}
    canonical_of = {v.url: v.duplicate_of for v in verdicts.values() if v.duplicate_of}
    community = {p.url: (p.host, float(scores[i])) for i, p in enumerate(pages) if p.community}
    discussed = discussions(community_links, community, canonical_of)

    signals = []
    changed = []
    for i, page in enumerate(pages):
        verdict = verdicts.get(page.url)
        signal = PageSignals(
            url=page.url,
            authority=round(float(scores[i]), 6),
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
        links=len(sources),
        clusters=len({v.duplicate_of or v.url for v in verdicts.values()}),
        duplicates=len(canonical_of),
        discussed=len(discussed),
        changed=tuple(changed),
        seconds=time.perf_counter() - started,
    )


def _fingerprinted(page: CorpusPage) -> CorpusPage:
    text = page.text or ""
    return replace(
        page,
        text_hash=page.text_hash if page.text_hash is not None else text_hash(text),
        simhash=page.simhash if page.simhash is not None else simhash(text),
        text=None,
    )


def _resolve(url: str, redirects: dict[str, str]) -> str:
    for _ in range(MAX_REDIRECT_HOPS):
        target = redirects.get(url)
        if target is None:
            break
        url = target
    return url


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
