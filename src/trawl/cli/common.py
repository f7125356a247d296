"""What every command shares: the app, options built from the settings table, the
exit codes, loading settings, opening the store, failing with a message."""

from __future__ import annotations

import ipaddress
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import IntEnum
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

import trawl
from trawl import settings as settings_module
from trawl.cli import coercion
from trawl.errors import ConfigError, SearchIndexError, StoreError, TrawlError
from trawl.extras import require
from trawl.settings import Settings
from trawl.store.base import Store

if TYPE_CHECKING:
    from rich.console import Console

# Set by a command that has closed everything it opened (store, index, worker
# processes, threads): ``main`` may then end the process without the interpreter's
# teardown, which frees every object one by one (0.4-0.6 s after a 2,000-page crawl).
CLOSED: set[str] = set()


class ExitCode(IntEnum):
    """What ``trawl`` exits with (README, "Exit codes")."""

    OK = 0
    UNHEALTHY = 1  # a crawl ended unhealthy or indexed nothing; a check failed
    USAGE = 2  # a bad option, setting or URL; a feature whose extra is not installed
    NO_DATA = 3  # the data folder, its store or its index cannot be opened
    INTERRUPTED = 130  # Ctrl-C


coercion.install()  # pydantic only for values typer alone can coerce (10.7 MB)

# Help texts are plain text: trawl.cli.main escapes them for Rich.
app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode="rich",
    help="Trawl: crawl sites, index them, search them.",
    epilog=(
        "Exit codes: 0 done; 1 a crawl ended unhealthy or indexed nothing, or a check"
        " failed; 2 a bad option, setting or URL, or a missing extra; 3 the data folder,"
        " its store or its index cannot be opened; 130 interrupted."
    ),
)


@cache
def error_console() -> Console:
    """rich's Console on stderr, made on first use: rich's console and markup are 2.4 MB
    resident in a command (a crawl) whose output is plain lines (typer.echo)."""
    from rich.console import Console  # the reason for this function

    return Console(stderr=True)


class _ErrorConsole:
    """``err``: the error console's methods, the console made on the first call."""

    def __getattr__(self, name: str) -> Any:
        return getattr(error_console(), name)


err = cast("Console", _ErrorConsole())


def on_terminal() -> bool:
    """``err.is_terminal`` without loading rich where its answer is certainly no: rich
    says yes only to a terminal, TTY_COMPATIBLE=1 or a non-empty FORCE_COLOR."""
    if not (
        sys.stderr.isatty()
        or os.environ.get("TTY_COMPATIBLE") == "1"
        or os.environ.get("FORCE_COLOR")
    ):
        return False
    return err.is_terminal


_SETTINGS = {info.name: info for info in settings_module.table()}


def setting_option(
    name: str, *flags: str, default: str | None = None, repeatable: bool = False
) -> Any:
    """A flag that sets the setting ``name``: its help, bounds, environment variable
    and default come from the settings table, so each is written once.

    The parameter's own default stays ``None`` ("not given"): the setting's value
    from trawl.toml or the environment then holds. ``default`` overrides how the
    default is shown (the store's empty default means a file in the data folder).
    ``repeatable``: a list setting, each use of the flag one more item.
    """
    info = _SETTINGS[name]
    number = isinstance(info.default, int | float) and not isinstance(info.default, bool)
    shown = default if default is not None else _shown(info.default)
    return typer.Option(
        *(flags or (f"--{name.replace('_', '-')}",)),
        help=f"{info.help}{' Repeatable.' if repeatable else ''}"
        f" [env var: {info.env}] [default: {shown}]",
        min=info.minimum if number else None,
        max=info.maximum if number else None,
        show_default=False,
    )


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value) if value != "" else "(empty)"


DataOpt = Annotated[Path | None, setting_option("data")]
StoreOpt = Annotated[str | None, setting_option("store", default="DATA/trawl.sqlite")]
ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config",
        help=(
            f"A TOML file of settings. [env var: TRAWL_CONFIG]"
            f" [default: {settings_module.CONFIG_FILE} when present]"
        ),
    ),
]


def _print_version(wanted: bool) -> None:
    if wanted:
        # Imported when asked: 40 ms of a crawl's start-up otherwise, for --version alone.
        from importlib import metadata

        try:
            version = metadata.version("trawl")
        except metadata.PackageNotFoundError:  # run from a source tree without installing
            version = trawl.__version__
        typer.echo(f"trawl {version}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Trawl: crawl sites, index them, search them."""


def load_settings(config: Path | None, **overrides: object) -> Settings:
    return settings_module.load(config_file=config).replace(**overrides)


def exit_code(error: TrawlError) -> ExitCode:
    if isinstance(error, StoreError | SearchIndexError):
        return ExitCode.NO_DATA
    return ExitCode.USAGE


def fail(error: TrawlError | str) -> typer.Exit:
    """One line on stderr, and the exit the error's kind calls for (a string: usage)."""
    message = str(error)
    from rich.markup import escape  # rich only when there is an error

    err.print(f"[red]trawl: error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
    code = exit_code(error) if isinstance(error, TrawlError) else ExitCode.USAGE
    return typer.Exit(code=code)


def check_extras(settings: Settings) -> None:
    """Fail now, before any crawl begins, when the settings ask for a feature
    whose extra is missing (MissingExtra names it)."""
    if settings.render:
        require("render")


@contextmanager
def opened_store(settings: Settings, *, create: bool = False) -> Iterator[Store]:
    """The store the settings name, closed on the way out, whatever happens inside.

    Unless ``create``, a SQLite store that does not exist yet is an error rather
    than an empty data folder made as a side effect of a command that only reads.
    """
    from trawl.store import open_store

    store = open_store(settings, create=create)
    try:
        yield store
    finally:
        store.close()


def parse_host_port(text: str) -> tuple[str, int]:
    if "/" in text:  # a network: every address in it, any port (net/addresses.ANY_PORT)
        try:
            return str(ipaddress.ip_network(text.strip(), strict=False)), 0
        except ValueError:
            raise ConfigError(f"--allow-host: {text!r} is not a network") from None
    host, sep, port = text.strip().rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"--allow-host wants HOST:PORT or a network (10.1.0.0/16), not {text!r}")
    return host.strip("[]").lower(), int(port)
