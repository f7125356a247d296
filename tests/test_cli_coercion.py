"""What a command loads before it runs: option values coerced without pydantic, exactly
as typer would (trawl.cli.coercion), and rich only when something is drawn."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
import typer
import typer.main
from typer._coercion import build_runtime_param

from trawl.cli import command, markup_escape
from trawl.cli.common import app

# What a command line or a TRAWL_ variable can hand a parameter: plain values, and the
# edges where only typer (pydantic) may answer: signs, spaces, exponents, non-ASCII
# digits, bounds, empty strings.
VALUES: tuple[Any, ...] = (
    None,
    "0",
    "1",
    "016",
    "16",
    "100",
    "101",
    "1000",
    "1001",
    "-1",
    "+5",
    " 5",
    "5 ",
    "1_000",
    "1.5",
    "0.25",
    "1.",
    ".5",
    "1e3",
    "nan",
    "inf",
    "abc",
    "",
    "\u0663",  # ARABIC-INDIC DIGIT THREE: int() takes it
    "99999999999999999999",
    "site",
    "data/here",
    "/tmp",
    "a\x00b",  # no command line holds a NUL, but the contract is typer's error
    "\udcff.txt",  # a file name's undecodable byte, as Python hands argv over
    "000000000000000000",
    "9" * 19,
    ("a", "b"),
    ["https://example.org/"],
    (),
    True,
)


def _parameters() -> list[tuple[str, Any, Any]]:
    group: Any = typer.main.get_command(app)
    found = []
    for name, sub in sorted(group.commands.items()):
        for param in sub.params:
            if hasattr(param, "type_descriptor"):
                found.append((f"{name} {param.name}", sub, param))
    return found


PARAMETERS = _parameters()


def _answer(runtime: Any, value: Any, param: Any, command: Any) -> tuple[str, Any]:
    ctx = typer._click.Context(command)
    try:
        return "value", runtime.coerce(value, param=param, ctx=ctx)
    except Exception as e:  # the error typer would print, word for word
        message = e.format_message() if hasattr(e, "format_message") else str(e)
        return type(e).__name__, message


@pytest.mark.parametrize(("where", "command", "param"), PARAMETERS, ids=[p[0] for p in PARAMETERS])
def test_every_option_coerces_as_typer_would(where: str, command: Any, param: Any) -> None:
    param._runtime_param = None
    ours = param.get_runtime_param()
    typers = build_runtime_param(param.type_descriptor)
    assert type(ours).__name__ == "Plain", "trawl.cli.coercion is not installed"
    for value in VALUES:
        expected = _answer(typers, value, param, command)
        got = _answer(ours, value, param, command)
        assert got == expected, f"{where} given {value!r}"
        assert type(got[1]) is type(expected[1]), f"{where} given {value!r}"


def test_a_crawl_command_line_loads_no_pydantic() -> None:
    """typer coerces through pydantic (10.7 MB resident), and rich's console and markup
    are 2.4 MB more; a crawl off a terminal needs neither. The command line of
    bench/many_hosts.py, parsed up to the crawl itself."""
    code = (
        "import sys, trawl.cli.crawling as crawling\n"
        "def stop(*args, **kwargs):\n"
        "    from trawl.cli.common import on_terminal\n"
        "    assert not on_terminal()  # stderr is a pipe\n"
        "    print(sorted(m for m in ('pydantic', 'pydantic_core', 'rich') if m in sys.modules))\n"
        "    raise SystemExit(0)\n"
        "crawling._crawl = stop\n"
        "from trawl.cli import main\n"
        "sys.argv = ['trawl', 'crawl', 'http://127.0.0.1:9/', '--data', sys.argv[1],"
        " '--delay', '1', '--host-concurrency', '1', '--concurrency', '16', '--max-pages', '50']\n"
        "main()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, "data-folder-never-created"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert result.stdout.strip() == "[]", result.stdout + result.stderr


def _help_texts(cmd: Any) -> list[str]:
    texts = [cmd.help or ""]
    texts += [getattr(p, "help", None) or "" for p in cmd.params]
    for sub in getattr(cmd, "commands", {}).values():
        texts += _help_texts(sub)
    return texts


def test_help_texts_are_escaped_as_rich_escapes_them() -> None:
    from rich.markup import escape

    tricky = [
        "[env var: TRAWL_DATA]",
        "[bold]x[/bold] and [/] and [#fff] and [@click]",
        "\\[red]one backslash",
        "\\\\[red]two backslashes",
        "ends with a backslash\\",
        "ends with two\\\\",
        "[Upper] [1] [ space] [a[b]c]",
        "",
    ]
    raw = _help_texts(typer.main.get_command(app))
    assert any("[" in text for text in raw), "no help text to test"
    for text in [*tricky, *raw]:
        assert markup_escape(text) == escape(text), repr(text)
    assert command().help == escape(raw[0])
