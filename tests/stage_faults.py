"""Parsers that misbehave, for tests/test_stage_pool.py: sent to stage workers by name,
so they live in a module a spawned worker can import (tests/ is on its path)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from trawl.pipeline.parse import parse_page
from trawl.records import ParsedPage

SLOW = "TRAWL_TEST_SLOW_PARSE"  # a folder: while it holds "hold", a parse there waits


def held_parse(
    body: bytes, url: str, content_type: str | None, content_language: str | None
) -> ParsedPage:
    """parse_page, held while the test's folder says so: a worker caught mid-parse.
    Sent to the workers by name, so a worker spawned later runs it too."""
    folder = Path(os.environ[SLOW])
    (folder / f"started-{os.getpid()}").touch()
    deadline = time.monotonic() + 60
    while (folder / "hold").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return parse_page(body, url, content_type, content_language)


def raising_parse(
    body: bytes, url: str, content_type: str | None, content_language: str | None
) -> ParsedPage:
    if url.endswith("/boom"):
        raise ValueError(f"the parser broke on {url}")
    return parse_page(body, url, content_type, content_language)


class _OddError(Exception):
    """An exception that pickles but does not unpickle (its ``__init__`` takes two
    arguments, its ``args`` hold one): common in third-party code."""

    def __init__(self, url: str, why: str) -> None:
        super().__init__(f"{why}: {url}")


def unreadable_answer_parse(
    body: bytes, url: str, content_type: str | None, content_language: str | None
) -> ParsedPage:
    """A parse whose answer reaches the pool as bytes it cannot read back."""
    if url.endswith("/odd"):
        raise _OddError(url, "the parser broke oddly")
    return parse_page(body, url, content_type, content_language)
