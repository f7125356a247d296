"""What `trawl crawl` imports before its first request: only what fetching needs. The
crawl's end (the corpus step, the header checks) is imported beside the crawl
(pipeline/crawl_run.py END_MODULES); bench/many_hosts.py measures the start-up. numpy is
never imported by a crawl (15-18 MB resident: bench/RESULTS.md "numpy off the crawl
path")."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path

from fixture_sites import Route, SiteServer

LATE = (
    "trawl.net.header_check",
    "trawl.pipeline.corpus",
    "trawl.pipeline.crawl_end",
    "importlib.metadata",  # for --version alone: 40 ms of CPU
)


def test_starting_a_crawl_imports_nothing_only_its_end_needs() -> None:
    code = (
        "import sys, trawl.cli.crawling, trawl.pipeline.crawl_run\n"
        f"print(sorted(m for m in {LATE!r} if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "[]"


# Loaded only when used (resident memory, bench/RESULTS.md "Many hosts: memory"): lxml
# by the first XML sitemap, rich's live display by a crawl on a terminal.
ON_DEMAND = ("lxml", "rich.progress", "rich.live")


def test_a_crawl_loads_no_sitemap_parser_or_progress_bar_it_does_not_use() -> None:
    code = (
        "import sys, trawl.cli, trawl.pipeline.crawl_run, trawl.pipeline.parse,"
        " trawl.pipeline.crawl_end, trawl.index.documents\n"
        f"print(sorted(m for m in {ON_DEMAND!r} if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "[]", f"loaded before any use: {result.stdout.strip()}"


def test_the_console_script_loads_no_cli_into_spawned_workers() -> None:
    """A spawned parse worker imports what the ``trawl`` script imports: not the CLI."""
    (script,) = (e for e in entry_points(group="console_scripts") if e.name == "trawl")
    module = script.value.partition(":")[0]
    code = f"import sys, {module}\nprint(sorted(m for m in ('typer', 'rich') if m in sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "[]", f"{script.value} loads {result.stdout.strip()}"


def test_detecting_a_language_imports_no_package_metadata() -> None:
    """The model's cache key takes py3langid's own version: importlib.metadata and what it
    imports (zipfile, csv...) are 0.8 MB that nothing else in a crawl loads."""
    code = (
        "import sys, trawl.cli, trawl.pipeline.crawl_run, trawl.pipeline.crawl_end\n"
        "from trawl.extract.language import detect_language\n"
        "print(detect_language(None, None, 'the river runs past the old stone mill'),"
        " 'importlib.metadata' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.split() == ["en", "False"]


def _page(title: str, text: str, links: list[str]) -> Route:
    # No <html lang> and no Content-Language: the language model runs on every page.
    anchors = "".join(f'<a href="{link}">{link}</a> ' for link in links)
    body = f"<html><head><title>{title}</title></head><body><p>{text}</p>{anchors}</body></html>"
    return Route(body.encode(), headers={"Content-Type": "text/html"})


def test_a_crawl_never_imports_numpy(serve: Callable[..., SiteServer], tmp_path: Path) -> None:
    """Language detection, SimHash, near duplicates and PageRank, from a language model
    cache written by this crawl: all of it without numpy, to the process's exit."""
    story = "the river runs past the old stone mill where the miller grinds wheat every day"
    routes = {
        f"/{i}": _page(f"Page {i}", f"{story} and page {i} tells of it", [f"/{(i + 1) % 6}", "/0"])
        for i in range(6)
    }
    routes["/"] = _page("Home", "Hjemmesiden handler om floden og den gamle stenmølle", ["/0"])
    server = serve(routes)
    # os._exit ends a finished crawl (no atexit): the check runs just before it.
    code = (
        "import os, sys\n"
        "exit_now = os._exit\n"
        "def check(status):\n"
        "    print('numpy loaded:', 'numpy' in sys.modules, flush=True)\n"
        "    exit_now(status)\n"
        "os._exit = check\n"
        "from trawl.cli import main\n"
        "main()\n"
    )
    args = ["crawl", server.url("/"), "--data", str(tmp_path / "data"), "--delay", "0"]
    environment = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    crawled = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=environment,
    )
    assert crawled.returncode == 0, crawled.stderr
    assert "complete: 7 fetched, 7 indexed" in crawled.stdout, crawled.stdout
    assert "numpy loaded: False" in crawled.stdout, crawled.stdout
    assert list((tmp_path / "cache" / "trawl").iterdir()), "the model cache was not written"
