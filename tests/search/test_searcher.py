"""Searching a real index: the all-words-then-any-word cascade, paging, bounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from trawl.errors import QueryError
from trawl.index.tantivy_index import IndexReader, IndexWriter
from trawl.records import PageRecord
from trawl.search.request import SearchRequest
from trawl.search.searcher import search
from trawl.settings import Settings


def zoo_page(i: int, title: str, text: str, host: str = "zoo.example", ext: str = "") -> PageRecord:
    return PageRecord(
        url=f"https://{host}/{i}{ext}",
        host=host,
        status=200,
        depth=0,
        fetched_at=0.0,
        title=title,
        text=text,
        lang="en",
        indexable=True,
    )


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    settings = Settings(data=tmp_path)
    writer = IndexWriter(settings.index_path)
    for i in range(45):
        words = "aardvark" + (" badger" if i % 3 == 0 else "")
        writer.upsert(zoo_page(i, f"Animal {i}", f"The {words} lives here."))
    writer.close()
    return settings


def test_pages_with_all_words_come_first(tmp_path: Path) -> None:
    # 15 pages hold both words in their text; 30 hold one, in their title and three
    # times in their text, which BM25F alone ranks higher; 60 hold neither, so that
    # neither word is common enough to be left out.
    settings = Settings(data=tmp_path)
    writer = IndexWriter(settings.index_path)
    for i in range(105):
        if i < 15:
            title, text = f"Animal {i}", "The aardvark and the badger live here."
        elif i < 45:
            word = ("aardvark", "badger")[i % 2]
            title, text = f"The {word} {i}", f"The {word}, the {word}, the {word} lives here."
        else:
            title, text = f"Animal {i}", "The ostrich lives here."
        writer.upsert(zoo_page(i, title, text))
    writer.close()
    # The cascade's all-words step alone does it: the coverage rerank is switched off.
    alone = settings.replace(coverage_power=0.0)
    page = search(
        IndexReader(settings.index_path), SearchRequest("aardvark badger", per_page=45), alone
    )
    assert page.total == 45
    both = [h.url.rsplit("/", 1)[1] for h in page.hits[:15]]
    assert sorted(both, key=int) == [str(i) for i in range(15)]


def test_all_words_alone_when_they_fill_the_ranking_depth(settings: Settings) -> None:
    narrow = settings.replace(rerank_depth=10)
    page = search(
        IndexReader(settings.index_path), SearchRequest("aardvark badger", per_page=10), narrow
    )
    assert page.total == 15


def test_any_word_when_nothing_has_all(settings: Settings) -> None:
    page = search(IndexReader(settings.index_path), "aardvark unicorn", settings)
    assert page.total == 45


def test_pages_do_not_overlap(settings: Settings) -> None:
    reader = IndexReader(settings.index_path)
    first = search(reader, SearchRequest("aardvark", page=1, per_page=20), settings)
    third = search(reader, SearchRequest("aardvark", page=3, per_page=20), settings)

    assert len(first.hits) == 20 and len(third.hits) == 5
    assert not {h.url for h in first.hits} & {h.url for h in third.hits}
    assert first.hits[0].lang == "en"


def test_default_page_size_comes_from_settings(settings: Settings) -> None:
    assert len(search(IndexReader(settings.index_path), "aardvark", settings).hits) == 20


@pytest.mark.parametrize(("page", "per_page"), [(0, 10), (1, 0), (1, 101)])
def test_out_of_range_paging_is_a_query_error(settings: Settings, page: int, per_page: int) -> None:
    reader = IndexReader(settings.index_path)
    with pytest.raises(QueryError):
        search(reader, SearchRequest("aardvark", page=page, per_page=per_page), settings)


@pytest.mark.parametrize("query", ["", "   ", "!!! ((( ]]", '"unbalanced', "AND OR NOT"])
def test_queries_without_words_or_with_syntax_never_fail(settings: Settings, query: str) -> None:
    page = search(IndexReader(settings.index_path), query, settings)
    assert page.total >= 0
    assert page.query == query.strip()


def _page(n: int, text: str) -> PageRecord:
    return PageRecord(
        url=f"https://notes.example/{n}", host="notes.example", status=200, depth=0,
        fetched_at=0.0, title=f"Note {n}", text=text, lang="en", indexable=True,
    )  # fmt: skip


def test_a_stop_word_is_neither_required_nor_counted(tmp_path: Path) -> None:
    # "and" is on few of these pages (as in a corpus whose stop words were taken out), so
    # the index's counts alone would require it; the page with every word that matters wins.
    settings = Settings(data=tmp_path)
    writer = IndexWriter(settings.index_path)
    writer.upsert(_page(0, "Cellulite: what a diet can change. " + "Skin studies. " * 8))
    writer.upsert(_page(1, "diet and diet and diet and diet"))
    for n in range(2, 20):
        writer.upsert(_page(n, f"Unrelated note number {n} about gardening."))
    writer.close()
    page = search(IndexReader(settings.index_path), "diet and cellulite", settings)
    assert [h.url for h in page.hits][:2] == ["https://notes.example/0", "https://notes.example/1"]


def _notes(tmp_path: Path, *texts: str) -> Settings:
    """An index of notes.example/0, /1, ... holding ``texts``."""
    settings = Settings(data=tmp_path)
    writer = IndexWriter(settings.index_path)
    for n, text in enumerate(texts):
        writer.upsert(_page(n, text))
    writer.close()
    return settings


def test_stop_words_are_not_searched_beside_other_words(tmp_path: Path) -> None:
    # "the" is on one page only, so BM25 alone would rank its repeats high; as a stop word
    # beside "quokka" it is not searched, and the shorter page about quokkas wins.
    unrelated = [f"Unrelated note number {n} about gardening." for n in range(2, 20)]
    settings = _notes(tmp_path, "The the the the the quokka", "quokka island", *unrelated)
    page = search(IndexReader(settings.index_path), "the quokka", settings)
    assert [h.url for h in page.hits] == ["https://notes.example/1", "https://notes.example/0"]


def test_a_query_of_stop_words_alone_still_searches_them(tmp_path: Path) -> None:
    settings = _notes(tmp_path, "The Who played here", "Quokkas live on an island")
    page = search(IndexReader(settings.index_path), "the who", settings)
    assert [h.url for h in page.hits] == ["https://notes.example/0"]


def test_a_compound_is_found_however_it_is_spelled(tmp_path: Path) -> None:
    settings = _notes(
        tmp_path,
        "Serum IL-6 rises after exercise.",
        "Serum IL6 rises after exercise.",
        "Serum levels fall at rest.",
    )
    reader = IndexReader(settings.index_path)
    for query in ("il6", "IL-6", "il 6"):
        found = {h.url for h in search(reader, query, settings).hits}
        assert found == {"https://notes.example/0", "https://notes.example/1"}, query


def test_without_a_page_holding_every_word_the_engine_order_stands(tmp_path: Path) -> None:
    # The rare word's page outscores the one with two common words; counting words would
    # reverse them, though neither page holds all three.
    settings = Settings(data=tmp_path)
    writer = IndexWriter(settings.index_path)
    writer.upsert(_page(0, "gamma gamma"))
    writer.upsert(_page(1, "alpha beta and a few more words about them"))
    for n in range(2, 10):
        writer.upsert(_page(n, f"alpha beta note {n}"))
    for n in range(10, 24):
        writer.upsert(_page(n, f"unrelated note {n}"))
    writer.close()
    page = search(IndexReader(settings.index_path), "alpha beta gamma", settings)
    assert page.hits[0].url == "https://notes.example/0"


def _book_page(i: int, title: str, text: str, host: str = "book.example") -> PageRecord:
    return zoo_page(i, title, text, host, ".html")


def test_a_page_titled_the_query_is_found_whatever_its_words(tmp_path: Path) -> None:
    # The rustc book's "What is rustc?": "what" and "is" are stop words and "rustc" is on
    # every page, so BM25F ranks the page below the rerank's depth; the title-key lookup
    # brings it in, and the rerank's navigational rule puts it first.
    settings = Settings(data=tmp_path)
    writer = IndexWriter(settings.index_path)
    filler = " ".join(f"chapter{n} explains compiling crates" for n in range(60))
    writer.upsert(_book_page(0, "What is rustc? - The rustc book", f"The compiler. {filler}"))
    for i in range(1, 40):
        text = f"rustc flag {i}: rustc accepts it; run rustc with it, as rustc -C opt {i}."
        writer.upsert(_book_page(i, f"rustc flag {i} - The rustc book", text))
    # The same title on another host: a site: filter keeps it out.
    writer.upsert(_book_page(99, "What is rustc?", f"Elsewhere. {filler}", host="other.example"))
    writer.close()
    reader = IndexReader(settings.index_path)
    page = search(reader, SearchRequest("what is rustc", per_page=10), settings)
    assert {h.url for h in page.hits[:2]} == {
        "https://book.example/0.html",
        "https://other.example/99.html",
    }
    assert len({h.url for h in page.hits}) == len(page.hits)
    scoped = search(reader, SearchRequest("what is rustc site:book.example"), settings)
    assert scoped.hits[0].url == "https://book.example/0.html"
    assert all("other.example" not in h.url for h in scoped.hits)
    # Switched off with the navigational rule, BM25F's order stands: the page is not shown.
    plain = settings.replace(navigational=0)
    urls = [h.url for h in search(reader, SearchRequest("what is rustc"), plain).hits]
    assert "https://book.example/0.html" not in urls
