"""A malformed page keeps all its visible text searchable (issue 17): the words main-text
extraction leaves out are indexed at a low weight."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fixture_sites import Route, SiteServer, html_page
from trawl.extract.html import left_out, parse_html
from trawl.index.tantivy_index import IndexReader
from trawl.pipeline.crawl_run import crawl
from trawl.search.searcher import search
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

Serve = Callable[[dict[str, Route]], SiteServer]

ROWS = "".join(
    f"<tr><td>row {i} holds a measured value</td><td>and a note about it {i}</td></tr>"
    for i in range(20)
)
# An unclosed <p> before a block: the parser ends the paragraph, and the main text keeps
# the table, not the stray word before it.
MALFORMED = f"<nav>menu quokka</nav><p>zanzibar <div><table>{ROWS}</table></div>"


def test_words_the_main_text_lacks_are_kept_aside() -> None:
    page = parse_html(
        f"<html><head><title>T</title></head><body>{MALFORMED}</body></html>".encode(),
        "http://x.example/t",
        "text/html",
    )
    assert "zanzibar" not in page.text.lower()
    assert page.aside == "zanzibar"  # navigation stays out: it would match every page


def test_left_out_lists_each_word_once() -> None:
    assert left_out("Alpha beta alpha gamma", "beta") == "alpha gamma"
    assert left_out("same words", "Same words") == ""


async def test_a_malformed_page_stays_findable_by_its_stray_word(
    serve: Serve, tmp_path: Path
) -> None:
    site = serve(
        {
            "/": html_page("Home", '<p>Start.</p><a href="/table">Table</a>'),
            "/table": html_page("Measurements", MALFORMED),
        }
    )
    settings = Settings(data=tmp_path / "data", delay=0.0)
    store = SQLiteStore(settings.sqlite_path)
    try:
        await crawl([site.url("/")], settings, store)
    finally:
        store.close()
    reader = IndexReader(settings.index_path)
    assert [h.url for h in search(reader, "zanzibar", settings).hits] == [site.url("/table")]
    assert search(reader, "quokka", settings).total == 0  # navigation is not searchable
    off = settings.replace(aside_boost=0.0)
    assert search(reader, "zanzibar", off).total == 0
