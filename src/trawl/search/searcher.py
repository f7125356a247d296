"""Run a search: parse, match all words (else any word), page, snippet.

The cascade (seed 000): every word required first; when nothing matches,
any word, so a query with one absent word still finds partial matches.
"""

from __future__ import annotations

import time

from trawl.errors import QueryError
from trawl.index.tantivy_index import IndexReader, IndexResults
from trawl.records import Hit, SearchPage
from trawl.search.query import parse_query
from trawl.search.snippets import lead, mark
from trawl.settings import Settings


def field_boosts(settings: Settings) -> dict[str, float]:
    return {
        "title": settings.title_boost,
        "headings": settings.headings_boost,
        "body": settings.body_boost,
        "anchors": settings.anchor_boost,
        "url_tokens": settings.url_boost,
        "host": settings.host_boost,
    }


def search(
    reader: IndexReader,
    text: str,
    settings: Settings,
    *,
    page: int = 1,
    per_page: int | None = None,
) -> SearchPage:
    per_page = settings.per_page if per_page is None else per_page
    if page < 1:
        raise QueryError("page must be 1 or more")
    if not 1 <= per_page <= settings.max_per_page:
        raise QueryError(f"per_page must be between 1 and {settings.max_per_page}")
    started = time.perf_counter()
    query = parse_query(text)
    if query.empty:
        return SearchPage(query.text, 0, 0.0, page, per_page, ())
    words = " ".join(query.words)

    def run(conjunction: bool) -> IndexResults:
        return reader.search(
            words,
            conjunction=conjunction,
            boosts=field_boosts(settings),
            limit=per_page,
            offset=(page - 1) * per_page,
            snippet_chars=settings.snippet_chars,
        )

    results = run(conjunction=True)
    if results.total == 0 and len(query.words) > 1:
        results = run(conjunction=False)
    hits = tuple(
        Hit(
            url=h.url,
            title=h.title or h.url,
            snippet=mark(h.fragment, h.highlights)
            if h.fragment
            else lead(h.lead, settings.snippet_chars),
            score=round(h.score, 4),
            lang=h.lang or None,
            discussed_on=h.discussed_on,
        )
        for h in results.hits
    )
    took_ms = round((time.perf_counter() - started) * 1000, 2)
    return SearchPage(query.text, results.total, took_ms, page, per_page, hits)
