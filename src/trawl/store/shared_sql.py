"""SQL that both databases run as written (``?`` placeholders, which the PostgreSQL
dialect gives psycopg as ``%s``). What differs is in ``dialect.py``.
"""

from __future__ import annotations

FRONTIER_ADD = (
    "INSERT INTO frontier"
    " (crawl_id, url, depth, source, host, request_url, lastmod, state, kind, reason)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
)
# A sitemap's date for a URL already queued (by a link, by another worker): the first
# date kept, as for a URL the sitemap queued. Parameters: lastmod, crawl_id, url.
FRONTIER_DATE = "UPDATE frontier SET lastmod = ? WHERE crawl_id = ? AND url = ? AND lastmod IS NULL"
# One more failure in a row at a host in a crawl (a count left by another crawl starts
# again). Parameters: host, crawl_id.
HOST_FAILED = """
INSERT INTO host_slots (host, failures, failures_crawl) VALUES (?, 1, ?)
ON CONFLICT (host) DO UPDATE SET
    failures = CASE WHEN host_slots.failures_crawl = excluded.failures_crawl
                    THEN host_slots.failures + 1 ELSE 1 END,
    failures_crawl = excluded.failures_crawl
RETURNING failures
"""
# Parameters: SkipKind.PARKED, reason, crawl_id, host, now.
PARK_QUEUED = """
UPDATE frontier SET state = 'skipped', kind = ?, reason = ?, lease_owner = NULL, lease_until = NULL
WHERE crawl_id = ? AND host = ? AND state = 'queued'
  AND (lease_owner IS NULL OR lease_until < ?)
RETURNING url, depth, source, retries, request_url
"""
HOST_ADD = "INSERT INTO host_slots (host) VALUES (?) ON CONFLICT DO NOTHING"

# Parameters: Outcome.RUNNING (and the start URLs).
LATEST_RUNNING = "SELECT id FROM crawls WHERE outcome = ? ORDER BY id DESC LIMIT 1"
RUNNING_OF = "SELECT id FROM crawls WHERE outcome = ? AND start_urls = ? ORDER BY id DESC LIMIT 1"
BEGIN_CRAWL = (
    "INSERT INTO crawls (started_at, start_urls, resumed_from) VALUES (?, ?, ?) RETURNING id"
)

# A URL is free when queued and never leased, or leased by a worker whose lease
# ran out: also one already marked done, since a worker that died between saving
# a page and releasing it may not have admitted the page's links. (A URL with no
# lease owner has no lease time either.) Each side has a partial index.
_FREE = (
    "((f.state = 'queued' AND f.lease_owner IS NULL)"
    " OR (f.lease_owner IS NOT NULL AND f.lease_until < ?))"
)
# First a host: due, with free work, and fewer than host_concurrency live leases.
# Locking its row (PostgreSQL) serialises claims on one host, so the slot booked
# next is the only one. Parameters: now, crawl_id, now, crawl_id, now, host_concurrency.
CLAIM_HOST = f"""
SELECT h.host, h.crawl_delay FROM host_slots h
WHERE h.next_time <= ?
  AND EXISTS (SELECT 1 FROM frontier f WHERE f.crawl_id = ? AND f.host = h.host AND {_FREE})
  AND (SELECT count(*) FROM frontier g WHERE g.crawl_id = ? AND g.host = h.host
       AND g.lease_owner IS NOT NULL AND g.lease_until >= ?) < ?
ORDER BY h.next_time
LIMIT 1
"""  # noqa: S608 - constant text only
# Then the host's shallowest free URL. Parameters: crawl_id, host, now.
CLAIM_URL = f"""
SELECT f.url, f.depth, f.source, f.retries, f.request_url, f.lastmod FROM frontier f
WHERE f.crawl_id = ? AND f.host = ? AND {_FREE}
ORDER BY f.depth
LIMIT 1
"""  # noqa: S608 - constant text only
LEASE = "UPDATE frontier SET lease_owner = ?, lease_until = ? WHERE crawl_id = ? AND url = ?"
BOOK_HOST = "UPDATE host_slots SET next_time = ? WHERE host = ?"
# Parameters: lease_until, crawl_id, owner.
RENEW = "UPDATE frontier SET lease_until = ? WHERE crawl_id = ? AND lease_owner = ?"
RELEASE = (
    "UPDATE frontier SET lease_owner = NULL, lease_until = NULL"
    " WHERE crawl_id = ? AND url = ? AND lease_owner = ?"
)
RETRY = (
    "UPDATE frontier SET lease_owner = NULL, lease_until = NULL, retries = ?"
    " WHERE crawl_id = ? AND url = ? AND lease_owner = ?"
)
# Parameters: crawl_id, now.
NEXT_HOST_TIME = f"""
SELECT min(h.next_time) FROM host_slots h
WHERE EXISTS (SELECT 1 FROM frontier f WHERE f.crawl_id = ? AND f.host = h.host AND {_FREE})
"""  # noqa: S608 - constant text only
ACTIVE = (
    "SELECT EXISTS (SELECT 1 FROM frontier WHERE crawl_id = ? AND state = 'queued')"
    " OR EXISTS (SELECT 1 FROM frontier WHERE crawl_id = ? AND lease_owner IS NOT NULL)"
)
# A host's next slot booked for a request no claim handed out, in one statement (the
# row is locked from read to write); it answers when the booked request may start,
# and books nothing (no row) when that is after a latest start. Parameters: host,
# now + delay (a host with no row yet), now, now, delay, delay, latest, delay, delay.
BOOK_SLOT = """
INSERT INTO host_slots (host, next_time) VALUES (?, ?)
ON CONFLICT (host) DO UPDATE SET next_time =
    (CASE WHEN host_slots.next_time > ? THEN host_slots.next_time ELSE ? END)
    + (CASE WHEN host_slots.crawl_delay > ? THEN host_slots.crawl_delay ELSE ? END)
WHERE host_slots.next_time <= ?
RETURNING next_time - (CASE WHEN crawl_delay > ? THEN crawl_delay ELSE ? END)
"""
# The host is held for the delay from now on (its next_time at least now + delay): the
# page that waited for robots.txt goes out now. Parameters: host, delay, now + delay.
SET_CRAWL_DELAY = (
    "INSERT INTO host_slots (host, crawl_delay, next_time) VALUES (?, ?, ?)"
    " ON CONFLICT (host) DO UPDATE SET crawl_delay = excluded.crawl_delay,"
    " next_time = CASE WHEN host_slots.next_time > excluded.next_time"
    " THEN host_slots.next_time ELSE excluded.next_time END"
)
