"""Where the crawl's knowledge lives: pages, links, the crawl log, the frontier."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from trawl.errors import ConfigError
from trawl.store.sqlite import SQLiteStore

if TYPE_CHECKING:
    from trawl.settings import Settings
    from trawl.store.base import Store

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def open_store(settings: Settings) -> Store:
    """The store the ``store`` setting names: a postgresql:// URL, a SQLite file,
    or (empty) trawl.sqlite in the data folder."""
    location = settings.store.strip()
    if location.startswith(POSTGRES_SCHEMES):
        # Imported when chosen: an embedded install never pays for loading psycopg.
        from trawl.store.postgres import PostgresStore  # noqa: PLC0415

        return PostgresStore(location)
    if "://" in location:
        scheme = location.split("://", 1)[0]
        raise ConfigError(f"store must be a postgresql:// URL or a SQLite file, not {scheme}://")
    return SQLiteStore(Path(location) if location else settings.sqlite_path)
