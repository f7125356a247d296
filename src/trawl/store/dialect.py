"""What the store's SQL says differently on SQLite and on PostgreSQL, as data.

``sql_store.SqlStore`` writes every statement once, in the words both databases
read (``?`` placeholders, ``ON CONFLICT``, ``RETURNING``); a ``Dialect`` holds the
few things that differ, and the store asks it rather than rewriting text:

- ``placeholders``: sqlite3 takes ``?``, psycopg ``%s`` (a literal ``%`` doubled);
- ``like``: the operator that matches ignoring ASCII case (SQLite's LIKE does,
  PostgreSQL's needs ILIKE);
- ``clock``: the clock every worker shares (PostgreSQL's; an embedded store's is
  this process's own);
- ``join_lock``: taken inside a transaction so that one process at a time decides
  which crawl runs (SQLite's BEGIN IMMEDIATE already serialises it);
- ``claim`` and ``grant``: the lease claim and the page grant as one statement
  each (PostgreSQL: row locks and SKIP LOCKED, one round trip); without them the
  store runs them as several statements in one BEGIN IMMEDIATE transaction.

Pure data: no database module is imported here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

_JOIN_LOCK = 0x7472_6177_6C01  # pg_advisory_xact_lock key: one worker decides the running crawl


@dataclass(frozen=True)
class Dialect:
    name: str
    paramstyle: Literal["qmark", "format"]
    like: str
    clock: str | None = None
    join_lock: str | None = None
    # Parameters: crawl_id, owner, lease seconds, delay seconds, host_concurrency;
    # answers (url, depth, source, retries, request_url, lastmod) or no row.
    claim: str | None = None
    # Parameters: crawl_id, want, cap; answers how many were granted.
    grant: str | None = None

    def placeholders(self, sql: str) -> str:
        """``sql`` with the placeholders the driver takes."""
        return sql if self.paramstyle == "qmark" else _format_style(sql)


@lru_cache(maxsize=1024)
def _format_style(sql: str) -> str:
    # The store's SQL holds no "?" but its placeholders (no JSON operators, no "?" in a
    # literal): a statement written for it must keep that so.
    return sql.replace("%", "%%").replace("?", "%s")


_FREE = (
    "((f.state = 'queued' AND f.lease_owner IS NULL)"
    " OR (f.lease_owner IS NOT NULL AND f.lease_until < now.t))"
)
# shared_sql.CLAIM_HOST, CLAIM_URL, LEASE and BOOK_HOST in one statement. SKIP LOCKED:
# a host or URL another worker is claiming right now is passed over, not waited
# for; the host row's lock makes its slot booking atomic.
_POSTGRES_CLAIM = f"""
WITH args AS (
    SELECT ?::bigint AS crawl, ?::text AS owner, ?::float8 AS lease, ?::float8 AS delay,
           ?::bigint AS lim
),
now AS (SELECT extract(epoch FROM clock_timestamp())::float8 AS t),
slot AS (
    SELECT h.host, h.crawl_delay FROM host_slots h, now, args
    WHERE h.next_time <= now.t
      AND EXISTS (SELECT 1 FROM frontier f
                  WHERE f.crawl_id = args.crawl AND f.host = h.host AND {_FREE})
      AND (SELECT count(*) FROM frontier g
           WHERE g.crawl_id = args.crawl AND g.host = h.host
             AND g.lease_owner IS NOT NULL AND g.lease_until >= now.t) < args.lim
    ORDER BY h.next_time
    LIMIT 1
    FOR UPDATE OF h SKIP LOCKED
),
pick AS (
    SELECT f.url, f.depth, f.source, f.retries, f.request_url, f.lastmod
    FROM frontier f, slot, now, args
    WHERE f.crawl_id = args.crawl AND f.host = slot.host AND {_FREE}
    ORDER BY f.depth
    LIMIT 1
    FOR UPDATE OF f SKIP LOCKED
),
leased AS (
    UPDATE frontier SET lease_owner = args.owner, lease_until = now.t + args.lease
    FROM pick, now, args
    WHERE frontier.crawl_id = args.crawl AND frontier.url = pick.url
    RETURNING frontier.url
),
booked AS (
    UPDATE host_slots SET next_time = now.t + GREATEST(args.delay, slot.crawl_delay)
    FROM slot, now, leased, args
    WHERE host_slots.host = slot.host
)
SELECT pick.url, pick.depth, pick.source, pick.retries, pick.request_url, pick.lastmod
FROM pick, leased
"""  # noqa: S608 - constant text only

# The crawl's row is locked from the read to the write, so two workers asking at once
# are granted one after the other, never past the cap.
_POSTGRES_GRANT = """
WITH args AS (SELECT ?::bigint AS crawl, ?::bigint AS want, ?::bigint AS cap),
old AS (SELECT c.granted FROM crawls c, args WHERE c.id = args.crawl FOR UPDATE OF c),
new AS (
    UPDATE crawls SET granted = GREATEST(old.granted, LEAST(old.granted + args.want, args.cap))
    FROM old, args WHERE crawls.id = args.crawl
    RETURNING crawls.granted
)
SELECT new.granted - old.granted FROM new, old
"""

SQLITE = Dialect("sqlite", paramstyle="qmark", like="LIKE")
POSTGRESQL = Dialect(
    "postgresql",
    paramstyle="format",
    like="ILIKE",
    clock="SELECT extract(epoch FROM clock_timestamp())",
    join_lock=f"SELECT pg_advisory_xact_lock({_JOIN_LOCK})",
    claim=_POSTGRES_CLAIM,
    grant=_POSTGRES_GRANT,
)
