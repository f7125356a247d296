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
    summary = next(ln for ln in crawled.stdout.splitlines() if ln.startswith("crawl "))
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


def test_search_options_build_the_same_request_as_the_api(serve: Serve, tmp_path: Path) -> None:
    server = site(serve)
    data = str(tmp_path / "data")
    trawl("crawl", server.url("/"), "--data", data, "--delay", "0")

    host = server.url("/").split("/")[2]
    here = trawl("search", "hedgehogs", "--data", data, "--site", host, "--sort", "date")
    elsewhere = trawl("search", "hedgehogs", "--data", data, "--site", "other.example")
    bad = trawl("search", "hedgehogs", "--data", data, "--lang", "english")

    assert here.returncode == 0 and here.stdout.startswith("2 results"), here.stderr
    assert elsewhere.returncode == 0 and elsewhere.stdout.startswith("0 results")
    assert bad.returncode == 2 and "language must be a two- or three-letter code" in bad.stderr


def test_crawl_exits_without_the_interpreters_teardown(serve: Serve, tmp_path: Path) -> None:
    # Once the crawl has closed its store, index and workers, the process ends at once
    # (freeing a large crawl's objects one by one took 0.4-0.6 s): nothing after the
    # command runs, and what it wrote is whole.
    server = site(serve)
    data = str(tmp_path / "data")
    code = (
        "import atexit, sys; atexit.register(print, 'torn down');"
        " from trawl.cli import main; main()"
    )
    args = ["crawl", server.url("/"), "--data", data, "--delay", "0"]
    crawled = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    found = trawl("search", "mealworms", "--data", data)

    assert crawled.returncode == 0, crawled.stderr
    assert "complete: 2 fetched, 2 indexed" in crawled.stdout
    assert "torn down" not in crawled.stdout
    assert found.returncode == 0 and found.stdout.startswith("1 result"), found.stdout
    assert trawl("check", "--data", data).returncode == 0


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
    assert result.returncode == 3 and "crawl a site first" in result.stderr


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


def test_allow_host_opens_one_more_private_target(serve: Serve, tmp_path: Path) -> None:
    other = serve({"/": html_page("Other", "<p>otters</p>")})
    home = serve({"/": html_page("Home", f'<a href="{other.url("/")}">other</a>')})
    common = ["--delay", "0", "--scope", "web"]

    closed = trawl("crawl", home.url("/"), "--data", str(tmp_path / "a"), *common)
    assert closed.returncode == 0, closed.stderr
    assert other.requests == []

    opened = trawl(
        "crawl",
        home.url("/"),
        "--data",
        str(tmp_path / "b"),
        *common,
        "--allow-host",
        f"127.0.0.1:{other.port}",
    )
    assert opened.returncode == 0, opened.stderr
    assert "/" in other.page_paths()

    bad = trawl("crawl", home.url("/"), "--data", str(tmp_path / "c"), "--allow-host", "nope")
    assert bad.returncode == 2 and "HOST:PORT" in bad.stderr


def test_skips_are_summarised_with_reasons(serve: Serve, tmp_path: Path) -> None:
    site = serve(
        {
            "/robots.txt": Route(b"User-agent: *\nDisallow: /private", headers={}),
            "/": html_page("Home", '<a href="/logout">out</a><a href="/private/x">p</a>'),
        }
    )
    result = trawl("crawl", site.url("/"), "--data", str(tmp_path), "--delay", "0")

    assert result.returncode == 0
    assert "skipped      1  unsafe URL: logout path  e.g. " in result.stdout
    assert "skipped      1  blocked by robots.txt" in result.stdout
