"""Sections and deep links: headings found, passages indexed, the best one shown."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fastapi.testclient import TestClient

from fixture_sites import Route, SiteServer, html_page, trawl
from trawl.extract.html import parse_html
from trawl.index.documents import PASSAGE_CHARS, index_fields, passages
from trawl.index.tantivy_index import IndexReader, IndexWriter
from trawl.pipeline.crawl_run import crawl
from trawl.pipeline.upkeep import rebuild_index
from trawl.records import PageRecord, Section
from trawl.search.searcher import _held, heading_path, search
from trawl.server.api_search import page_json
from trawl.server.app import create_app
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

Serve = Callable[[dict[str, Route]], SiteServer]

FILLER = "Traffic simulation keeps moving along the road network every step. " * 12

SIMULATION_PAGE = (
    "<h1>Simulation</h1><p>" + FILLER + "</p>"
    '<h2 id="output">Output</h2><p>Outputs are written as XML files. ' + FILLER + "</p>"
    '<h3 id="fcd">FCD</h3><p>The floating car data export writes each vehicle position '
    "and speed per step, like a precise GPS trace.</p>"
    '<h3 id="summary">Summary</h3><p>' + FILLER + "</p>"
    '<div class="refsect1" id="SQL-WITH"><h2>Routing</h2><p>' + FILLER + "</p></div>"
    "<h2>Teleporting ¶</h2><p>A vehicle that waits too long is teleported ahead.</p>"
)


def test_headings_become_sections_with_their_anchors() -> None:
    page = parse_html(
        (
            "<html><body><nav><h2>Menu</h2></nav><main>" + SIMULATION_PAGE + "</main></body></html>"
        ).encode(),
        "http://x.example/sim.html",
        "text/html",
    )
    found = [(s.title, s.level, s.anchor) for s in page.sections]
    assert found == [
        ("Simulation", 1, ""),
        ("Output", 2, "output"),  # the heading's own id
        ("FCD", 3, "fcd"),
        ("Summary", 3, "summary"),
        ("Routing", 2, "SQL-WITH"),  # the id of the element the heading opens (DocBook)
        ("Teleporting", 2, ""),  # the permalink sign is no part of the title; no anchor
    ]
    for s in page.sections:  # each starts where its heading is in the text
        assert page.text[s.start :].startswith(s.title)


def test_heading_path_walks_up_the_levels() -> None:
    sections = [("Simulation", 1, "", 0), ("Output", 2, "", 5), ("FCD", 3, "", 9), ("X", 2, "", 20)]
    assert heading_path(sections, 2) == ("Simulation", "Output", "FCD")
    assert heading_path(sections, 3) == ("Simulation", "X")


def test_passages_cover_the_text_and_never_cross_a_section() -> None:
    text = "intro words " + "a" * 10 + " " + ("word " * 1000) + "tail"
    sections = (Section("a" * 10, 2, "x", 12),)
    parts = passages(text, sections)
    assert parts[0] == (0, 12, -1)  # the text before the first heading
    assert all(end - start <= 2 * PASSAGE_CHARS for start, end, _ in parts)
    assert [p[0] for p in parts[1:]] == sorted(p[0] for p in parts[1:])
    assert "".join(text[s:e] for s, e, _ in parts) == text
    assert {owner for _, _, owner in parts[1:]} == {0}


def test_short_pages_without_headings_store_no_passages() -> None:
    record = PageRecord(
        "https://a.example/", "a.example", 200, 0, 0.0, text="short page", indexable=True
    )
    assert "sections" not in index_fields(record)


def sections_site() -> dict[str, Route]:
    return {
        "/": html_page("Home", '<p>Start here.</p><a href="/sim">Simulation</a>'),
        "/sim": html_page("Simulation - Docs", SIMULATION_PAGE),
    }


async def test_a_crawled_page_links_to_its_best_section(serve: Serve, tmp_path: Path) -> None:
    site = serve(sections_site())
    settings = Settings(data=tmp_path / "data", delay=0.0)
    store = SQLiteStore(settings.sqlite_path)
    try:
        await crawl([site.url("/")], settings, store)
        # The store keeps the sections: a rebuilt index links to them as well.
        stored = store.page(site.url("/sim"))
        assert stored is not None
        assert [s.title for s in stored.sections][:3] == [
            "Simulation",
            "Output",
            "FCD",
        ]
        await rebuild_index(store, settings)
    finally:
        store.close()
    reader = IndexReader(settings.index_path)

    page = search(reader, "floating car data gps", settings)
    hit = page.hits[0]
    assert hit.url == site.url("/sim")
    assert hit.section is not None
    assert hit.section.path == ("Simulation", "Output", "FCD")
    assert hit.section.url == site.url("/sim") + "#fcd"
    assert "<mark>floating</mark>" in hit.snippet  # the snippet comes from that section
    assert hit.snippet.startswith("… ")

    # A heading without an id: a text fragment names it.
    teleport = search(reader, "vehicle teleported", settings).hits[0]
    assert teleport.section is not None
    assert teleport.section.url == site.url("/sim") + "#:~:text=Teleporting"

    answer = page_json(page)["results"][0]
    assert answer["section"] == {
        "title": "FCD",
        "path": ["Simulation", "Output", "FCD"],
        "url": site.url("/sim") + "#fcd",
    }

    # The results page shows the path and links to the section.
    with TestClient(create_app(settings, None)) as client:
        html = client.get("/", params={"q": "floating car data gps"}).text
    path = " \u203a ".join(["Simulation", "Output", "FCD"])
    assert f'<a class="section" href="{site.url("/sim")}#fcd">{path}</a>' in html

    # And so does the command line.
    shown = trawl("search", "floating car data gps", "--data", str(settings.data))
    assert f"Simulation > Output > FCD: {site.url('/sim')}#fcd" in shown.stdout


def test_a_heading_naming_the_words_breaks_a_tie() -> None:
    from trawl.search.searcher import best_passage

    sections = [("Intro", 1, "", 0), ("Output", 2, "out", 40)]
    passages = [(0, 0, " write output file "), (40, 1, " output file format ")]
    forms = [frozenset({"output"}), frozenset({"file"})]
    assert best_passage(sections, passages, forms, "en") == 1
    assert best_passage(sections, passages, [frozenset({"format"})], "en") == 1
    assert best_passage(sections, passages, [frozenset({"absent"})], "en") is None


def test_snippets_look_for_stop_words_only_when_the_query_has_nothing_else() -> None:
    from trawl.search.searcher import _SnippetWords

    forms, terms = _SnippetWords(("the", "herons")).forms("en")
    assert terms == {"heron", "herons"}
    assert len(forms) == 1
    _, alone = _SnippetWords(("the",)).forms("en")
    assert "the" in alone


def test_a_page_of_endless_headings_is_bounded() -> None:
    from trawl.extract.html import MAX_HEADINGS

    body = "<nav>" + "<h2>missing</h2>" * 5000 + "</nav><p>" + "words " * 20000 + "</p>"
    body += "<h3>found</h3><p>end</p>" * 3000
    page = parse_html(f"<html><body>{body}</body></html>".encode(), "http://x.example/", None)
    assert len(page.sections) <= MAX_HEADINGS
    assert page.text  # the page itself is still read


def test_a_long_page_with_headings_is_marked_long() -> None:
    def shape(text: str, sections: tuple[Section, ...]) -> object:
        record = PageRecord(
            "https://a.example/p", "a.example", 200, 0, 0.0, text=text, sections=sections,
            indexable=True,
        )  # fmt: skip
        return index_fields(record).get("shape")

    long_text = "Usage " + "word " * 600
    assert shape(long_text, (Section("Usage", 2, "usage", 0),)) == "long"
    assert shape(long_text, ()) is None  # an abstract: one topic, however long
    assert shape("Usage and a few words", (Section("Usage", 2, "usage", 0),)) is None


def test_words_near_each_other_weigh_more_on_a_long_page(tmp_path: Path) -> None:
    # Two long pages with headings hold "forbid" and "trucks"; on one they are side by
    # side, on the other sections apart (and "trucks" once more). On a page of many
    # topics, sharing the page says little: the page where they are near each other
    # answers the query.
    settings = Settings(data=tmp_path)
    filler = " ".join(f"filler{n}" for n in range(300))
    texts = {
        "apart": f"Lanes forbid entry. {filler} Vehicles and trucks. {filler} trucks here",
        "near": f"Lanes can forbid trucks. {filler} Vehicles and more. {filler} done here",
    }
    writer = IndexWriter(settings.index_path)
    for path, text in texts.items():
        sections = (Section("Lanes", 2, "lanes", 0), Section("Vehicles", 2, "v", text.index("Veh")))
        writer.upsert(
            PageRecord(
                url=f"https://docs.example/{path}", host="docs.example", status=200, depth=0,
                fetched_at=0.0, title=path, text=text, sections=sections, lang="en",
                indexable=True,
            )
        )  # fmt: skip
    for n in range(10):  # "forbid" and "trucks" rare enough to count
        writer.upsert(
            PageRecord(
                url=f"https://docs.example/other{n}", host="docs.example", status=200, depth=0,
                fetched_at=0.0, title="other", text=f"something else {n}", lang="en",
                indexable=True,
            )
        )  # fmt: skip
    writer.close()
    reader = IndexReader(settings.index_path)

    def first(chosen: Settings) -> str:
        return search(reader, "forbid trucks", chosen).hits[0].url.rsplit("/", 1)[1]

    assert first(settings.replace(proximity_long_boost=0.0)) == "apart"
    assert first(settings) == "near"


def test_passage_word_counts_stay_within_each_passage() -> None:
    # Forms are looked for in all passages' terms at once: each hit must be counted for
    # the passage it lies in, a word once per passage however many forms it has there.
    passages = [(0, -1, " lane change "), (10, 0, " vehicl vehicles "), (20, 0, " lane ")]
    forms = [frozenset({"lane"}), frozenset({"vehicl", "vehicles"}), frozenset({"change"})]
    assert _held(passages, forms) == [2, 1, 1]
    assert _held(passages, [frozenset({"e"})]) == [0, 0, 0]
