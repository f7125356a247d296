"""The query language against a real index: phrases, exclusion, OR, groups, filters, sorting,
fallbacks, and navigational queries."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from trawl.index.tantivy_index import IndexReader, IndexWriter
from trawl.records import PageRecord
from trawl.search.request import search_request
from trawl.search.searcher import search
from trawl.settings import Settings


def page(url: str, title: str, text: str, **kw: object) -> PageRecord:
    kw.setdefault("lang", "en")
    return PageRecord(
        url=url, host=url.split("/")[2], status=200, depth=0, fetched_at=0.0,
        title=title, text=text, indexable=True, **kw,  # type: ignore[arg-type]
    )  # fmt: skip


PAGES = [
    page("https://a.example/1", "Garden tools", "The red spade digs deep.",
         modified=datetime(2021, 5, 1, tzinfo=UTC), modified_source="page"),
    page("https://a.example/2", "Kitchen", "A spade of red paint, then deep blue.",
         modified=datetime(2023, 5, 1, tzinfo=UTC), modified_source="http"),
    page("https://b.example/3", "Shed", "Rakes and hoes hang in the shed.",
         modified=datetime(2024, 1, 10, tzinfo=UTC), modified_source="sitemap"),
    page("https://docs.b.example/4", "Release notes", "Release notes release notes notes.",
         modified=None),
    page("https://docs.b.example/5", "Everything", "release notes " * 30),
    page("https://c.example/6", "Lint levels", "Pass --cap-lints to cap lints; make -j sets jobs."),
    # A site's name after each title: the page named "What is zorp?" is the one asked for
    page("https://d.example/7", "What is zorp? - The zorp book", "It compiles code."),
    page("https://d.example/8", "What zorp is for - The zorp book",
         "What is zorp doing? What is zorp given? Zorp is told what it is by zorp flags."),
]  # fmt: skip


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> tuple[IndexReader, Settings]:
    settings = Settings(data=Path(tmp_path_factory.mktemp("ql")))
    writer = IndexWriter(settings.index_path, fresh=True)
    for p in PAGES:
        writer.add(p)
    writer.close()
    return IndexReader(settings.index_path), settings


def urls(env: tuple[IndexReader, Settings], q: str, **kw: object) -> list[str]:
    reader, settings = env
    return [h.url[-1] for h in search(reader, search_request(q, **kw), settings).hits]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ('"red spade"', ["1"]),  # words in this order
        ("red spade", ["1", "2"]),
        ("spade -paint", ["1"]),
        ('spade -"red paint"', ["1"]),
        ("rakes OR kitchen", ["3", "2"]),
        ("(rakes OR paint) deep", ["2"]),
        ("site:b.example rakes", ["3"]),
        ("site:docs.b.example shed", []),
        ("spade after:2022", ["2"]),
        ("spade before:2022-01-01", ["1"]),
        ("spade after:2300", []),  # beyond the engine's date span: its edge, not an error
        ("spade before:1066", []),
        ("spade source:page", ["1"]),
        ("spade source:http,page", ["1", "2"]),
        ("lang:de spade", []),
        # A command-line flag is its words, not an exclusion: the page naming it is found
        ("--cap-lints", ["6"]),
        ("make -j jobs", ["6"]),
        ("-shed", ["3"]),  # exclusions alone, no filter: words
        ("site:b.example -shed", ["4", "5"]),  # with a filter, still an exclusion
    ],
)
def test_operators_and_filters(
    env: tuple[IndexReader, Settings], query: str, expected: list[str]
) -> None:
    assert sorted(urls(env, query)) == sorted(expected)


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"site": "b.example"}, ["3"]),
        ({"site": "b.example:8080"}, ["3"]),  # pages are filed under the host name alone
        ({"site": "c.example"}, []),
        ({"after": date(2022, 1, 1)}, ["2"]),
        ({"before": date(2022, 1, 1)}, ["1"]),
        ({"after": date(2300, 1, 1)}, []),
    ],
)
def test_filters_given_beside_the_text(
    env: tuple[IndexReader, Settings], filters: dict[str, object], expected: list[str]
) -> None:
    query = "rakes" if "site" in filters else "spade"
    assert sorted(urls(env, query, **filters)) == sorted(expected)


@pytest.mark.parametrize(
    "query", ['"red spade', "(red spade", "red spade)", "AND spade", "OR spade"]
)
def test_broken_syntax_falls_back_to_words(env: tuple[IndexReader, Settings], query: str) -> None:
    found = urls(env, query)
    assert "1" in found


def test_sort_by_date_newest_first(env: tuple[IndexReader, Settings]) -> None:
    assert urls(env, "spade OR rakes", sort="date") == ["3", "2", "1"]


def test_unstemmed_step_when_stems_find_nothing(env: tuple[IndexReader, Settings]) -> None:
    reader, settings = env
    finnish = settings.replace(query_lang="fi")
    # The page holds the English stem "dig"; analysed as Finnish, "digs" stays "digs",
    # which no stemmed field holds: the unstemmed step finds the word as written.
    assert [h.url[-1] for h in search(reader, "digs", finnish).hits] == ["1"]


def test_exact_title_comes_first(env: tuple[IndexReader, Settings]) -> None:
    assert urls(env, "release notes")[0] == "4"


def test_exact_title_without_the_site_name_comes_first(
    env: tuple[IndexReader, Settings],
) -> None:
    assert urls(env, "what is zorp")[0] == "7"
