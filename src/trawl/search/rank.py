"""The second stage: reorder the engine's best matches with what BM25F cannot see. Pure.

    score = bm25f x coverage^power x (1 + exact) x (1 + w_a authority + w_q quality)

coverage is the share of the query's own words the page holds (as a stem, a
plain form, or inside a joined URL form in its host or path): seed 002's
answer to a page that repeats one word. Words on most pages (df over half the
index) and the stop words of the query's languages (analysis/stopwords.py) are
not counted. Coverage puts pages with every word above those without; when no
page has every word, the engine's order stands. exact: the whole
query, joined, is in the host or the URL path (annehathaway.com, /sql-vacuum).
Navigational matches, a site's home page whose host names the query or a page
titled exactly the query, are put first.

A match is first seen as a ``Candidate`` (engine score and fast fields); its
stored page is read only when a factor needs it (``pages_needed``): coverage for
a match not known to hold every word, exact and home-page tests for a host or
path long enough to hold the joined query. Long queries over collections
(SciFact) then read no page at all before the final ones are shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from trawl.analysis.text import fold
from trawl.index.spec import Candidate, StoredPage


@dataclass(frozen=True, slots=True)
class RankWeights:
    coverage_power: float = 2.0
    coverage_max_words: int = 6
    exact_bonus: float = 0.5
    authority_weight: float = 0.1
    quality_weight: float = 0.3
    navigational: int = 1


@dataclass(frozen=True, slots=True)
class QueryShape:
    originals: tuple[str, ...]  # folded query words, once each
    lookups: tuple[tuple[str, ...], ...]  # per original word: its stems and plain form
    counted: tuple[bool, ...]  # per original word: does it count for coverage
    length: int  # words the query's length is measured in: all but those on most pages
    joined_forms: tuple[str, ...]  # URL forms of adjacent words
    title_key: int  # index/documents.title_key of the words: a page titled exactly the query

    @property
    def joined(self) -> str:
        return "".join(self.originals)


def coverage_applies(shape: QueryShape, weights: RankWeights) -> bool:
    # The length counts stop words too: a long question is not made short by its "the"s.
    return (
        bool(weights.coverage_power)
        and any(shape.counted)
        and shape.length <= weights.coverage_max_words
    )


def pages_needed(
    candidates: Sequence[Candidate],
    complete: int | None,
    shape: QueryShape,
    weights: RankWeights,
) -> list[int]:
    """Positions of the candidates whose stored page scoring needs; the first ``complete``
    hold every query word (None: not known of any, as after a soft AND)."""
    covering = coverage_applies(shape, weights) and complete != 0
    known = complete or 0
    size = len(shape.joined)
    navigational = weights.navigational > 0
    return [
        position
        for position, candidate in enumerate(candidates)
        if (covering and position >= known)
        # Exact and home-page tests look for the joined words in the host or path.
        or ((size > 2 or (navigational and candidate.home)) and 0 < size <= candidate.name_chars)
    ]


def rerank(
    candidates: Sequence[Candidate],
    complete: int | None,
    pages: Mapping[int, StoredPage],
    shape: QueryShape,
    weights: RankWeights,
) -> list[tuple[float, int]]:
    """(score, position in ``candidates``), best first; the first ``complete`` hold every word
    (None: not known of any: each page's own words tell).

    ``pages`` holds the stored page of every candidate ``pages_needed`` named.
    """
    navigational = weights.navigational > 0
    title_key = shape.title_key if shape.originals else -1
    if not pages and not any(
        c.authority or c.quality or (navigational and c.title_key == title_key) for c in candidates
    ):
        # No factor but the engine's score: its order, as the full loop would sort it.
        scores = [(c.score, position) for position, c in enumerate(candidates)]
        return sorted(scores, key=lambda t: t[0], reverse=True)
    joined = shape.joined
    # No page holds every word: BM25 already weighs the words each holds by their rarity,
    # and counting them instead lets a page with two common words pass one with the rare one
    # (CACM nDCG@10 0.478 -> 0.490; the golden set unchanged).
    counted = [i for i, c in enumerate(shape.counted) if c]
    shares: dict[int, float] = {}
    if coverage_applies(shape, weights) and complete != 0:
        known = complete or 0
        for position, stored in pages.items():
            if position >= known:
                terms = stored.terms
                matched = sum(1 for i in counted if _covers(terms, shape.lookups[i], shape, i))
                shares[position] = matched / len(counted)
        # A soft AND's matches: coverage counts only when some page holds every word.
        if complete is None and not any(share == 1 for share in shares.values()):
            shares.clear()
    scored: list[tuple[int, float, int]] = []
    for position, candidate in enumerate(candidates):
        score = candidate.score
        nav = navigational and candidate.title_key == title_key
        page = pages.get(position)
        if page is not None:
            if position in shares:
                score *= shares[position] ** weights.coverage_power
            host = page.host.lower()
            if len(joined) > 2 and host:
                path = urlsplit(page.url).path.lower()
                if joined in host.replace("-", "") or joined in path.replace("-", ""):
                    score *= 1 + weights.exact_bonus
            nav = nav or (navigational and candidate.home and _names_host(joined, host))
        if candidate.authority or candidate.quality:
            score *= (
                1
                + weights.authority_weight * candidate.authority
                + weights.quality_weight * candidate.quality
            )
        scored.append((1 if nav else 0, score, position))
    scored.sort(key=lambda t: (t[0], t[1]), reverse=True)
    return [(score, position) for _, score, position in scored]


def _covers(terms: str, forms: tuple[str, ...], shape: QueryShape, index: int) -> bool:
    if any(f" {form} " in terms for form in forms):
        return True
    word = shape.originals[index]
    return any(word in joined and f" {joined} " in terms for joined in shape.joined_forms)


def _names_host(joined: str, host: str) -> bool:
    """A home page whose host names the query: annehathaway.com, postgresql.org for postgres."""
    if not joined or joined not in host.replace("-", ""):
        return False
    labels = [fold(label) for label in host.replace("-", "").split(".")]
    return joined in labels or (
        len(joined) > 3 and any(label.startswith(joined) for label in labels[:-1])
    )
