"""The books rustup installs with the toolchain's docs (the Cargo book, the rustc book),
crawled as their live home https://doc.rust-lang.org/NAME/ through a host alias to a
loopback server: bench/golden_sites.py's own crawl, so the figure a test gates and the one
bench/RESULTS.md records come from one crawl code."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

from fixture_sites import REPO
from trawl.evaluation.golden import evaluate_golden
from trawl.records import PageRecord
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

LIVE = "https://doc.rust-lang.org"


@cache
def _golden_sites() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "golden_sites", REPO / "bench" / "golden_sites.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rust_book(name: str) -> Path:
    """The folder of the book ``name`` rustup installed, or skip the test."""
    root: Path | None = _golden_sites().rust_book(name)
    if root is None:
        pytest.skip(
            f"needs the {name} book rustup installs (~/.rustup/toolchains/*/share/doc/rust"
            f"/html/{name}: `rustup component add rust-docs`)"
        )
    return root


def crawled(name: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Settings, Path]:
    """The book ``name`` crawled whole into a new data folder (its settings), and its folder."""
    root = rust_book(name)
    data = tmp_path_factory.mktemp(f"{name}-book")
    outcome: str = _golden_sites().crawl_rust_book(name, data)
    assert outcome == "complete"
    return Settings(data=data), root


def stored_pages(settings: Settings) -> dict[str, PageRecord]:
    store = SQLiteStore(settings.sqlite_path)
    try:
        return {p.url: p for p in store.pages()}
    finally:
        store.close()


def chapters(name: str, root: Path) -> set[str]:
    """The live URL of every chapter but the noindex ones (print.html, the whole book on one
    page, and the sidebar's toc.html, which only a script names) and the redirect stubs
    nothing links to."""
    return {
        f"{LIVE}/{name}/{f.relative_to(root).as_posix()}"
        for f in root.rglob("*.html")
        if b'http-equiv="refresh"' not in f.read_bytes()[:2000]
        and f.name not in {"print.html", "toc.html"}
    }


def golden_reporting_half(name: str, settings: Settings) -> dict[str, float]:
    return evaluate_golden(REPO / "bench" / "golden" / f"{name}-book.tsv", settings, "reporting")
