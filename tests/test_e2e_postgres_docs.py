"""End to end: the PostgreSQL 15 manual (1,155 pages) served on loopback, crawled by the CLI."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

from fixture_sites import shared_data, trawl

PAGES = 1_155


def test_whole_manual_is_crawled_indexed_and_searchable(
    serve_directory: Callable[[Path], str], tmp_path: Path
) -> None:
    site = shared_data("site-postgresql-15-docs")
    base = serve_directory(site)
    data = tmp_path / "data"

    crawled = trawl(
        "crawl",
        f"{base}/index.html",
        "--data",
        str(data),
        "--delay",
        "0",
        "--concurrency",
        "8",
        "--host-concurrency",
        "8",
    )
    assert crawled.returncode == 0, crawled.stderr
    assert f"complete: {PAGES} fetched, {PAGES} indexed, 0 failed" in crawled.stdout

    db = sqlite3.connect(data / "trawl.sqlite")
    html_pages = db.execute("SELECT count(*) FROM pages WHERE indexable = 1").fetchone()[0]
    on_disk = {p.name for p in site.glob("*.html")}
    stored = {row[0].rsplit("/", 1)[-1] for row in db.execute("SELECT url FROM pages")}
    db.close()
    assert html_pages == PAGES == len(on_disk)
    assert on_disk <= stored

    found = trawl("search", "create index concurrently", "--data", str(data), "--json")
    top3 = [r["url"].rsplit("/", 1)[-1] for r in json.loads(found.stdout)["results"][:3]]
    assert "sql-createindex.html" in top3, top3
