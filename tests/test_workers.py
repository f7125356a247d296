"""Workers sharing one PostgreSQL: real `trawl worker` processes crawl a real
loopback site; the fixture server's log says what was fetched, and when."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from itertools import pairwise
from pathlib import Path

import psycopg

from fixture_sites import Route, SiteServer, html_page, trawl
from trawl.index.tantivy_index import IndexReader
from trawl.records import PageRecord
from trawl.store.postgres import PostgresStore

Serve = Callable[..., SiteServer]


def linked_site(serve: Serve, pages: int, *, response_delay: float = 0.0) -> SiteServer:
    """A home page linking to every page; each page links home and to its neighbours."""
    home = "".join(f'<a href="/p{i}">page {i}</a> ' for i in range(pages))
    routes: dict[str, Route] = {"/": html_page("Home", home)}
    for i in range(pages):
        nav = f'<a href="/">home</a> <a href="/p{(i + 1) % pages}">next</a>'
        route = html_page(f"Page {i}", f"<p>kiwi number {i}</p>{nav}")
        route.delay = response_delay
        routes[f"/p{i}"] = route
    return serve(routes)


def start_worker(
    store_url: str, start: str, name: str, *options: str, cwd: Path
) -> subprocess.Popen[str]:
    """A `trawl worker` in a process group of its own, so a kill takes it whole."""
    env = {
        **os.environ,
        "TRAWL_PARSE_WORKERS": "1",
        # The worker's name rides in the User-Agent: the server's log tells who fetched what.
        "TRAWL_USER_AGENT": f"TrawlBot/0.1 ({name})",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "trawl", "worker", start, "--store", store_url, *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
        start_new_session=True,
    )


def finish(process: subprocess.Popen[str], timeout: float = 120) -> str:
    try:
        out, errors = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        raise
    assert process.returncode == 0, errors
    return out


def page_requests(server: SiteServer) -> list[tuple[float, str, str]]:
    """(time, path, worker name) of every page request, in order."""
    with server._lock:
        pairs = list(zip(server.requests, server.request_headers, strict=True))
    return [
        (when, path, headers.get("User-Agent", ""))
        for (when, _, path), headers in pairs
        if path not in {"/robots.txt", "/sitemap.xml", "/sitemap_index.xml"}
    ]


def test_two_workers_fetch_each_page_once_and_share_the_host_delay(
    serve: Serve, postgres_url: str, tmp_path: Path
) -> None:
    site = linked_site(serve, 24)
    delay = 0.4
    options = ("--delay", str(delay), "--host-concurrency", "4", "--concurrency", "4")
    workers = [
        start_worker(postgres_url, site.url("/"), name, *options, cwd=tmp_path)
        for name in ("worker-a", "worker-b")
    ]
    outputs = [finish(w) for w in workers]

    requests = page_requests(site)
    fetched = Counter(path for _, path, _ in requests)
    assert set(fetched) == {"/", *(f"/p{i}" for i in range(24))}
    assert max(fetched.values()) == 1, fetched.most_common(3)  # no page fetched twice
    by_worker = Counter(agent for _, _, agent in requests)
    assert len(by_worker) == 2, by_worker  # both worked, so the delay is shared, not private
    times = sorted(when for when, _, _ in requests)
    gaps = [b - a for a, b in pairwise(times)]
    # The slot is booked when a URL is claimed, a moment before the request leaves
    # (longer when the machine is busy and the worker waits for a core): slack for
    # that. Two workers each keeping a private delay would land requests together.
    assert min(gaps) >= delay - 0.15, sorted(gaps)[:3]
    assert all("complete" in out or "fetched" in out for out in outputs)
    store = PostgresStore(postgres_url)
    try:
        assert store.count_pages() == 25
        run = store.crawls()[0]
        assert (run.outcome, run.pages_ok) == ("complete", 25)
    finally:
        store.close()


def test_a_killed_workers_urls_are_taken_by_another(
    serve: Serve, postgres_url: str, tmp_path: Path
) -> None:
    site = linked_site(serve, 30, response_delay=0.3)
    options = ("--delay", "0", "--concurrency", "3", "--host-concurrency", "3", "--lease", "3")
    victim = start_worker(postgres_url, site.url("/"), "victim", *options, cwd=tmp_path)
    deadline = time.monotonic() + 60
    while len(page_requests(site)) < 6:
        assert victim.poll() is None and time.monotonic() < deadline, "the worker never got going"
        time.sleep(0.05)
    os.killpg(victim.pid, signal.SIGKILL)  # mid-request: it holds leases it will never release
    victim.wait()
    with psycopg.connect(postgres_url) as db:
        held = {u for (u,) in db.execute("SELECT url FROM frontier WHERE lease_owner IS NOT NULL")}
    assert held, "the killed worker held no lease: nothing was tested"

    survivor = start_worker(postgres_url, site.url("/"), "survivor", *options, cwd=tmp_path)
    finish(survivor)

    expected = {"/", *(f"/p{i}" for i in range(30))}
    assert {path for _, path, _ in page_requests(site)} == expected
    store = PostgresStore(postgres_url)
    try:
        saved = {p.url for p in store.pages() if p.status == 200}
        assert saved == {site.url(p) for p in expected}
        assert held <= saved  # what the dead worker held was fetched by the survivor
        crawl_id = store.crawls()[0].id
        assert store.frontier_counts(crawl_id) == {"fetched": 31}
        assert not store.frontier_active(crawl_id)
        assert store.crawls()[0].outcome == "complete"
    finally:
        store.close()


def test_a_page_slower_than_a_lease_is_not_fetched_twice(
    serve: Serve, postgres_url: str, tmp_path: Path
) -> None:
    # A lease of one second and pages that take three: a lease that ran out while its
    # worker still waited for the page would hand the page to the other worker.
    site = linked_site(serve, 4, response_delay=3.0)
    options = ("--delay", "0", "--concurrency", "4", "--host-concurrency", "4", "--lease", "1")
    workers = [
        start_worker(postgres_url, site.url("/"), name, *options, cwd=tmp_path)
        for name in ("worker-a", "worker-b")
    ]
    for worker in workers:
        finish(worker)
    fetched = Counter(path for _, path, _ in page_requests(site))
    assert set(fetched) == {"/", "/p0", "/p1", "/p2", "/p3"}
    assert max(fetched.values()) == 1, fetched.most_common(3)


def test_max_pages_counts_over_all_workers(serve: Serve, postgres_url: str, tmp_path: Path) -> None:
    site = linked_site(serve, 40, response_delay=0.05)
    options = ("--delay", "0", "--concurrency", "2", "--host-concurrency", "4")
    workers = [
        start_worker(postgres_url, site.url("/"), name, *options, "--max-pages", "20", cwd=tmp_path)
        for name in ("worker-a", "worker-b")
    ]
    for worker in workers:
        finish(worker)
    fetched = Counter(path for _, path, _ in page_requests(site))
    # Twenty between them, not twenty each, and still none twice.
    assert sum(fetched.values()) == 20, fetched
    assert max(fetched.values()) == 1
    store = PostgresStore(postgres_url)
    try:
        run = store.crawls()[0]
        assert run.outcome == "capped"
        assert store.count_pages() == 20
    finally:
        store.close()


def test_index_is_built_from_postgres_and_a_server_sees_new_commits(
    postgres_url: str, tmp_path: Path
) -> None:
    store = PostgresStore(postgres_url)
    try:
        store.save_page(first := _page("https://example.com/a", "kiwi"))
        data = tmp_path / "data"
        built = trawl("index", "--store", postgres_url, "--data", str(data))
        assert built.returncode == 0, built.stderr
        reader = IndexReader(data / "index")  # opened once, as `trawl serve` does
        assert reader.num_docs() == 1

        store.save_page(_page("https://example.com/b", "kiwi again"))
        rebuilt = trawl("index", "--store", postgres_url, "--data", str(data))
        assert rebuilt.returncode == 0, rebuilt.stderr

        assert reader.num_docs() == 2
        found = trawl("search", "kiwi", "--data", str(data), "--json")
        assert first.url in found.stdout and "https://example.com/b" in found.stdout
    finally:
        store.close()


def _page(url: str, text: str) -> PageRecord:
    return PageRecord(
        url=url,
        host="example.com",
        status=200,
        depth=0,
        fetched_at=1.0,
        title=text,
        text=text,
        indexable=True,
    )


def test_a_store_that_is_neither_postgresql_nor_a_file_is_refused(tmp_path: Path) -> None:
    result = trawl("worker", "http://127.0.0.1:9/", "--store", "mysql://db/trawl")

    assert result.returncode == 2
    assert "postgresql:// URL or a SQLite file" in result.stderr


def test_joining_with_no_running_crawl_says_so(postgres_url: str) -> None:
    result = trawl("worker", "--store", postgres_url)

    assert result.returncode == 2
    assert "no running crawl to join" in result.stderr


def test_a_stopped_worker_hands_its_urls_back_at_once(
    serve: Serve, postgres_url: str, tmp_path: Path
) -> None:
    site = linked_site(serve, 20, response_delay=0.2)
    options = ("--delay", "0", "--concurrency", "3", "--host-concurrency", "3")
    first = start_worker(postgres_url, site.url("/"), "first", *options, cwd=tmp_path)
    deadline = time.monotonic() + 60
    while len(page_requests(site)) < 5:
        assert first.poll() is None and time.monotonic() < deadline, "the worker never got going"
        time.sleep(0.05)
    first.send_signal(signal.SIGTERM)  # Ctrl-C or a shutdown: finish what is in flight
    assert "stopped" in finish(first)
    with psycopg.connect(postgres_url) as db:
        leased = db.execute("SELECT count(*) FROM frontier WHERE lease_owner IS NOT NULL")
        assert leased.fetchone() == (0,)  # nothing left to wait for

    second = start_worker(postgres_url, site.url("/"), "second", *options, cwd=tmp_path)
    finish(second)

    fetched = Counter(path for _, path, _ in page_requests(site))
    assert set(fetched) == {"/", *(f"/p{i}" for i in range(20))}
    assert max(fetched.values()) == 1  # no worker died: nothing fetched twice


def test_a_sitemap_date_reaches_the_pages_workers_fetch(
    serve: Serve, postgres_url: str, tmp_path: Path
) -> None:
    """Issue 17's sitemap dates, in a crawl shared through the store: a URL only the
    sitemap lists, and one a link queued first (fetched after the sitemap is read),
    are both saved with the sitemap's date, as in an embedded crawl."""
    only = {"/s1": "2022-01-01", "/s2": "2022-01-02"}
    linked = {"/l1": "2022-02-01", "/l2": "2022-02-02", "/l3": "2022-02-03"}
    site = serve({})
    urls = "".join(
        f"<url><loc>{site.base}{path}</loc><lastmod>{day}</lastmod></url>"
        for path, day in (only | linked).items()
    )
    site.routes.update(
        {
            "/": html_page("Home", "".join(f'<a href="{p}">{p}</a>' for p in linked)),
            # Read after the links are queued: the links' URLs are in the store first.
            "/sitemap.xml": Route(
                f"<urlset>{urls}</urlset>".encode(),
                headers={"Content-Type": "application/xml"},
                delay=1.0,
            ),
            **{p: html_page(p, f"<p>A dated page called {p[1:]}.</p>") for p in only | linked},
        }
    )
    options = ("--delay", "0.6", "--host-concurrency", "1", "--concurrency", "2")
    finish(start_worker(postgres_url, site.url("/"), "dated", *options, cwd=tmp_path))
    assert "/sitemap.xml" in {path for _, _, path in site.requests}  # read, dates trusted

    store = PostgresStore(postgres_url)
    try:
        dates = {}
        for path in only | linked:
            page = store.page(site.url(path))
            assert page is not None, path
            dates[path] = (page.modified_source, page.modified and page.modified.date())
    finally:
        store.close()
    # /l1 goes out at 0.6 s, before the sitemap is read: dated when the sitemap is.
    expected = {
        p: ("sitemap", datetime.fromisoformat(day).date()) for p, day in (only | linked).items()
    }
    assert dates == expected
