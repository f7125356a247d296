"""Features no other test would miss: the snippet's window choice and the exact-match
bonus in ranking. Each test fails when its feature is taken out."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fixture_sites import SiteServer, html_page
from trawl.index.tantivy_index import IndexReader
from trawl.pipeline.crawl_run import crawl
from trawl.search.searcher import search
from trawl.search.snippets import best_fragment
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

Serve = Callable[..., SiteServer]


def test_the_snippet_window_holds_the_most_query_words() -> None:
    # "alpha" alone first; "alpha beta gamma" together far later. The first match's
    # window would show one word of three.
    text = "alpha " + "filler " * 60 + "and then alpha beta gamma together " + "tail " * 60
    fragment, ranges = best_fragment(text, frozenset({"alpha", "beta", "gamma"}), str, 80)

    assert "alpha beta gamma" in fragment
    assert len(ranges) >= 3


async def test_the_exact_match_bonus_lifts_the_page_named_by_the_query(
    serve: Serve, tmp_path: Path
) -> None:
    # The joined query "sqlvacuum" is in one page's path, where the engine sees one
    # unknown word: only the exact-match test connects it to "sql vacuum".
    named = html_page("Maintenance notes", "<p>How to run the sql vacuum on a table.</p>")
    other = html_page(
        "SQL vacuum notes", "<p>The sql vacuum, sql tables and vacuum settings: sql vacuum.</p>"
    )
    site = serve(
        {
            "/": html_page("Home", '<a href="/sqlvacuum">a</a><a href="/notes">b</a>'),
            "/sqlvacuum": named,
            "/notes": other,
        }
    )
    settings = Settings(data=tmp_path / "data", delay=0.0, parse_workers=0)
    store = SQLiteStore(settings.sqlite_path)
    try:
        await crawl([site.url("/")], settings, store)
    finally:
        store.close()

    def first(bonus: float) -> str:
        tuned = settings.replace(exact_bonus=bonus)
        return search(IndexReader(settings.index_path), "sql vacuum", tuned).hits[0].url

    assert first(settings.exact_bonus) == site.url("/sqlvacuum")
    assert first(0.0) == site.url("/notes")  # the engine alone prefers the other page
