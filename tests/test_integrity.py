"""Store and index agree: trawl check, /healthz, repairs, and errors at the boundary."""

from __future__ import annotations

import asyncio
import shutil
import signal
import sqlite3
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from fixture_sites import Route, SiteServer, html_page, trawl
from service_fixtures import new_key
from test_lifecycle import slow_site, start_crawl, wait_for_pages
from trawl.errors import SearchIndexError, StoreError
from trawl.index.tantivy_index import IndexReader, IndexWriter
from trawl.pipeline.crawl_run import CrawlOutcome, crawl
from trawl.pipeline.integrity import check_index, full_check, quick_check
from trawl.pipeline.upkeep import rebuild_index
from trawl.records import PageRecord
from trawl.server.app import create_app
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

Serve = Callable[..., SiteServer]


def animals() -> dict[str, Route]:
    routes = {
        "/": html_page("Home", '<a href="/a">more</a><a href="/b">more</a><a href="/c">more</a>'),
        "/a": html_page("A", "<p>alpaca</p>"),
        "/b": html_page("B", "<p>bison</p>"),
        "/c": html_page("C", "<p>camel</p>"),
    }
    for i, route in enumerate(routes.values()):
        route.etag = f'"v{i}"'
    return routes


async def run(settings: Settings, url: str) -> CrawlOutcome:
    store = SQLiteStore(settings.sqlite_path)
    try:
        return await crawl([url], settings, store)
    finally:
        store.close()


def documents(settings: Settings) -> int:
    return IndexReader(settings.index_path).num_docs()


def empty_index(settings: Settings) -> None:
    """What a kill between a crawl's store writes and its index commit used to leave."""
    writer = IndexWriter(settings.index_path, fresh=True)
    writer.close()


async def test_a_recrawl_answered_304_reindexes_what_the_index_lost(
    serve: Serve, tmp_path: Path
) -> None:
    site = serve(animals())
    settings = Settings(data=tmp_path / "data", delay=0.0)
    await run(settings, site.url("/"))
    assert documents(settings) == 4
    empty_index(settings)

    again = await run(settings, site.url("/"))

    assert again.outcome == "complete" and again.fetched == 4
    assert documents(settings) == 4  # every page answered 304, and is searchable again


async def test_an_empty_rebuild_commits(serve: Serve, tmp_path: Path) -> None:
    site = serve(animals())
    settings = Settings(data=tmp_path / "data", delay=0.0)
    await run(settings, site.url("/"))
    store = SQLiteStore(settings.sqlite_path)
    store.delete_pages([p.url for p in store.pages()])

    assert await rebuild_index(store, settings) == 0
    store.close()
    assert documents(settings) == 0


@pytest.mark.parametrize("marker", ["", "{not json", '{"version": "6"}'])
async def test_a_damaged_marker_is_rebuilt_by_trawl_index(
    serve: Serve, tmp_path: Path, marker: str
) -> None:
    site = serve(animals())
    settings = Settings(data=tmp_path / "data", delay=0.0)
    await run(settings, site.url("/"))
    (settings.index_path / "trawl-schema.json").write_text(marker)

    with pytest.raises(SearchIndexError, match=r"damaged trawl-schema\.json.*trawl index"):
        IndexReader(settings.index_path)
    store = SQLiteStore(settings.sqlite_path)
    assert await rebuild_index(store, settings) == 4
    store.close()
    assert documents(settings) == 4


async def test_check_reports_and_repairs_drift(serve: Serve, tmp_path: Path) -> None:
    site = serve(animals())
    settings = Settings(data=tmp_path / "data", delay=0.0)
    await run(settings, site.url("/"))
    writer = IndexWriter(settings.index_path)
    writer.delete(site.url("/a"))  # missing
    store = SQLiteStore(settings.sqlite_path)
    record = store.page(site.url("/b"))
    assert record is not None
    writer.add(record)  # indexed twice
    writer.add(replace(record, url=site.url("/ghost")))  # in the index, not in the store
    writer.close()

    reader = IndexReader(settings.index_path)
    assert quick_check(store, reader).agrees is False
    found = full_check(store, reader)
    assert found.missing == (site.url("/a"),)
    assert found.extra == (site.url("/ghost"),)
    assert found.doubled == (site.url("/b"),)
    store.close()

    data = str(settings.data)
    checked = trawl("check", "--data", data)
    assert checked.returncode == 1, checked.stderr
    assert "1 missing from the index" in checked.stdout and site.url("/ghost") in checked.stdout
    repaired = trawl("check", "--repair", "--data", data)
    assert repaired.returncode == 0, repaired.stderr
    assert "repaired 3 pages" in repaired.stdout and "they agree" in repaired.stdout
    again = trawl("check", "--data", data)
    assert again.returncode == 0 and "they agree" in again.stdout


async def test_check_with_repair_builds_a_missing_index(serve: Serve, tmp_path: Path) -> None:
    site = serve(animals())
    settings = Settings(data=tmp_path / "data", delay=0.0)
    await run(settings, site.url("/"))
    shutil.rmtree(settings.index_path)
    store = SQLiteStore(settings.sqlite_path)
    with pytest.raises(SearchIndexError, match="no index"):
        await check_index(store, settings)
    checked = await check_index(store, settings, mend=True)
    store.close()
    assert checked.repaired == 4 and checked.after is not None and checked.after.agrees


# -- /healthz and the API at the boundary ------------------------------------------------


async def test_healthz_reports_drift_and_a_broken_index(serve: Serve, tmp_path: Path) -> None:
    site = serve(animals())
    settings = Settings(data=tmp_path / "data", delay=0.0)
    await run(settings, site.url("/"))
    client = TestClient(create_app(settings))
    assert client.get("/healthz").json()["status"] == "ok"

    writer = IndexWriter(settings.index_path)
    writer.delete(site.url("/a"))
    writer.close()
    drifted = client.get("/healthz")
    assert drifted.status_code == 200 and drifted.json()["status"] == "drifted"

    shutil.rmtree(settings.index_path)
    broken = TestClient(create_app(settings)).get("/healthz")
    assert broken.status_code == 503 and broken.json()["status"] == "broken"
    assert "no index" in broken.json()["problems"][0]
    assert str(tmp_path) not in broken.text


def test_healthz_names_a_crawl_killed_and_not_resumed(serve: Serve, tmp_path: Path) -> None:
    """A crawl killed with kill -9 stays marked running until something resumes it:
    /healthz answered "ok" for ever, and never compared store and index again. While
    the crawl lives it holds the index writer's lock; with the lock free it is stalled."""
    site = slow_site(serve)
    for route in site.routes.values():
        route.delay = 0.2  # the crawl outlasts the first look
    data = tmp_path / "data"
    settings = Settings(data=data)
    child = start_crawl(data, site.url("/"))
    try:
        wait_for_pages(data, 5)
        key = new_key(settings)
        client = TestClient(create_app(settings))
        live = client.get("/healthz").json()
        assert live["status"] == "ok" and "stalled" not in live, live
    finally:
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=60)

    health = client.get("/healthz")
    assert health.status_code == 200, health.text  # the server answers
    assert health.json()["status"] == "stalled" and health.json()["stalled"] == [1]
    assert "crawl 1 is marked running" in health.json()["problems"][0]
    runs = client.get("/api/admin/crawls", headers={"X-API-Key": key}).json()
    assert [(r["id"], r["outcome"], r["stalled"]) for r in runs] == [(1, "running", True)]
    client.post("/admin/login", data={"key": key}, headers={"Origin": "http://testserver"})
    page = client.get("/admin").text
    row = page[page.index('<tr data-crawl="1">') :]
    row = row[: row.index("</tr>")]
    assert '<td class="outcome">stalled</td>' in row and "crawl 1 is marked running" in row

    # The writer's lock taken again (a crawl, trawl index...): not stalled while held.
    writer = IndexWriter(settings.index_path)
    try:
        assert client.get("/healthz").json()["status"] == "ok"
    finally:
        writer.close()
    # `trawl check --repair` closes it as interrupted, and /healthz compares again.
    assert trawl("check", "--repair", "--data", str(data)).returncode == 0
    assert client.get("/healthz").json()["status"] == "ok"
    runs = client.get("/api/admin/crawls", headers={"X-API-Key": key}).json()
    assert [(r["outcome"], r["stalled"]) for r in runs] == [("interrupted", False)]


def damage(path: Path) -> None:
    """Overwrite the pages table's rows: the store opens, then fails to read a page."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'pages'").fetchone()[0]
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    with path.open("r+b") as f:
        f.seek((root - 1) * page_size)
        f.write(b"\xff" * page_size)


async def test_a_damaged_store_is_a_store_error_everywhere(serve: Serve, tmp_path: Path) -> None:
    site = serve(animals())
    settings = Settings(data=tmp_path / "data", delay=0.0)
    await run(settings, site.url("/"))
    key = new_key(settings)
    damage(settings.sqlite_path)

    with pytest.raises(StoreError, match=r"trawl\.sqlite"):
        store = SQLiteStore(settings.sqlite_path)
        list(store.pages())

    client = TestClient(create_app(settings), raise_server_exceptions=False)
    health = client.get("/healthz")
    assert health.status_code == 503 and health.json()["status"] == "broken", health.text
    found = client.get("/api/admin/report/pages", headers={"X-API-Key": key})  # reads pages
    assert found.status_code == 503 and "trawl.sqlite" in found.json()["error"], found.text
    for answer in (health, found):
        assert str(tmp_path) not in answer.text

    for args in (("check",), ("index",), ("evict",)):
        result = trawl(*args, "--data", str(settings.data))
        assert result.returncode != 0, args
        assert "Traceback" not in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_a_worker_refuses_to_join_an_embedded_crawl(serve: Serve, tmp_path: Path) -> None:
    site = slow_site(serve)
    for route in site.routes.values():
        route.delay = 0.5  # the crawl outlasts the worker's start-up
    data = tmp_path / "data"
    child = start_crawl(data, site.url("/"))
    try:
        wait_for_pages(data, 5)
        joined = trawl("worker", site.url("/"), "--store", str(data / "trawl.sqlite"))
    finally:
        child.send_signal(signal.SIGTERM)
        child.communicate(timeout=60)
    assert joined.returncode != 0
    assert "started by `trawl crawl`" in joined.stderr


def test_site_delete_with_a_busy_writer_keeps_the_store(serve: Serve, tmp_path: Path) -> None:
    site = serve(animals())
    settings = Settings(data=tmp_path / "data", delay=0.0)
    asyncio.run(run(settings, site.url("/")))
    key = new_key(settings)
    host = site.base.split("://")[1]
    client = TestClient(create_app(settings))

    busy = IndexWriter(settings.index_path)  # a `trawl crawl` in another process, say
    try:
        refused = client.delete(f"/api/admin/sites/{host}", headers={"X-API-Key": key})
    finally:
        busy.close()

    assert refused.status_code == 503
    store = SQLiteStore(settings.sqlite_path)
    assert store.count_pages() == 4 and [s.host for s in store.sites()] == [host]
    store.close()
    done = client.delete(f"/api/admin/sites/{host}", headers={"X-API-Key": key})
    assert done.status_code == 200 and done.json()["deleted_pages"] == 4
    assert documents(settings) == 0


async def test_a_crawl_after_a_dead_one_mends_drift(serve: Serve, tmp_path: Path) -> None:
    site = serve(animals())
    settings = Settings(data=tmp_path / "data", delay=0.0)
    await run(settings, site.url("/"))
    store = SQLiteStore(settings.sqlite_path)
    record = store.page(site.url("/a"))
    assert record is not None
    store.begin_crawl(["http://127.0.0.1:9/"])  # a run that died: still marked running
    store.close()
    writer = IndexWriter(settings.index_path)
    writer.add(replace(record, url=site.url("/ghost")))  # what a half-done job left
    writer.close()

    await run(settings, site.url("/"))

    store = SQLiteStore(settings.sqlite_path)
    assert full_check(store, IndexReader(settings.index_path)).agrees
    store.close()


@pytest.mark.parametrize("lost", ["meta.json", "*.idx"])
async def test_a_lost_index_file_is_a_clear_error(serve: Serve, tmp_path: Path, lost: str) -> None:
    site = serve(animals())
    settings = Settings(data=tmp_path / "data", delay=0.0)
    await run(settings, site.url("/"))
    for path in settings.index_path.glob(lost):
        path.unlink()

    with pytest.raises(SearchIndexError, match="index at"):
        IndexReader(settings.index_path)
    health = TestClient(create_app(settings)).get("/healthz")
    assert health.status_code == 503 and health.json()["status"] == "broken"
    assert str(tmp_path) not in health.text
    searched = trawl("search", "alpaca", "--data", str(settings.data))
    assert searched.returncode != 0 and len(searched.stderr.strip().splitlines()) == 1
    assert trawl("index", "--data", str(settings.data)).returncode == 0
    assert documents(settings) == 4


def test_the_quick_check_counts_kept_server_errors_exactly(tmp_path: Path) -> None:
    def page(path: str, status: int = 200) -> PageRecord:
        return PageRecord(
            url=f"https://a.example/{path}", host="a.example", status=status, depth=0,
            fetched_at=0.0, title=path, text=f"{path} text", indexable=status == 200,
        )  # fmt: skip

    store = SQLiteStore(tmp_path / "trawl.sqlite")
    writer = IndexWriter(tmp_path / "index")
    for record in (page("a"), page("b"), page("c")):
        store.save_page(record)
    writer.add(page("a"))
    writer.add(page("b"))  # its document from before the outage
    store.save_page(page("b", 503))  # the outage: the document stays, the page is held
    writer.close()  # c is missing: as many documents as searchable pages, all the same

    assert quick_check(store, IndexReader(tmp_path / "index")).agrees is False
    writer = IndexWriter(tmp_path / "index")
    writer.add(page("c"))
    writer.close()
    assert quick_check(store, IndexReader(tmp_path / "index")).agrees is True
    store.close()
