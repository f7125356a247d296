"""The store's schema as an ordered list of migrations, shared by every backend.

Version N is reached by running migrations 1..N in order, each in its own
transaction, and recorded in ``schema_version``. Never edit a released
migration: add the next one.

Migrations are written once, in SQLite's dialect restricted to what PostgreSQL
also reads; ``postgres_migration`` translates the few words that differ
(INTEGER is 64-bit, REAL is double precision, integer keys, WITHOUT ROWID) and
adds what only PostgreSQL needs (``POSTGRES_EXTRA``). Write new migrations in
that subset: TEXT, INTEGER, REAL, ALTER TABLE ... ADD COLUMN, CREATE [UNIQUE]
INDEX (partial ones too), DROP INDEX, -- comments.
"""

from __future__ import annotations

import re

MIGRATIONS: tuple[str, ...] = (
    # 1: the foundation tables.
    """
    CREATE TABLE sites (
        id          INTEGER PRIMARY KEY,
        host        TEXT NOT NULL UNIQUE,
        start_url   TEXT NOT NULL,
        enabled     INTEGER NOT NULL DEFAULT 1,
        created_at  REAL NOT NULL
    );
    CREATE TABLE crawls (
        id            INTEGER PRIMARY KEY,
        started_at    REAL NOT NULL,
        finished_at   REAL,
        start_urls    TEXT NOT NULL,            -- JSON list
        pages_ok      INTEGER NOT NULL DEFAULT 0,
        pages_failed  INTEGER NOT NULL DEFAULT 0,
        outcome       TEXT NOT NULL DEFAULT 'running'
    );
    CREATE TABLE pages (
        id            INTEGER PRIMARY KEY,
        url           TEXT NOT NULL UNIQUE,     -- normalised identity
        host          TEXT NOT NULL,
        status        INTEGER NOT NULL,
        depth         INTEGER NOT NULL,
        fetched_at    REAL NOT NULL,
        content_type  TEXT NOT NULL DEFAULT '',
        title         TEXT NOT NULL DEFAULT '',
        description   TEXT NOT NULL DEFAULT '',
        headings      TEXT NOT NULL DEFAULT '', -- JSON list: H1s then H2s
        body          TEXT NOT NULL DEFAULT '',
        lang          TEXT,
        word_count    INTEGER NOT NULL DEFAULT 0,
        redirect_to   TEXT,
        error         TEXT,
        indexable     INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX pages_host ON pages(host);
    CREATE TABLE links (
        from_page   INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
        to_url      TEXT NOT NULL,
        anchor      TEXT NOT NULL DEFAULT '',
        nofollow    INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX links_from ON links(from_page);
    CREATE INDEX links_to ON links(to_url);
    CREATE TABLE frontier (
        crawl_id    INTEGER NOT NULL REFERENCES crawls(id) ON DELETE CASCADE,
        url         TEXT NOT NULL,
        depth       INTEGER NOT NULL,
        source      TEXT,
        state       TEXT NOT NULL DEFAULT 'queued',  -- queued, fetched, failed, skipped
        reason      TEXT,
        PRIMARY KEY (crawl_id, url)
    ) WITHOUT ROWID;
    CREATE INDEX frontier_state ON frontier(crawl_id, state);
    """,
    # 2: lifecycle: resumable runs, skip reasons, pruning, conditional requests.
    """
    ALTER TABLE crawls ADD COLUMN skipped TEXT NOT NULL DEFAULT '{}';  -- JSON reason -> count
    ALTER TABLE crawls ADD COLUMN samples TEXT NOT NULL DEFAULT '{}';  -- JSON reason -> URLs
    ALTER TABLE crawls ADD COLUMN resumed_from INTEGER REFERENCES crawls(id);
    ALTER TABLE pages ADD COLUMN crawl_id INTEGER;  -- the last crawl that saw the page
    ALTER TABLE pages ADD COLUMN etag TEXT;
    ALTER TABLE pages ADD COLUMN last_modified TEXT;
    CREATE INDEX pages_crawl ON pages(host, crawl_id);
    """,
    # 3: page understanding: occurrences with context, indexability, dates.
    """
    ALTER TABLE links ADD COLUMN element TEXT NOT NULL DEFAULT 'a';
    ALTER TABLE links ADD COLUMN attribute TEXT NOT NULL DEFAULT 'href';
    ALTER TABLE links ADD COLUMN rel TEXT NOT NULL DEFAULT '';
    ALTER TABLE links ADD COLUMN heading TEXT NOT NULL DEFAULT '';
    ALTER TABLE pages ADD COLUMN links_dropped INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE pages ADD COLUMN inlinks INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE pages ADD COLUMN indexability TEXT;
    ALTER TABLE pages ADD COLUMN canonical TEXT;
    ALTER TABLE pages ADD COLUMN directives TEXT NOT NULL DEFAULT '';
    ALTER TABLE pages ADD COLUMN published TEXT;
    ALTER TABLE pages ADD COLUMN modified TEXT;
    ALTER TABLE pages ADD COLUMN modified_source TEXT;
    """,
    # 4: corpus hygiene: fingerprints, quality, authority, duplicates, discussions.
    """
    ALTER TABLE pages ADD COLUMN text_hash INTEGER;      -- 63-bit, fits a signed column
    ALTER TABLE pages ADD COLUMN simhash INTEGER;        -- 63-bit SimHash of word trigrams
    ALTER TABLE pages ADD COLUMN quality REAL NOT NULL DEFAULT 0;
    ALTER TABLE pages ADD COLUMN community INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE pages ADD COLUMN authority REAL NOT NULL DEFAULT 0;
    ALTER TABLE pages ADD COLUMN scored INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE pages ADD COLUMN duplicate_of TEXT;      -- the canonical copy's URL
    ALTER TABLE pages ADD COLUMN canonical_reason TEXT;
    ALTER TABLE pages ADD COLUMN discussed_on TEXT NOT NULL DEFAULT '[]';  -- JSON list
    CREATE INDEX pages_text_hash ON pages(text_hash);
    CREATE INDEX pages_duplicate_of ON pages(duplicate_of);
    """,
    # 5: the service: API keys, stored response headers, header checks of external
    # links, and an index on every column the crawl table sorts by (100k-row reports).
    """
    CREATE TABLE api_keys (
        id          INTEGER PRIMARY KEY,
        name        TEXT NOT NULL,
        digest      TEXT NOT NULL UNIQUE,   -- sha256 of the key, never the key itself
        created_at  REAL NOT NULL,
        last_used   REAL
    );
    CREATE TABLE header_checks (
        url         TEXT PRIMARY KEY,
        status      INTEGER NOT NULL,       -- 0: no response (see error)
        location    TEXT,
        error       TEXT,
        headers     TEXT NOT NULL DEFAULT '[]',
        checked_at  REAL NOT NULL
    ) WITHOUT ROWID;
    ALTER TABLE pages ADD COLUMN headers TEXT NOT NULL DEFAULT '[]';  -- JSON [[name, value]]
    CREATE INDEX pages_status ON pages(status);
    CREATE INDEX pages_indexability ON pages(indexability);
    CREATE INDEX pages_title ON pages(title);
    CREATE INDEX pages_word_count ON pages(word_count);
    CREATE INDEX pages_depth ON pages(depth);
    CREATE INDEX pages_inlinks ON pages(inlinks);
    CREATE INDEX pages_lang ON pages(lang);
    CREATE INDEX pages_published ON pages(published);
    CREATE INDEX pages_modified ON pages(modified);
    CREATE INDEX pages_fetched_at ON pages(fetched_at);
    """,
    # 6: resource checks: the HEAD answer for each image, script, stylesheet...
    """
    CREATE TABLE resources (
        url             TEXT PRIMARY KEY,
        status          INTEGER NOT NULL,         -- 0: no response, see error
        content_type    TEXT,
        content_length  INTEGER,
        error           TEXT,
        checked_at      REAL NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX resources_status ON resources(status);
    """,
    # 7: workers sharing one store: frontier leases and per-host politeness.
    """
    ALTER TABLE frontier ADD COLUMN host TEXT NOT NULL DEFAULT '';
    ALTER TABLE frontier ADD COLUMN retries INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE frontier ADD COLUMN lease_owner TEXT;   -- the worker fetching it now
    ALTER TABLE frontier ADD COLUMN lease_until REAL;   -- after this, others may take it
    CREATE INDEX frontier_free ON frontier(crawl_id, host, depth)
        WHERE state = 'queued' AND lease_owner IS NULL;
    CREATE INDEX frontier_leased ON frontier(crawl_id, host, lease_until)
        WHERE lease_owner IS NOT NULL;
    CREATE TABLE host_slots (
        host         TEXT PRIMARY KEY,
        next_time    REAL NOT NULL DEFAULT 0,  -- when the next request may start
        crawl_delay  REAL NOT NULL DEFAULT 0   -- robots.txt Crawl-delay, if longer than ours
    );
    """,
    # 8: max_pages across all the workers of a crawl: URLs they have been granted.
    """
    ALTER TABLE crawls ADD COLUMN granted INTEGER NOT NULL DEFAULT 0;
    """,
    # 9: API key scopes and expiry, and admin logins as server-side sessions.
    """
    ALTER TABLE api_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT 'search admin';
    ALTER TABLE api_keys ADD COLUMN expires_at REAL;     -- NULL: never
    CREATE TABLE sessions (
        digest      TEXT PRIMARY KEY,                    -- sha256 of the cookie's token
        key_id      INTEGER NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
        created_at  REAL NOT NULL,
        expires_at  REAL NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX sessions_key ON sessions(key_id);
    """,
    # 10: the headed sections of a page's text, for deep links: JSON [[title, level, anchor,
    #    start]], start an offset in body; the visible words the main text left out.
    """
    ALTER TABLE pages ADD COLUMN sections TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE pages ADD COLUMN aside TEXT NOT NULL DEFAULT '';
    """,
    # 11: the SEO report: response time and size, H1 count, sitemap membership, and each
    #    crawl's view of its pages (status, title, indexability) for crawl comparison.
    """
    ALTER TABLE pages ADD COLUMN response_time REAL;     -- seconds, NULL: no response
    ALTER TABLE pages ADD COLUMN size INTEGER;           -- body bytes as received
    ALTER TABLE pages ADD COLUMN h1_count INTEGER;       -- NULL: not parsed as HTML
    ALTER TABLE pages ADD COLUMN in_sitemap INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX pages_response_time ON pages(response_time);
    CREATE INDEX pages_size ON pages(size);
    CREATE TABLE page_history (
        crawl_id      INTEGER NOT NULL,
        url           TEXT NOT NULL,
        host          TEXT NOT NULL,
        status        INTEGER NOT NULL,
        title         TEXT NOT NULL DEFAULT '',
        indexability  TEXT,
        PRIMARY KEY (crawl_id, url)
    ) WITHOUT ROWID;
    CREATE INDEX page_history_host ON page_history(host, crawl_id);
    """,
    # 12: the exact URL first seen beside its identity (seed 003), where they differ:
    #    NULL means the identity was requested, so older rows read as they were.
    #    And per host in a crawl shared by workers: failures in a row, and the run
    #    that parked the host (failures_crawl, parked_by: a crawl id).
    """
    ALTER TABLE frontier ADD COLUMN request_url TEXT;
    ALTER TABLE pages ADD COLUMN request_url TEXT;
    ALTER TABLE links ADD COLUMN request_url TEXT;
    ALTER TABLE host_slots ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE host_slots ADD COLUMN failures_crawl INTEGER;
    ALTER TABLE host_slots ADD COLUMN parked_by INTEGER;
    ALTER TABLE host_slots ADD COLUMN parked_reason TEXT;
    """,
    # 13: skip reasons as kind plus detail (records.SkipKind): the kind a column of its
    #    own, matched by equality; ``reason`` keeps the detail. The facts about a crawl
    #    that were frontier rows at marker URLs (a cap that kept a host's URLs out, an
    #    embedded crawl) move to crawl_marks (records.MarkKind). Old rows are read by
    #    the prefixes this version's predecessors wrote, once, here.
    """
    ALTER TABLE frontier ADD COLUMN kind TEXT;
    UPDATE frontier SET kind = 'robots unanswered', reason = substr(reason, 13)
        WHERE state = 'skipped' AND reason LIKE 'robots.txt:%nothing allowed';
    UPDATE frontier SET kind = 'robots', reason = substr(reason, 13)
        WHERE state = 'skipped' AND kind IS NULL AND reason LIKE 'robots.txt: %';
    UPDATE frontier SET kind = 'parked', reason = substr(reason, 14)
        WHERE state = 'skipped' AND reason LIKE 'host parked: %';
    UPDATE host_slots SET parked_reason = substr(parked_reason, 14)
        WHERE parked_reason LIKE 'host parked: %';
    CREATE TABLE crawl_marks (
        crawl_id    INTEGER NOT NULL,
        host        TEXT NOT NULL,
        kind        TEXT NOT NULL,
        detail      TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (crawl_id, host, kind, detail)
    );
    INSERT INTO crawl_marks (crawl_id, host, kind, detail)
        SELECT DISTINCT crawl_id, host, 'cap', substr(reason, 9) FROM frontier
        WHERE state = 'marker' AND reason LIKE 'capped: %';
    INSERT INTO crawl_marks (crawl_id, host, kind, detail)
        SELECT DISTINCT crawl_id, host, 'embedded', '' FROM frontier
        WHERE state = 'marker' AND reason = 'embedded crawl';
    DELETE FROM frontier WHERE state = 'marker';
    """,
    # 14: indexes no query uses, written on every page saved: pages_host is the first
    #    column of pages_crawl (host, crawl_id), which serves every host lookup; no query
    #    filters or sorts by text_hash (duplicates are found in memory over all pages).
    """
    DROP INDEX pages_host;
    DROP INDEX pages_text_hash;
    """,
    # 15: a sitemap's lastmod (ISO 8601, aware UTC) kept with a queued URL, so the worker
    #    of a shared crawl that claims it dates the page as an embedded crawl does.
    """
    ALTER TABLE frontier ADD COLUMN lastmod TEXT;
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)

# Statements only PostgreSQL needs, run at the end of the migration of that number.
POSTGRES_EXTRA: dict[int, str] = {
    # The store lists a page's links in insertion order by SQLite's implicit rowid;
    # PostgreSQL gets a real column of that name, so the same SQL reads on both.
    1: "ALTER TABLE links ADD COLUMN rowid BIGINT GENERATED BY DEFAULT AS IDENTITY;"
    # SQLite's instr(), which store queries use to cut URLs, under its SQLite name.
    " CREATE FUNCTION instr(text, text) RETURNS integer"
    " AS 'SELECT strpos($1, $2)' LANGUAGE sql IMMUTABLE STRICT",
}

_POSTGRES_WORDS = (
    (
        re.compile(r"\bINTEGER PRIMARY KEY\b"),
        "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
    ),
    # SQLite's INTEGER holds 64 bits (hashes do); PostgreSQL's only 32.
    (re.compile(r"\bINTEGER\b(?! GENERATED)"), "BIGINT"),
    # SQLite's REAL is 8 bytes; PostgreSQL's is 4, too coarse for epoch seconds.
    (re.compile(r"\bREAL\b"), "DOUBLE PRECISION"),
    (re.compile(r"\)\s*WITHOUT ROWID"), ")"),
)


def postgres_migration(version: int) -> str:
    """Migration ``version`` (1-based) in PostgreSQL's dialect."""
    sql = MIGRATIONS[version - 1]
    for pattern, replacement in _POSTGRES_WORDS:
        sql = pattern.sub(replacement, sql)
    extra = POSTGRES_EXTRA.get(version)
    return sql + (f";\n{extra};" if extra else "")
