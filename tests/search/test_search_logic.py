"""The searcher's logic on an index in memory (tests/memory_index.py): the plan's cascade,
the rerank, paging, filters and the request, without the engine."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from memory_index import MemoryIndex
from trawl.errors import QueryError
from trawl.index.spec import Filters
from trawl.records import PageRecord
from trawl.search.request import SORTS, SearchRequest, search_request
from trawl.search.searcher import rank, search
from trawl.settings import Settings

SETTINGS = Settings(typo_tolerance=False)


def page(url: str, title: str, text: str, **kw: object) -> PageRecord:
    kw.setdefault("lang", "en")
    return PageRecord(
        url=url, host=url.split("/")[2], status=200, depth=0, fetched_at=0.0,
        title=title, text=text, indexable=True, **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def zoo() -> MemoryIndex:
    """45 pages on aardvarks, every third on badgers too, and 60 on zebras: no query word
    is on most pages (such a word would not count)."""
    pages = [
        page(
            f"https://zoo.example/{i}",
            f"Animal {i}",
            "The aardvark" + (" badger" if i % 3 == 0 else "") + " lives here.",
        )
        for i in range(45)
    ]
    pages += [
        page(f"https://zoo.example/z{i}", "Zebra", "The zebra lives here.") for i in range(60)
    ]
    return MemoryIndex(pages)


def urls(
    index: MemoryIndex, request: SearchRequest | str, settings: Settings = SETTINGS
) -> list[str]:
    return [h.url for h in search(index, request, settings).hits]


def test_search_runs_on_any_search_index() -> None:
    # search/ names the index only through index/spec.py (tests/test_architecture.py).
    found = search(zoo(), "aardvark", SETTINGS)
    assert found.total == 45 and found.hits[0].url.startswith("https://zoo.example/")
    assert "<mark>aardvark</mark>" in found.hits[0].snippet


def test_the_cascade_puts_pages_with_every_word_first() -> None:
    found = search(zoo(), SearchRequest("aardvark badger", per_page=20), SETTINGS)
    # 15 pages hold both words, fewer than the ranking depth: pages with one word follow.
    assert found.total == 45
    assert all("<mark>badger</mark>" in h.snippet for h in found.hits[:15])
    assert not any("<mark>badger</mark>" in h.snippet for h in found.hits[15:])


def test_every_word_alone_when_it_fills_the_ranking_depth() -> None:
    narrow = SETTINGS.replace(rerank_depth=10)
    assert search(zoo(), SearchRequest("aardvark badger", per_page=10), narrow).total == 15


def test_any_word_when_no_page_has_them_all() -> None:
    assert search(zoo(), "aardvark unicorn", SETTINGS).total == 45


def test_pages_follow_each_other_without_overlap() -> None:
    index = zoo()
    pages = [
        search(index, SearchRequest("aardvark", page=n, per_page=20), SETTINGS) for n in (1, 2, 3)
    ]
    assert [len(p.hits) for p in pages] == [20, 20, 5]
    seen = [h.url for p in pages for h in p.hits]
    assert len(set(seen)) == 45
    # The pages of one request are one ranking cut in slices.
    whole = search(index, SearchRequest("aardvark", per_page=45), SETTINGS)
    assert seen == [h.url for h in whole.hits]
    assert pages[2].page == 3 and pages[2].per_page == 20


def test_page_size_comes_from_the_settings_unless_asked() -> None:
    assert len(search(zoo(), "aardvark", SETTINGS).hits) == SETTINGS.per_page
    assert len(search(zoo(), SearchRequest("aardvark", per_page=7), SETTINGS).hits) == 7
    with pytest.raises(QueryError, match="per_page"):
        search(zoo(), SearchRequest("aardvark", per_page=SETTINGS.max_per_page + 1), SETTINGS)


def test_a_home_page_naming_the_query_comes_first_by_its_host_or_url() -> None:
    index = MemoryIndex(
        [
            page("https://fan.example/a", "Anne Hathaway news", "anne hathaway " * 20),
            page("https://annehathaway.example/", "Welcome", "The official site of anne hathaway."),
        ]
    )
    home, fan = "https://annehathaway.example/", "https://fan.example/a"
    # The engine alone prefers the louder fan page; the navigational rule (a home page
    # whose host names the query) and the exact bonus (the query in the host) each lift
    # the home page over it.
    assert urls(index, "anne hathaway", SETTINGS.replace(navigational=0, exact_bonus=0.0)) == [
        fan,
        home,
    ]
    assert urls(index, "anne hathaway", SETTINGS.replace(exact_bonus=0.0))[0] == home
    assert urls(index, "anne hathaway", SETTINGS.replace(navigational=0))[0] == home


def test_coverage_puts_a_page_with_every_word_over_one_repeating_some() -> None:
    index = MemoryIndex(
        [
            page("https://d.example/1", "Notes", "alpha " * 30 + "beta " * 30),
            page("https://d.example/2", "Notes", "alpha beta gamma"),
            *(page(f"https://d.example/x{i}", "Other", f"filler text {i}") for i in range(20)),
        ]
    )
    # A soft AND lets both in; the louder page wins unless coverage counts the words held.
    soft = SETTINGS.replace(soft_and_share=0.6)
    assert urls(index, "alpha beta gamma", soft)[0] == "https://d.example/2"
    flat = soft.replace(coverage_power=0.0)
    assert urls(index, "alpha beta gamma", flat)[0] == "https://d.example/1"
    ranked = rank(index, "alpha beta gamma", soft, limit=5)
    scores = [s for s, _ in ranked.hits]
    assert scores == sorted(scores, reverse=True)


DATED = [
    page("https://a.example/1", "Spade", "a red spade", modified=datetime(2021, 5, 1, tzinfo=UTC)),
    page("https://b.example/2", "Spade", "a blue spade", modified=datetime(2023, 5, 1, tzinfo=UTC)),
    page("https://docs.b.example/3", "Spade", "a spade", modified=datetime(2024, 1, 1, tzinfo=UTC),
         lang="de"),
    page("https://c.example/4", "Spade", "a green spade"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({}, ["1", "2", "3", "4"]),
        ({"site": "b.example"}, ["2", "3"]),  # the host and its subdomains
        ({"site": "b.example:8080"}, ["2", "3"]),  # pages are filed under the host name alone
        ({"site": " .b.example/ "}, ["2", "3"]),
        ({"site": ""}, ["1", "2", "3", "4"]),
        ({"lang": "DE"}, ["3"]),
        ({"after": "2022-01-01"}, ["2", "3"]),
        ({"after": date(2022, 1, 1), "before": "2024-01-01"}, ["2"]),  # before: exclusive
        ({"before": "2021-05-02"}, ["1"]),
        ({"after": date(2300, 1, 1)}, []),
    ],
)
def test_filters_given_beside_the_text(given: dict[str, object], expected: list[str]) -> None:
    found = urls(MemoryIndex(DATED), search_request("spade", **given))  # type: ignore[arg-type]
    assert sorted(u[-1] for u in found) == expected


def test_filters_beside_the_text_join_those_typed_in_it() -> None:
    index = MemoryIndex(DATED)
    both = search_request("spade site:a.example", site="c.example")
    assert sorted(u[-1] for u in urls(index, both)) == ["1", "4"]
    # A language given beside the text wins over one typed in it.
    assert [u[-1] for u in urls(index, search_request("spade lang:en", lang="de"))] == ["3"]


def test_sort_by_date_puts_the_newest_first_and_undated_last() -> None:
    found = urls(MemoryIndex(DATED), search_request("spade", sort="date"))
    assert [u[-1] for u in found] == ["3", "2", "1", "4"]
    assert all(
        h.score == 0
        for h in search(MemoryIndex(DATED), search_request("spade", sort="date"), SETTINGS).hits
    )


def test_the_request_is_read_and_checked_in_one_place() -> None:
    asked = search_request(
        "spade", page=2, per_page=5, sort="date", lang=" EN ", site="Docs.Example:80",
        after="2024-05-31", before=" ",
    )  # fmt: skip
    assert asked == SearchRequest(
        "spade",
        page=2,
        per_page=5,
        sort="date",
        filters=Filters(
            sites=("docs.example",), lang="en", after=datetime(2024, 5, 31, tzinfo=UTC)
        ),
    )
    assert search_request("x", lang="", site="  ", after="", before=None).filters.empty
    assert SORTS == ("relevance", "date")


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"sort": "newest"}, "sort must be one of relevance, date"),
        ({"lang": "english"}, "language must be a two- or three-letter code"),
        ({"lang": "e1"}, "language must be"),
        ({"after": "31/05/2024"}, "after must be a date"),
        ({"before": "yesterday"}, "before must be a date"),
        ({"page": 0}, "page must be 1 or more"),
        ({"per_page": 0}, "per_page must be 1 or more"),
    ],
)
def test_a_bad_parameter_is_a_query_error(given: dict[str, object], message: str) -> None:
    with pytest.raises(QueryError, match=message):
        search_request("spade", **given)  # type: ignore[arg-type]


def test_a_request_made_directly_is_checked_too() -> None:
    with pytest.raises(QueryError):
        SearchRequest("x", page=0)
    with pytest.raises(QueryError):
        SearchRequest("x", sort="newest")  # type: ignore[arg-type]
