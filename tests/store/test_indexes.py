"""The pages table's indexes: each is written on every page a crawl saves, so each must
serve a query the store runs; and both stores hold the same ones."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import psycopg

from trawl.records import REPORT_SORTS, IssueThresholds, PageRecord, ReportQuery
from trawl.store.issues import Issue
from trawl.store.postgres import PostgresStore
from trawl.store.sqlite import SQLiteStore


def _page(n: int) -> PageRecord:
    host = f"h{n % 3}.example"
    return PageRecord(
        url=f"https://{host}/{n}",
        host=host,
        status=(200, 404, 301)[n % 3],
        depth=n % 4,
        fetched_at=float(n),
        title=f"Page {n % 7}",
        description=f"About {n % 5}",
        word_count=n * 11,
        lang="en" if n % 2 else None,
        indexable=n % 3 == 0,
        indexability="Indexable" if n % 3 == 0 else "Client Error",
        text_hash=n % 4,
        simhash=n,
        response_time=n / 10,
        size=n * 100,
    )


def _pages_indexes(db: sqlite3.Connection) -> set[str]:
    rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'pages'")
    return {name for (name,) in rows if not name.startswith("sqlite_autoindex_")}


def test_every_index_on_pages_serves_a_store_query(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite"
    store = SQLiteStore(path)
    statements: list[str] = []
    store._db._sqlite.set_trace_callback(statements.append)  # type: ignore[attr-defined]
    crawl = store.begin_crawl(["https://h0.example/"])
    for n in range(30):
        store.save_page(_page(n), crawl_id=crawl)
    store.unseen_pages(crawl + 1, ["h0.example", "h1.example"])
    store.server_error_pages(crawl)
    store.host_language("h1.example")
    store.duplicates_of("https://h0.example/0")
    store.validators("https://h0.example/0")
    store.searchable_counts()
    store.status_counts()
    store.depth_counts()
    store.response_time_counts([0.5, 1.0])
    store.report_issue_counts(IssueThresholds())
    for sort in REPORT_SORTS:
        for descending in (False, True):
            store.report_pages(ReportQuery(sort=sort, descending=descending))
    for issue in Issue:
        store.report_pages(ReportQuery(issue=issue.slug))
    store.report_pages(ReportQuery(host="h1.example", lang="en", indexability="Indexable"))
    store.close()

    db = sqlite3.connect(path)
    used: set[str] = set()
    for sql in statements:
        if sql.split()[0].upper() not in {"SELECT", "INSERT", "UPDATE", "DELETE", "WITH"}:
            continue
        for row in db.execute("EXPLAIN QUERY PLAN " + sql):
            used.update(re.findall(r"USING (?:COVERING )?INDEX (\w+)", str(row[-1])))
    unused = _pages_indexes(db) - used
    db.close()
    assert not unused, f"indexes no query reads, written on every save: {sorted(unused)}"


def test_both_stores_hold_the_same_indexes_on_pages(tmp_path: Path, postgres_url: str) -> None:
    SQLiteStore(tmp_path / "t.sqlite").close()
    db = sqlite3.connect(tmp_path / "t.sqlite")
    expected = _pages_indexes(db)
    db.close()
    PostgresStore(postgres_url).close()
    with psycopg.connect(postgres_url) as pg:
        rows = pg.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'pages'")
        names = {name for (name,) in rows}
    # PostgreSQL names the key and the UNIQUE constraint's index itself.
    assert names - {"pages_pkey", "pages_url_key"} == expected
