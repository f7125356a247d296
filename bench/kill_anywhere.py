"""kill -9 at instants nobody chose: real `trawl` commands against a loopback site,
each sent SIGKILL after a random delay, then run again; the store and the index
must agree and hold what the site holds.

    .venv/bin/python bench/kill_anywhere.py [--trials 20] [--scenario NAME ...] [--seed 1]
        [--sweep MS]

Scenarios (each keeps one data folder across its trials, so a trial starts from
whatever the last kill and resume left, as a real installation would):

- ``crawl``: `trawl crawl` (SQLite) of a site that changes between trials (a page
  gone, one changed, one new), killed anywhere from start-up to the end step's commit;
- ``crawl-pg``: the same on PostgreSQL;
- ``index``: `trawl index`, killed; ``evict`` and ``delete``: a second (German) site
  crawled, then evicted or deleted, killed;
- ``workers``: two `trawl worker`s on PostgreSQL, one (or both) killed, the killed
  one started again; short leases, so a dead worker's leases are taken over;
- ``migrate``: `trawl crawl` on a store at schema version 12, killed while it migrates;
- ``upgrade``: a folder an older Trawl (its code, at OLD_COMMIT) crawled and was killed
  in, then this Trawl's `trawl crawl`, killed (while it migrates too);
- ``serve``: `trawl serve` killed while the crawl it started runs;
- ``serve-read``: `trawl serve` answering searches while a `trawl crawl` of its folder
  is killed and run again: every answer whole, the server alive, the new commit seen;
- ``vectors``: `trawl crawl` with the ``semantic`` setting (its end writes the
  vectors file), killed; then two processes refresh the vectors at once.

The site's sitemap dates every page and lists one no link reaches: after each trial
every page has its sitemap date and mark, and each index document says what its page
in the store says (title, date: no stale version).
``--sweep MS`` kills at every MS ms through the command instead of at random.

After each trial: the command run again exits 0; `trawl check` exits 0; every
searchable page is indexed once and nothing else is; no run is left `running`;
the searchable pages are the site's. The delay is uniform over 1.2 times a clean
run of the command (measured first), so every step is reached.
A failing trial keeps its data folder and prints what the commands said.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT / "tests"))

from fixture_sites import Route, SiteServer, html_page  # noqa: E402
from trawl.index.tantivy_index import IndexReader  # noqa: E402
from trawl.pipeline.integrity import full_check  # noqa: E402
from trawl.store.base import Store  # noqa: E402
from trawl.store.postgres import PostgresStore  # noqa: E402
from trawl.store.schema import MIGRATIONS, postgres_migration  # noqa: E402
from trawl.store.sqlite import SQLiteStore  # noqa: E402

TIMEOUT = 240.0
CHECK_EVERY = 3


SITEMAP_ONLY = "/listed"  # a page no link reaches: only the sitemap admits it
SITEMAP_DELAY = 2.5  # seconds: the pages are fetched meanwhile


def english_site(pages: int, version: int, base: str) -> dict[str, Route]:
    """``pages`` pages linked from home; version ``v`` drops page v % pages, changes one
    and adds one, so every recrawl prunes, updates and adds. A sitemap lists them all,
    with a date of each version's own, and one page no link reaches: the dates and
    that page are what a sitemap read adds (its writes in a batch a kill can lose)."""
    names = [f"p{i}" for i in range(pages) if i != version % pages] + [f"new{version}"]
    home = "".join(f'<a href="/{n}">{n}</a> ' for n in names)
    routes = {"/": html_page("Home", home)}
    for n in [*names, SITEMAP_ONLY[1:]]:
        words = f"the {n} animal grazes on the hill" + (
            f" changed in version {version}" if n == f"p{(version + 1) % pages}" else ""
        )
        routes[f"/{n}"] = html_page(n.title(), f"<p>{words}</p>" * 20)
    for path, route in routes.items():
        route.etag = f'"{path}-{version}-{hash(route.body) & 0xFFFF}"'
    routes["/sitemap.xml"] = Route(
        (
            "<urlset>"
            + "".join(
                f"<url><loc>{base}{path}</loc><lastmod>{day}</lastmod></url>"
                for path, day in sitemap_days(routes, version).items()
            )
            + "</urlset>"
        ).encode(),
        headers={"Content-Type": "application/xml"},
        # Late: it dates pages saved already, then admits one more, near the end.
        delay=SITEMAP_DELAY,
    )
    return routes


def sitemap_days(routes: dict[str, Route], version: int) -> dict[str, str]:
    """The date the sitemap gives each page: distinct, so the dates are believed."""
    paths = sorted(p for p in routes if p != "/sitemap.xml")
    first = date(2020, 1, 1) + timedelta(days=version)
    return {p: (first + timedelta(days=3 * i)).isoformat() for i, p in enumerate(paths)}


def german_site() -> dict[str, Route]:
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


@dataclass
class Result:
    trials: int = 0
    killed: int = 0  # the kill landed before the command ended by itself
    failures: list[str] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)


class Data:
    def __init__(self, folder: Path, store: str, extra: dict[str, str] | None = None) -> None:
        self.folder = folder
        self.store = store
        self.extra = extra or {}
        self.log: list[str] = []
        self.span = 0.0  # seconds the command under attack takes, unkilled
        self.checks = 0

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRAWL_")}
        return env | {
            "TRAWL_DATA": str(self.folder),
            "TRAWL_STORE": self.store,
            "TRAWL_DELAY": "0",
            "TRAWL_PARSE_WORKERS": "1",
            "TRAWL_LIVE_INDEX_AFTER": "10",  # live indexing and its commits are reached too
            "TRAWL_EVICT_LANGUAGES": "en",
            "TRAWL_EVICT_MIN_QUALITY": "0",
            "TRAWL_RESOURCE_CHECKS": "0",
            **self.extra,
        }

    def start(self, args: list[str]) -> subprocess.Popen[str]:
        return subprocess.Popen(
            args if args[0] == sys.executable else [sys.executable, "-m", "trawl", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env(),
            start_new_session=True,
        )

    def run(self, args: list[str]) -> subprocess.CompletedProcess[str]:
        process = self.start(args)
        try:
            out, err = process.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
            err += "\n[harness: timed out]"
        self.log.append(f"$ {' '.join(args)} -> {process.returncode}\n{out[-2000:]}{err[-4000:]}")
        return subprocess.CompletedProcess(args, process.returncode, out, err)

    def killed(self, args: list[str], delay: float | None) -> bool:
        """Run ``args``, SIGKILL its main process after ``delay`` s; True when the kill
        landed. Its helpers (the stage pool) must then leave by themselves. With no
        ``delay``, the command runs to its end and ``span`` says how long it took."""
        if delay is None:
            started = time.monotonic()
            done = self.run(args)
            self.span = max(self.span, time.monotonic() - started)
            ok(done, " ".join(args))
            return False
        process = self.start(args)
        try:
            process.wait(timeout=delay)
            landed = False
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            landed = True
        _, err = process.communicate()
        self.log.append(f"$ {' '.join(args)} killed at {delay:.2f}s: {landed}\n{err[-2000:]}")
        if landed:
            self.wait_group(process.pid)
        return landed

    def wait_group(self, pgid: int) -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)
        os.killpg(pgid, signal.SIGKILL)
        raise AssertionError("a child of the killed command outlived it by 10 s")

    def after_kill(self, words: str) -> None:
        """What a kill leaves is read as it is, before anything mends it: a search
        answers, and `trawl check` reports (store and index may differ until the same
        command runs again: exit 1), never a crash. Every CHECK_EVERY trials: slow."""
        if self.checks % CHECK_EVERY != 1:
            return
        found = self.run(["search", words, "--json"])
        ok(found, "a search after the kill")
        checked = self.run(["check"])
        said = checked.stdout + checked.stderr
        assert checked.returncode in (0, 1) and "Traceback" not in said, f"trawl check: {said}"

    def open(self) -> Store:
        if self.store.startswith("postgresql://"):
            return PostgresStore(self.store, max_connections=2)
        return SQLiteStore(Path(self.store))

    def verify(
        self,
        expected: set[str] | None,
        *,
        exclude: set[str] = frozenset(),  # type: ignore[assignment]
        days: dict[str, str] | None = None,
    ) -> None:
        """Store and index agree, page by page; ``expected`` are the searchable pages
        (but ``exclude``), ``days`` the date each must have from the sitemap."""
        self.checks += 1
        if self.checks % CHECK_EVERY == 1:  # the command itself, now and then: slow to start
            checked = self.run(["check"])
            assert checked.returncode == 0, f"trawl check: {checked.stdout}{checked.stderr}"
        store = self.open()
        try:
            reader = IndexReader(self.folder / "index")
            drift = full_check(store, reader)
            stored = {u for u, must in store.searchable_urls() if must}
            running = [r.id for r in store.crawls(limit=10_000) if r.outcome == "running"]
            records = {u: store.page(u) for u in stored}
        finally:
            store.close()
        assert drift.agrees, f"store and index differ: {drift.summary()} {drift.samples}"
        assert not running, f"runs left running: {running}"
        # No stale version: each document says what its page in the store says.
        stale = []
        for hit in reader.pages():
            page = records.get(hit.url)
            if page is not None and (hit.title, hit.modified, hit.modified_source) != (
                page.title,
                _utc(page.modified),
                page.modified_source,
            ):
                stale.append((hit.url, hit.title, hit.modified, page.title, page.modified))
        assert not stale, f"documents older than their pages: {stale[:3]}"
        if expected is not None:
            got = stored - exclude
            lost, more = sorted(expected - got), sorted(got - expected)
            assert got == expected, f"missing {lost} extra {more}"
        if days is not None:
            wrong = {
                url: (page.modified, page.modified_source, page.in_sitemap)
                for url, page in records.items()
                if url in days
                and page is not None
                and (
                    page.modified is None
                    or page.modified.date().isoformat() != days[url]
                    or page.modified_source != "sitemap"
                    or not page.in_sitemap
                )
            }
            assert not wrong, f"sitemap dates or marks lost: {sorted(wrong.items())[:3]}"


def _utc(moment: datetime | None) -> datetime | None:
    return moment.replace(tzinfo=UTC) if moment and moment.tzinfo is None else moment


Scenario = Callable[[Data, random.Random, float | None], bool]


class Sites:
    def __init__(self, pages: int) -> None:
        self.version = 0
        self.pages = pages
        self.en = SiteServer({}).__enter__()
        self.en.routes = english_site(pages, 0, self.en.base)
        self.de = SiteServer(german_site(), host="127.0.0.2").__enter__()

    def bump(self) -> None:
        self.version += 1
        self.en.routes = english_site(self.pages, self.version, self.en.base)

    def en_urls(self) -> set[str]:
        return {self.en.url(p) for p in self.en.routes if p != "/sitemap.xml"}

    def en_days(self) -> dict[str, str]:
        """URL -> the date the sitemap gives it, now."""
        days = sitemap_days(self.en.routes, self.version)
        return {self.en.url(p): day for p, day in days.items()}

    def de_urls(self) -> set[str]:
        return {self.de.url(p) for p in self.de.routes}


def ok(done: subprocess.CompletedProcess[str], what: str) -> None:
    said = done.stdout[-800:] + done.stderr[-3000:]
    assert done.returncode == 0, f"{what} exited {done.returncode}: {said}"


def crawl_trial(sites: Sites) -> Scenario:
    def trial(data: Data, rng: random.Random, delay: float | None) -> bool:
        sites.bump()
        args = ["crawl", sites.en.url("/")]
        landed = data.killed(args, delay)
        if landed:
            data.after_kill("grazes")
        if delay is not None:
            if landed and rng.random() < 0.25:  # killed again while resuming
                data.killed(args, rng.uniform(0, delay))
            ok(data.run(args), "the crawl run again")
        data.verify(sites.en_urls(), exclude=sites.de_urls(), days=sites.en_days())
        return landed

    return trial


def index_trial(sites: Sites) -> Scenario:
    def trial(data: Data, rng: random.Random, delay: float | None) -> bool:
        if not data.folder.exists():
            ok(data.run(["crawl", sites.en.url("/")]), "the first crawl")
        landed = data.killed(["index"], delay)
        if landed:
            data.after_kill("grazes")
        if delay is not None and (rng.random() < 0.5 or not landed):
            ok(data.run(["index"]), "trawl index again")
        data.verify(sites.en_urls(), days=sites.en_days())
        return landed

    return trial


DELETE_SITE = """
import sys
from trawl import settings
from trawl.server.api_admin import delete_site
from trawl.server.context import Context
print(delete_site(Context(settings.load()), sys.argv[1]))
"""


def removal_trial(sites: Sites, how: str) -> Scenario:
    def trial(data: Data, rng: random.Random, delay: float | None) -> bool:
        if not data.folder.exists():
            ok(data.run(["crawl", sites.en.url("/")]), "the first crawl")
        ok(data.run(["crawl", sites.de.url("/")]), "the German crawl")
        host = sites.de.base.split("://")[1]
        args = ["evict"] if how == "evict" else [sys.executable, "-c", DELETE_SITE, host]
        landed = data.killed(args, delay)
        if delay is not None:
            again = data.run(args)
            if how != "delete" or "NotFound: no site" not in again.stderr:  # done already
                ok(again, f"{how} again")
        data.verify(sites.en_urls(), days=sites.en_days())
        return landed

    return trial


def old_store(path: Path, start: str) -> None:
    """A store at schema version 12 holding a stopped crawl of ``start`` with many rows,
    so that migrating it takes a while."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    for version in range(1, 13):
        db.execute("BEGIN")
        for statement in MIGRATIONS[version - 1].split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute("INSERT INTO schema_version VALUES (?)", (version,))
        db.execute("COMMIT")
    host = start.split("://")[1].rstrip("/")
    db.execute("BEGIN")
    db.execute(
        "INSERT INTO crawls (started_at, finished_at, start_urls, outcome)"
        " VALUES (1.0, 2.0, ?, 'stopped')",
        (json.dumps([start]),),
    )
    db.execute(
        "INSERT INTO frontier (crawl_id, url, depth, source, host, state, reason)"
        " VALUES (1, ?, 0, NULL, ?, 'queued', NULL)",
        (start, host),
    )
    db.executemany(
        "INSERT INTO frontier (crawl_id, url, depth, source, host, state, reason)"
        " VALUES (1, ?, 1, NULL, ?, 'skipped', ?)",
        (
            (f"{start}x{i}", host, "host parked: 9 failures in a row, the last HTTP 502")
            for i in range(200_000)
        ),
    )
    db.execute("COMMIT")
    db.close()


def old_postgres(url: str, start: str) -> None:
    """old_store's rows in a PostgreSQL database at schema version 12."""
    import psycopg  # noqa: PLC0415

    _reset_postgres(url)
    host = start.split("://")[1].rstrip("/")
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        for version in range(1, 13):
            db.execute(postgres_migration(version).encode())
            db.execute("INSERT INTO schema_version VALUES (%s)", (version,))
        db.execute(
            "INSERT INTO crawls (started_at, finished_at, start_urls, outcome)"
            " VALUES (1.0, 2.0, %s, 'stopped')",
            (json.dumps([start]),),
        )
        db.execute(
            "INSERT INTO frontier (crawl_id, url, depth, source, host, state, reason)"
            " SELECT 1, %s || 'x' || i, 1, NULL, %s, 'skipped', %s"
            " FROM generate_series(1, 200000) AS i",
            (start, host, "host parked: 9 failures in a row, the last HTTP 502"),
        )
        db.execute(
            "INSERT INTO frontier (crawl_id, url, depth, source, host, state, reason)"
            " VALUES (1, %s, 0, NULL, %s, 'queued', NULL)",
            (start, host),
        )


def migrate_trial(sites: Sites) -> Scenario:
    def trial(data: Data, rng: random.Random, delay: float | None) -> bool:
        shutil.rmtree(data.folder, ignore_errors=True)
        if data.store.startswith("postgresql://"):
            old_postgres(data.store, sites.en.url("/"))
        else:
            old_store(Path(data.store), sites.en.url("/"))
        args = ["crawl", sites.en.url("/")]
        landed = data.killed(args, delay)
        if delay is not None:
            ok(data.run(args), "the crawl after a killed migration")
        data.verify(sites.en_urls(), days=sites.en_days())
        return landed

    return trial


# The last main commit whose store is at schema version 12 (before skip kinds and
# crawl marks, 13): its folders hold what 13 rewrites (reasons by prefix, marker rows).
OLD_COMMIT = "4d9652d"
OLD_ROWS = 100_000  # parked URLs the old crawl left: migration 13 rewrites each


def old_code(commit: str, into: Path) -> Path:
    """The ``src`` folder of Trawl at ``commit`` (`git archive`), to run as PYTHONPATH."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, "src"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into / "src"


def upgrade_trial(sites: Sites, old_src: Path) -> Scenario:
    """A data folder an older Trawl made (its own code, `git archive`): one whole crawl,
    then one it was killed in (a run left `running`, its marker rows), and many parked
    URLs; then this Trawl's `trawl crawl` of the same site, killed anywhere (the
    migration on first open included), and run again. Migrated once, every page once,
    the old run's mark carried over, store and index agreeing."""
    snapshot: list[Path] = []

    def build(data: Data) -> Path:
        old = Data(data.folder, data.store, {**data.extra, "PYTHONPATH": str(old_src)})
        args = ["crawl", sites.en.url("/")]
        began = time.monotonic()
        ok(old.run(args), "the old Trawl's crawl")
        took = time.monotonic() - began
        for share in (0.5, 0.6, 0.7, 0.8):  # killed mid-crawl: a run left running
            sites.bump()
            if old.killed(args, took * share) and _left_running(Path(data.store)):
                break
        else:
            raise AssertionError("the old crawl was never killed mid-run")
        db = sqlite3.connect(data.store, isolation_level=None)
        host = sites.en.base.split("://")[1]
        db.execute("BEGIN")
        db.executemany(
            "INSERT INTO frontier (crawl_id, url, depth, source, host, state, reason)"
            " VALUES (1, ?, 1, NULL, ?, 'skipped', ?)",
            (
                (f"{sites.en.base}/gone{i}", host, "host parked: 9 failures, the last 502")
                for i in range(OLD_ROWS)
            ),
        )
        db.execute("COMMIT")
        db.close()
        kept = data.folder.with_name(data.folder.name + "-old")
        shutil.copytree(data.folder, kept)
        began = time.monotonic()
        SQLiteStore(Path(data.store)).close()  # the migration alone, on a copy
        print(f"upgrade: the migration takes {time.monotonic() - began:.1f} s", flush=True)
        return kept

    def trial(data: Data, rng: random.Random, delay: float | None) -> bool:
        if not snapshot:
            snapshot.append(build(data))
        shutil.rmtree(data.folder, ignore_errors=True)
        shutil.copytree(snapshot[0], data.folder)
        args = ["crawl", sites.en.url("/")]
        landed = data.killed(args, delay)
        if landed:
            data.after_kill("grazes")
        if delay is not None:
            ok(data.run(args), "the crawl after a killed upgrade")
        data.verify(sites.en_urls(), days=sites.en_days())
        db = sqlite3.connect(data.store)
        try:
            versions = [r[0] for r in db.execute("SELECT version FROM schema_version")]
            markers = db.execute("SELECT count(*) FROM frontier WHERE state = 'marker'")
            kinds = db.execute(
                "SELECT count(*) FROM frontier WHERE reason LIKE 'host parked: %'"
                " OR (state = 'skipped' AND kind IS NULL)"
            )
            marks = db.execute("SELECT count(*) FROM crawl_marks WHERE kind = 'embedded'")
            left = (markers.fetchone()[0], kinds.fetchone()[0], marks.fetchone()[0])
        finally:
            db.close()
        assert versions == list(range(1, len(MIGRATIONS) + 1)), f"versions {versions}"
        assert left[:2] == (0, 0), f"marker rows, old reasons left: {left}"
        assert left[2] >= 1, "the old crawl's embedded mark was lost"
        return landed

    return trial


def _left_running(store: Path) -> bool:
    db = sqlite3.connect(store)
    try:
        return bool(
            db.execute("SELECT count(*) FROM crawls WHERE outcome = 'running'").fetchone()[0]
        )
    finally:
        db.close()


def workers_trial(sites: Sites) -> Scenario:
    def trial(data: Data, rng: random.Random, delay: float | None) -> bool:
        sites.bump()
        start = sites.en.url("/")
        args = ["worker", start]
        began = time.monotonic()
        a, b = data.start(args), data.start(args)
        landed = False
        if delay is not None:
            time.sleep(delay)
            for victim in (a, b) if rng.random() < 0.3 else (a,):
                if victim.poll() is None:
                    os.kill(victim.pid, signal.SIGKILL)
                    landed = True
                    victim.communicate()
                    data.wait_group(victim.pid)
        if a.poll() is not None and a.returncode != 0:
            a = data.start(args)  # the killed worker's command, again
        for w in (a, b):
            out, err = w.communicate(timeout=TIMEOUT)
            data.log.append(f"worker -> {w.returncode}\n{out[-1000:]}{err[-3000:]}")
            if w.returncode not in (0, -signal.SIGKILL):
                raise AssertionError(f"a worker exited {w.returncode}: {err[-2000:]}")
        if delay is None:
            data.span = time.monotonic() - began
        if b.returncode != 0:
            ok(data.run(args), "a worker after both were killed")
        store = data.open()
        try:
            running = [r.id for r in store.crawls(limit=10_000) if r.outcome == "running"]
        finally:
            store.close()
        assert not running, f"runs left running after the workers: {running}"
        ok(data.run(["index"]), "trawl index after the workers")
        data.verify(sites.en_urls(), days=sites.en_days())
        return landed

    return trial


REFRESH = """
from trawl import settings
from trawl.pipeline.vectors import refresh_vectors
refresh_vectors(settings.load())
"""


def vectors_trial(sites: Sites) -> Scenario:
    """`trawl crawl` with the ``semantic`` setting, killed anywhere (its last step
    writes the vectors file); then two processes refresh the vectors at once, as a
    crawl's end and `trawl index` may. Each page ends with its vector, the file whole."""

    def trial(data: Data, rng: random.Random, delay: float | None) -> bool:
        sites.bump()
        args = ["crawl", sites.en.url("/")]
        landed = data.killed(args, delay)
        if delay is not None:
            ok(data.run(args), "the crawl run again")
            # Both embed every page, so their writes come at about the same time.
            (data.folder / "vectors.npz").unlink(missing_ok=True)
            both = [data.start([sys.executable, "-c", REFRESH]) for _ in range(2)]
            for process in both:
                _, err = process.communicate(timeout=TIMEOUT)
                assert process.returncode == 0, f"a vectors refresh failed: {err[-2000:]}"
        data.verify(sites.en_urls(), days=sites.en_days())
        from trawl.search.semantic import page_text, read_vectors, text_key  # noqa: PLC0415

        held = read_vectors(data.folder / "vectors.npz")
        pages = IndexReader(data.folder / "index").pages()
        keys = {text_key(page_text(hit.title, hit.text)) for hit in pages}
        assert set(held.keys) == keys, f"vectors for {len(held.keys)} pages of {len(keys)}"
        return landed

    return trial


API = "http://127.0.0.1:{port}"


def serve_trial(sites: Sites) -> Scenario:
    """`trawl serve` with a crawl it started (the admin API) killed mid-crawl; the next
    `trawl crawl` of the same site resumes and finishes it."""

    def trial(data: Data, rng: random.Random, delay: float | None) -> bool:
        sites.bump()
        port = _free_port()
        data.extra["TRAWL_ADMIN_ALLOW_HOSTS"] = sites.en.base.split("://")[1]
        key = _api_key(data)
        server = data.start(["serve", "--port", str(port)])
        landed = False
        try:
            _wait_listening(port)
            request = urllib.request.Request(
                API.format(port=port) + "/api/admin/crawls",
                data=json.dumps({"urls": [sites.en.url("/")]}).encode(),
                headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
                method="POST",
            )
            began = time.monotonic()
            with urllib.request.urlopen(request, timeout=30) as answer:
                answer.read()
            if delay is None:
                _wait_crawl_end(port, key)
                data.span = time.monotonic() - began
            else:
                time.sleep(delay)
                os.kill(server.pid, signal.SIGKILL)
                landed = True
        finally:
            if server.poll() is None:
                os.kill(server.pid, signal.SIGKILL)
            server.communicate()
            data.wait_group(server.pid)
        if landed:
            data.after_kill("grazes")
        ok(data.run(["crawl", sites.en.url("/")]), "the crawl after the server died")
        data.verify(sites.en_urls(), days=sites.en_days())
        return landed

    return trial


def serve_read_trial(sites: Sites) -> Scenario:
    """`trawl serve` answering searches throughout while a `trawl crawl` of the same
    folder is killed (mid-commit, at some instants) and run again: every answer is a
    200 holding each page once and only the site's pages, the server outlives the
    kill, and once the crawl is run again it answers from the new commit."""
    server: list[tuple[subprocess.Popen[str], int]] = []

    def trial(data: Data, rng: random.Random, delay: float | None) -> bool:
        import threading  # noqa: PLC0415

        if not server:
            data.extra["TRAWL_SEARCH_RATE_LIMIT"] = "100000/minute"
            ok(data.run(["crawl", sites.en.url("/")]), "the crawl before the server")
            port = _free_port()
            server.append((data.start(["serve", "--port", str(port)]), port))
            atexit.register(os.killpg, server[0][0].pid, signal.SIGKILL)
            _wait_listening(port)
        process, port = server[0]
        sites.bump()
        urls = sites.en_urls() | {sites.en.url(f"/p{i}") for i in range(sites.pages)}
        urls |= {sites.en.url(f"/new{v}") for v in range(sites.version + 1)}
        bad: list[str] = []
        answers: list[int] = []
        stop = threading.Event()

        def read() -> None:
            query = API.format(port=port) + "/api/search?q=grazes&per_page=100"
            while not stop.is_set():
                try:
                    with urllib.request.urlopen(query, timeout=30) as answer:
                        found = [r["url"] for r in json.loads(answer.read())["results"]]
                except Exception as e:  # any failure is the finding
                    bad.append(f"search failed: {e!r}")
                    return
                if len(found) != len(set(found)) or not set(found) <= urls:
                    bad.append(f"an answer with doubles or strangers: {sorted(found)}")
                answers.append(len(found))
                time.sleep(0.02)

        reader = threading.Thread(target=read)
        reader.start()
        try:
            args = ["crawl", sites.en.url("/")]
            landed = data.killed(args, delay)
            if delay is not None:
                ok(data.run(args), "the crawl run again")
            time.sleep(1.0)  # the server's reader sees the last commit
        finally:
            stop.set()
            reader.join(timeout=60)
        assert process.poll() is None, "the server died"
        assert not bad, bad[:3]
        assert answers, "no answer at all"
        final = json.loads(
            urllib.request.urlopen(
                API.format(port=port) + "/api/search?q=grazes&per_page=100", timeout=30
            ).read()
        )
        served = {r["url"] for r in final["results"]}
        want = sites.en_urls() - {sites.en.url("/")}
        assert served == want, f"the server's answer: missing {want - served} extra {served - want}"
        data.verify(sites.en_urls(), days=sites.en_days())
        return landed

    return trial


def _wait_crawl_end(port: int, key: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        request = urllib.request.Request(
            API.format(port=port) + "/api/admin/crawls/current", headers={"X-API-Key": key}
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            state = json.loads(answer.read())
        if not state.get("running", True):
            return
        time.sleep(0.2)
    raise AssertionError(f"the server's crawl never ended: {state}")


def _free_port() -> int:
    import socket  # noqa: PLC0415

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _api_key(data: Data) -> str:
    made = data.run(["keys", "create", "--name", f"k{time.monotonic_ns()}"])
    ok(made, "keys create")
    return made.stdout.strip().split()[-1]


def _wait_listening(port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(API.format(port=port) + "/healthz", timeout=5):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the server never listened")


def big_site(pages: int) -> dict[str, Route]:
    """Pages of about 40 KB of distinct words each: a few fill a small disk."""
    rng = random.Random(pages)
    home = "".join(f'<a href="/b{i}">b{i}</a> ' for i in range(pages))
    routes = {"/": html_page("Home", home)}
    for i in range(pages):
        words = " ".join(f"w{rng.randrange(10**6)}" for _ in range(5000))
        routes[f"/b{i}"] = html_page(f"Big {i}", f"<p>{words}</p>")
    return routes


def disk_full_trial(site: SiteServer, mount: Path) -> Scenario:
    """The data folder on a tmpfs of a random size that a crawl outgrows: the crawl
    stops with a clear error (no traceback); given room, the same command finishes
    and nothing is lost."""

    def trial(data: Data, rng: random.Random, delay: float | None) -> bool:
        _mount(mount, "400m" if delay is None else f"{rng.randint(1, 24) * 256}k")
        args = ["crawl", site.url("/")]
        if delay is None:
            data.killed(args, None)
        else:
            full = data.run(args)
            if full.returncode != 0:
                said = full.stdout + full.stderr
                assert "Traceback" not in said, f"a traceback on a full disk: {said[-3000:]}"
                assert "space" in said.lower() or "full" in said.lower(), said[-2000:]
            _mount(mount, "400m")
            ok(data.run(args), "the crawl given room again")
        data.verify({site.url(p) for p in site.routes})
        # The next trial starts from a store already full of these pages: a fresh one.
        _unmount(mount)
        return delay is not None

    return trial


def _mount(mount: Path, size: str) -> None:
    mount.mkdir(parents=True, exist_ok=True)
    if os.path.ismount(mount):
        subprocess.run(["mount", "-o", f"remount,size={size}", str(mount)], check=True)
    else:
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], check=True
        )


def _unmount(mount: Path) -> None:
    if os.path.ismount(mount):
        subprocess.run(["umount", str(mount)], check=True)


def run(
    name: str,
    scenario: Scenario,
    data: Data,
    trials: int,
    rng: random.Random,
    *,
    sweep: float = 0.0,
) -> Result:
    """``trials`` kills, each after a random delay, or with ``sweep`` (seconds) at
    every ``sweep`` seconds from the command's start, wrapping past 1.2 its span."""
    result = Result()
    try:
        scenario(data, rng, None)  # a clean run: how long the command takes
    except AssertionError as e:
        result.failures.append(f"clean run: {e}\n" + "\n".join(data.log[-6:]))
        print(result.failures[-1], flush=True)
        return result
    span = data.span or 5.0
    print(f"{name}: the command takes {span:.1f} s unkilled", flush=True)
    for i in range(trials):
        data.log.clear()
        delay = 0.05 + (i * sweep) % (span * 1.2) if sweep else rng.uniform(0.05, span * 1.2)
        t = time.monotonic()
        try:
            result.killed += scenario(data, rng, delay)
        except (AssertionError, subprocess.TimeoutExpired) as e:
            kept = data.folder.with_name(f"{data.folder.name}-failed-{i}")
            shutil.copytree(data.folder, kept, dirs_exist_ok=True)
            report = f"trial {i} (kill at {delay:.2f} s): {e}\n  kept {kept}\n" + "\n".join(
                data.log[-8:]
            )
            print(report, flush=True)
            result.failures.append(report)
            shutil.rmtree(data.folder, ignore_errors=True)
            if data.store.startswith("postgresql://"):
                _reset_postgres(data.store)
        result.trials += 1
        result.seconds.append(time.monotonic() - t)
        print(
            f"{name}: {result.trials} trials, {result.killed} kills landed,"
            f" {len(result.failures)} failures",
            flush=True,
        )
    return result


def _reset_postgres(url: str) -> None:
    import psycopg  # noqa: PLC0415

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")


SCENARIOS = (
    "crawl",
    "index",
    "evict",
    "delete",
    "migrate",
    "migrate-pg",
    "crawl-pg",
    "workers",
    "serve",
    "vectors",
    "disk-full",
    "upgrade",
    "serve-read",
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--scenario", action="append", choices=SCENARIOS)
    parser.add_argument("--pages", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--sweep", type=int, default=0, metavar="MS", help="kill every MS ms, not at random"
    )
    options = parser.parse_args()
    rng = random.Random(options.seed)
    chosen = options.scenario or list(SCENARIOS)
    root = Path(tempfile.mkdtemp(prefix="trawl-kill-"))
    sites = Sites(options.pages)
    pg = None
    results: dict[str, Result] = {}
    try:
        for name in chosen:
            folder = root / name
            if name in ("crawl-pg", "workers", "migrate-pg"):
                if pg is None:
                    from postgres_server import PostgresServer, server_binaries  # noqa: PLC0415

                    bindir = server_binaries()
                    assert bindir is not None, "PostgreSQL is not installed"
                    pg = PostgresServer(bindir).start()
                store = pg.new_database()
            else:
                store = str(folder / "trawl.sqlite")
            extra = {"TRAWL_LEASE": "3"} if name == "workers" else {}
            if name == "vectors":
                extra = {"TRAWL_SEMANTIC": "1"}
            if name == "disk-full":
                folder = root / "disk-full" / "data"
                store = str(folder / "trawl.sqlite")
            data = Data(folder, store, extra)
            makers: dict[str, Callable[[Sites], Scenario]] = {
                "crawl": crawl_trial,
                "crawl-pg": crawl_trial,
                "index": index_trial,
                "evict": lambda s: removal_trial(s, "evict"),
                "delete": lambda s: removal_trial(s, "delete"),
                "migrate": migrate_trial,
                "migrate-pg": migrate_trial,
                "workers": workers_trial,
                "serve": serve_trial,
                "vectors": vectors_trial,
                "serve-read": serve_read_trial,
                "upgrade": lambda s: upgrade_trial(s, old_code(OLD_COMMIT, root / "old")),
                "disk-full": lambda s: disk_full_trial(
                    SiteServer(big_site(40)).__enter__(), root / "disk-full"
                ),
            }
            scenario = makers[name](sites)
            results[name] = run(
                name, scenario, data, options.trials, rng, sweep=options.sweep / 1000
            )
    finally:
        if pg is not None:
            pg.stop()
        _unmount(root / "disk-full")
    print(f"\n{'scenario':10} {'trials':>6} {'landed':>6} {'failed':>6} {'s/trial':>7}")
    for name, r in results.items():
        mean = sum(r.seconds) / len(r.seconds) if r.seconds else 0.0
        print(f"{name:10} {r.trials:6} {r.killed:6} {len(r.failures):6} {mean:7.1f}")
    failures = Counter(n for n, r in results.items() for _ in r.failures)
    print(f"data kept under {root}" if failures else "")
    if not failures:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
