"""A parsed query -> trees the index can run, one per step of the cascade.

Each word is analysed in every candidate language (the lang: operator or the
``query_lang`` setting, else every language the index holds) and matches any
of the stems: the page's own analysis decided which one it carries. When the
candidates are fewer than the index's languages, the cascade's last step
analyses the words in all of them.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from trawl.analysis.lookup import concatenations
from trawl.analysis.stopwords import stop_words_of
from trawl.analysis.text import fold, language_code, stem_words
from trawl.index.spec import AllOf, AnyOf, Filtered, Filters, Lookup, Near, Node, Phrase, Word
from trawl.search.query import And, Expr, Not, Or, ParsedQuery, Term
from trawl.search.typos import Correction

Languages = Sequence[str | None]
_NEAR_SLOP = 3  # words allowed between two adjacent query words
_LOOKUP_MAX_WORDS = 6
SOFT_AND_MAX_WORDS = 6  # counted words a soft AND enumerates its word sets over


@dataclass(frozen=True, slots=True)
class Plan:
    steps: tuple[Node, ...]  # tried in order; a plain query: all, any, any in every language
    filters: Filters
    originals: tuple[str, ...]  # the words coverage is counted over
    stems: tuple[tuple[str, ...], ...]  # per original word, its lookup terms (stems, plain form)
    lookups: tuple[str, ...]  # URL forms: joined adjacent words
    positions: tuple[int, ...] = ()  # per word of the all-words step: its original's index
    stop: tuple[bool, ...] = ()  # per original word: a stop word of the query's languages
    strict: bool = True  # the first step's pages hold every word that counts


def candidate_languages(query: ParsedQuery, setting: str, indexed: Languages) -> list[str | None]:
    chosen = query.lang or language_code(setting)
    if chosen:
        return [chosen]
    return list(indexed) or [None]


def word_stems(word: str, languages: Languages) -> tuple[str, ...]:
    """The word's stem in each candidate language."""
    return _word_stems(word, tuple(languages))


@lru_cache(maxsize=16_384)
def _word_stems(word: str, languages: tuple[str | None, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(stem_words([word], lang)[0] for lang in languages))


def word_node(word: str, languages: Languages, correction: Correction | None = None) -> Word:
    if correction is None:
        return Word(word_stems(word, languages), plain=fold(word))
    return Word(
        word_stems(word, languages),
        plain=fold(word),
        fuzzy=correction.stems,
        fuzzy_plain=fold(correction.shown),
    )


def plan(
    query: ParsedQuery,
    languages: Languages,
    proximity: float = 0.0,
    everywhere: Languages = (),
    *,
    proximity_max_words: int = 6,
    proximity_long: float = 0.0,
    corrections: Mapping[str, Correction] | None = None,
) -> Plan:
    """``everywhere``: every language the index holds, for the cascade's last step.

    Proximity pairs are made for queries of at most ``proximity_max_words`` words
    (stop words aside): a long query's pairs cost the engine more than they earn.
    """
    filters = Filters(
        sites=query.sites,
        lang=query.lang,
        after=query.after,
        before=query.before,
        modified_sources=query.modified_sources,
    )
    languages = tuple(languages)
    originals = tuple(dict.fromkeys(query.words))
    fixes = corrections or {}
    nodes = {w: word_node(w, languages, fixes.get(w)) for w in originals}
    stems = tuple((*n.stems, *n.fuzzy, n.plain) for n in nodes.values())
    stop_list = stop_words_of(languages)
    stopped = {w for w, n in nodes.items() if n.plain in stop_list}
    # Stop words are not searched when the query has other words: they say how the query is
    # put, not what it is about, and a page holding "the" earns nothing by it (nDCG@10 up
    # on all five collections: NFCorpus 0.326 -> 0.335, CISI 0.370 -> 0.397; golden MRR
    # 0.888 -> 0.905). Coverage and the exact-title test still see every word.
    content = [w for w in query.words if w not in stopped] or list(query.words)
    # URL forms are for names and sites, which are short; a long query's joined pairs
    # would only cost clauses.
    short = len(originals) <= _LOOKUP_MAX_WORDS
    # A corrected word is joined as the word it was taken for, as well as typed.
    meant = [fixes[w].shown if w in fixes and fixes[w].distance > 0 else w for w in query.words]
    joined = (*concatenations(query.words), *concatenations(meant)) if short else ()
    lookups = tuple(dict.fromkeys(fold(f) for f in joined))
    extra: tuple[Node, ...] = (Lookup(lookups),) if lookups else ()
    # Other spellings of compounds score like words, but no page need hold them.
    extra += tuple(word_node(w, languages) for w in query.variants)
    # Pairs skip stop words: "stool size and breast" pairs size with breast, within the slop.
    if proximity > 0 and 1 < len(content) <= proximity_max_words:
        first = [nodes[w].stems[0] for w in content]
        pairs = tuple(dict.fromkeys(itertools.pairwise(first)))
        extra = (*extra, Near(pairs, slop=_NEAR_SLOP, boost=proximity, long_boost=proximity_long))
    if query.expr is None:
        return Plan((AllOf(()),), filters, (), (), ())
    positions: tuple[int, ...] = ()
    if query.plain:
        # Repeated words count again, as BM25's query term frequency would have them.
        words = tuple(nodes[w] for w in content)
        steps: tuple[Node, ...] = (AllOf(words, optional=extra), AnyOf((*words, *extra)))
        if set(everywhere) - set(languages):
            # query_lang named one language: a page in another may still hold the words.
            steps += (AnyOf(tuple(word_node(w, everywhere) for w in originals)),)
        positions = tuple(originals.index(w) for w in content)
    else:
        steps = (_node(query.expr, languages, extra),)
    stop = tuple(w in stopped for w in originals)
    return Plan(steps, filters, originals, stems, lookups, positions, stop)


def require_counted(planned: Plan, counted: Sequence[bool]) -> Plan:
    """The all-words step with only the words that count required; the rest still score.

    A word on most pages (a stop word) says little about a page, and requiring it
    only drops pages that hold every word that matters. When no word counts, all stay
    required.
    """
    return soft_and(planned, counted, [1.0] * len(counted), 1.0)


def soft_and(
    planned: Plan,
    counted: Sequence[bool],
    masses: Sequence[float],
    share: float,
    *,
    max_words: int = SOFT_AND_MAX_WORDS,
) -> Plan:
    """The first step: pages holding at least ``share`` of the counted words' weight
    (``masses``, per original word: its IDF), scored by every word as the any-word step
    scores them. Words that do not count still score, never required.

    "why do my cars vanish in the simulation" need not find "cars" on the page that says
    "vehicles" and everything else: a strict AND drops it, any-word floods the top with
    long pages holding one word. The condition is the disjunction of the minimal sets of
    words heavy enough, so it is enumerated only for queries of at most ``max_words``
    counted words; a longer query keeps its all-words step. share 1: every counted word.
    """
    first = planned.steps[0]
    if not planned.positions or not isinstance(first, AllOf) or not any(counted):
        return planned
    pairs = list(zip(first.children, planned.positions, strict=True))
    if all(counted) and share >= 1:
        return replace(planned, positions=())
    weights = {i: masses[i] for _, i in pairs if counted[i]}
    sets = _heavy_sets(weights, share) if len(weights) <= max_words else [tuple(weights)]
    node_of = {i: node for node, i in pairs}
    optional = (*(node for node, i in pairs if not counted[i]), *first.optional)
    if len(sets) == 1:
        required = tuple(node for node, i in pairs if i in sets[0])
        rest = (*(node for node, i in pairs if counted[i] and i not in sets[0]), *optional)
        step: Node = AllOf(required, optional=rest)
        strict = len(sets[0]) == len(weights)
    else:
        match = AnyOf(tuple(AllOf(tuple(node_of[i] for i in chosen)) for chosen in sets))
        step = Filtered(AnyOf((*first.children, *first.optional)), match)
        strict = False
    steps = (step, *planned.steps[1:])
    return replace(planned, steps=steps, positions=(), strict=strict)


def rare_word_needed(planned: Plan, counted: Sequence[bool], held: Sequence[bool]) -> Plan:
    """The any-word step matches only pages holding a word that counts.

    A page holding only the query's common words ("lane" on most pages of a traffic
    simulator's docs, "using") says nothing about "forbid trucks": it still scores
    beside the pages that hold a rare word, but it is no match on its own. ``held``:
    per original word, whether any page holds it; with no counted word held, nothing
    changes.
    """
    if not planned.positions or len(planned.steps) < 2:
        return planned
    first, wider = planned.steps[0], planned.steps[1]
    if not isinstance(first, AllOf) or all(counted):
        return planned
    pairs = zip(first.children, planned.positions, strict=True)
    rare = tuple(dict.fromkeys(node for node, i in pairs if counted[i] and held[i]))
    if not rare:
        return planned
    steps = (first, Filtered(wider, AnyOf(rare)), *planned.steps[2:])
    return replace(planned, steps=steps)


def _heavy_sets(weights: dict[int, float], share: float) -> list[tuple[int, ...]]:
    """The minimal sets of words whose weight reaches ``share`` of the whole: a page holding
    one of them holds enough. Heaviest words first, so the list reads rarest first."""
    order = sorted(weights, key=lambda i: (-weights[i], i))
    total = sum(weights.values())
    need = share * total - 1e-9
    found: list[tuple[int, ...]] = []
    for size in range(1, len(order) + 1):
        for chosen in itertools.combinations(order, size):
            mass = sum(weights[i] for i in chosen)
            # Minimal: enough, and not without its lightest word.
            if mass >= need and mass - min(weights[i] for i in chosen) < need:
                found.append(chosen)
    return found or [tuple(order)]


def _node(expr: Expr, languages: Languages, extra: tuple[Node, ...] = ()) -> Node:
    match expr:
        case Term(words=words, phrase=True):
            variants = tuple(dict.fromkeys(tuple(stem_words(words, lang)) for lang in languages))
            return Phrase(variants)
        case Term(words=words):
            return word_node(words[0], languages)
        case Not(child=child):
            return AllOf((), excluded=(_node(child, languages),))
        case And(children=children):
            positive = tuple(_node(c, languages) for c in children if not isinstance(c, Not))
            negative = tuple(_node(c.child, languages) for c in children if isinstance(c, Not))
            return AllOf(positive, excluded=negative, optional=extra)
        case Or(children=children):
            return AnyOf((*(_node(c, languages) for c in children), *extra))
    raise AssertionError(expr)  # pragma: no cover
