"""The store's schema as an ordered list of migrations.

Version N is reached by running migrations 1..N in order, each in its own
transaction, and recorded in ``schema_version``. Never edit a released
migration: add the next one.
"""

from __future__ import annotations

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
)

SCHEMA_VERSION = len(MIGRATIONS)
