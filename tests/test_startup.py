"""What `trawl crawl` imports before its first request: only what fetching needs. The
crawl's end (numpy for PageRank, the header checks) is imported beside the crawl
(pipeline/crawl_run.py END_MODULES); bench/many_hosts.py measures the start-up."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

LATE = (
    "numpy",
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
