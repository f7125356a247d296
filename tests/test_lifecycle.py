"""A crawl's life: killed and resumed, stopped, pruned, re-crawled, and an outage."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from fixture_sites import Route, SiteServer, html_page, trawl
from trawl.index.tantivy_index import IndexReader
from trawl.pipeline.crawl_run import WRITE_BATCH, CrawlOutcome, crawl
from trawl.search.searcher import search
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

Serve = Callable[..., SiteServer]
PAGES = 60


def slow_site(serve: Serve) -> SiteServer:
    home = "".join(f'<a href="/p{i}">page {i}</a>' for i in range(PAGES))
    pages = {f"/p{i}": html_page(f"Page {i}", f"<p>kiwi number {i}</p>") for i in range(PAGES)}
    for route in pages.values():
        route.delay = 0.05
    return serve({"/": html_page("Home", home), **pages})


def start_crawl(data: Path, url: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "trawl",
            "crawl",
            url,
            "--data",
            str(data),
            "--delay",
            "0",
            "--concurrency",
            "2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Workers from the start (the default starts them only once the crawl is busy):
        # these crawls check that a kill leaves no worker behind.
        env={**os.environ, "TRAWL_PARSE_WORKERS": "2"},
    )


def stored_urls(data: Path) -> set[str]:
    db = sqlite3.connect(data / "trawl.sqlite")
    try:
        return {u for (u,) in db.execute("SELECT url FROM pages")}
    finally:
        db.close()


def wait_for_pages(data: Path, count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (data / "trawl.sqlite").exists():
            try:
                if len(stored_urls(data)) >= count:
                    return
            except sqlite3.OperationalError:
                pass  # the schema is being created
        time.sleep(0.05)
    raise AssertionError(f"fewer than {count} pages stored after {timeout}s")


PROC = Path("/proc")


def children_of(pid: int) -> list[int]:
    """The processes ``pid`` started; none where there is no /proc."""
    tasks = PROC / str(pid) / "task"
    if not tasks.is_dir():
        return []
    return [int(c) for task in tasks.iterdir() for c in (task / "children").read_text().split()]


def alive(pid: int) -> bool:
    """Running: neither gone nor a zombie waiting for a parent that will not reap it."""
    try:
        state = (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_kill_9_then_the_same_command_resumes_and_loses_nothing(
    serve: Serve, tmp_path: Path
) -> None:
    site = slow_site(serve)
    data = tmp_path / "data"
    child = start_crawl(data, site.url("/"))
    wait_for_pages(data, 15)
    workers = children_of(child.pid)  # the crawl's parse workers (Linux: read from /proc)
    child.send_signal(signal.SIGKILL)
    child.wait(10)
    if PROC.is_dir():
        assert workers
        # They do not outlive it: each sees its parent gone and exits.
        deadline = time.monotonic() + 10
        while any(alive(pid) for pid in workers):
            assert time.monotonic() < deadline, f"workers {workers} outlived the killed crawl"
            time.sleep(0.1)
    committed = stored_urls(data)
    requests_before = len(site.requests)

    again = trawl("crawl", site.url("/"), "--data", str(data), "--delay", "0")

    assert again.returncode == 0, again.stderr
    assert "complete (resumes crawl 1)" in again.stdout
    assert stored_urls(data) == {site.url("/")} | {site.url(f"/p{i}") for i in range(PAGES)}
    second_run = [site.base + p for _, _, p in site.requests[requests_before:]]
    assert not committed & set(second_run), "a committed page was fetched again"
    fetched = Counter(site.page_paths())
    twice = {site.base + p for p, n in fetched.items() if n > 1}
    assert not twice & committed
    # Fetched again: the two in flight at the kill and the pages of the write batch
    # it lost (on SQLite a crawl commits its writes in batches: crawl_run.WRITE_BATCH).
    assert sum(n - 1 for n in fetched.values()) <= 2 + WRITE_BATCH[0]
    store = SQLiteStore(data / "trawl.sqlite")
    runs = store.crawls()
    searchable = [p.url for p in store.pages() if p.searchable]
    store.close()
    assert [(r.id, r.outcome, r.resumed_from) for r in runs] == [
        (2, "complete", 1),
        (1, "interrupted", None),
    ]
    # Pages are indexed when a crawl ends: those the killed run fetched, by the resume.
    assert len(searchable) > len(committed) // 2
    assert IndexReader(data / "index").num_docs() == len(searchable)


def test_sigterm_stops_cleanly_and_resume_finishes(serve: Serve, tmp_path: Path) -> None:
    site = slow_site(serve)
    data = tmp_path / "data"
    child = start_crawl(data, site.url("/"))
    wait_for_pages(data, 10)
    child.send_signal(signal.SIGTERM)
    out, _ = child.communicate(timeout=30)

    assert child.returncode == 0 and " stopped: " in out
    resumed = trawl("crawl", "--resume", "--data", str(data), "--delay", "0")
    assert resumed.returncode == 0 and "complete (resumes crawl 1)" in resumed.stdout
    assert len(stored_urls(data)) == PAGES + 1


def two_animals() -> dict[str, Route]:
    return {
        "/": html_page("Home", '<a href="/a">a</a><a href="/b">b</a>'),
        "/a": html_page("A", "<p>alpaca</p>"),
        "/b": html_page("B", "<p>bison</p>"),
    }


async def run(settings: Settings, url: str) -> CrawlOutcome:
    store = SQLiteStore(settings.sqlite_path)
    try:
        return await crawl([url], settings, store)
    finally:
        store.close()


def found(settings: Settings, query: str) -> int:
    return search(IndexReader(settings.index_path), query, settings).total


async def test_outage_prunes_nothing(serve: Serve, tmp_path: Path) -> None:
    routes = two_animals()
    site = serve(routes)
    settings = Settings(data=tmp_path / "data", delay=0.0)
    first = await run(settings, site.url("/"))
    assert first.outcome == "complete" and found(settings, "alpaca bison") == 2

    down = Route(b"down", 503, {"Retry-After": "0", "Content-Type": "text/plain"})
    for path in routes:
        routes[path] = down
    outage = await run(settings, site.url("/"))

    assert outage.outcome == "unhealthy" and outage.pruned == 0
    assert found(settings, "alpaca") == 1 and found(settings, "bison") == 1
    store = SQLiteStore(settings.sqlite_path)
    assert store.count_pages() == 3
    store.close()


async def test_robots_outage_fetches_and_prunes_nothing(serve: Serve, tmp_path: Path) -> None:
    routes = {"/": html_page("Home", '<a href="/a">a</a>'), "/a": html_page("A", "alpaca")}
    site = serve(routes)
    settings = Settings(data=tmp_path / "data", delay=0.0)
    await run(settings, site.url("/"))

    routes["/robots.txt"] = Route(b"", 500)
    before = len(site.requests)
    outage = await run(settings, site.url("/"))

    assert [p for _, _, p in site.requests[before:]] == ["/robots.txt"]
    assert outage.outcome == "unhealthy"
    assert found(settings, "alpaca") == 1


async def test_complete_crawl_prunes_pages_that_are_gone(serve: Serve, tmp_path: Path) -> None:
    routes = two_animals()
    site = serve(routes)
    settings = Settings(data=tmp_path / "data", delay=0.0)
    await run(settings, site.url("/"))

    routes["/"] = html_page("Home", '<a href="/a">a</a>')
    del routes["/b"]
    second = await run(settings, site.url("/"))

    assert second.outcome == "complete" and second.pruned == 1
    assert found(settings, "bison") == 0 and found(settings, "alpaca") == 1
    store = SQLiteStore(settings.sqlite_path)
    assert store.page(site.url("/b")) is None
    store.close()


async def test_capped_crawl_prunes_nothing(serve: Serve, tmp_path: Path) -> None:
    routes = two_animals()
    site = serve(routes)
    settings = Settings(data=tmp_path / "data", delay=0.0)
    await run(settings, site.url("/"))

    capped = await run(settings.replace(max_pages=1), site.url("/"))

    assert capped.outcome == "capped" and capped.pruned == 0
    assert found(settings, "bison") == 1


def test_recrawl_sends_conditional_requests(serve: Serve, tmp_path: Path) -> None:
    home = html_page("Home", '<a href="/a">a</a>')
    page = html_page("A", "<p>alpaca</p>")
    home.etag, page.etag = '"home-1"', '"a-1"'
    site = serve({"/": home, "/a": page})
    data = str(tmp_path / "data")
    assert trawl("crawl", site.url("/"), "--data", data, "--delay", "0").returncode == 0
    before = len(site.requests)

    again = trawl("recrawl", "--data", data)

    assert again.returncode == 0 and "complete" in again.stdout, again.stderr
    sent = [h.get("If-None-Match") for h in site.request_headers[before:]]
    assert sorted(v for v in sent if v) == ['"a-1"', '"home-1"']
    result = trawl("search", "alpaca", "--data", data, "--json")
    assert '"total": 1' in result.stdout  # a 304 keeps the page indexed


def test_speed_preset_and_flags(serve: Serve, tmp_path: Path) -> None:
    site = serve({"/": html_page("Home", "x")})
    gentle = trawl(
        "crawl", site.url("/"), "--data", str(tmp_path), "--speed", "gentle", "--delay", "0"
    )
    bad = trawl("crawl", site.url("/"), "--data", str(tmp_path), "--speed", "warp")

    assert gentle.returncode == 0, gentle.stderr
    assert bad.returncode == 2 and "--speed must be one of" in bad.stderr
