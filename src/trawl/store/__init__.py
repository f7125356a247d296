"""Where the crawl's knowledge lives: pages, links, the crawl log, the frontier."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from trawl.errors import ConfigError, StoreError
from trawl.store.sqlite import SQLiteStore

if TYPE_CHECKING:
    from trawl.settings import Settings
    from trawl.store.base import Store

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def open_store(settings: Settings, *, create: bool = True, check_schema: bool = True) -> Store:
    """The store the ``store`` setting names: a postgresql:// URL, a SQLite file,
    or (empty) trawl.sqlite in the data folder.

    With ``create`` false a SQLite file that does not exist is a ``StoreError``:
    commands that only read must not leave an empty data folder behind. With
    ``check_schema`` false a SQLite file is taken as migrated already: another
    connection of this process checked it (``connections.StoreConnections``).
    """
    location = settings.store.strip()
    if location.startswith(POSTGRES_SCHEMES):
        # Imported when chosen: an embedded install never pays for loading psycopg.
        from trawl.store.postgres import PostgresStore  # noqa: PLC0415

        return PostgresStore(location)
    if "://" in location:
        scheme = location.split("://", 1)[0]
        raise ConfigError(f"store must be a postgresql:// URL or a SQLite file, not {scheme}://")
    path = Path(location) if location else settings.sqlite_path
    if not create and not path.is_file():
        raise StoreError(f"no Trawl store at {path}: crawl a site first (trawl crawl URL)")
    return SQLiteStore(path, check_schema=check_schema)
