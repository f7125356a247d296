"""The SEO report's queries: filters, order, and that every sort reads an index."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import cast

import pytest

from trawl.errors import StoreError
from trawl.records import REPORT_SORTS, Link, PageRecord, ReportQuery, ReportSort
from trawl.store.sqlite import SQLiteStore


def page(n: int, **changes: object) -> PageRecord:
    fields: dict[str, object] = {
        "url": f"https://a.example/{n}",
        "host": "a.example",
        "status": 200,
        "depth": n % 5,
        "fetched_at": float(n),
        "title": f"Page {n:03d}",
        "word_count": (n * 37) % 101,
        "lang": "en",
        "indexability": "Indexable",
    }
    fields.update(changes)
    return PageRecord(**fields)  # type: ignore[arg-type]


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    s = SQLiteStore(tmp_path / "t.sqlite")
    for n in range(50):
        s.save_page(page(n))
    s.save_page(page(50, status=404, indexability="Client Error", title="Gone 100%_"))
    s.save_page(page(51, status=301, indexability="Redirected", redirect_to="https://a.example/1"))
    return s


def test_filters_combine_and_count_before_paging(store: SQLiteStore) -> None:
    total, rows = store.report_pages(ReportQuery(status="2xx", limit=10, offset=45))
    assert total == 50 and len(rows) == 5
    assert store.report_pages(ReportQuery(status="404"))[0] == 1
    assert store.report_pages(ReportQuery(indexability="Redirected"))[0] == 1
    # LIKE wildcards typed by the user are literal text.
    assert [r.url for r in store.report_pages(ReportQuery(text="100%_"))[1]] == [
        "https://a.example/50"
    ]
    assert store.report_pages(ReportQuery(text="%"))[0] == 1


@pytest.mark.parametrize("column", REPORT_SORTS)
@pytest.mark.parametrize("descending", [False, True])
def test_every_sort_is_ordered(store: SQLiteStore, column: ReportSort, descending: bool) -> None:
    _, rows = store.report_pages(ReportQuery(sort=column, descending=descending, limit=100))
    values = [getattr(r, column) for r in rows]
    present = [v for v in values if v is not None]
    assert present == sorted(present, reverse=descending)


@pytest.mark.parametrize("column", REPORT_SORTS)
def test_every_sort_reads_an_index_without_sorting(tmp_path: Path, column: str) -> None:
    SQLiteStore(tmp_path / "t.sqlite").close()
    db = sqlite3.connect(tmp_path / "t.sqlite")
    plan = " ".join(
        str(row[-1])
        for row in db.execute(
            f"EXPLAIN QUERY PLAN SELECT url FROM pages ORDER BY {column} DESC, id DESC LIMIT 100"
        )
    )
    db.close()
    assert "TEMP B-TREE" not in plan and "INDEX" in plan, plan


def test_unknown_sort_is_refused(store: SQLiteStore) -> None:
    with pytest.raises(StoreError):
        # The type refuses it too; a caller that casts still meets the store's check.
        store.report_pages(ReportQuery(sort=cast(ReportSort, "body; DROP TABLE pages")))


def test_external_links_are_other_hosts_or_ports(tmp_path: Path) -> None:
    s = SQLiteStore(tmp_path / "t.sqlite")
    links = [
        Link("https://a.example/x", "inside"),
        Link("https://a.example:8443/x", "other port"),
        Link("https://a.example.evil.test/x", "longer host"),
        Link("https://b.example/x", "b"),
        Link("https://b.example/x", "b again"),
        Link("https://c.example/logo.png", "", element="img", attribute="src"),
    ]
    s.save_page(page(1), links)
    total, rows = s.external_links()
    assert total == 3
    assert {r.url: r.occurrences for r in rows} == {
        "https://a.example:8443/x": 1,
        "https://a.example.evil.test/x": 1,
        "https://b.example/x": 2,
    }


def test_deleting_a_site_takes_its_pages_only(tmp_path: Path) -> None:
    s = SQLiteStore(tmp_path / "t.sqlite")
    s.add_site("http://127.0.0.1:8000/")
    s.save_page(page(1, url="http://127.0.0.1:8000/a", host="127.0.0.1"))
    s.save_page(page(2, url="http://127.0.0.1:9000/a", host="127.0.0.1"))
    assert s.delete_site("127.0.0.1:8000") == ["http://127.0.0.1:8000/a"]
    assert s.count_pages() == 1 and s.sites() == []
    assert s.delete_site("127.0.0.1:8000") is None
