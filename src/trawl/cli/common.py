"""What every command shares: the app, the data, store and config options, loading
settings, opening the store, failing with a message."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from trawl import settings as settings_module
from trawl.errors import ConfigError
from trawl.settings import Settings
from trawl.store.base import Store

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Trawl: crawl sites, index them, search them.",
)
err = Console(stderr=True)

DataOpt = Annotated[
    Path | None, typer.Option("--data", help="Data folder [env TRAWL_DATA, default ./trawl-data].")
]
StoreOpt = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="A postgresql:// URL or a SQLite file [env TRAWL_STORE, default DATA/trawl.sqlite].",
    ),
]
ConfigOpt = Annotated[
    Path | None, typer.Option("--config", help="A trawl.toml file [env TRAWL_CONFIG].")
]


def load_settings(config: Path | None, **overrides: object) -> Settings:
    return settings_module.load(config_file=config).replace(**overrides)


def fail(message: str) -> typer.Exit:
    err.print(f"[red]trawl: error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(code=2)


@contextmanager
def opened_store(settings: Settings) -> Iterator[Store]:
    """The store the settings name, closed on the way out, whatever happens inside."""
    from trawl.store import open_store

    store = open_store(settings)
    try:
        yield store
    finally:
        store.close()


def parse_host_port(text: str) -> tuple[str, int]:
    host, sep, port = text.strip().rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"--allow-host wants HOST:PORT, not {text!r}")
    return host.strip("[]").lower(), int(port)
