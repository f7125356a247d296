"""Skip reasons are a kind plus a detail, and the facts about a crawl (a cap, an
embedded crawl) are marks of their own: migration 13 reads the rows older versions
wrote (reasons spelled with prefixes, marker rows at ``#trawl-`` URLs), on SQLite and
PostgreSQL, and a crawl stopped before the migration resumes with them."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from fixture_sites import SiteServer, html_page
from trawl.pipeline.crawl_run import crawl
from trawl.pipeline.health import is_embedded
from trawl.records import CrawlMark, CrawlUrl, HostTally, MarkKind, Outcome, Skip, SkipKind
from trawl.settings import Settings
from trawl.store.base import Store
from trawl.store.postgres import PostgresStore
from trawl.store.schema import MIGRATIONS, postgres_migration
from trawl.store.sqlite import SQLiteStore

Serve = Callable[..., SiteServer]
BEFORE = 12  # the last schema version with prefixed reasons and marker rows
START = "https://a.example/"


def old_rows(start: str, host: str) -> list[str]:
    """A stopped crawl as version 12 stored it, in the spellings it wrote."""
    base = start.rstrip("/")

    def row(url: str, state: str, reason: str | None) -> str:
        said = "NULL" if reason is None else f"'{reason}'"
        return (
            "INSERT INTO frontier (crawl_id, url, depth, source, host, state, reason)"
            f" VALUES (1, '{url}', 1, NULL, '{host}', '{state}', {said})"
        )

    return [
        # The first row of a new table: id 1 (given by the database, so PostgreSQL's
        # sequence knows it).
        "INSERT INTO crawls (started_at, finished_at, start_urls, outcome)"
        f" VALUES (1.0, 2.0, '{json.dumps([start])}', 'stopped')",
        row(start, "queued", None),
        row(f"{base}/#trawl-embedded", "marker", "embedded crawl"),
        row(f"{base}/#trawl-max_per_host", "marker", "capped: max_per_host"),
        row(f"{base}/down", "skipped", "robots.txt: robots.txt answered 503: nothing allowed"),
        row(f"{base}/private", "skipped", "robots.txt: parsed"),
        row(f"{base}/gone", "skipped", "host parked: 9 failures in a row, the last HTTP 502"),
        "INSERT INTO host_slots (host, parked_by, parked_reason)"
        f" VALUES ('{host}', 1, 'host parked: 9 failures in a row')",
    ]


def sqlite_at_version_12(path: Path, rows: list[str]) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    for version in range(1, BEFORE + 1):
        for statement in MIGRATIONS[version - 1].split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute("INSERT INTO schema_version VALUES (?)", (version,))
    for statement in rows:
        db.execute(statement)
    db.close()


def postgres_at_version_12(url: str, rows: list[str]) -> None:
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        for version in range(1, BEFORE + 1):
            db.execute(postgres_migration(version).encode())
            db.execute("INSERT INTO schema_version VALUES (%s)", (version,))
        for statement in rows:
            db.execute(statement.encode())


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def migrated(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A store of version 12 holding a stopped crawl, opened (and so migrated)."""
    rows = old_rows(START, "a.example")
    if request.param == "sqlite":
        sqlite_at_version_12(tmp_path / "trawl.sqlite", rows)
        store: Store = SQLiteStore(tmp_path / "trawl.sqlite")
    else:
        url = request.getfixturevalue("postgres_url")
        postgres_at_version_12(url, rows)
        store = PostgresStore(url)
    yield store
    store.close()


def test_old_reasons_become_kinds_and_markers_become_marks(migrated: Store) -> None:
    assert migrated.frontier_skipped(1, "https://a.example/down") == Skip(
        SkipKind.ROBOTS_UNANSWERED, "robots.txt answered 503: nothing allowed"
    )
    assert migrated.frontier_skipped(1, "https://a.example/private") == Skip(
        SkipKind.ROBOTS, "parsed"
    )
    assert migrated.frontier_skipped(1, "https://a.example/gone") == Skip(
        SkipKind.PARKED, "9 failures in a row, the last HTTP 502"
    )
    assert migrated.frontier_skipped(1, START) is None  # queued: no reason
    assert migrated.crawl_marks(1) == {
        CrawlMark("a.example", MarkKind.EMBEDDED),
        CrawlMark("a.example", MarkKind.CAP, "max_per_host"),
    }
    # The marker rows left the frontier: no URL of theirs is counted or resumed.
    assert migrated.frontier_counts(1) == {"queued": 1, "skipped": 3}
    assert not [u for u in migrated.frontier_finished(1) if "#trawl-" in u]
    assert migrated.host_tallies(1) == {
        "a.example": HostTally("a.example", robots_unanswered=1, caps=("max_per_host",))
    }
    # A URL a worker adds later on the host the crawl parked comes in skipped.
    migrated.frontier_add(1, [CrawlUrl("https://a.example/later", 2)])
    assert migrated.frontier_skipped(1, "https://a.example/later") == Skip(
        SkipKind.PARKED, "9 failures in a row"
    )
    assert is_embedded(migrated, 1)


def test_a_run_resuming_an_old_crawl_takes_its_kinds_and_marks_over(migrated: Store) -> None:
    previous = migrated.resumable_crawl([START])
    assert previous is not None and previous.outcome == Outcome.STOPPED
    crawl_id = migrated.begin_crawl([START], previous.id)

    assert migrated.crawl_marks(crawl_id) == migrated.crawl_marks(1)
    assert migrated.host_tallies(crawl_id) == migrated.host_tallies(1)
    assert migrated.frontier_skipped(crawl_id, "https://a.example/down") == Skip(
        SkipKind.ROBOTS_UNANSWERED, "robots.txt answered 503: nothing allowed"
    )
    assert is_embedded(migrated, crawl_id)


async def test_a_crawl_stopped_before_the_migration_resumes_capped(
    serve: Serve, tmp_path: Path
) -> None:
    # The stopped run met max_per_host on the site (a marker row then): the run that
    # resumes it fetches the rest and, judged with that cap, prunes nothing.
    home = html_page("Home", '<a href="/more">more</a>')
    site = serve({"/": home, "/more": html_page("More", "<p>more</p>")})
    settings = Settings(data=tmp_path / "data", delay=0.0)
    settings.data.mkdir()
    rows = [r for r in old_rows(site.url("/"), "127.0.0.1") if "/down" not in r]
    sqlite_at_version_12(settings.sqlite_path, rows)

    store = SQLiteStore(settings.sqlite_path)
    try:
        outcome = await crawl([site.url("/")], settings, store)
        marks = store.crawl_marks(outcome.crawl_id)
    finally:
        store.close()

    assert outcome.resumed_from == 1
    assert (outcome.outcome, outcome.pruned) == (Outcome.CAPPED, 0)
    assert {"/", "/more"} <= set(site.paths())
    assert CrawlMark("127.0.0.1", MarkKind.CAP, "max_per_host") in marks
