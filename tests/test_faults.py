"""Fault injection: SIGKILL, for real, at each named durable step (trawl/faults.py) of a
crawl's end, evict, site delete and an index rebuild; the same command again; then
store and index agree and no committed page is lost. On SQLite and PostgreSQL."""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fixture_sites import Route, SiteServer, html_page
from trawl.faults import ENV
from trawl.index.tantivy_index import IndexReader, IndexWriter
from trawl.pipeline.crawl_run import crawl
from trawl.pipeline.health import is_embedded
from trawl.pipeline.integrity import full_check
from trawl.records import CrawlUrl, Outcome, PageRecord, Skip, SkipKind
from trawl.settings import Settings
from trawl.store.base import Store
from trawl.store.postgres import PostgresStore
from trawl.store.sqlite import SQLiteStore

Serve = Callable[..., SiteServer]
KILLED = -signal.SIGKILL


class Data:
    """A data folder (the index) and a store, and the trawl command run on them."""

    def __init__(self, folder: Path, store: str) -> None:
        self.folder = folder
        self.store = store

    workers = "0"  # TRAWL_PARSE_WORKERS
    live_index_after = "2000"  # TRAWL_LIVE_INDEX_AFTER

    def env(self, step: str | None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRAWL_")}
        env |= {
            "TRAWL_DATA": str(self.folder),
            "TRAWL_STORE": self.store,
            "TRAWL_DELAY": "0",
            "TRAWL_PARSE_WORKERS": self.workers,
            "TRAWL_LIVE_INDEX_AFTER": self.live_index_after,
            "TRAWL_EVICT_LANGUAGES": "en",
            "TRAWL_EVICT_MIN_QUALITY": "0",  # only the language rule evicts
        }
        if step is not None:
            env[ENV] = step
        return env

    def run(
        self, *args: str, step: str | None = None, max_file: int | None = None
    ) -> subprocess.CompletedProcess[str]:
        return self.python("-m", "trawl", *args, step=step, max_file=max_file)

    def python(
        self, *args: str, step: str | None = None, max_file: int | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``max_file``: no file grows past this many bytes (RLIMIT_FSIZE), as on a full
        disk: a write past it fails (EFBIG; Python ignores SIGXFSZ)."""

        def limit() -> None:
            if max_file is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (max_file, max_file))

        return subprocess.run(
            [sys.executable, *args],
            capture_output=True,
            text=True,
            timeout=180,
            env=self.env(step),
            check=False,
            preexec_fn=limit,  # setrlimit only: safe before exec
        )

    def open(self) -> Store:
        if self.store.startswith("postgresql://"):
            return PostgresStore(self.store)
        return SQLiteStore(Path(self.store))

    def agreed(self) -> set[str]:
        """The searchable URLs, after checking that store and index agree on them."""
        store = self.open()
        try:
            drift = full_check(store, IndexReader(self.folder / "index"))
            stored = {u for u, must in store.searchable_urls() if must}
        finally:
            store.close()
        assert drift.agrees, drift.summary() + f" {drift.samples}"
        return stored


@pytest.fixture(params=["sqlite", "postgresql"])
def data(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Data]:
    if request.param == "postgresql":
        store = request.getfixturevalue("postgres_url")
    else:
        store = str(tmp_path / "data" / "trawl.sqlite")
    yield Data(tmp_path / "data", store)


def english(*names: str) -> dict[str, Route]:
    home = "".join(f'<a href="/{n}">more</a>' for n in names)
    routes = {
        "/": html_page("Home", home),
        **{f"/{n}": html_page(n.title(), f"<p>the {n} grazes</p>") for n in names},
    }
    for path, route in routes.items():
        route.etag = f'"{path}-1"'
    return routes


def german() -> dict[str, Route]:
    def page(title: str, text: str, links: str = "") -> Route:
        doc = (
            f"<!doctype html><html lang=de><head><title>{title}</title></head>"
            f"<body><p>{text}</p>{links}</body></html>"
        )
        return Route(doc.encode())

    return {
        "/": page("Startseite", "Der Hund schläft im Garten", '<a href="/katze">mehr</a>'),
        "/katze": page("Katze", "Die Katze schläft auf dem Dach"),
    }


def urls(site: SiteServer, routes: dict[str, Route]) -> set[str]:
    return {site.url(p) for p in routes}


CRAWL_END = (
    "crawl_end.after_prune_index",
    "crawl_end.after_prune_store",
    "crawl_end.before_index_commit",
    "crawl_end.after_index_commit",
)


@pytest.mark.parametrize("step", CRAWL_END)
def test_a_recrawl_killed_at_its_end(serve: Serve, data: Data, step: str) -> None:
    routes = english("alpaca", "bison", "camel")
    site = serve(routes)
    assert data.run("crawl", site.url("/")).returncode == 0
    committed = data.agreed()
    assert committed == urls(site, routes)

    # The site moves on: a page gone, a page changed, a page new.
    routes["/"] = html_page(
        "Home", '<a href="/alpaca">a</a><a href="/bison">b</a><a href="/dingo">d</a>'
    )
    del routes["/camel"]
    routes["/bison"] = html_page("Bison", "<p>the bison swims</p>")
    routes["/dingo"] = html_page("Dingo", "<p>the dingo runs</p>")
    killed = data.run("crawl", site.url("/"), step=step)
    assert killed.returncode == KILLED, killed.stderr

    again = data.run("crawl", site.url("/"))

    assert again.returncode == 0, again.stderr
    assert "complete (resumes crawl" in again.stdout, again.stdout
    assert data.agreed() == urls(site, routes)  # the gone page pruned, nothing else lost
    found = data.run("search", "swims", "--json")
    assert site.url("/bison") in found.stdout


def test_a_first_crawl_killed_before_its_commit(serve: Serve, data: Data) -> None:
    routes = english("alpaca", "bison")
    site = serve(routes)
    killed = data.run("crawl", site.url("/"), step="crawl_end.before_index_commit")
    assert killed.returncode == KILLED, killed.stderr

    again = data.run("crawl", site.url("/"))

    assert again.returncode == 0, again.stderr
    assert data.agreed() == urls(site, routes)


def test_sitemap_dates_of_pages_saved_first_survive_a_kill(serve: Serve, data: Data) -> None:
    # The sitemap answers after the pages are saved: their dates are written to the
    # store then, and their documents made from the store when the run that finishes
    # ends, so store, index and the date sort agree.
    days = {"/alpaca": "2022-01-01", "/bison": "2022-01-02", "/camel": "2022-01-03"}
    routes = english(*(p[1:] for p in days))
    site = serve(routes)
    urlset = "".join(
        f"<url><loc>{site.base}{p}</loc><lastmod>{d}</lastmod></url>" for p, d in days.items()
    )
    routes["/sitemap.xml"] = Route(
        f"<urlset>{urlset}</urlset>".encode(),
        headers={"Content-Type": "application/xml"},
        delay=1.0,
    )
    killed = data.run("crawl", site.url("/"), step="crawl_end.before_index_commit")
    assert killed.returncode == KILLED, killed.stderr

    again = data.run("crawl", site.url("/"))

    assert again.returncode == 0, again.stderr
    assert data.agreed() == urls(site, routes) - {site.url("/sitemap.xml")}
    found = json.loads(data.run("search", "grazes", "--sort", "date", "--json").stdout)
    assert [(h["url"], (h["modified"] or "")[:10]) for h in found["results"]] == [
        (site.url(p), d) for p, d in reversed(days.items())
    ]


def test_sitemap_dates_held_in_a_write_batch_survive_a_kill(serve: Serve, data: Data) -> None:
    # The pages are saved and committed, then the sitemap dates them and admits a page
    # no link reaches, in a write batch the kill loses. The run that resumes has no
    # page left to fetch: it must still read the sitemap again, or the dates and the
    # page are lost for good.
    days = {"/alpaca": "2022-01-01", "/bison": "2022-01-02", "/camel": "2022-01-03"}
    routes = english(*(p[1:] for p in days))
    site = serve(routes)
    routes["/dingo"] = html_page("Dingo", "<p>the dingo runs</p>")
    urlset = "".join(
        f"<url><loc>{site.base}{p}</loc><lastmod>{d}</lastmod></url>" for p, d in days.items()
    )
    urlset += f"<url><loc>{site.base}/dingo</loc></url>"
    routes["/sitemap.xml"] = Route(
        f"<urlset>{urlset}</urlset>".encode(),
        headers={"Content-Type": "application/xml"},
        delay=1.5,  # past the write batch's 0.5 s: the pages are committed first
    )
    killed = data.run("crawl", site.url("/"), step="sitemap.after_redate")
    assert killed.returncode == KILLED, killed.stderr

    again = data.run("crawl", site.url("/"))

    assert again.returncode == 0, again.stderr
    assert data.agreed() == urls(site, routes) - {site.url("/sitemap.xml")}
    found = json.loads(data.run("search", "grazes", "--sort", "date", "--json").stdout)
    assert [(h["url"], (h["modified"] or "")[:10]) for h in found["results"]] == [
        (site.url(p), d) for p, d in reversed(days.items())
    ]
    store = data.open()
    try:
        stored = {p: store.page(site.url(p)) for p in days}
    finally:
        store.close()
    marks = {p: (r.modified_source, r.in_sitemap) for p, r in stored.items() if r}
    assert marks == dict.fromkeys(days, ("sitemap", True))


def test_a_redirected_start_urls_sitemaps_survive_a_kill(serve: Serve, data: Data) -> None:
    # The start URL sends the crawl on to another origin of the site (a bare domain to
    # its www host), whose sitemap dates the pages and admits one no link reaches. As
    # above, the kill loses what the sitemap gave; the run that resumes has no page of
    # either origin left to fetch, and reads again the sitemaps of its start URL's
    # origin: the target's must be read again too.
    days = {"/alpaca": "2022-01-01", "/bison": "2022-01-02", "/camel": "2022-01-03"}
    routes = english(*(p[1:] for p in days))
    www = serve(routes)
    routes["/dingo"] = html_page("Dingo", "<p>the dingo runs</p>")
    base = "http://www.trawl-test.org"
    urlset = "".join(
        f"<url><loc>{base}{p}</loc><lastmod>{d}</lastmod></url>" for p, d in days.items()
    )
    urlset += f"<url><loc>{base}/dingo</loc></url>"
    routes["/sitemap.xml"] = Route(
        f"<urlset>{urlset}</urlset>".encode(),
        headers={"Content-Type": "application/xml"},
        delay=1.5,  # past the write batch's 0.5 s: the pages are committed first
    )
    bare = serve({"/": Route(b"", 301, headers={"Location": base + "/"})})
    aliases = f"trawl-test.org={bare.host}:{bare.port},www.trawl-test.org={www.host}:{www.port}"
    flags = ("--scope", "site", "--alias", aliases)
    killed = data.run("crawl", "http://trawl-test.org/", *flags, step="sitemap.after_redate")
    assert killed.returncode == KILLED, killed.stderr

    again = data.run("crawl", "http://trawl-test.org/", *flags)

    assert again.returncode == 0, again.stderr
    pages = {base + p for p in ("/", *days, "/dingo")}
    assert data.agreed() == pages
    found = json.loads(data.run("search", "grazes", "--sort", "date", "--json").stdout)
    assert [(h["url"], (h["modified"] or "")[:10]) for h in found["results"]] == [
        (base + p, d) for p, d in reversed(days.items())
    ]


def two_sites(serve: Serve, data: Data) -> tuple[SiteServer, SiteServer]:
    en = serve(english("alpaca", "bison"))
    de = serve(german(), host="127.0.0.2")
    crawled = data.run("crawl", en.url("/"), de.url("/"))
    assert crawled.returncode == 0, crawled.stderr
    assert data.agreed() == urls(en, en.routes) | urls(de, de.routes)
    return en, de


def test_evict_killed_after_its_index_commit(serve: Serve, data: Data) -> None:
    en, de = two_sites(serve, data)  # TRAWL_EVICT_LANGUAGES=en: the German host goes

    killed = data.run("evict", step="evict.after_index_commit")
    assert killed.returncode == KILLED, killed.stderr
    again = data.run("evict")

    assert again.returncode == 0, again.stderr
    assert data.agreed() == urls(en, en.routes)
    store = data.open()
    try:
        assert all(store.page(u) is None for u in urls(de, de.routes))
    finally:
        store.close()


DELETE_SITE = """
import sys
from trawl import settings
from trawl.server.api_admin import delete_site
from trawl.server.context import Context
print(delete_site(Context(settings.load()), sys.argv[1]))
"""


def test_site_delete_killed_after_its_index_commit(serve: Serve, data: Data) -> None:
    en, de = two_sites(serve, data)
    host = de.base.split("://")[1]

    killed = data.python("-c", DELETE_SITE, host, step="site_delete.after_index_commit")
    assert killed.returncode == KILLED, killed.stderr
    again = data.python("-c", DELETE_SITE, host)

    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "2"
    assert data.agreed() == urls(en, en.routes)


@pytest.mark.parametrize("step", ["index_rebuild.before_commit", "index_rebuild.after_commit"])
def test_an_index_rebuild_killed_at_its_commit(serve: Serve, data: Data, step: str) -> None:
    en, de = two_sites(serve, data)

    killed = data.run("index", step=step)
    assert killed.returncode == KILLED, killed.stderr
    assert data.agreed() == urls(en, en.routes) | urls(de, de.routes)  # old or new: whole
    again = data.run("index")

    assert again.returncode == 0, again.stderr
    assert data.agreed() == urls(en, en.routes) | urls(de, de.routes)


def test_a_crawl_killed_before_its_embedded_mark_is_resumed_embedded(
    serve: Serve, data: Data
) -> None:
    """Killed between its crawl-log row and its mark: the run that resumes it is still
    an embedded crawl, which no worker may join."""
    site = serve(english("alpaca", "bison"))
    killed = data.run("crawl", site.url("/"), step="crawl.after_begin")
    assert killed.returncode == KILLED, killed.stderr
    resumed = data.run("crawl", site.url("/"), step="crawl_end.before_index_commit")
    assert resumed.returncode == KILLED, resumed.stderr

    store = data.open()
    try:
        running = store.crawls(limit=1)[0]
        assert running.resumed_from is not None
        assert is_embedded(store, running.id)
    finally:
        store.close()
    again = data.run("crawl", site.url("/"))
    assert again.returncode == 0, again.stderr
    assert data.agreed() == urls(site, site.routes)


def big_pages(count: int) -> dict[str, Route]:
    """Pages of about 60 KB of distinct words: a few fill a small file size limit."""
    rng = random.Random(count)
    routes = {"/": html_page("Home", "".join(f'<a href="/b{i}">b</a>' for i in range(count)))}
    for i in range(count):
        words = " ".join(f"w{rng.randrange(10**6)}" for _ in range(8000))
        routes[f"/b{i}"] = html_page(f"Big {i}", f"<p>{words}</p>")
    return routes


@pytest.mark.parametrize("room", [200_000, 1_000_000, 3_000_000])
def test_a_crawl_out_of_disk_stops_clearly_and_loses_nothing(
    serve: Serve, tmp_path: Path, room: int
) -> None:
    """A full disk is not one page's fault: the crawl stops at once with one clear error
    (no traceback, no page after page failing), and given room the same command
    finishes with every page stored and indexed."""
    data = Data(tmp_path / "data", str(tmp_path / "data" / "trawl.sqlite"))
    site = serve(big_pages(30))

    full = data.run("crawl", site.url("/"), max_file=room)

    assert full.returncode == 3, full.stderr  # ExitCode.NO_DATA: the store or the index
    assert "disk is full" in full.stderr, full.stderr
    assert "Traceback" not in full.stderr, full.stderr
    assert full.stderr.count("\n") < 5, full.stderr  # one error, not one per page
    again = data.run("crawl", site.url("/"))
    assert again.returncode == 0, again.stderr
    assert data.agreed() == urls(site, site.routes)


def linking_pages(count: int) -> dict[str, Route]:
    """Short pages, each with 1,500 links off the site (never fetched): the store's
    writes (the links) are large, the index's documents small."""
    routes = {"/": html_page("Home", "".join(f'<a href="/l{i}">l</a>' for i in range(count)))}
    for i in range(count):
        away = "".join(f'<a href="http://away.invalid/{i}/{j}">x</a>' for j in range(1500))
        routes[f"/l{i}"] = html_page(f"Linking {i}", f"<p>the page {i} links away</p>{away}")
    return routes


@pytest.mark.parametrize("room", [1_000_000, 3_000_000])
def test_a_write_batch_lost_to_a_full_disk_leaves_nothing_indexed_ahead(
    serve: Serve, tmp_path: Path, room: int
) -> None:
    """Pages indexed as fetched (live) whose write batch then fails to commit (a full
    disk rolls it back): the index must not commit them as the crawl stops, or it
    holds pages the store lost. Store and index agree before any other run."""
    data = Data(tmp_path / "data", str(tmp_path / "data" / "trawl.sqlite"))
    data.live_index_after = "0"
    site = serve(linking_pages(30))

    full = data.run("crawl", site.url("/"), max_file=room)

    assert full.returncode == 3, full.stderr
    assert "disk is full" in full.stderr, full.stderr
    store = data.open()
    try:
        drift = full_check(store, IndexReader(data.folder / "index"))
    finally:
        store.close()
    # Store ahead of the index (pages saved, not yet indexed) is what a kill leaves and
    # the same command mends; the index ahead of the store is not.
    assert not drift.extra, drift.summary() + f" {drift.samples}"
    again = data.run("crawl", site.url("/"))
    assert again.returncode == 0, again.stderr
    assert data.agreed() == urls(site, site.routes)


# A crawl that a bug (not the store) stops while its write batch is open, as the disk
# fills: the batch's last commit fails and is rolled back, and the bug is raised.
CRAWL_FAILING = """
import asyncio, resource, sys
from trawl import settings
from trawl.pipeline.crawl_run import crawl
from trawl.store import open_store

room = int(sys.argv[2])

def progress(stats):
    if stats.ok >= 3:
        resource.setrlimit(resource.RLIMIT_FSIZE, (room, room))
        raise RuntimeError("a bug past the page boundary")

chosen = settings.load()
asyncio.run(crawl([sys.argv[1]], chosen, open_store(chosen), on_progress=progress))
"""


def test_a_write_batch_lost_under_another_error_leaves_nothing_indexed_ahead(
    serve: Serve, tmp_path: Path
) -> None:
    """As above, but the crawl stops for an error of its own (a bug) and the batch's
    final commit then fails: the lost batch must roll the index back as well. The
    room: less than a page's links in the store, more than a few pages' index files."""
    room = 100_000
    data = Data(tmp_path / "data", str(tmp_path / "data" / "trawl.sqlite"))
    data.live_index_after = "0"
    site = serve(linking_pages(30))

    failed = data.python("-c", CRAWL_FAILING, site.url("/"), str(room))

    assert failed.returncode == 1, failed.stderr
    store = data.open()
    try:
        drift = full_check(store, IndexReader(data.folder / "index"))
    finally:
        store.close()
    assert not drift.extra, drift.summary() + f" {drift.samples}" + failed.stderr[-3000:]
    assert "disk is full" in failed.stderr, failed.stderr  # the loss is what is said
    again = data.run("crawl", site.url("/"))
    assert again.returncode == 0, again.stderr
    assert data.agreed() == urls(site, site.routes)


def test_check_repair_closes_a_run_whose_process_died(serve: Serve, data: Data) -> None:
    """A run killed with no crawl after it stayed `running` for good (and /healthz,
    seeing a crawl at work, never compared store and index again): `trawl check
    --repair`, holding the crawl lock, marks it interrupted, and it still resumes."""
    site = serve(english("alpaca", "bison"))
    killed = data.run("crawl", site.url("/"), step="crawl_end.before_index_commit")
    assert killed.returncode == KILLED, killed.stderr

    repaired = data.run("check", "--repair")

    assert repaired.returncode == 0, repaired.stderr
    assert "1 crawls left running by a process that died" in repaired.stdout
    store = data.open()
    try:
        assert store.crawls(limit=1)[0].outcome == "interrupted"
    finally:
        store.close()
    again = data.run("crawl", site.url("/"))
    assert again.returncode == 0, again.stderr
    assert "complete (resumes crawl" in again.stdout, again.stdout
    assert data.agreed() == urls(site, site.routes)


def test_a_repair_killed_leaves_the_crawl_lock_free_at_once(serve: Serve, data: Data) -> None:
    """The stage pool's workers outlive a kill -9 by up to a second: forked while the
    index writer was open, they held its lock, and the next command was refused."""
    site = serve(english("alpaca", "bison", "camel"))
    assert data.run("crawl", site.url("/")).returncode == 0
    shutil.rmtree(data.folder / "index")  # drift for the repair to mend
    data.workers = "2"

    # Waited for alone: reading its output to the end would wait for the workers too.
    killed = subprocess.Popen(
        [sys.executable, "-m", "trawl", "check", "--repair"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=data.env("repair.before_commit"),
    )

    assert killed.wait(timeout=180) == KILLED
    IndexWriter(data.folder / "index").close()  # not "being written by another process"


class CountingStore(SQLiteStore):
    """The SQLite store, counting its page reads."""

    reads = 0

    def page(self, url: str) -> PageRecord | None:
        self.reads += 1
        return super().page(url)


async def test_a_resumed_run_reads_only_the_pages_its_predecessor_fetched(
    serve: Serve, tmp_path: Path
) -> None:
    """A run that resumes one which skipped many URLs (a parked host, robots.txt) read
    each of them from the store at its end, then deleted it from the index: a
    PostgreSQL resume of 200,000 skipped URLs passed 4 minutes (bench/kill_anywhere.py)."""
    site = serve(english("alpaca"))
    settings = Settings(data=tmp_path / "data", delay=0.0, parse_workers=0)
    settings.data.mkdir()
    store = CountingStore(settings.sqlite_path)
    try:
        stopped = store.begin_crawl([site.url("/")])
        skipped = [CrawlUrl(site.url(f"/x{i}"), 1) for i in range(2000)]
        store.frontier_add(stopped, [CrawlUrl(site.url("/"), 0), *skipped])
        for item in skipped:
            store.frontier_skip(stopped, item.url, Skip(SkipKind.PARKED, "gone"))
        store.finish_crawl(stopped, pages_ok=0, pages_failed=0, outcome=Outcome.STOPPED)

        outcome = await crawl([site.url("/")], settings, store)

        assert outcome.resumed_from == stopped
        assert outcome.indexed == 2
        assert store.reads < 100, store.reads
    finally:
        store.close()


def test_a_crawl_killed_mid_write_batch_loses_nothing_it_counted(serve: Serve, data: Data) -> None:
    """SQLite commits a crawl's writes in batches: killed with writes held and not yet
    committed, the store keeps no frontier entry marked fetched without its page, and
    the same command fetches again what the batch held: then store and index agree."""
    routes = english("alpaca", "bison", "camel", "dingo", "emu", "ferret")
    site = serve(routes)
    killed = data.run("crawl", site.url("/"), step="store.mid_write_batch")
    if data.store.startswith("postgresql://"):
        # PostgreSQL commits each write (in threads, off the loop): no batch to kill.
        assert killed.returncode == 0, killed.stderr
    else:
        assert killed.returncode == KILLED, killed.stderr
        store = data.open()
        try:
            crawl_id = store.crawls(limit=1)[0].id
            fetched = store.frontier_fetched(crawl_id)
            assert all(store.page(u) is not None for u in fetched), fetched
            # ... and no fetched page's link missing from the frontier
            known = {*store.frontier_finished(crawl_id)}
            known |= {i.url for i in store.frontier_pending(crawl_id)}
            linked = {link.url for u in fetched for link in store.links_from(u)}
            assert linked <= known, linked - known
            assert len(fetched) < len(routes)  # the kill did take a batch with it
        finally:
            store.close()

    again = data.run("crawl", site.url("/"))

    assert again.returncode == 0, again.stderr
    assert data.agreed() == urls(site, routes)


def test_a_crawl_killed_after_a_page_save_keeps_its_links(serve: Serve, data: Data) -> None:
    """Killed once the first page's save returned: its links are in the store's frontier
    with it (one transaction) or it is not fetched; the same command then fetches every
    page. On PostgreSQL the links were admitted in a commit of their own, after the
    page's: the resume knew the home page fetched, never its links, and lost the site."""
    routes = english("alpaca", "bison", "camel")
    site = serve(routes)
    killed = data.run("crawl", site.url("/"), step="page.after_save")
    assert killed.returncode == KILLED, killed.stderr
    store = data.open()
    try:
        crawl_id = store.crawls(limit=1)[0].id
        fetched = store.frontier_fetched(crawl_id)
        known = {*store.frontier_finished(crawl_id)}
        known |= {i.url for i in store.frontier_pending(crawl_id)}
        linked = {link.url for u in fetched for link in store.links_from(u)}
        assert linked <= known, linked - known
    finally:
        store.close()

    again = data.run("crawl", site.url("/"))

    assert again.returncode == 0, again.stderr
    assert data.agreed() == urls(site, routes)
