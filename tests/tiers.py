"""The test tiers: which tests are slow, declared once, and the guard that keeps
the fast tier honest.

`make check` runs ``pytest -m "not slow"``: no servers, no browsers, no
PostgreSQL, no subprocesses. A test is slow when it uses a fixture named in
SLOW_FIXTURES (directly or through another fixture), calls a name in
SLOW_CALLS, lives in a file named in SLOW_FILES, is named in SLOW_TESTS, or
says so itself with ``@pytest.mark.slow``. Everything else runs
under ``guard``: listening on a socket or starting a process fails it, so
a test that starts a server without being declared slow cannot slip into the
fast tier.
"""

from __future__ import annotations

import _posixsubprocess
import os
import socket
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path
from types import CodeType
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent

# Fixtures that start something: a loopback HTTP server, uvicorn, Chromium,
# PostgreSQL. Names are per file in some cases (``crawled``, ``service``,
# ``client``): a fast fixture that shares such a name only lands in the slow
# tier, which is safe; the guard catches the opposite mistake.
SLOW_FIXTURES = frozenset(
    {
        "serve",  # conftest: a SiteServer
        "serve_directory",  # conftest: static files over HTTP
        "postgres_server",  # conftest: a PostgreSQL server (subprocess)
        "postgres_url",
        "mirror",  # crawl/test_host_aliases: an HTTP server
        "crawled",  # evaluation, search/test_relevance_gate: crawl a served site
        "served",  # server/test_app: uvicorn
        "served_empty",
        "fuzzed",  # server/test_api_properties: a SiteServer
        "client",  # server/test_ui_nav, test_ui_properties: a SiteServer
        "browser",  # server/test_browser, test_screenshots: Chromium
        "live",
        "sumo_site",  # test_e2e_sumo_docs
        "resetting",  # crawl/test_retries: a socket server that resets
    }
)

# Names whose use in a test's own code (nested functions included) starts a
# process: the `trawl` command in a child (fixture_sites.trawl and the
# test_cli_* helpers around it) or subprocess itself.
SLOW_CALLS = frozenset(
    {
        "trawl",
        "subprocess",
        "run_in_terminal",
        "without_extras",
        "trawl_without_extras",
        "raw_server",  # net/test_header_check: an asyncio socket server
        "_serve_cli",  # server/test_hardening: `trawl serve` in a child
    }
)

# Files whose tests all start servers or processes without going through a
# fixture above.
SLOW_FILES = frozenset(
    {
        "test_cli.py",
        "test_stage_pool.py",  # worker processes
        "server/test_keys_cli.py",
    }
)

# Tests that start nothing but read a whole data set or model: each took 6 to 17 s
# in the fast tier (wall, load 14 on 2 cores; `pytest -m "not slow" --durations=40`).
# Listed here, not marked in place, so that files others are editing stay untouched.
SLOW_TESTS = frozenset(
    {
        "robots/test_robots_rules.py::test_every_top_site_file_parses_and_matches_without_raising",
        "sitemaps/test_sitemap_hostile.py::test_the_tree_is_freed_as_it_is_read",
        "sitemaps/test_sitemap_hostile.py::test_a_sitemap_past_the_protocol_limit",
        "extract/test_main_text.py::test_main_text_f1_on_held_out_docs_pages",
        "extract/test_main_text.py::test_metric_reproduces_the_published_figures",
        "extract/test_main_text.py::test_main_text_f1_on_the_benchmark",
        "extract/test_language_model.py::test_a_damaged_cache_is_written_again",
        "extract/test_language_model.py::test_same_answers_as_py3langid_from_the_cache",
        # Unpacking the model without numpy takes 1-4 s of CPU (bench/RESULTS.md,
        # "numpy off the crawl path"); the real-pages tests read ~500 pages each.
        "extract/test_language_model.py::test_an_unwritable_cache_folder_costs_speed_only",
        "extract/test_language_model.py::test_a_killed_writers_staging_folder_is_removed",
        "extract/test_language_model.py::test_a_loaded_model_holds_little_heap",
        "extract/test_language_model.py::test_cache_rows_are_bounded",
        "extract/test_language_model.py::test_same_languages_as_py3langid_on_real_pages",
        "dedup/test_simhash.py::test_banded_lookup_finds_every_pair_brute_force_finds",
        "dedup/test_simhash.py::test_same_fingerprints_as_the_numpy_code_on_real_pages",
        "dedup/test_simhash.py::test_same_pairs_as_the_numpy_code_on_real_fingerprints",
    }
)


def names_used(code: CodeType) -> set[str]:
    """The global and attribute names a function's code refers to, nested code included."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= names_used(const)
    return names


def slow_reason(
    fixturenames: Iterable[str], path: Path, code: CodeType | None, marked_slow: bool
) -> str | None:
    """Why a test is in the slow tier, or None when it belongs to the fast tier."""
    if marked_slow:
        return "marked slow"
    used = sorted(SLOW_FIXTURES.intersection(fixturenames))
    if used:
        return f"uses fixture {used[0]}"
    calls = sorted(SLOW_CALLS & names_used(code)) if code is not None else []
    if calls:
        return f"calls {calls[0]}"
    relative = path.resolve().relative_to(TESTS).as_posix()
    if relative in SLOW_FILES:
        return f"in {relative}"
    if code is not None and f"{relative}::{code.co_name}" in SLOW_TESTS:
        return "listed in SLOW_TESTS"
    return None


def mark_slow_items(items: list[pytest.Item]) -> None:
    for item in items:
        marked = item.get_closest_marker("slow") is not None
        function = getattr(item, "function", None)
        code = getattr(function, "__code__", None)
        reason = slow_reason(getattr(item, "fixturenames", ()), item.path, code, marked)
        if reason is not None and not marked:
            item.add_marker(pytest.mark.slow(reason=reason))


class FastTierViolation(RuntimeError):
    """A test outside the slow tier tried to start a server or a process."""


def _refuse(what: str) -> Callable[..., Any]:
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise FastTierViolation(
            f"a fast-tier test tried to {what}: use a fixture listed in tests/tiers.py"
            " SLOW_FIXTURES, list the file in SLOW_FILES, or mark the test"
            " @pytest.mark.slow"
        )

    return refused


def guard(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make listening on a socket and starting a process fail for this test."""
    # listen, not bind: binding port 0 to learn a free port starts no server.
    monkeypatch.setattr(socket.socket, "listen", _refuse("listen on a socket (start a server)"))
    # subprocess and multiprocessing's spawn/forkserver both end in fork_exec
    # (or posix_spawn); fork is multiprocessing's default start method.
    monkeypatch.setattr(_posixsubprocess, "fork_exec", _refuse("start a process"))
    monkeypatch.setattr(subprocess, "_fork_exec", _refuse("start a process"))
    monkeypatch.setattr(os, "posix_spawn", _refuse("start a process"))
    monkeypatch.setattr(os, "posix_spawnp", _refuse("start a process"))
    monkeypatch.setattr(os, "fork", _refuse("fork a process"))
