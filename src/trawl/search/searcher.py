"""Run a search: parse, plan, match (the cascade), rerank, page, snippet.

The cascade (seed 000) for plain word queries: every word that counts
required (a word on over half the pages still scores but is not required;
a stop word of the query's languages beside other words is not searched);
when that fills less than the ranking depth, pages with any word follow
(their coverage keeps them below pages with every word); when no page has
any word's stem and the query was analysed in fewer languages than the index
holds, the words are tried in all of them. A query longer than
``coverage_max_words`` that coverage does not apply to skips the first step:
the rerank would not prefer its all-words matches. Queries with operators
run as written. The engine's BM25F top ``rerank_depth`` is reordered by
rank.py.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from urllib.parse import quote

from trawl.analysis.stopwords import is_stop_word, stop_words_of
from trawl.analysis.text import fold, stem_words, word_stemmer, words
from trawl.errors import QueryError
from trawl.index.documents import title_key
from trawl.index.spec import (
    Address,
    AllOf,
    AnyOf,
    Boosts,
    Filters,
    IndexResults,
    Node,
    SearchIndex,
    StoredPage,
    StoredPassage,
    StoredSection,
    Titled,
    Word,
)
from trawl.records import Hit, HitSection, SearchPage
from trawl.search.plan import (
    Plan,
    candidate_languages,
    plan,
    rare_word_needed,
    soft_and,
    word_stems,
)
from trawl.search.query import ParsedQuery, parse_query
from trawl.search.rank import QueryShape, RankWeights, coverage_applies, pages_needed, rerank
from trawl.search.request import SearchRequest
from trawl.search.snippets import snippet
from trawl.search.typos import Correction, barely_known, complete, correct
from trawl.settings import Settings

_COMMON_SHARE = 0.5  # a word on more pages than this does not count for coverage
# Pages titled exactly the query the title-key lookup adds to the rerank: a few, as the
# key names one page's name (a site with many pages of one name gains little from more).
_TITLED_MAX = 3


def field_boosts(settings: Settings) -> dict[str, float]:
    return {
        "title": settings.title_boost,
        "headings": settings.headings_boost,
        "body": settings.body_boost,
        "anchors": settings.anchor_boost,
        "aside": settings.aside_boost,
        "url_tokens": settings.url_boost,
        "host": settings.host_boost,
    }


def rank_weights(settings: Settings) -> RankWeights:
    return RankWeights(
        coverage_power=settings.coverage_power,
        coverage_max_words=settings.coverage_max_words,
        exact_bonus=settings.exact_bonus,
        authority_weight=settings.authority_weight,
        quality_weight=settings.quality_weight,
        navigational=settings.navigational,
    )


@dataclass(frozen=True, slots=True)
class Ranked:
    total: int
    hits: tuple[tuple[float, StoredPage], ...]
    query: ParsedQuery
    languages: tuple[str | None, ...]
    corrections: tuple[Correction, ...] = ()


def rank(
    reader: SearchIndex,
    request: SearchRequest | str,
    settings: Settings,
    *,
    limit: int,
    reload: bool = True,
    syntax: bool = True,
) -> Ranked:
    """The best ``limit`` pages for the request (its text alone: a plain text), reranked;
    no snippets (evaluation uses this). The request's page is not looked at."""
    if isinstance(request, str):
        request = SearchRequest(request)
    if reload:
        reader.reload()
    query = _with_filters(parse_query(request.text, syntax=syntax), request.filters)
    languages = tuple(candidate_languages(query, settings.query_lang, reader.languages()))
    if query.empty:
        return Ranked(0, (), query, languages)
    fixes = _corrections(reader, query, languages) if settings.typo_tolerance else {}
    planned = plan(
        query,
        languages,
        settings.proximity_boost,
        reader.languages(),
        proximity_max_words=settings.proximity_max_words,
        proximity_long=settings.proximity_long_boost,
        corrections=fixes,
    )
    boosts = Boosts(fields=field_boosts(settings), lookup=settings.lookup_boost)
    by_date = request.sort == "date"
    if by_date:
        results = _cascade(reader, planned, boosts, limit, by_date)
        newest = reader.fetch(results.addresses)
        return Ranked(results.total, tuple((0.0, h) for h in newest), query, languages)
    depth = settings.rerank_depth
    # Semantic fusion reorders the top ``semantic_depth``: that many are ranked first.
    fusing = settings.semantic and query.plain
    taken = max(limit, settings.semantic_depth) if fusing else limit
    weights = rank_weights(settings)
    shape, masses, freqs = _shape(reader, planned, fixes)
    planned = rare_word_needed(planned, shape.counted, [df > 0 for df in freqs])
    planned = soft_and(planned, shape.counted, masses, settings.soft_and_share)
    # Every word first, for short queries and those coverage applies to; a longer query's
    # all-words matches gain nothing in the rerank, and the step would cost a search.
    every_word = len(planned.originals) <= weights.coverage_max_words or coverage_applies(
        shape, weights
    )
    results = _cascade(reader, planned, boosts, max(taken, depth), by_date, every_word=every_word)
    if settings.feedback_terms and query.plain and results.addresses:
        extra = _feedback(reader, planned, results, settings)
        if extra:
            planned = _with_terms(planned, extra)
            results = _cascade(
                reader, planned, boosts, max(taken, depth), by_date, every_word=every_word
            )
    # Only the top ``depth`` are reordered; deeper matches follow in the engine's order.
    top = results.addresses[:depth]
    rest = results.addresses[depth:taken]
    titled = _titled(reader, planned, shape, top, weights) if query.plain else ()
    if titled:
        top += titled
        joined = {reader.key(a) for _, a in titled}
        rest = tuple(p for p in rest if reader.key(p[1]) not in joined)
    candidates = reader.candidates(top)
    hits = reader.fetch(top)  # each stored page read only if a field of it is asked for
    wanted = pages_needed(candidates, results.complete, shape, weights)
    ordered = rerank(candidates, results.complete, {i: hits[i] for i in wanted}, shape, weights)
    best = [(score, hits[i]) for score, i in ordered[:taken]]
    best += [(h.score, h) for h in reader.fetch(rest)]
    if fusing:
        from trawl.search.semantic import fuse  # noqa: PLC0415 - the semantic extra

        best = fuse(request.text, best, settings)
    return Ranked(results.total, tuple(best[:limit]), query, languages, tuple(fixes.values()))


def _titled(
    reader: SearchIndex,
    planned: Plan,
    shape: QueryShape,
    top: tuple[tuple[float, Address], ...],
    weights: RankWeights,
) -> tuple[tuple[float, Address], ...]:
    """Pages titled exactly the query that BM25F left below the rerank: their words may
    all be stop words or on every page ("What is rustc?" in the rustc book ranked 63rd).
    One term lookup of the title's key; they join the candidates with the lowest score
    of the top, and the rerank's navigational rule puts them first."""
    if weights.navigational <= 0 or not shape.originals:
        return ()
    found = reader.search(
        Titled(shape.title_key), planned.filters, Boosts(), limit=_TITLED_MAX, count=False
    )
    if not found.addresses:
        return ()
    seen = {reader.key(a) for _, a in top}
    floor = min((score for score, _ in top), default=0.0)
    return tuple((floor, a) for _, a in found.addresses if reader.key(a) not in seen)


def _feedback(
    reader: SearchIndex, planned: Plan, results: IndexResults, settings: Settings
) -> list[Word]:
    """RM3-style pseudo-relevance feedback: terms the best pages share, weighed by the
    pages' scores and the terms' rarity, as optional words of the second pass."""
    top = results.addresses[: settings.feedback_docs]
    total = sum(score for score, _ in top) or 1.0
    typed = {t for stems in planned.stems for t in stems}
    weight: dict[str, float] = {}
    seen: dict[str, int] = {}
    for (score, _), hit in zip(top, reader.fetch(top), strict=True):
        for term in set(hit.terms.split()):
            if term in typed or len(term) < 3 or not term.isalpha():
                continue
            weight[term] = weight.get(term, 0.0) + score / total
            seen[term] = seen.get(term, 0) + 1
    size = max(reader.size, 1)
    shared = [t for t, n in seen.items() if n >= 2]
    ranked = sorted(
        shared,
        key=lambda t: -weight[t] * math.log(size / (1 + reader.doc_freq("body", t))),
    )
    return [Word((t,), weight=settings.feedback_weight) for t in ranked[: settings.feedback_terms]]


def _with_terms(planned: Plan, extra: list[Word]) -> Plan:
    steps: list[Node] = []
    for step in planned.steps:
        if isinstance(step, AllOf):
            steps.append(replace(step, optional=(*step.optional, *extra)))
        elif isinstance(step, AnyOf):
            steps.append(AnyOf((*step.children, *extra)))
        else:
            steps.append(step)
    return replace(planned, steps=tuple(steps))


def _corrections(
    reader: SearchIndex, query: ParsedQuery, languages: tuple[str | None, ...]
) -> dict[str, Correction]:
    """Near spellings of the plain words the index barely knows, and completions of the last
    one (search/typos.py); never inside phrases or beside operators."""
    if not query.plain or not query.words:
        return {}
    size = max(reader.size, 1)
    stop = stop_words_of(languages)
    lang = next((code for code in languages if code), None)
    last = query.words[-1]
    found: dict[str, Correction] = {}
    for word in dict.fromkeys(query.words):
        folded = fold(word)
        if folded in stop:
            continue
        stems = word_stems(word, languages)
        df = max(reader.doc_freq("body", s) for s in stems)
        if not barely_known(df, size):
            continue

        def terms(prefix: str, limit: int | None) -> list[tuple[str, int]]:
            return reader.terms_with_prefix("body", prefix, limit)

        fix = (complete(folded, terms) if word == last else None) or correct(
            folded, lang, df, terms
        )
        if fix is not None:
            found[word] = fix
    return found


def did_you_mean(ranked: Ranked) -> str | None:
    """The query with its corrected words, when the best result holds a correction and
    none of the words as typed: the corrections found it, not the typing."""
    fixes = [c for c in ranked.corrections if c.distance > 0]
    if not fixes or not ranked.hits:
        return None
    terms = ranked.hits[0][1].terms
    for fix in fixes:
        own = word_stems(fix.word, ranked.languages)
        if any(f" {t} " in terms for t in own) or not any(f" {t} " in terms for t in fix.stems):
            return None
    text = ranked.query.text
    for fix in fixes:
        text = re.sub(rf"(?<!\w){re.escape(fix.word)}(?!\w)", fix.shown, text, flags=re.I)
    return text


def _with_filters(query: ParsedQuery, given: Filters) -> ParsedQuery:
    """Filters given beside the text (API parameters, form fields) join those typed in it."""
    if given.empty:
        return query
    return replace(
        query,
        lang=given.lang or query.lang,
        sites=(*query.sites, *given.sites),
        after=given.after or query.after,
        before=given.before or query.before,
        modified_sources=(*query.modified_sources, *given.modified_sources),
    )


def _cascade(
    reader: SearchIndex, planned: Plan, boosts: Boosts, depth: int, by_date: bool,
    *, every_word: bool = True,
) -> IndexResults:  # fmt: skip
    steps, filters = planned.steps, planned.filters
    if len(steps) == 1:
        return reader.search(steps[0], filters, boosts, limit=depth, by_date=by_date)
    first = IndexResults(0, ())
    if every_word:
        first = reader.search(steps[0], filters, boosts, limit=depth, by_date=by_date)
        if first.total >= depth:
            return replace(first, complete=len(first.addresses) if planned.strict else None)
    wider = reader.search(steps[1], filters, boosts, limit=depth, by_date=by_date)
    if wider.total == 0 and len(steps) > 2:
        return reader.search(steps[2], filters, boosts, limit=depth, by_date=by_date)
    if first.total == 0:
        return wider
    key = reader.key
    seen = {key(a) for _, a in first.addresses}
    merged = first.addresses + tuple(p for p in wider.addresses if key(p[1]) not in seen)
    complete = len(first.addresses) if planned.strict else None
    return IndexResults(wider.total, merged[:depth], complete=complete)


def _shape(
    reader: SearchIndex, planned: Plan, fixes: Mapping[str, Correction] | None = None
) -> tuple[QueryShape, list[float], list[int]]:
    """The rerank's view of the query, and each word's weight (its IDF in the body) and
    document frequency. A corrected word is seen as the word it was taken for, so a page
    titled or named by the query ("cargho build": cargo-build.html, "Cargo Build") keeps
    the bonuses it has for the query spelt right."""
    size = max(reader.size, 1)
    freqs = [max((reader.doc_freq("body", s) for s in stems), default=0) for stems in planned.stems]
    rare = [df <= _COMMON_SHARE * size for df in freqs]
    counted = tuple(r and not s for r, s in zip(rare, planned.stop, strict=True))
    meant = {w: fold(c.shown) for w, c in (fixes or {}).items() if c.distance > 0}
    originals = tuple(meant.get(w) or fold(w) for w in planned.originals)
    shape = QueryShape(
        originals=originals,
        lookups=planned.stems,
        counted=counted,
        length=sum(rare),
        joined_forms=planned.lookups,
        title_key=title_key(" ".join(originals)),
    )
    masses = [math.log(1 + (size - df + 0.5) / (df + 0.5)) for df in freqs]
    return shape, masses, freqs


def search(reader: SearchIndex, request: SearchRequest | str, settings: Settings) -> SearchPage:
    """A results page with snippets: the request's page (a plain text: the first page)."""
    if isinstance(request, str):
        request = SearchRequest(request)
    page = request.page
    per_page = settings.per_page if request.per_page is None else request.per_page
    if not 1 <= per_page <= settings.max_per_page:
        raise QueryError(f"per_page must be between 1 and {settings.max_per_page}")
    started = time.perf_counter()
    ranked = rank(reader, request, settings, limit=page * per_page)
    shown = ranked.hits[(page - 1) * per_page :]
    wanted = _SnippetWords(ranked.query.words)
    hits = tuple(_hit(score, h, wanted, settings) for score, h in shown)
    took_ms = round((time.perf_counter() - started) * 1000, 2)
    return SearchPage(
        ranked.query.text, ranked.total, took_ms, page, per_page, hits, did_you_mean(ranked)
    )


class _SnippetWords:
    """The query's words as snippets look for them, analysed once per language for all of
    a results page's hits. Stop words are left out beside other words: marking every
    "the" says nothing, and finding each "in" inside other words was most of a long
    query's snippet time (SciFact)."""

    def __init__(self, query_words: Sequence[str]) -> None:
        self._words = tuple(query_words)
        self._by_lang: dict[str | None, tuple[list[frozenset[str]], frozenset[str]]] = {}
        self._stems: dict[str | None, dict[str, str]] = {}
        self._analysers: dict[str | None, Callable[[str], str]] = {}
        self._known: dict[str | None, dict[str, str | None]] = {}

    def forms(self, lang: str | None) -> tuple[list[frozenset[str]], frozenset[str]]:
        """Per kept word its stems and folded form, and all of them."""
        found = self._by_lang.get(lang)
        if found is None:
            kept = [w for w in self._words if not is_stop_word(w, (lang,))] or list(self._words)
            forms = [frozenset((*stem_words([w], lang), fold(w))) for w in kept]
            found = self._by_lang[lang] = (forms, frozenset().union(*forms))
        return found

    def known(self, lang: str | None) -> dict[str, str | None]:
        """The words snippets met in this language's hits, each with the query term it
        stands for (snippets.window): a word is stemmed once for a whole results page."""
        return self._known.setdefault(lang, {})

    def stemmer(self, lang: str | None) -> Callable[[str], str]:
        stems = self._stems.setdefault(lang, {})
        analyse = self._analysers.get(lang)
        if analyse is None:
            analyse = self._analysers[lang] = word_stemmer(lang)

        def stem(word: str) -> str:
            found = stems.get(word)
            if found is None:
                found = stems[word] = analyse(word)
            return found

        return stem


def _hit(score: float, hit: StoredPage, wanted: _SnippetWords, settings: Settings) -> Hit:
    lang = hit.lang or None
    forms, terms = wanted.forms(lang)
    title, text, limit = hit.title, hit.text, settings.snippet_chars
    sections, passages = hit.sections
    skip, section = title, None
    cut_before = cut_after = False
    best = best_passage(sections, passages, forms, lang) if passages else None
    if best is not None:
        start, owner, _ = passages[best]
        end = passages[best + 1][0] if best + 1 < len(passages) else len(text)
        end = max(end, start + limit)
        cut_before, cut_after = start > 0, end < len(text)
        text = text[start:end]
        if owner >= 0 and start == sections[owner][3]:
            skip = sections[owner][0]  # the heading, shown in the section's path
        elif start:
            skip = ""
        if owner >= 0 and not _is_page_top(sections, owner, title):
            section = HitSection(
                title=sections[owner][0],
                path=heading_path(sections, owner),
                url=_deep_link(hit.url, sections[owner]),
            )
    shown = snippet(
        text,
        terms,
        wanted.stemmer(lang),
        limit,
        skip=skip,
        cut_before=cut_before,
        cut_after=cut_after,
        known=wanted.known(lang),
    )
    return Hit(
        url=hit.url,
        title=title or hit.url,
        snippet=shown,
        score=round(score, 4),
        lang=lang,
        discussed_on=hit.discussed_on,
        modified=hit.modified,
        section=section,
        published=hit.published,
        modified_source=hit.modified_source,
    )


def best_passage(
    sections: Sequence[StoredSection],
    passages: Sequence[StoredPassage],
    forms: Sequence[frozenset[str]],
    lang: str | None,
) -> int | None:
    """The passage holding the most query words, a heading naming more of them breaking
    ties, then the earliest; None when no passage holds any."""
    held = _held(passages, forms)
    most = max(held, default=0)
    if not most:
        return None
    named: dict[int, int] = {}  # section position -> query words its heading holds
    best, best_named = None, -1
    for position, count in enumerate(held):
        if count != most:
            continue
        owner = passages[position][1]
        if owner not in named:
            heading = sections[owner][0] if owner >= 0 else ""
            found = {*stem_words(words(heading), lang), *(fold(w) for w in words(heading))}
            named[owner] = sum(1 for word in forms if word & found)
        if named[owner] > best_named:
            best, best_named = position, named[owner]
    return best


def _held(passages: Sequence[StoredPassage], forms: Sequence[frozenset[str]]) -> list[int]:
    """Per passage, how many of the words (each a set of forms) it holds.

    Each form is looked for once in all the passages' terms joined, not once per
    passage: a long page has dozens of passages, and a test per passage, word and form
    was a third of a results page's time on the PostgreSQL manual.
    """
    parts = [terms for *_, terms in passages]
    joined = "".join(parts)  # each part " a b c ": a form found lies in one part
    starts = list(itertools.accumulate(map(len, parts), initial=0))
    held = [0] * len(passages)
    for word in forms:
        found: set[int] = set()
        for form in word:
            needle = f" {form} "
            at = joined.find(needle)
            while at != -1:
                found.add(bisect.bisect_right(starts, at) - 1)
                at = joined.find(needle, at + len(needle) - 1)
        for position in found:
            held[position] += 1
    return held


def heading_path(sections: Sequence[StoredSection], position: int) -> tuple[str, ...]:
    """The headings above a section (each the nearest of a higher level) and its own."""
    path = [sections[position][0]]
    level = sections[position][1]
    for heading, above, _, _ in reversed(sections[:position]):
        if above < level:
            path.append(heading)
            level = above
    return tuple(reversed(path))


def _is_page_top(sections: Sequence[StoredSection], position: int, title: str) -> bool:
    """The first section, headed by the page's own title: the page itself, no deep link."""
    heading, _, _, start = sections[position]
    return position == 0 and (start == 0 or heading in title)


def _deep_link(url: str, section: StoredSection) -> str:
    heading, _, anchor, _ = section
    if anchor:
        return f"{url}#{quote(anchor, safe=_FRAGMENT_SAFE)}"
    # No id to link to: a text fragment scrolls browsers that know them to the heading.
    return f"{url}#:~:text={quote(heading, safe='')}"


_FRAGMENT_SAFE = "!$&'()*+,;=:@/?-._~"
