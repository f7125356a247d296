"""What `trawl` prints for scripts and for people: crawl --json, export, search in a terminal."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from fixture_sites import Route, SiteServer, html_page, trawl

Serve = Callable[[dict[str, Route]], SiteServer]
ESC = "\x1b["


def site(serve: Serve) -> SiteServer:
    article = (
        '<script type="application/ld+json">'
        '{"@type": "Article", "datePublished": "2021-03-04T05:06:07Z"}</script>'
    )
    return serve(
        {
            "/": html_page(
                "Home of hedgehogs",
                '<a href="/care">Care</a> <a href="/hidden">x</a> <a href="/gone">y</a>'
                "<p>Hedgehogs [/bold] roam at night.</p>",
            ),
            "/care": html_page(
                "Hedgehog care [/x]",
                "<h1>Care</h1><h2>Food</h2><p>Feed hedgehogs mealworms and water.</p>",
                head=article,
            ),
            "/hidden": html_page(
                "Hidden", "<p>mealworms</p>", head='<meta name="robots" content="noindex">'
            ),
            "/gone": Route(b"gone", status=404),
        }
    )


def test_crawl_json_prints_the_summary_as_one_object(serve: Serve, tmp_path: Path) -> None:
    server = site(serve)
    result = trawl("crawl", server.url("/"), "--data", str(tmp_path), "--delay", "0", "--json")

    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1
    summary = json.loads(lines[0])
    assert summary["outcome"] == "complete"
    assert (summary["fetched"], summary["indexed"]) == (4, 2)
    assert {"crawl_id", "failed", "blocked", "pruned", "seconds", "pages_per_second"} <= set(
        summary
    )
    assert isinstance(summary["skipped"], dict)


def test_export_jsonl_writes_the_searchable_pages(serve: Serve, tmp_path: Path) -> None:
    server = site(serve)
    data = str(tmp_path / "data")
    assert trawl("crawl", server.url("/"), "--data", data, "--delay", "0").returncode == 0

    to_stdout = trawl("export", "--format", "jsonl", "--data", data)
    to_file = trawl("export", "--data", data, "--output", str(tmp_path / "pages.jsonl"))

    assert to_stdout.returncode == 0, to_stdout.stderr
    assert "exported 2 pages" in to_stdout.stderr
    pages = {p["url"]: p for p in map(json.loads, to_stdout.stdout.splitlines())}
    assert set(pages) == {server.url("/"), server.url("/care")}  # no noindex, no 404
    care = pages[server.url("/care")]
    assert care["title"] == "Hedgehog care [/x]"
    assert "Feed hedgehogs mealworms" in care["text"]
    assert care["headings"] == ["Care", "Food"]
    assert care["lang"] == "en"
    assert care["published"] == "2021-03-04T05:06:07+00:00"
    assert care["fetched_at"].endswith("+00:00")
    assert to_file.returncode == 0
    assert (tmp_path / "pages.jsonl").read_text() == to_stdout.stdout


def test_export_refuses_an_unknown_format(tmp_path: Path) -> None:
    result = trawl("export", "--format", "xml", "--data", str(tmp_path))
    assert result.returncode == 2


def run_in_terminal(*args: str, stream: str = "stdout") -> str:
    """Run trawl with a pseudo-terminal as its standard output (or error), as in a shell."""
    controller, terminal = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    env["TERM"] = "xterm-256color"
    with subprocess.Popen(
        [sys.executable, "-m", "trawl", *args],
        stdout=terminal if stream == "stdout" else subprocess.DEVNULL,
        stderr=terminal if stream == "stderr" else subprocess.DEVNULL,
        env=env,
    ) as process:
        os.close(terminal)
        chunks = []
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal closed: the child is gone
                break
            if not chunk:
                break
            chunks.append(chunk)
        process.wait(timeout=60)
    os.close(controller)
    return b"".join(chunks).decode()


def test_search_highlights_matches_in_a_terminal_and_not_in_a_pipe(
    serve: Serve, tmp_path: Path
) -> None:
    server = site(serve)
    data = str(tmp_path / "data")
    assert trawl("crawl", server.url("/"), "--data", data, "--delay", "0").returncode == 0

    shown = run_in_terminal("search", "mealworms", "--data", data)
    piped = trawl("search", "mealworms", "--data", data)

    assert piped.returncode == 0, piped.stderr
    assert ESC not in piped.stdout
    assert "Feed hedgehogs mealworms and water." in piped.stdout
    assert "Hedgehog care [/x]" in piped.stdout  # titles are text, not markup
    assert ESC in shown
    # The matched word is styled on its own: a style starts right before it, ends right after.
    assert re.search(r"hedgehogs \x1b\[[0-9;]*mmealworms\x1b\[0m and water", shown), shown


def test_a_crawl_draws_its_progress_on_a_terminal_only(serve: Serve, tmp_path: Path) -> None:
    server = site(serve)
    shown = run_in_terminal(
        "crawl", server.url("/"), "--data", str(tmp_path / "a"), "--delay", "0.3", stream="stderr"
    )
    piped = trawl("crawl", server.url("/"), "--data", str(tmp_path / "b"), "--delay", "0.3")

    assert piped.returncode == 0, piped.stderr
    assert "queued" not in piped.stderr and ESC not in piped.stderr
    assert re.search(r"crawl.*\d+ fetched, \d+ queued, 0 failed", shown), shown
