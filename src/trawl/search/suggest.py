"""Completions as a person types: page titles that hold the words typed so far.

Every word but the last is matched as typed; the last is still being typed, so
it matches the commonest title terms it begins (as a word, and as its stem:
"simulation" is indexed as "simul"). The engine ranks the titles holding them
(BM25 on the title field alone) and the best distinct ones are the completions.
Section headings are indexed as terms, not kept as text, so only titles are
offered.
"""

from __future__ import annotations

from trawl.analysis.text import fold
from trawl.index.spec import AllOf, AnyOf, Boosts, Filters, Node, SearchIndex, Word
from trawl.search.plan import word_stems
from trawl.search.query import MAX_QUERY_CHARS, parse_query

MAX_SUGGESTIONS = 8
_PREFIX_TERMS = 8  # title terms the last word may complete to
_TITLES_ONLY = Boosts(fields={"title": 1.0})


def suggest(reader: SearchIndex, text: str, limit: int = MAX_SUGGESTIONS) -> list[str]:
    """Up to ``limit`` page titles completing ``text``; none for an empty or 1-letter text."""
    query = parse_query(text[:MAX_QUERY_CHARS], syntax=False)
    words = [fold(w) for w in query.words]
    if not words or len(text.strip()) < 2:
        return []
    languages = reader.languages()
    *typed, last = words
    if text[-1:].isspace():  # the last word is finished: no completion
        typed, last = words, ""
    nodes: list[Node] = [Word(word_stems(w, languages)) for w in typed]
    if last:
        prefixes = dict.fromkeys([last, *word_stems(last, languages)])
        stems = dict.fromkeys(
            t for p in prefixes for t, _ in reader.terms_with_prefix("title", p, _PREFIX_TERMS)
        )
        if not stems:
            return []
        nodes.append(AnyOf(tuple(Word((s,)) for s in stems)))
    # Not counted: a common prefix's completions are on many pages, and no total is shown.
    found = reader.search(
        AllOf(tuple(nodes)), Filters(), _TITLES_ONLY, limit=limit * 3, count=False
    )
    # Stored pages are read one by one, only until enough distinct titles are found: the
    # reads, not the search, were most of a completion's time at 100,000 pages.
    titles: dict[str, str] = {}
    for hit in reader.fetch(found.addresses):
        title = " ".join(hit.title.split())
        if title:
            titles.setdefault(title.lower(), title)
        if len(titles) == limit:
            break
    return list(dict.fromkeys(_without_site_name(list(titles.values()))))


def _without_site_name(titles: list[str]) -> list[str]:
    """Titles less the site's name they share ("Pedestrians - SUMO Documentation"): the
    completion is the page's own name."""
    for separator in (" - ", " | ", " \u2014 ", " \u2013 "):
        tails = [t.rsplit(separator, 1)[1] for t in titles if separator in t]
        if len(tails) >= 2 and len(set(tails)) == 1:
            return [t.rsplit(separator, 1)[0] if separator in t else t for t in titles]
    return titles
