"""The store: one class running the same SQL on SQLite and on PostgreSQL.

Every statement is written once, in the words both databases read: ``?``
placeholders, ``RETURNING``, ``ON CONFLICT``, no function only one of them has
(``schema.py`` gives PostgreSQL SQLite's ``instr``). What truly differs is data in
a ``dialect.Dialect`` (placeholders, case-blind LIKE, the shared clock, the join
lock, the one-statement claim and grant); the connection is a ``database.Database``
(``sqlite.SQLiteDatabase``, ``postgres.PooledDatabase``). ``SQLiteStore`` and
``PostgresStore`` only open one and hand it to this class; the store tests run
every method on both.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

from trawl.records import (
    RESUMABLE,
    CorpusPage,
    CrawlRun,
    CrawlUrl,
    Discussion,
    Link,
    Outcome,
    PageRecord,
    PageSignals,
    SavedDates,
    Site,
    sections_from_json,
    sections_json,
)
from trawl.store import shared_sql
from trawl.store.admin_queries import AdminQueries
from trawl.store.database import Database
from trawl.store.dialect import Dialect
from trawl.store.frontier_queries import FrontierQueries

_PAGE_COLUMNS = (
    "url, host, status, depth, fetched_at, content_type, title, description, headings,"
    " body, lang, word_count, redirect_to, error, indexable, etag, last_modified,"
    " links_dropped, indexability, canonical, directives, published, modified, modified_source,"
    " inlinks, text_hash, simhash, quality, community, headers, sections, aside,"
    " response_time, size, h1_count, in_sitemap, request_url"
)
# Written only by the batch step after a crawl (save_signals): saving a page again keeps them.
_SIGNAL_COLUMNS = "authority, scored, duplicate_of, canonical_reason, discussed_on"
_SELECT_PAGE = f"SELECT {_PAGE_COLUMNS}, {_SIGNAL_COLUMNS} FROM pages"  # noqa: S608
_CRAWL_COLUMNS = (
    "id, started_at, finished_at, start_urls, pages_ok, pages_failed, outcome, skipped,"
    " resumed_from"
)
# Built once from constant column names: no input ever reaches the SQL text.
_UPSERT_FIELDS = (*_PAGE_COLUMNS.split(", "), "crawl_id")
_UPSERT_PAGE = (
    f"INSERT INTO pages ({', '.join(_UPSERT_FIELDS)})"  # noqa: S608
    f" VALUES ({', '.join('?' * len(_UPSERT_FIELDS))}) ON CONFLICT(url) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in _UPSERT_FIELDS[1:])
    + " RETURNING id"
)


class SqlStore(FrontierQueries, AdminQueries):
    """Pages, links, the crawl log, the frontier and the admin's tables over ``db``."""

    _db: Database

    def __init__(self, db: Database, dialect: Dialect) -> None:
        self._db = db
        self._dialect = dialect
        self._like = dialect.like
        # Whether methods may run in several threads at once (a connection pool).
        self.threadsafe = db.threadsafe

    # -- sites and crawls ---------------------------------------------------

    def add_site(self, start_url: str) -> None:
        host = start_url.split("://", 1)[-1].split("/", 1)[0]
        self._db.execute(
            "INSERT INTO sites (host, start_url, created_at) VALUES (?, ?, ?)"
            " ON CONFLICT(host) DO NOTHING",
            (host, start_url, time.time()),
        )

    def sites(self) -> list[Site]:
        rows = self._db.execute("SELECT host, start_url, enabled FROM sites ORDER BY id")
        return [Site(h, u, bool(e)) for h, u, e in rows]

    def begin_crawl(self, start_urls: Sequence[str], resumed_from: int | None = None) -> int:
        """A new crawl-log row; when resuming, it takes over the old run's frontier and pages."""
        with self._transaction():
            crawl_id = int(
                self._db.execute(
                    shared_sql.BEGIN_CRAWL,
                    (time.time(), json.dumps(list(start_urls)), resumed_from),
                ).fetchone()[0]
            )
            if resumed_from is not None:
                self._db.execute(
                    "INSERT INTO frontier (crawl_id, url, depth, source, state, kind, reason,"
                    " host, retries, request_url) SELECT ?, url, depth, source, state, kind,"
                    " reason, host, retries, request_url FROM frontier WHERE crawl_id = ?",
                    (crawl_id, resumed_from),
                )
                self._db.execute(
                    "INSERT INTO crawl_marks (crawl_id, host, kind, detail)"
                    " SELECT ?, host, kind, detail FROM crawl_marks WHERE crawl_id = ?",
                    (crawl_id, resumed_from),
                )
                self._db.execute(
                    "UPDATE pages SET crawl_id = ? WHERE crawl_id = ?", (crawl_id, resumed_from)
                )
                # The run cut short is not a crawl of its own to compare with.
                self._db.execute("DELETE FROM page_history WHERE crawl_id = ?", (resumed_from,))
        return crawl_id

    def finish_crawl(
        self,
        crawl_id: int,
        *,
        pages_ok: int,
        pages_failed: int,
        outcome: Outcome,
        skipped: Mapping[str, int] | None = None,
        samples: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        """Close the run's log row, and keep what it saw of each page (status, title,
        indexability) for the report's crawl comparison: this run's and the one before
        it, per host; older snapshots go."""
        with self._transaction():
            self._db.execute(
                "UPDATE crawls SET finished_at = ?, pages_ok = ?, pages_failed = ?, outcome = ?,"
                " skipped = ?, samples = ? WHERE id = ?",
                (
                    time.time(),
                    pages_ok,
                    pages_failed,
                    outcome,
                    json.dumps(dict(skipped or {})),
                    json.dumps({k: list(v) for k, v in (samples or {}).items()}),
                    crawl_id,
                ),
            )
            self._db.execute(
                "INSERT INTO page_history (crawl_id, url, host, status, title, indexability)"
                " SELECT crawl_id, url, host, status, title, indexability FROM pages"
                " WHERE crawl_id = ? ON CONFLICT (crawl_id, url) DO UPDATE SET"
                " status = excluded.status, title = excluded.title,"
                " indexability = excluded.indexability",
                (crawl_id,),
            )
            self._db.execute(
                "DELETE FROM page_history WHERE host IN"
                " (SELECT h.host FROM page_history h WHERE h.crawl_id = ?)"
                " AND crawl_id < (SELECT max(p.crawl_id) FROM page_history p"
                " WHERE p.host = page_history.host AND p.crawl_id < ?)",
                (crawl_id, crawl_id),
            )

    def interrupt_running(self) -> int:
        """Mark runs that never finished (killed) as interrupted; return how many.
        A run whose frontier has a live lease has workers at it: it is left alone."""
        cur = self._db.execute(
            "UPDATE crawls SET outcome = ?, finished_at = ? WHERE outcome = ?"
            " AND NOT EXISTS (SELECT 1 FROM frontier f WHERE f.crawl_id = crawls.id"
            " AND f.lease_owner IS NOT NULL AND f.lease_until >= ?)",
            (Outcome.INTERRUPTED, time.time(), Outcome.RUNNING, self._now()),
        )
        return cur.rowcount

    def crawls(self, limit: int = 50) -> list[CrawlRun]:
        rows = self._db.execute(
            f"SELECT {_CRAWL_COLUMNS} FROM crawls ORDER BY id DESC LIMIT ?",  # noqa: S608
            (limit,),
        )
        return [_crawl_run(r) for r in rows]

    def resumable_crawl(self, start_urls: Sequence[str] | None = None) -> CrawlRun | None:
        """The latest run (of these start URLs, if given) when it was cut short."""
        query = f"SELECT {_CRAWL_COLUMNS} FROM crawls"  # noqa: S608 - constant columns
        if start_urls is None:
            row = self._db.execute(query + " ORDER BY id DESC LIMIT 1").fetchone()
        else:
            row = self._db.execute(
                query + " WHERE start_urls = ? ORDER BY id DESC LIMIT 1",
                (json.dumps(list(start_urls)),),
            ).fetchone()
        run = _crawl_run(row) if row else None
        return run if run is not None and run.outcome in RESUMABLE else None

    # -- pages and links ----------------------------------------------------

    def save_page(
        self,
        record: PageRecord,
        links: Sequence[Link] = (),
        crawl_id: int | None = None,
        admitted: Sequence[CrawlUrl] = (),
    ) -> None:
        """Upsert the page and its links; with ``crawl_id``, in the same transaction,
        mark it seen by that crawl and fetched in its frontier, and add ``admitted``
        (what the crawler queued of its links) to that frontier: a kill never leaves the
        page fetched and its links out of the frontier, which no resume would crawl."""
        values = (*_page_values(record), crawl_id)
        with self._transaction():
            if crawl_id is not None:
                # First: the frontier rows it inserts are locked in URL order, as in
                # frontier_add, before this page's own rows (see frontier_queries).
                self._frontier_add(crawl_id, admitted)
            row = self._db.execute(_UPSERT_PAGE, values).fetchone()
            page_id = row[0]
            self._db.execute("DELETE FROM links WHERE from_page = ?", (page_id,))
            self._db.executemany(
                "INSERT INTO links (from_page, to_url, anchor, nofollow, element, attribute, rel,"
                " heading, request_url) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        page_id,
                        link.url,
                        link.anchor,
                        int(link.nofollow),
                        link.element,
                        link.attribute,
                        link.rel,
                        link.heading,
                        link.request,
                    )
                    for link in links
                ],
            )
            if crawl_id is not None:
                self._mark(crawl_id, record.url, "fetched", None)

    def touch_page(self, url: str, crawl_id: int, admitted: Sequence[CrawlUrl] = ()) -> None:
        """A 304 Not Modified: the stored page stands and counts as seen by this crawl;
        ``admitted`` as in ``save_page``."""
        with self._transaction():
            self._frontier_add(crawl_id, admitted)
            self._db.execute(
                "UPDATE pages SET crawl_id = ?, fetched_at = ? WHERE url = ?",
                (crawl_id, time.time(), url),
            )
            self._mark(crawl_id, url, "fetched", "not modified")

    def validators(self, url: str) -> tuple[str | None, str | None]:
        """The stored page's ETag and Last-Modified, for a conditional request."""
        row = self._db.execute(
            "SELECT etag, last_modified FROM pages WHERE url = ? AND indexable = 1", (url,)
        ).fetchone()
        return (row[0], row[1]) if row else (None, None)

    def unseen_pages(self, crawl_id: int, hosts: Sequence[str]) -> list[str]:
        """Pages of ``hosts`` that the crawl did not reach: candidates for pruning."""
        marks = ", ".join("?" * len(hosts))
        rows = self._db.execute(
            f"SELECT url FROM pages WHERE host IN ({marks})"  # noqa: S608 - placeholders only
            " AND (crawl_id IS NULL OR crawl_id != ?)",
            (*hosts, crawl_id),
        )
        return [u for (u,) in rows]

    def server_error_pages(self, crawl_id: int) -> list[str]:
        rows = self._db.execute(
            "SELECT url FROM pages WHERE crawl_id = ? AND status >= 500", (crawl_id,)
        )
        return [u for (u,) in rows]

    def delete_pages(self, urls: Sequence[str]) -> None:
        with self._transaction():
            self._db.executemany("DELETE FROM pages WHERE url = ?", [(u,) for u in urls])

    def page(self, url: str) -> PageRecord | None:
        row = self._db.execute(_SELECT_PAGE + " WHERE url = ?", (url,)).fetchone()
        return _page_record(row) if row else None

    def pages(self, *, indexable_only: bool = False) -> Iterator[PageRecord]:
        where = " WHERE indexable = 1" if indexable_only else ""
        # Streamed (PostgreSQL: a server-side cursor): never every page in memory.
        for row in self._db.stream(f"{_SELECT_PAGE}{where} ORDER BY id"):
            yield _page_record(row)

    def count_pages(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM pages").fetchone()[0])

    def saved_dates(self, crawl_id: int, urls: Sequence[str]) -> list[SavedDates]:
        """The dates of those of ``urls`` that crawl ``crawl_id`` has saved."""
        found: list[SavedDates] = []
        for at in range(0, len(urls), 500):
            chunk = urls[at : at + 500]
            marks = ", ".join("?" * len(chunk))
            rows = self._db.execute(
                "SELECT url, fetched_at, h1_count, published, modified, modified_source"  # noqa: S608
                f" FROM pages WHERE crawl_id = ? AND url IN ({marks})",
                (crawl_id, *chunk),
            )
            found.extend(
                SavedDates(
                    url,
                    fetched_at,
                    h1_count is not None,
                    datetime.fromisoformat(published) if published else None,
                    datetime.fromisoformat(modified) if modified else None,
                    source,
                )
                for url, fetched_at, h1_count, published, modified, source in rows
            )
        return found

    def redate_pages(self, dates: Sequence[tuple[str, datetime | None, str | None]]) -> None:
        """Set pages' modified date and its source: (URL, modified, source)."""
        with self._transaction():
            self._db.executemany(
                "UPDATE pages SET modified = ?, modified_source = ? WHERE url = ?",
                [(m.isoformat() if m else None, source, url) for url, m, source in dates],
            )

    def links_from(self, url: str) -> list[Link]:
        rows = self._db.execute(
            "SELECT l.to_url, l.anchor, l.nofollow, l.element, l.attribute, l.rel, l.heading,"
            " l.request_url FROM links l JOIN pages p ON p.id = l.from_page WHERE p.url = ?"
            " ORDER BY l.rowid",
            (url,),
        )
        return [Link(u, a, bool(n), e, at, r, h, q) for u, a, n, e, at, r, h, q in rows]

    def anchors_to(self, url: str, limit: int = 100) -> list[str]:
        """Distinct anchor texts of links from other pages to ``url``: those most pages use
        first, then by text, so a page linked with more than ``limit`` texts is indexed
        with the same ones whatever order the crawl stored its links in (without an order,
        the row order chose them, and a page's rank moved with the crawl's timing)."""
        rows = self._db.execute(
            "SELECT l.anchor FROM links l JOIN pages p ON p.id = l.from_page"
            " WHERE l.to_url = ? AND p.url != ? AND l.element IN ('a', 'area') AND l.anchor != ''"
            " GROUP BY l.anchor ORDER BY count(DISTINCT l.from_page) DESC, l.anchor LIMIT ?",
            (url, url, limit),
        )
        return [a for (a,) in rows]

    def count_inlinks(self, hosts: Sequence[str]) -> None:
        """Store, for every page of ``hosts``, how many links from other pages point to it."""
        marks = ", ".join("?" * len(hosts))
        self._db.execute(
            "UPDATE pages SET inlinks = (SELECT count(*) FROM links l JOIN pages src"  # noqa: S608
            " ON src.id = l.from_page WHERE l.to_url = pages.url AND src.url != pages.url"
            f" AND l.element IN ('a', 'area')) WHERE host IN ({marks})",
            tuple(hosts),
        )

    def link_graph(self) -> Iterator[tuple[str, str, str, bool]]:
        """(from URL, to URL, anchor, nofollow) of every link between two different URLs."""
        cursor = self._db.execute(
            "SELECT p.url, l.to_url, l.anchor, l.nofollow FROM links l"
            " JOIN pages p ON p.id = l.from_page"
            " WHERE l.element IN ('a', 'area') AND l.to_url != p.url"
        )
        for source, target, anchor, nofollow in cursor:
            yield source, target, anchor, bool(nofollow)

    def corpus_pages(self) -> Iterator[CorpusPage]:
        cursor = self._db.execute(
            "SELECT url, host, indexable, redirect_to, canonical, text_hash, simhash,"
            " CASE WHEN text_hash IS NULL OR simhash IS NULL THEN body END,"
            " quality, community, authority, scored, duplicate_of, canonical_reason,"
            " discussed_on FROM pages ORDER BY id"
        )
        for row in cursor:
            yield CorpusPage(
                url=row[0],
                host=row[1],
                indexable=bool(row[2]),
                redirect_to=row[3],
                canonical=row[4],
                text_hash=row[5],
                simhash=row[6],
                text=row[7],
                quality=row[8],
                community=bool(row[9]),
                authority=row[10],
                scored=bool(row[11]),
                duplicate_of=row[12],
                canonical_reason=row[13],
                discussed_on=_discussions(row[14]),
            )

    def save_signals(self, signals: Sequence[PageSignals]) -> None:
        """Store what the batch step found about each page (authority, duplicates...)."""
        with self._transaction():
            self._db.executemany(
                "UPDATE pages SET authority = ?, scored = ?, duplicate_of = ?,"
                " canonical_reason = ?, discussed_on = ? WHERE url = ?",
                [
                    (
                        s.authority,
                        int(s.scored),
                        s.duplicate_of,
                        s.canonical_reason,
                        _discussions_json(s.discussed_on),
                        s.url,
                    )
                    for s in signals
                ],
            )

    def duplicates_of(self, url: str) -> list[str]:
        rows = self._db.execute("SELECT url FROM pages WHERE duplicate_of = ? ORDER BY id", (url,))
        return [u for (u,) in rows]

    def host_language(self, host: str) -> str | None:
        """The language most of the host's pages are in (a vote, never the first page)."""
        row = self._db.execute(
            "SELECT lang FROM pages WHERE host = ? AND lang IS NOT NULL AND indexable = 1"
            " GROUP BY lang ORDER BY count(*) DESC, lang LIMIT 1",
            (host,),
        ).fetchone()
        return row[0] if row else None

    def write_batch(self, pages: int, seconds: float) -> AbstractContextManager[None]:
        """Writes inside commit together, every ``pages`` writes or ``seconds`` and at
        the end (SQLite: one commit instead of one a page). A kill loses the open batch
        whole (pages, links, frontier marks together), so a resume fetches it again."""
        return self._db.write_batch(pages, seconds)

    def flush(self, *, due_only: bool = False) -> None:
        """Commit the open write batch: before an index commit, so the index never
        holds a page the store could still lose. ``due_only``: only if it is full or
        old enough, and not while a read is in progress."""
        self._db.flush(due_only=due_only)

    def close(self) -> None:
        self._db.close()

    def _now(self) -> float:
        """Seconds since the epoch on the clock every worker of the store shares."""
        if self._dialect.clock is None:
            return time.time()
        return float(self._db.execute(self._dialect.clock).fetchone()[0])

    def _lock_joining(self) -> None:
        """Within a transaction: one process at a time decides which crawl runs.
        (On SQLite BEGIN IMMEDIATE has taken the write lock already.)"""
        if self._dialect.join_lock is not None:
            self._db.execute(self._dialect.join_lock)

    def _transaction(self, mode: str = "") -> AbstractContextManager[Any]:
        return self._db.transaction(mode)


def _page_values(r: PageRecord) -> tuple[Any, ...]:
    return (
        r.url,
        r.host,
        r.status,
        r.depth,
        r.fetched_at,
        r.content_type,
        r.title,
        r.description,
        json.dumps(list(r.headings), ensure_ascii=False),
        r.text,
        r.lang,
        r.word_count,
        r.redirect_to,
        r.error,
        int(r.indexable),
        r.etag,
        r.last_modified,
        r.links_dropped,
        r.indexability,
        r.canonical,
        " ".join(r.directives),
        r.published.isoformat() if r.published else None,
        r.modified.isoformat() if r.modified else None,
        r.modified_source,
        r.inlinks,
        r.text_hash,
        r.simhash,
        r.quality,
        int(r.community),
        json.dumps([list(h) for h in r.headers], ensure_ascii=False),
        sections_json(r.sections),
        r.aside,
        r.response_time,
        r.size,
        r.h1_count,
        int(r.in_sitemap),
        r.request_url,
    )


def _discussions_json(discussions: Sequence[Discussion]) -> str:
    return json.dumps(
        [{"host": d.host, "url": d.url, "quote": d.quote} for d in discussions],
        ensure_ascii=False,
    )


def _page_record(row: Sequence[Any]) -> PageRecord:
    return PageRecord(
        url=row[0],
        host=row[1],
        status=row[2],
        depth=row[3],
        fetched_at=row[4],
        content_type=row[5],
        title=row[6],
        description=row[7],
        headings=tuple(json.loads(row[8])),
        text=row[9],
        lang=row[10],
        word_count=row[11],
        redirect_to=row[12],
        error=row[13],
        indexable=bool(row[14]),
        etag=row[15],
        last_modified=row[16],
        links_dropped=row[17],
        indexability=row[18],
        canonical=row[19],
        directives=tuple(row[20].split()),
        published=datetime.fromisoformat(row[21]) if row[21] else None,
        modified=datetime.fromisoformat(row[22]) if row[22] else None,
        modified_source=row[23],
        inlinks=row[24],
        text_hash=row[25],
        simhash=row[26],
        quality=row[27],
        community=bool(row[28]),
        headers=tuple((k, v) for k, v in json.loads(row[29])),
        sections=sections_from_json(row[30]),
        aside=row[31],
        response_time=row[32],
        size=row[33],
        h1_count=row[34],
        in_sitemap=bool(row[35]),
        request_url=row[36],
        authority=row[37],
        scored=bool(row[38]),
        duplicate_of=row[39],
        canonical_reason=row[40],
        discussed_on=_discussions(row[41]),
    )


def _discussions(stored: str) -> tuple[Discussion, ...]:
    if stored == "[]":  # nearly every page: no JSON parse
        return ()
    return tuple(Discussion(**d) for d in json.loads(stored))


def _crawl_run(r: Sequence[Any]) -> CrawlRun:
    return CrawlRun(
        id=r[0],
        started_at=r[1],
        finished_at=r[2],
        start_urls=tuple(json.loads(r[3])),
        pages_ok=r[4],
        pages_failed=r[5],
        outcome=Outcome.read(r[6]),
        skipped=json.loads(r[7]),
        resumed_from=r[8],
    )
