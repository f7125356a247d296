"""`trawl crawl` tells a failed crawl apart: a non-zero status and the reason on the last
line, as a user would run it against real loopback servers."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from fixture_sites import SiteServer, html_page, trawl

Serve = Callable[..., SiteServer]


def test_a_mirror_canonicalised_elsewhere_fails_and_says_why(serve: Serve, tmp_path: Path) -> None:
    live = '<link rel="canonical" href="https://docs.example.org{path}">'
    pages = {f"/p{i}": html_page(f"P{i}", "<p>mirrored</p>") for i in range(4)}
    site = serve({"/": html_page("Home", "".join(f'<a href="{p}">{p}</a>' for p in pages))})
    for path, route in {"/": site.routes["/"], **pages}.items():
        route.body = route.body.replace(b"</head>", live.format(path=path).encode() + b"</head>")
        site.routes[path] = route

    result = trawl("crawl", site.url("/"), "--data", str(tmp_path / "d"), "--delay", "0")

    assert result.returncode == 1, result.stdout
    last = result.stdout.strip().splitlines()[-1]
    assert last == (
        "crawl failed: nothing indexed (5 pages canonicalised to docs.example.org"
        " (outside the crawl): not indexed)"
    )
    assert "  5 pages canonicalised to docs.example.org (outside the crawl): not indexed" in (
        result.stdout
    )


def test_an_unreachable_start_fails_and_says_why(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    result = trawl("crawl", f"http://127.0.0.1:{port}/", "--data", str(tmp_path / "d"))

    assert result.returncode == 1
    assert (
        result.stdout.strip().splitlines()[-1]
        == "crawl failed (unhealthy): no page could be fetched"
    )
    assert "host unreachable (connection refused)" in result.stdout


def test_a_healthy_crawl_exits_zero(serve: Serve, tmp_path: Path) -> None:
    site = serve({"/": html_page("Home", "<p>fine</p>")})

    result = trawl("crawl", site.url("/"), "--data", str(tmp_path / "d"), "--delay", "0")

    assert result.returncode == 0, result.stdout


def test_ctrl_c_to_the_whole_process_group_stops_cleanly(serve: Serve, tmp_path: Path) -> None:
    # A terminal's Ctrl-C (and `timeout`'s SIGTERM) reaches every process of the group,
    # the parse workers too. A worker that died of it broke the pool, and the crawl's
    # end then failed with a BrokenProcessPool traceback instead of stopping cleanly.
    pages = {f"/p{i}": html_page(f"P{i}", "<p>words</p>") for i in range(40)}
    site = serve(
        {"/": html_page("Home", "".join(f'<a href="{p}">{p}</a>' for p in pages)), **pages}
    )
    env = {**os.environ, "TRAWL_PARSE_WORKERS": "2"}
    command = [sys.executable, "-m", "trawl", "crawl", site.url("/"), "--data", str(tmp_path / "d")]
    child = subprocess.Popen(
        [*command, "--delay", "0.2"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while len(site.page_paths()) < 4 and time.monotonic() < deadline:
            time.sleep(0.1)
        os.killpg(child.pid, signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
    assert "Traceback" not in err, err
    assert child.returncode == 0, out + err  # a healthy crawl stopped: resumable
    assert "crawl 1 stopped:" in out


def test_a_crawl_while_another_writes_the_index_fails_and_begins_nothing(tmp_path: Path) -> None:
    """`trawl crawl` opens the store and the index writer (the crawl lock) in a thread
    beside its imports: a lock held elsewhere is still a clean failure, and no crawl row
    is begun or left running."""
    from trawl.index.tantivy_index import IndexWriter
    from trawl.store.sqlite import SQLiteStore

    data = tmp_path / "d"
    busy = IndexWriter(data / "index")  # a `trawl crawl` in another process, say
    try:
        result = trawl("crawl", "http://127.0.0.1:9/", "--data", str(data))
    finally:
        busy.close()

    assert result.returncode != 0
    assert "being written by another process" in result.stdout + result.stderr
    store = SQLiteStore(data / "trawl.sqlite")
    assert store.resumable_crawl() is None and store.interrupt_running() == 0
    store.close()
