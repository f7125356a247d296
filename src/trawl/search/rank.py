"""The second stage: reorder the engine's best matches with what BM25F cannot see. Pure.

    score = bm25f x coverage^power x (1 + exact) x (1 + w_a authority + w_q quality)

coverage is the share of the query's own words the page holds (as a stem, a
plain form, or inside a joined URL form in its host or path): seed 002's
answer to a page that repeats one word. Words on most pages (df over half the
index, the stop words of any language) are not counted. exact: the whole
query, joined, is in the host or the URL path (annehathaway.com, /sql-vacuum).
Navigational matches, a site's home page whose host names the query or a page
titled exactly the query, are put first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from trawl.analysis.text import fold, words
from trawl.index.documents import is_home_page
from trawl.index.tantivy_index import IndexHit


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
    originals: tuple[str, ...]
    lookups: tuple[tuple[str, ...], ...]  # per original word: its stems and plain form
    counted: tuple[bool, ...]  # per original word: does it count for coverage
    joined_forms: tuple[str, ...]  # URL forms of adjacent words


def rerank(
    hits: Sequence[IndexHit], shape: QueryShape, weights: RankWeights
) -> list[tuple[float, IndexHit]]:
    joined = "".join(shape.originals)
    query_text = " ".join(shape.originals)
    counted = [i for i, c in enumerate(shape.counted) if c]
    scored: list[tuple[int, float, IndexHit]] = []
    for hit in hits:
        score = hit.score
        if counted and weights.coverage_power and len(counted) <= weights.coverage_max_words:
            matched = sum(1 for i in counted if _covers(hit.terms, shape.lookups[i], shape, i))
            score *= (matched / len(counted)) ** weights.coverage_power
        host = hit.host.lower()
        if len(joined) > 2 and host:
            path = urlsplit(hit.url).path.lower()
            if joined in host.replace("-", "") or joined in path.replace("-", ""):
                score *= 1 + weights.exact_bonus
        score *= 1 + weights.authority_weight * hit.authority + weights.quality_weight * hit.quality
        nav = weights.navigational > 0 and _navigational(hit, query_text, joined, host)
        scored.append((1 if nav else 0, score, hit))
    scored.sort(key=lambda t: (t[0], t[1]), reverse=True)
    return [(score, hit) for _, score, hit in scored]


def _covers(terms: str, forms: tuple[str, ...], shape: QueryShape, index: int) -> bool:
    if any(f" {form} " in terms for form in forms):
        return True
    word = shape.originals[index]
    return any(word in joined and f" {joined} " in terms for joined in shape.joined_forms)


def _navigational(hit: IndexHit, query_text: str, joined: str, host: str) -> bool:
    if not query_text:
        return False
    # Cheap tests first: most titles differ in length or lack the query's last word.
    last = query_text.rsplit(" ", 1)[-1]
    if (
        abs(len(hit.title) - len(query_text)) <= len(query_text) // 2 + 2
        and last in fold(hit.title.lower())
        and " ".join(fold(w) for w in words(hit.title)) == query_text
    ):
        return True
    if not host or joined not in host.replace("-", "") or not is_home_page(hit.url):
        return False
    labels = [fold(label) for label in host.replace("-", "").split(".")]
    return joined in labels or (
        len(joined) > 3 and any(label.startswith(joined) for label in labels[:-1])
    )
