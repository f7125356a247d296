"""The `trawl` command's surface: help, version, exit codes, no side effects on reads."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fixture_sites import trawl
from trawl import settings as settings_module
from trawl.cli import command
from trawl.records import KEY_SCOPES

SETTINGS = {info.name: info for info in settings_module.table()}


def commands() -> dict[str, list[str]]:
    """Every command's words (``["eval", "golden"]``) and its long option names."""
    found: dict[str, list[str]] = {}

    def walk(group: Any, words: list[str]) -> None:
        subcommands = getattr(group, "commands", None)
        if subcommands:
            for name, sub in subcommands.items():
                walk(sub, [*words, name])
        else:
            found[" ".join(words)] = [o for p in group.params for o in p.opts if o[:2] == "--"]

    walk(command(), [])
    return found


COMMANDS = commands()


def help_of(*words: str) -> str:
    # In-process, as click renders it; wide enough that Rich wraps no help line.
    result = CliRunner().invoke(
        command(), [*words, "--help"], prog_name="trawl", env={"COLUMNS": "1000", "NO_COLOR": "1"}
    )
    assert result.exit_code == 0, result.output
    return result.output


def test_every_command_is_seen() -> None:
    assert {"crawl", "search", "export", "explain", "eval golden", "keys list"} <= set(COMMANDS)


# Options named like a setting that mean something else: a key's scope is not
# the crawl's.
HOMONYMS = {("keys create", "--scope")}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_shows_every_setting_option_with_its_env_and_default(command: str) -> None:
    text = help_of(*command.split())
    assert "<bool>" not in text
    assert not re.search(r"\w \.\s", text), "a help text lost its bracketed part"
    for option in COMMANDS[command]:
        name = option[2:].replace("-", "_")
        if name in SETTINGS and (command, option) not in HOMONYMS:
            line = next(ln for ln in text.splitlines() if f" {option} " in ln)
            assert f"[env var: {SETTINGS[name].env}]" in line, line
            assert "[default: " in line, line
    if "--config" in COMMANDS[command]:
        assert "[env var: TRAWL_CONFIG]" in text


# Options that set a setting of another name.
RENAMED = {("crawl", "--alias"): "host_aliases"}


@pytest.mark.parametrize(("command", "option"), sorted(RENAMED))
def test_an_option_named_otherwise_takes_its_help_from_the_setting(
    command: str, option: str
) -> None:
    line = next(ln for ln in help_of(command).splitlines() if f" {option} " in ln)
    info = SETTINGS[RENAMED[command, option]]
    assert info.help in line and f"[env var: {info.env}]" in line, line


def test_the_scope_help_names_every_key_scope() -> None:
    line = next(ln for ln in help_of("keys", "create").splitlines() if " --scope " in ln)
    assert all(scope in line for scope in KEY_SCOPES), line


def test_data_help_is_whole() -> None:
    text = help_of("explain")
    assert "Data folder: trawl.sqlite and index/ live here." in text
    assert "[env var: TRAWL_DATA] [default: trawl-data]" in text


def test_version() -> None:
    result = trawl("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"trawl {__import__('trawl').__version__}"


def test_root_help_documents_the_exit_codes() -> None:
    assert "Exit codes: 0 done" in help_of()


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert trawl("crawl", "x.example", "--max-pages", "0", "--data", str(tmp_path)).returncode == 2
    assert trawl("crawl", "--no-such-flag").returncode == 2
    assert trawl("crawl", "ftp://x.example/", "--data", str(tmp_path)).returncode == 2


READ_ONLY = [
    ["explain", "https://example.com/"],
    ["search", "anything"],
    ["search", "anything", "--json"],
    ["resources"],
    ["index"],
    ["recrawl"],
    ["evict", "--dry-run"],
    ["evict"],
    ["export"],
    ["keys", "list"],
    ["keys", "revoke", "1"],
    ["worker"],  # without start URLs it only joins a crawl, and there is none
]


@pytest.mark.parametrize("args", READ_ONLY, ids=" ".join)
def test_a_command_that_reads_leaves_no_data_folder_behind(args: list[str], tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    result = trawl(*args, "--data", str(missing))

    assert result.returncode == 3, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "crawl a site first" in lines[0], result.stderr
    assert not missing.exists()


@pytest.mark.parametrize(
    ("args", "code"),
    [(["crawl", "ftp://example.com/"], 2), (["crawl"], 2), (["crawl", "--resume"], 3)],
)
def test_a_crawl_refused_before_it_starts_leaves_no_data_folder(
    args: list[str], code: int, tmp_path: Path
) -> None:
    # The store was opened (and made) before the start URLs were read.
    missing = tmp_path / "missing"
    result = trawl(*args, "--data", str(missing))
    assert result.returncode == code, result.stderr
    assert not missing.exists()


def test_eval_golden_on_a_missing_data_folder(tmp_path: Path) -> None:
    golden = tmp_path / "golden.tsv"
    golden.write_text("hedgehog\thttps://example.com/\n")
    result = trawl("eval", "golden", str(golden), "--data", str(tmp_path / "missing"))
    assert result.returncode == 3, result.stderr
    assert not (tmp_path / "missing").exists()
