"""The SQLite store on real files: migrations, upserts, the crawl log, the frontier."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from trawl.errors import StoreError
from trawl.records import CrawlUrl, Link, PageRecord
from trawl.store.schema import SCHEMA_VERSION
from trawl.store.sqlite import SQLiteStore


def page(url: str, **changes: Any) -> PageRecord:
    base = PageRecord(url=url, host="example.com", status=200, depth=0, fetched_at=1.0)
    return replace(base, **changes)


def test_opening_twice_migrates_once(tmp_path: Path) -> None:
    path = tmp_path / "trawl.sqlite"
    SQLiteStore(path).close()
    SQLiteStore(path).close()

    db = sqlite3.connect(path)
    versions = [r[0] for r in db.execute("SELECT version FROM schema_version")]
    mode = db.execute("PRAGMA journal_mode").fetchone()[0]
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    db.close()
    assert versions == list(range(1, SCHEMA_VERSION + 1))
    assert mode == "wal"
    assert {"sites", "pages", "links", "crawls", "frontier"} <= tables


def test_store_from_a_newer_trawl_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "trawl.sqlite"
    SQLiteStore(path).close()
    db = sqlite3.connect(path)
    db.execute("INSERT INTO schema_version VALUES (999)")
    db.commit()
    db.close()

    with pytest.raises(StoreError, match="newer"):
        SQLiteStore(path)


def test_unopenable_path_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(StoreError):
        SQLiteStore(tmp_path / "file" / "trawl.sqlite")


def test_saving_a_page_again_replaces_it_and_its_links(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "trawl.sqlite")
    url = "https://example.com/a"
    store.save_page(page(url, title="Old", headings=("H",)), [Link("https://example.com/b", "b")])
    store.save_page(
        page(url, title="New", indexable=True), [Link("https://example.com/c", "see c", True)]
    )

    saved = store.page(url)
    assert saved is not None and saved.title == "New" and saved.indexable
    assert saved.headings == ()
    assert store.count_pages() == 1
    assert store.links_from(url) == [Link("https://example.com/c", "see c", True)]
    store.close()


def test_pages_can_be_filtered_to_indexable(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "trawl.sqlite")
    store.save_page(page("https://example.com/1", indexable=True, lang="da", word_count=3))
    store.save_page(page("https://example.com/2", status=404, error="HTTP 404"))

    everything = list(store.pages())
    indexable = list(store.pages(indexable_only=True))

    assert [p.url for p in everything] == ["https://example.com/1", "https://example.com/2"]
    assert [(p.url, p.lang, p.word_count) for p in indexable] == [
        ("https://example.com/1", "da", 3)
    ]
    store.close()


def test_crawl_log_and_frontier(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "trawl.sqlite")
    store.add_site("https://example.com/")
    store.add_site("https://example.com/")  # a site is registered once
    crawl_id = store.begin_crawl(["https://example.com/"])
    store.frontier_add(
        crawl_id, [CrawlUrl("https://example.com/", 0), CrawlUrl("https://example.com/x", 1)]
    )
    store.frontier_add(crawl_id, [CrawlUrl("https://example.com/", 0)])  # no duplicate
    store.frontier_mark(crawl_id, "https://example.com/", "fetched")

    assert store.frontier_counts(crawl_id) == {"fetched": 1, "queued": 1}
    assert store.crawls()[0].outcome == "running"
    store.finish_crawl(crawl_id, pages_ok=1, pages_failed=0, outcome="completed")
    run = store.crawls()[0]
    assert (run.id, run.pages_ok, run.outcome) == (crawl_id, 1, "completed")
    assert run.finished_at is not None and run.start_urls == ("https://example.com/",)
    store.close()


def test_host_language_is_the_majority_of_its_pages(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "trawl.sqlite")
    store.save_page(page("https://example.com/first", lang="en", indexable=True))
    for i in range(3):
        store.save_page(page(f"https://example.com/da{i}", lang="da", indexable=True))
    store.save_page(page("https://example.com/err", lang="de", indexable=False))

    assert store.host_language("example.com") == "da"  # not the first page seen
    assert store.host_language("other.example") is None
    store.close()


def test_links_keep_their_context(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "trawl.sqlite")
    image = Link("https://example.com/i.png", "Logo", False, "img", "src", "", "Intro")
    store.save_page(page("https://example.com/"), [image])
    store.save_page(
        page("https://example.com/other"), [Link("https://example.com/x", "see x", False)]
    )

    assert store.links_from("https://example.com/") == [image]
    assert store.anchors_to("https://example.com/x") == ["see x"]
    assert store.anchors_to("https://example.com/i.png") == []  # an image is no link
    store.close()
