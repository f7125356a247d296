"""The `trawl` command as a user runs it: a real process, real servers."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from fixture_sites import REPO, Route, SiteServer, html_page, trawl

Serve = Callable[[dict[str, Route]], SiteServer]


def site(serve: Serve) -> SiteServer:
    return serve(
        {
            "/": html_page("Home of hedgehogs", '<a href="/care">Care</a><p>Hedgehogs.</p>'),
            "/care": html_page("Hedgehog care", "<h1>Care</h1><p>Feed hedgehogs mealworms.</p>"),
        }
    )


def test_crawl_then_search_json(serve: Serve, tmp_path: Path) -> None:
    server = site(serve)
    data = str(tmp_path / "data")

    crawled = trawl("crawl", server.url("/"), "--data", data, "--delay", "0")
    found = trawl("search", "mealworms", "--data", data, "--json")

    assert crawled.returncode == 0, crawled.stderr
    summary = crawled.stdout.strip().splitlines()[-1]
    assert "complete: 2 fetched, 2 indexed, 0 failed" in summary
    assert found.returncode == 0, found.stderr
    answer = json.loads(found.stdout)
    assert answer["total"] == 1
    assert answer["results"][0]["url"] == server.url("/care")
    assert set(answer) >= {"query", "total", "took_ms", "results"}


def test_plain_search_output_and_index_rebuild(serve: Serve, tmp_path: Path) -> None:
    server = site(serve)
    data = str(tmp_path / "data")
    trawl("crawl", server.url("/"), "--data", data, "--delay", "0")

    rebuilt = trawl("index", "--data", data)
    found = trawl("search", "hedgehogs", "--data", data, "--limit", "1")

    assert rebuilt.returncode == 0 and "indexed 2 pages" in rebuilt.stdout
    assert found.returncode == 0
    assert found.stdout.startswith("2 results")
    assert server.url("/") in found.stdout or server.url("/care") in found.stdout
    assert "<mark>" not in found.stdout


def test_data_folder_from_environment(serve: Serve, tmp_path: Path) -> None:
    server = site(serve)
    env_data = tmp_path / "from-env"
    result = subprocess.run(
        [sys.executable, "-m", "trawl", "crawl", server.url("/"), "--delay", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"TRAWL_DATA": str(env_data), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert (env_data / "trawl.sqlite").is_file() and (env_data / "index").is_dir()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://example.com/", "only http and https"),
        ("https://user:secret@example.com/", "user:password"),
        ("http://exa mple.com/", "invalid host"),
        ("http://example.com:99999/", "malformed port"),
        ("", "empty start URL"),
    ],
)
def test_bad_start_url_is_one_clear_line(tmp_path: Path, url: str, message: str) -> None:
    result = trawl("crawl", url, "--data", str(tmp_path))

    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert "Traceback" not in result.stderr
    assert "secret" not in result.stderr


def test_search_before_any_crawl_is_a_clear_error(tmp_path: Path) -> None:
    result = trawl("search", "anything", "--data", str(tmp_path))
    assert result.returncode == 2 and "crawl a site first" in result.stderr


def test_bad_setting_in_environment_is_a_clear_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "trawl", "search", "x", "--data", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"TRAWL_PER_PAGE": "many", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert result.returncode == 2 and "per_page" in result.stderr


def test_readme_documents_every_setting() -> None:
    table = trawl("settings").stdout.strip()
    readme = (REPO / "README.md").read_text()
    assert table in readme, "README's settings table is stale: paste `trawl settings` into it"
