"""The ``trawl`` command. Thin: parse flags, call the pipeline, print.

One module a group of commands; ``common`` holds the app and what they share.
Commands import their stages lazily, so ``trawl --help`` stays fast.
"""

from __future__ import annotations

import importlib
import logging
import os
import re
import sys
import threading
from typing import Any

import typer

from trawl.cli.common import CLOSED, ExitCode, app

# Each module adds its commands to ``app`` as it is imported: in this order, which
# is the order ``trawl --help`` lists them in.
for _group in ("crawling", "searching", "exporting", "audit", "evaluation", "keys", "integrity"):
    importlib.import_module(f"trawl.cli.{_group}")


def command() -> Any:
    """The ``trawl`` command as click runs it, help texts tidied."""
    built = typer.main.get_command(app)
    _tidy_help(built)
    return built


def main() -> None:
    CLOSED.clear()
    try:
        command()(prog_name="trawl")
    except KeyboardInterrupt:
        sys.exit(ExitCode.INTERRUPTED)
    except SystemExit as done:
        if CLOSED and isinstance(done.code, int | None) and _alone():
            # The command closed what it opened; what is left is freeing memory the
            # kernel takes back at once. Output is flushed first: it is the result.
            logging.shutdown()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(done.code or 0)
        raise


def _alone() -> bool:
    """No other thread, and no child process, that an exit at once would cut short."""
    if threading.active_count() > 1:
        return False
    multiprocessing = sys.modules.get("multiprocessing")
    return multiprocessing is None or not multiprocessing.active_children()


_MARKUP_TAG = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")


def markup_escape(text: str) -> str:
    """``rich.markup.escape``, which every command runs over every help text: importing
    it loads rich's text and style machinery (1.8 MB resident), which a crawl never uses.
    tests/test_cli_coercion.py holds it to rich's answers."""
    text = _MARKUP_TAG.sub(lambda m: f"{m[1]}{m[1]}\\{m[2]}", text)
    if text.endswith("\\") and not text.endswith("\\\\"):
        return text + "\\"
    return text


def _tidy_help(command: Any) -> None:
    """Help texts shown as written, and no "<bool>" beside a flag.

    Typer renders help through Rich markup, which takes "[env var: TRAWL_DATA]"
    for a style and prints nothing of it: every text is escaped here, once, so
    the texts themselves (many are the settings' help) stay plain. A flag takes
    no value, so it gets no type column; the help option is made per command on
    demand, so it is asked for here once and kept (click caches it).
    """
    if command.help:
        command.help = markup_escape(command.help)
    for param in [*command.params, command.get_help_option(typer.Context(command))]:
        if param is None:
            continue
        if getattr(param, "help", None):
            param.help = markup_escape(param.help)
        if getattr(param, "is_flag", False):
            param.metavar = ""
    for sub in getattr(command, "commands", {}).values():
        _tidy_help(sub)
