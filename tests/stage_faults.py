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
