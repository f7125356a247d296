"""Clusters of copies, and which copy of each is the canonical one. Pure.

Two pages are copies when their texts hash alike (exact) or their SimHashes
are at most 3 bits apart (near); copies of copies are one cluster, across
hosts (union-find). In each cluster of two or more, one indexable page is the
canonical: only it is searchable. It is chosen in tiers (seed 004's design),
the first that decides wins:

1. rel=canonical: the member that other members name as their canonical;
2. authority and quality: the member whose authority + quality beats the
   tier-3 choice by more than ``MARGIN``, and only when every candidate has been
   scored (a page PageRank has not seen yet has authority 0, which says nothing);
3. the existing canonical stays: the member that the others were duplicates of
   before, else the one crawled first.

So a low-quality mirror crawled first does not win for ever, and nothing
flips back and forth on noise.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

from trawl.dedup.simhash import near_pairs, simhash, text_hash
from trawl.records import CorpusPage

MARGIN = 0.05  # authority + quality must differ by more than this to replace a canonical


@dataclass(frozen=True, slots=True)
class Copy:
    """What the canonical choice needs to know about one page (in crawl order)."""

    url: str
    text_hash: int | None
    simhash: int | None
    indexable: bool = True
    declared_canonical: str | None = None  # its <link rel=canonical>
    authority: float = 0.0
    quality: float = 0.0
    scored: bool = False
    duplicate_of: str | None = None  # as stored before this choice


@dataclass(frozen=True, slots=True)
class Verdict:
    url: str
    duplicate_of: str | None  # None: this page is its cluster's canonical
    reason: str  # why the canonical won


class UnionFind:
    """Disjoint sets over 0..n-1, with path halving and union by size.

    Written here (twenty lines) rather than taken from scipy's connected
    components so that this package stays pure Python over plain records.
    """

    def __init__(self, n: int) -> None:
        self._parent = list(range(n))
        self._size = [1] * n

    def find(self, i: int) -> int:
        parent = self._parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(self, i: int, j: int) -> None:
        a, b = self.find(i), self.find(j)
        if a == b:
            return
        if self._size[a] < self._size[b]:
            a, b = b, a
        self._parent[b] = a
        self._size[a] += self._size[b]


def clusters(copies: Sequence[Copy]) -> list[list[int]]:
    """Positions of ``copies`` grouped into clusters of two or more, in crawl order."""
    sets = UnionFind(len(copies))
    first_with_hash: dict[int, int] = {}
    for i, copy in enumerate(copies):
        if copy.text_hash is not None:
            sets.union(first_with_hash.setdefault(copy.text_hash, i), i)
    # Identical fingerprints are joined directly; the near lookup then runs over
    # distinct values only (a thousand identical copies would be half a million pairs).
    first_with_simhash: dict[int, int] = {}
    for i, copy in enumerate(copies):
        if copy.simhash is not None:
            sets.union(first_with_simhash.setdefault(copy.simhash, i), i)
    representatives = list(first_with_simhash.values())
    for a, b in near_pairs(copies[i].simhash or 0 for i in representatives):
        sets.union(representatives[a], representatives[b])
    groups: dict[int, list[int]] = defaultdict(list)
    for i in range(len(copies)):
        groups[sets.find(i)].append(i)
    return [members for members in groups.values() if len(members) > 1]


def choose_canonical(members: Sequence[Copy]) -> tuple[Copy, str] | None:
    """The canonical of one cluster (members in crawl order) and why; None if none is
    indexable."""
    candidates = [m for m in members if m.indexable]
    if not candidates:
        return None
    urls = {m.url for m in candidates}
    votes = Counter(
        m.declared_canonical
        for m in members
        if m.declared_canonical in urls and m.declared_canonical != m.url
    )
    if votes:
        most = max(votes.values())
        named = [m for m in candidates if votes[m.url] == most]
        if len(named) == 1:
            copies = "copy" if most == 1 else "copies"
            return named[0], f"named as canonical (rel=canonical) by {most} other {copies}"
        candidates = named
    incumbent, why = _existing(candidates)
    if all(m.scored for m in candidates):
        best = max(candidates, key=_worth)
        if _worth(best) - _worth(incumbent) > MARGIN:
            return best, (
                f"higher authority and quality ({best.authority:.2f} + {best.quality:.2f})"
                f" than {incumbent.url} ({incumbent.authority:.2f} + {incumbent.quality:.2f})"
            )
    return incumbent, why


def _worth(copy: Copy) -> float:
    return copy.authority + copy.quality


def _existing(candidates: Sequence[Copy]) -> tuple[Copy, str]:
    pointed_at = Counter(m.duplicate_of for m in candidates if m.duplicate_of)
    previous = [m for m in candidates if m.url in pointed_at and m.duplicate_of is None]
    if previous:
        return max(previous, key=lambda m: pointed_at[m.url]), "already the canonical copy"
    return candidates[0], "the copy crawled first"


def canonical_verdicts(copies: Sequence[Copy]) -> list[Verdict]:
    """A verdict for every page in a cluster of two or more; pages alone get none."""
    verdicts = []
    for positions in clusters(copies):
        members = [copies[i] for i in positions]
        chosen = choose_canonical(members)
        if chosen is None:
            continue
        winner, reason = chosen
        for member in members:
            duplicate_of = None if member.url == winner.url else winner.url
            verdicts.append(Verdict(member.url, duplicate_of, reason))
    return verdicts


def fingerprinted(page: CorpusPage) -> CorpusPage:
    """``page`` with both fingerprints and without its text: a page saved before
    fingerprints existed is handed over with its text, to be fingerprinted here."""
    if page.text is None:
        return page
    text = page.text
    return replace(
        page,
        text_hash=page.text_hash if page.text_hash is not None else text_hash(text),
        simhash=page.simhash if page.simhash is not None else simhash(text),
        text=None,
    )


def corpus_verdicts(pages: Sequence[CorpusPage], authority: Sequence[float]) -> list[Verdict]:
    """``canonical_verdicts`` over stored pages (in crawl order, fingerprinted), each
    scored with its fresh ``authority``: every page is scored before any canonical is
    chosen."""
    return canonical_verdicts(
        [
            Copy(
                url=p.url,
                text_hash=p.text_hash,
                simhash=p.simhash,
                indexable=p.indexable,
                declared_canonical=p.canonical,
                authority=float(authority[i]),
                quality=p.quality,
                scored=True,
                duplicate_of=p.duplicate_of,
            )
            for i, p in enumerate(pages)
        ]
    )
