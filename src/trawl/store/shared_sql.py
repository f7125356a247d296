"""SQL that every backend runs as written (qmark placeholders; PostgreSQL's store
turns them into its own). Only statements that read the same in both dialects
live here; each backend keeps what differs.
"""

from __future__ import annotations

FRONTIER_ADD = (
    "INSERT INTO frontier (crawl_id, url, depth, source, host) VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT DO NOTHING"
)
HOST_ADD = "INSERT INTO host_slots (host) VALUES (?) ON CONFLICT DO NOTHING"

LATEST_RUNNING = "SELECT id FROM crawls WHERE outcome = 'running' ORDER BY id DESC LIMIT 1"
RUNNING_OF = (
    "SELECT id FROM crawls WHERE outcome = 'running' AND start_urls = ? ORDER BY id DESC LIMIT 1"
)
BEGIN_CRAWL = (
    "INSERT INTO crawls (started_at, start_urls, resumed_from) VALUES (?, ?, ?) RETURNING id"
)

# A URL is free when queued and not leased, or leased by a worker whose lease ran
# out: also one already marked done, since a worker that died between saving a
# page and releasing it may not have admitted the page's links. Its host must be
# due and have fewer than host_concurrency live leases.
# Parameters: crawl_id, now, now, now, host_concurrency.
CLAIM = """
SELECT f.url, f.depth, f.source, f.retries, f.host, h.crawl_delay
FROM frontier f JOIN host_slots h ON h.host = f.host
WHERE f.crawl_id = ?
  AND (f.state = 'queued' OR f.lease_owner IS NOT NULL)
  AND (f.lease_until IS NULL OR f.lease_until < ?)
  AND h.next_time <= ?
  AND (SELECT count(*) FROM frontier g
       WHERE g.crawl_id = f.crawl_id AND g.host = f.host AND g.lease_until >= ?) < ?
ORDER BY h.next_time, f.depth
LIMIT 1
"""
LEASE = "UPDATE frontier SET lease_owner = ?, lease_until = ? WHERE crawl_id = ? AND url = ?"
BOOK_HOST = "UPDATE host_slots SET next_time = ? WHERE host = ?"
RELEASE = (
    "UPDATE frontier SET lease_owner = NULL, lease_until = NULL"
    " WHERE crawl_id = ? AND url = ? AND lease_owner = ?"
)
RETRY = (
    "UPDATE frontier SET lease_owner = NULL, lease_until = NULL, retries = ?"
    " WHERE crawl_id = ? AND url = ? AND lease_owner = ?"
)
# Parameters: crawl_id, now.
NEXT_HOST_TIME = """
SELECT min(h.next_time) FROM host_slots h
WHERE EXISTS (SELECT 1 FROM frontier f WHERE f.crawl_id = ? AND f.host = h.host
              AND f.state = 'queued' AND (f.lease_until IS NULL OR f.lease_until < ?))
"""
ACTIVE = (
    "SELECT EXISTS (SELECT 1 FROM frontier WHERE crawl_id = ?"
    " AND (state = 'queued' OR lease_owner IS NOT NULL))"
)
SET_CRAWL_DELAY = (
    "INSERT INTO host_slots (host, crawl_delay) VALUES (?, ?)"
    " ON CONFLICT (host) DO UPDATE SET crawl_delay = excluded.crawl_delay"
)
