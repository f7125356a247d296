"""Every backend of the store, on real SQLite files and a real PostgreSQL: migrations,
upserts, the crawl log, the frontier, and the leases workers share."""

from __future__ import annotations

import asyncio
import socket
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from trawl.errors import ConfigError, StoreError
from trawl.records import (
    CrawlUrl,
    Discussion,
    HeaderCheck,
    Link,
    Outcome,
    PageRecord,
    PageSignals,
    ReportQuery,
    ResourceCheck,
    SavedDates,
)
from trawl.store.base import Store
from trawl.store.postgres import PostgresStore
from trawl.store.schema import MIGRATIONS, SCHEMA_VERSION
from trawl.store.sqlite import YIELD_SECONDS, SQLiteStore


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


def test_a_store_another_process_migrates_meanwhile_opens(tmp_path: Path) -> None:
    """Two commands opening an old store at once (`trawl serve` and a crawl, after an
    upgrade): the one that read the old version while the other migrated must not run
    the migrations again ("duplicate column name") but find them done."""
    path = tmp_path / "trawl.sqlite"
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    for version in range(1, SCHEMA_VERSION):
        db.execute("BEGIN")
        for statement in MIGRATIONS[version - 1].split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute("INSERT INTO schema_version VALUES (?)", (version,))
        db.execute("COMMIT")
    db.execute("BEGIN IMMEDIATE")  # the other process, migrating: the write lock held
    opened: list[object] = []
    opener = threading.Thread(target=lambda: opened.append(_open_or_error(path)))
    opener.start()
    time.sleep(1.0)  # it has read the old version and waits for the lock
    for statement in MIGRATIONS[-1].split(";"):
        if statement.strip():
            db.execute(statement)
    db.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
    db.execute("COMMIT")
    opener.join(timeout=30)

    assert opened and isinstance(opened[0], SQLiteStore), opened
    opened[0].close()
    versions = [r[0] for r in db.execute("SELECT version FROM schema_version")]
    db.close()
    assert versions == list(range(1, SCHEMA_VERSION + 1))


def _open_or_error(path: Path) -> object:
    try:
        return SQLiteStore(path)
    except StoreError as e:
        return e


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


def test_postgres_opening_twice_migrates_once(postgres_url: str) -> None:
    PostgresStore(postgres_url).close()
    PostgresStore(postgres_url).close()

    with psycopg.connect(postgres_url) as db:
        versions = [r[0] for r in db.execute("SELECT version FROM schema_version ORDER BY 1")]
        tables = {
            r[0]
            for r in db.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            )
        }
    assert versions == list(range(1, SCHEMA_VERSION + 1))
    assert {"sites", "pages", "links", "crawls", "frontier", "host_slots"} <= tables


def test_postgres_store_from_a_newer_trawl_is_refused(postgres_url: str) -> None:
    PostgresStore(postgres_url).close()
    with psycopg.connect(postgres_url) as db:
        db.execute("INSERT INTO schema_version VALUES (999)")

    with pytest.raises(StoreError, match="newer"):
        PostgresStore(postgres_url)


def test_unreachable_postgres_is_a_store_error_without_the_password(
    postgres_server: object,
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket is closed
    with pytest.raises(StoreError, match="cannot open store") as caught:
        PostgresStore(f"postgresql://trawl:s3cret@127.0.0.1:{port}/trawl?connect_timeout=2")
    assert "s3cret" not in str(caught.value)


def test_saving_a_page_again_replaces_it_and_its_links(store: Store) -> None:
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


def test_pages_can_be_filtered_to_indexable(store: Store) -> None:
    store.save_page(page("https://example.com/1", indexable=True, lang="da", word_count=3))
    store.save_page(page("https://example.com/2", status=404, error="HTTP 404"))

    everything = list(store.pages())
    indexable = list(store.pages(indexable_only=True))

    assert [p.url for p in everything] == ["https://example.com/1", "https://example.com/2"]
    assert [(p.url, p.lang, p.word_count) for p in indexable] == [
        ("https://example.com/1", "da", 3)
    ]


def test_corpus_pages_carry_signals_and_a_body_only_where_a_fingerprint_is_missing(
    store: Store,
) -> None:
    talk = (Discussion("example.com", "https://example.com/t", "see"),)
    store.save_page(
        page("https://example.com/1", indexable=True, text="kiwi", text_hash=7, simhash=9)
    )
    store.save_page(page("https://example.com/2", text="mango", text_hash=3, simhash=None))
    store.save_signals([PageSignals("https://example.com/1", 0.5, True, None, None, talk)])

    first, second = store.corpus_pages()

    assert (first.url, first.indexable, first.text_hash, first.simhash) == (
        "https://example.com/1",
        True,
        7,
        9,
    )
    assert first.text is None  # both fingerprints there: no body read
    assert (first.authority, first.scored, first.discussed_on) == (0.5, True, talk)
    assert (second.text, second.text_hash, second.simhash, second.scored) == (
        "mango",
        3,
        None,
        False,
    )


def test_crawl_log_and_frontier(store: Store) -> None:
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
    store.finish_crawl(crawl_id, pages_ok=1, pages_failed=0, outcome=Outcome.COMPLETE)
    run = store.crawls()[0]
    assert (run.id, run.pages_ok, run.outcome) == (crawl_id, 1, Outcome.COMPLETE)
    assert run.finished_at is not None and run.start_urls == ("https://example.com/",)


def test_an_outcome_this_version_does_not_know_reads_as_written(store: Store) -> None:
    # A newer Trawl may add an outcome: the crawl log still lists the row.
    crawl_id = store.begin_crawl(["https://example.com/"])
    store.finish_crawl(crawl_id, pages_ok=0, pages_failed=0, outcome=Outcome.COMPLETE)
    with store._transaction():  # type: ignore[attr-defined]  # no API writes an unknown one
        store._db.execute(  # type: ignore[attr-defined]
            "UPDATE crawls SET outcome = 'paused' WHERE id = ?", (crawl_id,)
        )
    assert store.crawls()[0].outcome == "paused"
    assert Outcome.read("capped") is Outcome.CAPPED


def test_host_language_is_the_majority_of_its_pages(store: Store) -> None:
    store.save_page(page("https://example.com/first", lang="en", indexable=True))
    for i in range(3):
        store.save_page(page(f"https://example.com/da{i}", lang="da", indexable=True))
    store.save_page(page("https://example.com/err", lang="de", indexable=False))

    assert store.host_language("example.com") == "da"  # not the first page seen
    assert store.host_language("other.example") is None


def test_links_keep_their_context(store: Store) -> None:
    image = Link("https://example.com/i.png", "Logo", False, "img", "src", "", "Intro")
    store.save_page(page("https://example.com/"), [image])
    store.save_page(
        page("https://example.com/other"), [Link("https://example.com/x", "see x", False)]
    )

    assert store.links_from("https://example.com/") == [image]
    assert store.anchors_to("https://example.com/x") == ["see x"]
    assert store.anchors_to("https://example.com/i.png") == []  # an image is no link


@pytest.mark.parametrize("order", [1, -1])
def test_anchor_texts_past_the_limit_do_not_depend_on_link_order(store: Store, order: int) -> None:
    """A page linked with more texts than are indexed keeps those most pages use, then the
    first by text, whichever page the crawl stored first (SUMO's vehicle page has 173)."""
    target = "https://example.com/target"
    sources = [(f"https://example.com/p{i}", f"text {i:02}") for i in range(6)][::order]
    for url, text in sources:
        store.save_page(page(url), [Link(target, text, False), Link(target, "common", False)])

    assert store.anchors_to(target, limit=3) == ["common", "text 00", "text 01"]


def test_text_with_nul_characters_is_stored(store: Store) -> None:
    url = "https://example.com/nul"
    store.save_page(page(url, title="a\x00b", text="x\x00y"), [Link(url + "/x", "c\x00d")])

    saved = store.page(url)
    assert saved is not None and saved.title in ("ab", "a\x00b")
    assert store.links_from(url)[0].url == url + "/x"


def test_pages_are_listed_and_deleted(store: Store) -> None:
    for i in range(3):
        store.save_page(page(f"https://example.com/{i}", indexable=True))
    crawl_id = store.begin_crawl(["https://example.com/"])
    store.save_page(page("https://example.com/0", indexable=True), (), crawl_id)

    unseen = store.unseen_pages(crawl_id, ["example.com"])
    store.delete_pages(unseen)

    assert sorted(unseen) == ["https://example.com/1", "https://example.com/2"]
    assert [p.url for p in store.pages()] == ["https://example.com/0"]


def test_a_crawls_saved_pages_are_dated_again(store: Store) -> None:
    day = datetime(2022, 1, 2, tzinfo=UTC)
    crawl_id = store.begin_crawl(["https://example.com/"])
    store.save_page(page("https://example.com/old"))  # not this crawl's
    store.save_page(page("https://example.com/file"), (), crawl_id)
    store.save_page(page("https://example.com/p", published=day, h1_count=1), (), crawl_id)
    urls = [f"https://example.com/{p}" for p in ("old", "file", "p", "never")]

    saved = {d.url: d for d in store.saved_dates(crawl_id, urls)}
    store.redate_pages([("https://example.com/p", day, "sitemap")])

    assert sorted(saved) == ["https://example.com/file", "https://example.com/p"]
    assert not saved["https://example.com/file"].parsed
    assert saved["https://example.com/p"] == SavedDates(
        "https://example.com/p", 1.0, True, day, None, None
    )
    redated = store.page("https://example.com/p")
    assert redated is not None and (redated.modified, redated.modified_source) == (day, "sitemap")


def test_a_resumed_crawl_takes_over_the_frontier(store: Store) -> None:
    first = store.begin_crawl(["https://example.com/"])
    store.frontier_add(
        first, [CrawlUrl("https://example.com/", 0), CrawlUrl("https://example.com/x", 1)]
    )
    store.save_page(page("https://example.com/"), (), first)
    store.finish_crawl(first, pages_ok=1, pages_failed=0, outcome=Outcome.STOPPED)

    previous = store.resumable_crawl(["https://example.com/"])
    assert previous is not None and previous.id == first
    second = store.begin_crawl(["https://example.com/"], resumed_from=first)

    assert store.frontier_finished(second) == ["https://example.com/"]
    assert [i.url for i in store.frontier_pending(second)] == ["https://example.com/x"]


def test_the_urls_waiting_for_one_host_come_back_shallowest_first(store: Store) -> None:
    crawl_id = store.begin_crawl(["https://a.example/"])
    store.frontier_add(
        crawl_id,
        [
            CrawlUrl("https://a.example/deep", 2, "https://a.example/x"),
            CrawlUrl("https://a.example/x", 1, "https://a.example/"),
            CrawlUrl("https://b.example/", 1, "https://a.example/"),
            CrawlUrl("https://a.example/done", 1),
        ],
    )
    store.save_page(page("https://a.example/done"), (), crawl_id)

    waiting = store.frontier_waiting(crawl_id, "a.example")
    assert waiting == [
        CrawlUrl("https://a.example/x", 1, "https://a.example/"),
        CrawlUrl("https://a.example/deep", 2, "https://a.example/x"),
    ]
    assert [i.url for i in store.frontier_waiting(crawl_id, "b.example")] == ["https://b.example/"]


def test_a_url_waiting_for_its_host_keeps_its_sitemap_date(store: Store) -> None:
    crawl_id = store.begin_crawl(["https://a.example/"])
    lastmod = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)
    store.frontier_add(crawl_id, [CrawlUrl("https://a.example/p", 1, lastmod=lastmod)])
    store.frontier_add(crawl_id, [CrawlUrl("https://a.example/q", 1)])
    late = datetime(2026, 2, 1, tzinfo=UTC)
    store.frontier_date(crawl_id, {"https://a.example/q": late})  # a sitemap read later

    waiting = store.frontier_waiting(crawl_id, "a.example")
    assert {i.url: i.lastmod for i in waiting} == {
        "https://a.example/p": lastmod,
        "https://a.example/q": late,
    }


# -- the frontier shared by workers ------------------------------------------------


def shared_frontier(store: Store, *urls: str) -> int:
    crawl_id = store.join_crawl(["https://example.com/"])
    store.frontier_add(crawl_id, [CrawlUrl(u, 0) for u in urls])
    return crawl_id


def claim(store: Store, crawl_id: int, owner: str = "w1", **options: Any) -> CrawlUrl | None:
    settings = {"lease": 60.0, "delay": 0.0, "host_concurrency": 1} | options
    return store.frontier_claim(crawl_id, owner, **settings)


def test_workers_join_one_running_crawl(store: Store) -> None:
    with pytest.raises(ConfigError, match="no running crawl"):
        store.join_crawl([])
    first = store.join_crawl(["https://example.com/"])

    assert store.join_crawl(["https://example.com/"]) == first
    assert store.join_crawl([]) == first
    assert store.join_crawl(["https://other.example/"]) != first
    store.finish_crawl(first, pages_ok=0, pages_failed=0, outcome=Outcome.COMPLETE)
    assert store.join_crawl(["https://example.com/"]) != first  # a finished crawl is not joined


def test_a_leased_url_is_not_handed_out_again(store: Store) -> None:
    crawl_id = shared_frontier(store, "https://a.example/1", "https://b.example/1")

    got = [claim(store, crawl_id, "w1"), claim(store, crawl_id, "w2"), claim(store, crawl_id)]

    assert sorted(i.url for i in got if i) == ["https://a.example/1", "https://b.example/1"]
    assert got[2] is None
    assert store.frontier_active(crawl_id)


def test_a_host_is_not_handed_out_before_its_delay(store: Store) -> None:
    crawl_id = shared_frontier(store, "https://a.example/1", "https://a.example/2")

    first = claim(store, crawl_id, delay=30.0, host_concurrency=4)
    assert first is not None
    assert claim(store, crawl_id, "w2", delay=30.0, host_concurrency=4) is None
    wait = store.frontier_wait(crawl_id)
    assert wait is not None and 20.0 < wait <= 30.0


def test_host_concurrency_counts_live_leases(store: Store) -> None:
    crawl_id = shared_frontier(store, "https://a.example/1", "https://a.example/2")

    assert claim(store, crawl_id, host_concurrency=1) is not None
    assert claim(store, crawl_id, "w2", host_concurrency=1) is None
    assert claim(store, crawl_id, "w2", host_concurrency=2) is not None


def test_a_sitemap_date_rides_with_a_queued_url_to_its_claim(store: Store) -> None:
    # Issue 17 in a shared crawl: a URL the sitemap queued, one a link queued first and
    # the sitemap dated later (re-added or dated), each carries the first date given.
    jan, feb, mar = (datetime(2022, m, 1, tzinfo=UTC) for m in (1, 2, 3))
    a, b, c = "https://a.example/1", "https://b.example/1", "https://c.example/1"
    crawl_id = shared_frontier(store, b, c)
    store.frontier_add(crawl_id, [CrawlUrl(a, 1, lastmod=jan), CrawlUrl(b, 1, lastmod=feb)])
    store.frontier_date(crawl_id, {c: mar})
    store.frontier_date(crawl_id, {a: mar, b: mar})  # a later sitemap: the first date holds

    assert {i.url: i.lastmod for i in store.frontier_pending(crawl_id)} == {a: jan, b: feb, c: mar}
    claimed = [claim(store, crawl_id, f"w{n}", host_concurrency=4) for n in range(3)]
    assert {i.url: i.lastmod for i in claimed if i is not None} == {a: jan, b: feb, c: mar}


def test_a_crawl_delay_learnt_after_a_claim_holds_the_host(store: Store) -> None:
    # The claimed page waited for robots.txt: the delay counts from now, for every worker.
    crawl_id = shared_frontier(store, "https://a.example/1", "https://a.example/2")
    assert claim(store, crawl_id, delay=0.0, host_concurrency=4) is not None

    store.set_crawl_delay("a.example", 10.0)

    assert claim(store, crawl_id, "w2", delay=0.0, host_concurrency=4) is None
    wait = store.frontier_wait(crawl_id)
    assert wait is not None and 8.0 < wait <= 10.0


def booked(store: Store, url: str, delay: float, within: float = 100.0) -> float:
    wait = store.frontier_book(url, delay, within)
    assert wait is not None
    return wait


def test_a_booked_slot_holds_the_host_for_claims_and_bookings(store: Store) -> None:
    crawl_id = shared_frontier(store, "https://a.example/1")

    asset = "https://a.example/app.js"
    assert booked(store, asset, 30.0) < 0.01  # nothing booked yet: at once
    assert 25.0 < booked(store, asset, 30.0) <= 30.0  # the next waits the delay after it
    assert claim(store, crawl_id, delay=30.0, host_concurrency=4) is None  # and so do pages
    store.set_crawl_delay("b.example", 40.0)  # a host no URL named yet, held from now
    other = "http://b.example:8080/x.css"  # any port: politeness is per server
    assert 35.0 < booked(store, other, 1.0) <= 40.0
    assert 75.0 < booked(store, other, 1.0) <= 80.0  # its Crawl-delay spaces bookings


def test_a_slot_too_far_off_is_not_booked(store: Store) -> None:
    asset = "https://a.example/app.js"
    booked(store, asset, 30.0)
    # The next slot is 30 s off: a render that must end within 5 s takes none.
    assert store.frontier_book(asset, 30.0, 5.0) is None
    assert 25.0 < booked(store, asset, 30.0) <= 30.0  # the refusal booked nothing


def test_a_released_url_is_done_and_the_crawl_ends(store: Store) -> None:
    crawl_id = shared_frontier(store, "https://a.example/1")
    item = claim(store, crawl_id)
    assert item is not None
    store.save_page(page(item.url), (), crawl_id)
    assert store.frontier_active(crawl_id)  # saved, but its links may still be coming

    store.frontier_release(crawl_id, item.url, "w1")

    assert not store.frontier_active(crawl_id)
    assert claim(store, crawl_id) is None
    assert store.frontier_wait(crawl_id) is None


def test_an_expired_lease_goes_to_another_worker(store: Store) -> None:
    crawl_id = shared_frontier(store, "https://a.example/1", "https://a.example/2")
    dead = claim(store, crawl_id, "dead", lease=0.05)
    assert dead is not None
    time.sleep(0.1)

    taken = {claim(store, crawl_id, "alive", host_concurrency=2) for _ in range(2)}

    assert {i.url for i in taken if i} == {"https://a.example/1", "https://a.example/2"}


def test_a_renewed_lease_is_kept_and_only_its_owners(store: Store) -> None:
    crawl_id = shared_frontier(store, "https://a.example/1", "https://b.example/1")
    mine = claim(store, crawl_id, "alive", lease=0.2)
    theirs = claim(store, crawl_id, "dead", lease=0.2)
    assert mine is not None and theirs is not None
    store.frontier_renew(crawl_id, "alive", lease=60.0)
    time.sleep(0.3)  # both first leases have run out; only "alive" renewed

    taken = [claim(store, crawl_id, "other"), claim(store, crawl_id, "other")]

    assert [i.url for i in taken if i] == [theirs.url]


def test_max_pages_is_granted_across_workers_never_past_the_cap(store: Store) -> None:
    crawl_id = shared_frontier(store, "https://a.example/1")
    other = store.join_crawl(["https://b.example/"])

    assert store.crawl_grant(crawl_id, 16, 20) == 16  # one worker's share
    assert store.crawl_grant(crawl_id, 16, 20) == 4  # the next: what is left
    assert store.crawl_grant(crawl_id, 16, 20) == 0
    assert store.crawl_grant(other, 16, 20) == 16  # each crawl counts its own


def test_a_page_saved_by_a_worker_that_died_is_taken_again(store: Store) -> None:
    # Saved, but killed before releasing: the links it found may never have been queued.
    crawl_id = shared_frontier(store, "https://a.example/1")
    dead = claim(store, crawl_id, "dead", lease=0.05)
    assert dead is not None
    store.save_page(page(dead.url), (), crawl_id)
    time.sleep(0.1)

    again = claim(store, crawl_id, "alive")

    assert again is not None and again.url == dead.url


def test_a_retried_url_holds_its_host(store: Store) -> None:
    crawl_id = shared_frontier(store, "https://a.example/1")
    item = claim(store, crawl_id)
    assert item is not None

    store.frontier_retry(crawl_id, replace(item, retries=1), "w1", 30.0)

    assert claim(store, crawl_id) is None
    wait = store.frontier_wait(crawl_id)
    assert wait is not None and wait > 20.0
    assert store.frontier_counts(crawl_id) == {"queued": 1}


def test_concurrent_claims_never_share_a_url(open_store: Callable[[], Store]) -> None:
    urls = [f"https://h{i % 5}.example/{i}" for i in range(40)]
    crawl_id = shared_frontier(open_store(), *urls)
    got: list[str] = []
    lock = threading.Lock()

    def worker(name: str) -> None:
        store = open_store()  # a connection of its own, as a worker process has
        while True:
            item = claim(store, crawl_id, name, host_concurrency=100)
            if item is None:
                if store.frontier_wait(crawl_id) != 0.0:
                    return
                continue
            with lock:
                got.append(item.url)

    threads = [threading.Thread(target=worker, args=(f"w{n}",)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)

    assert sorted(got) == sorted(urls)


def test_sql_functions_the_store_uses_read_alike_on_both(store: Store) -> None:
    # Store SQL is shared; PostgreSQL gets SQLite's instr() so URL cutting reads the same.
    row = store._db.execute(  # type: ignore[attr-defined]
        "SELECT instr(?, '://'), substr(?, instr(?, '://') + 3)",
        ("https://example.com/a", "https://example.com/a", "https://example.com/a"),
    ).fetchone()

    assert tuple(row) == (6, "example.com/a")


def test_resources_of_a_crawl_are_checked_and_listed(store: Store) -> None:
    crawl_id = store.begin_crawl(["https://example.com/"])
    css = Link("https://example.com/s.css", "", False, "link", "href", "stylesheet", "")
    img = Link("https://example.com/i.png", "Logo", False, "img", "src", "", "")
    store.save_page(
        page("https://example.com/"), [css, img, Link("https://example.com/x", "x")], crawl_id
    )
    store.save_page(page("https://example.com/b"), [img], crawl_id)

    urls = store.resource_urls(crawl_id, 10)
    store.save_resources(
        [
            ResourceCheck(urls[0], 200, "text/css", 10, None, 1.0),
            ResourceCheck(urls[1], 404, None, None, None, 1.0),
        ]
    )
    store.save_resources([ResourceCheck(urls[0], 200, "text/css", 12, None, 2.0)])  # replaces

    assert urls == ["https://example.com/s.css", "https://example.com/i.png"]
    assert [r.url for r in store.resources(broken_only=True)] == ["https://example.com/i.png"]
    assert [r.content_length for r in store.resources()] == [None, 12]
    assert store.resource_pages("https://example.com/i.png") == [
        "https://example.com/",
        "https://example.com/b",
    ]


def test_a_crawl_with_live_leases_is_not_marked_interrupted(store: Store) -> None:
    shared = shared_frontier(store, "https://a.example/1")
    assert claim(store, shared) is not None  # a worker is at it
    embedded = store.begin_crawl(["https://b.example/"])  # nobody: it was killed

    assert store.interrupt_running() == 1

    outcomes = {run.id: run.outcome for run in store.crawls()}
    assert outcomes == {shared: "running", embedded: "interrupted"}


def test_like_ignores_ascii_case_on_both(store: Store) -> None:
    # SQLite's LIKE ignores ASCII case; the PostgreSQL dialect says ILIKE for it.
    store.add_site("https://example.com/")
    store.save_page(page("https://example.com/Docs"))
    store.save_page(page("https://other.example/docs"))
    query = ReportQuery(text="EXAMPLE.COM/d")

    assert [r.url for r in store.report_pages(query)[1]] == ["https://example.com/Docs"]
    assert store.site_pages("example.com") == ["https://example.com/Docs"]


def test_corpus_signals_and_the_link_graph(store: Store) -> None:
    big = (1 << 62) + 12345  # 63-bit fingerprints must fit: PostgreSQL INTEGER is BIGINT here
    store.save_page(
        page("https://example.com/a", indexable=True, text_hash=big, simhash=big - 1),
        [Link("https://example.com/b", "to b"), Link("https://example.com/a", "self")],
    )
    store.save_page(page("https://example.com/b", indexable=True))
    store.save_signals(
        [
            PageSignals("https://example.com/a", 0.75, True, None, "the only copy"),
            PageSignals(
                "https://example.com/b",
                0.25,
                True,
                "https://example.com/a",
                "lower authority",
                (Discussion("forum.example", "https://forum.example/t/1", "see a"),),
            ),
        ]
    )
    store.save_page(page("https://example.com/b", indexable=True))  # keeps the signals

    a, b = store.page("https://example.com/a"), store.page("https://example.com/b")
    assert a is not None and b is not None
    assert (a.text_hash, a.simhash, a.authority) == (big, big - 1, 0.75)
    assert (b.duplicate_of, b.canonical_reason) == ("https://example.com/a", "lower authority")
    assert b.discussed_on == (Discussion("forum.example", "https://forum.example/t/1", "see a"),)
    assert store.duplicates_of("https://example.com/a") == ["https://example.com/b"]
    assert list(store.link_graph()) == [
        ("https://example.com/a", "https://example.com/b", "to b", False)
    ]


def test_a_header_check_replaces_the_last_one_on_both(store: Store) -> None:
    # Written as ON CONFLICT ... DO UPDATE: SQLite's INSERT OR REPLACE is no PostgreSQL.
    store.save_page(page("https://example.com/"), [Link("https://elsewhere.example/x", "x")])
    first = HeaderCheck("https://elsewhere.example/x", 404, None, (), None, 0.1)
    store.save_header_checks([first])
    store.save_header_checks([replace(first, status=200, headers=(("server", "x"),))])

    total, links = store.external_links()
    assert total == 1
    assert [(e.url, e.status) for e in links] == [("https://elsewhere.example/x", 200)]


def test_a_write_batch_commits_whole_writes_together(open_store: Callable[[], Store]) -> None:
    """Inside a write batch the writes reach other connections at a flush, each page
    whole; a write that fails undoes itself and nothing the batch held before it."""
    store, other = open_store(), open_store()
    crawl_id = store.begin_crawl(["https://example.com/"])
    urls = [f"https://example.com/{i}" for i in range(3)]
    store.frontier_add(crawl_id, [CrawlUrl(u, 1, "https://example.com/") for u in urls])
    with store.write_batch(100, 3600):
        store.save_page(page(urls[0]), [Link(urls[1], "one")], crawl_id)
        with pytest.raises(StoreError):
            # NOT NULL to_url: the links fail after the page's upsert, which is undone
            store.save_page(page(urls[1]), [Link(None, "x")], crawl_id)  # type: ignore[arg-type]
        store.save_page(page(urls[2]), [], crawl_id)
        batched = isinstance(store, SQLiteStore)
        seen = {u for u in urls if other.page(u) is not None}
        assert seen == (set() if batched else {urls[0], urls[2]})
        store.flush()
        assert {u for u in urls if other.page(u) is not None} == {urls[0], urls[2]}
        store.save_page(page(urls[0], title="Again"), [], crawl_id)
    # the batch's end commits what it holds
    again = other.page(urls[0])
    assert again is not None and again.title == "Again"
    assert sorted(other.frontier_fetched(crawl_id)) == [urls[0], urls[2]]
    assert other.links_from(urls[0]) == []


def test_a_write_batch_commits_when_full(tmp_path: Path) -> None:
    store, other = SQLiteStore(tmp_path / "t.sqlite"), SQLiteStore(tmp_path / "t.sqlite")
    try:
        with store.write_batch(2, 3600):
            store.save_page(page("https://example.com/1"))
            store.flush(due_only=True)
            assert other.count_pages() == 0  # one write: not due
            store.save_page(page("https://example.com/2"))
            assert other.count_pages() == 0  # only a flush commits
            store.flush(due_only=True)
            assert other.count_pages() == 2  # two writes: full, committed
            time.sleep(YIELD_SECONDS)  # past the lock's yield to other connections
            store.save_page(page("https://example.com/3"))
            store.flush(due_only=True)
            assert other.count_pages() == 2
    finally:
        store.close()
        other.close()


def test_a_busy_write_batch_lets_other_connections_write(tmp_path: Path) -> None:
    # A crawl writes every few ms and its batch commits on a timer. Taken again at once
    # after each commit, the write lock starved another connection (a server request,
    # a header check) waiting in SQLite's busy handler: 7-10 s, or "database is locked".
    crawl = SQLiteStore(tmp_path / "t.sqlite")
    other = SQLiteStore(tmp_path / "t.sqlite")
    waits: list[float] = []

    async def run() -> None:
        done = False

        async def crawling() -> None:
            i = 0
            while not done:
                crawl.add_site(f"http://h{i}.example/")
                crawl.save_page(page(f"https://example.com/{i}"))
                i += 1
                await asyncio.sleep(0.005)

        async def timer() -> None:  # as crawl_run._flush_every
            while not done:
                await asyncio.sleep(0.1)
                crawl.flush(due_only=True)

        with crawl.write_batch(100, 0.5):
            tasks = [asyncio.create_task(crawling()), asyncio.create_task(timer())]
            for k in range(6):
                began = time.monotonic()
                await asyncio.to_thread(other.add_site, f"http://other{k}.example/")
                waits.append(time.monotonic() - began)
            done = True
            await asyncio.gather(*tasks)

    try:
        asyncio.run(run())
    finally:
        crawl.close()
        other.close()
    assert max(waits) < 2.0, waits  # a batch's age (0.5 s) and a poll, not seconds
