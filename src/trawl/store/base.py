"""The store interface every backend implements (SQLite now, PostgreSQL later).

Invariants every backend keeps:
- a page is identified by its normalised URL; saving it again replaces it
  (and its outgoing links) in place, never adds a second row;
- the schema is created and migrated by code when the store opens, and
  opening an up-to-date store changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

from trawl.records import CrawlRun, CrawlUrl, Link, PageRecord


class Store(Protocol):
    def add_site(self, start_url: str) -> None: ...

    def begin_crawl(self, start_urls: Sequence[str]) -> int: ...

    def finish_crawl(
        self, crawl_id: int, *, pages_ok: int, pages_failed: int, outcome: str
    ) -> None: ...

    def crawls(self, limit: int = 50) -> list[CrawlRun]: ...

    def frontier_add(self, crawl_id: int, items: Sequence[CrawlUrl]) -> None: ...

    def frontier_mark(
        self, crawl_id: int, url: str, state: str, reason: str | None = None
    ) -> None: ...

    def frontier_counts(self, crawl_id: int) -> dict[str, int]: ...

    def save_page(self, record: PageRecord, links: Sequence[Link] = ()) -> None: ...

    def page(self, url: str) -> PageRecord | None: ...

    def pages(self, *, indexable_only: bool = False) -> Iterator[PageRecord]: ...

    def count_pages(self) -> int: ...

    def links_from(self, url: str) -> list[Link]: ...

    def close(self) -> None: ...
