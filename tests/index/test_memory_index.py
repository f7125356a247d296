"""The index in memory that search/'s tests run on (tests/memory_index.py) matches what
tantivy matches: the same pages for the same query trees and filters, the same term
statistics and stored fields. Scores differ (TF-IDF, not BM25F), so orders are not
compared."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory_index import MemoryIndex
from trawl.index.spec import AllOf, Boosts, Filters, SearchIndex
from trawl.index.tantivy_index import IndexReader, IndexWriter
from trawl.records import Discussion, PageRecord, Section
from trawl.search.request import search_request
from trawl.search.searcher import rank
from trawl.settings import Settings


def page(url: str, title: str, text: str, **kw: object) -> PageRecord:
    kw.setdefault("lang", "en")
    return PageRecord(
        url=url, host=url.split("/")[2], status=200, depth=0, fetched_at=0.0,
        title=title, text=text, indexable=True, **kw,  # type: ignore[arg-type]
    )  # fmt: skip


LONG_TEXT = "Intro words here. " * 100 + "Teleporting vehicles vanish when jammed. " * 20
PAGES = [
    page("https://a.example/1", "Garden tools", "The red spade digs deep.",
         modified=datetime(2021, 5, 1, tzinfo=UTC), modified_source="page", authority=0.5),
    page("https://a.example/2", "Kitchen", "A spade of red paint, then deep blue.",
         modified=datetime(2023, 5, 1, tzinfo=UTC), modified_source="http", quality=0.7),
    page("https://b.example/sql-vacuum", "Shed", "Rakes and hoes hang in the shed.",
         modified=datetime(2024, 1, 10, tzinfo=UTC), modified_source="sitemap"),
    page("https://docs.b.example/", "Release notes", "Release notes release notes notes."),
    page("https://c.example/de", "Spaten", "Der rote Spaten gräbt tief.", lang="de"),
    page("https://c.example/long", "Teleporting", LONG_TEXT, headings=("Why vehicles vanish",),
         sections=(Section("Why vehicles vanish", 2, "why", 1800),),
         discussed_on=(Discussion("forum.example", "https://forum.example/t", "see this"),)),
    page("https://c.example/none", "Nothing", "", lang=None),
]  # fmt: skip

QUERIES = [
    "spade",
    "red spade",
    '"red spade"',
    "spade -paint",
    "rakes OR kitchen",
    "(red OR blue) spade",
    "sql vacuum",
    "sqlvacuum",
    "site:b.example notes",
    "lang:de spaten",
    "after:2022-01-01 spade",
    "before:2022-01-01 spade",
    "source:http spade",
    "release notes",
    "vehicles vanish",
    "teleporting vehicles jammed",
    "spade nothingatall",
    "spde",  # a near spelling
    "telep",  # a completion of the last word
]


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[IndexReader, MemoryIndex]:
    path = Path(tmp_path_factory.mktemp("memory")) / "index"
    writer = IndexWriter(path, fresh=True)
    for p in PAGES:
        writer.add(p)
    writer.close()
    return IndexReader(path), MemoryIndex(PAGES)


def matched(index: SearchIndex, text: str, **given: object) -> tuple[int, set[str]]:
    found = rank(index, search_request(text, **given), Settings(), limit=50)  # type: ignore[arg-type]
    return found.total, {h.url for _, h in found.hits}


@pytest.mark.parametrize("text", QUERIES)
def test_the_same_pages_match(both: tuple[IndexReader, MemoryIndex], text: str) -> None:
    engine, memory = both
    assert matched(memory, text) == matched(engine, text)


@pytest.mark.parametrize(
    "given",
    [{"site": "b.example"}, {"lang": "de"}, {"after": "2022-01-01"}, {"sort": "date"}],
)
def test_the_same_pages_pass_the_filters(
    both: tuple[IndexReader, MemoryIndex], given: dict[str, object]
) -> None:
    engine, memory = both
    assert matched(memory, "spade OR notes OR spaten", **given) == matched(
        engine, "spade OR notes OR spaten", **given
    )


def test_sorting_by_date_gives_the_same_order(both: tuple[IndexReader, MemoryIndex]) -> None:
    engine, memory = both
    orders = [
        [h.url for _, h in rank(i, search_request("spade OR notes", sort="date"), Settings(),
                                limit=10).hits]
        for i in (engine, memory)
    ]  # fmt: skip
    assert orders[0] == orders[1]


def test_the_same_statistics_and_stored_fields(both: tuple[IndexReader, MemoryIndex]) -> None:
    engine, memory = both
    engine.reload()
    assert memory.size == engine.size
    assert memory.languages() == engine.languages()
    for field, term in [("body", "spade"), ("title", "spade"), ("host", "example"), ("lang", "de")]:
        assert memory.doc_freq(field, term) == engine.doc_freq(field, term)
    assert memory.terms_with_prefix("body", "re") == engine.terms_with_prefix("body", "re")
    assert memory.terms_with_prefix("body", "re", 2) == engine.terms_with_prefix("body", "re", 2)
    by_url: dict[bool, dict[str, object]] = {}
    indexes: tuple[SearchIndex, ...] = (engine, memory)  # both are a spec.SearchIndex
    for index in indexes:
        every = index.search(AllOf(()), Filters(), Boosts(fields={"body": 1.0}), limit=50)
        assert every.total == len(PAGES)
        pages = index.fetch(every.addresses)
        keys = index.candidates(every.addresses)
        by_url[index is memory] = {
            p.url: (
                p.title, p.host, p.lang, p.modified, p.published, p.modified_source, p.text,
                [list(s) for s in p.sections[0]], [list(s) for s in p.sections[1]], p.terms,
                p.discussed_on, k.authority, k.quality, k.title_key, k.home, k.name_chars,
            )
            for p, k in zip(pages, keys, strict=True)
        }  # fmt: skip
    assert by_url[True] == by_url[False]
