"""The store's part of corpus hygiene: the link graph, signals, and what a re-save keeps."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from trawl.records import Discussion, Link, PageRecord, PageSignals
from trawl.store.sqlite import SQLiteStore

A = PageRecord(
    url="https://a.example/",
    host="a.example",
    status=200,
    depth=0,
    fetched_at=1.0,
    indexable=True,
    text="kiwi",
    text_hash=2**63 - 1,
    simhash=2**62 + 5,
    quality=0.75,
    community=True,
)
B = replace(A, url="https://b.example/", host="b.example", community=False)


def test_signals_are_saved_read_back_and_kept_when_the_page_is_saved_again(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path / "s.sqlite")
    try:
        store.save_page(A)
        store.save_page(B)
        talk = (Discussion("a.example", A.url, "a fine page"),)
        store.save_signals(
            [
                PageSignals(B.url, 0.5, True, A.url, "the copy crawled first", talk),
                PageSignals(A.url, 1.0, True, None, "the copy crawled first"),
            ]
        )
        stored = store.page(B.url)
        assert stored is not None
        assert (stored.authority, stored.scored, stored.duplicate_of) == (0.5, True, A.url)
        assert stored.discussed_on == talk
        assert (stored.text_hash, stored.simhash, stored.quality) == (2**63 - 1, 2**62 + 5, 0.75)
        assert store.duplicates_of(A.url) == [B.url]
        store.save_page(replace(B, quality=0.25))  # a re-fetch knows nothing of the corpus
        again = store.page(B.url)
        assert again is not None and again.quality == 0.25
        assert again.duplicate_of == A.url and again.authority == 0.5
        assert not again.searchable
        page_a = store.page(A.url)
        assert page_a is not None and page_a.community and page_a.searchable
    finally:
        store.close()


def test_the_link_graph_has_links_between_different_urls_only(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.sqlite")
    try:
        links = [
            Link(B.url, "to b"),
            Link(A.url, "to itself"),
            Link(B.url, "sponsored", nofollow=True),
            Link("https://a.example/logo.png", "logo", element="img", attribute="src"),
        ]
        store.save_page(A, links)
        assert sorted(store.link_graph()) == [
            (A.url, B.url, "sponsored", True),
            (A.url, B.url, "to b", False),
        ]
    finally:
        store.close()
