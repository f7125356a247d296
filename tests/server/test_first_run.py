"""The first hour, as a new user lives it: `trawl serve` started from an empty data
folder prints a setup link; in real headless Chromium that link logs in, a site is
added, crawled while its progress is watched, and searched from the home page. The
browser does everything: the test only reads the server's output and the pages."""

from __future__ import annotations

import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fixture_sites import REPO, Route, SiteServer, html_page
from service_fixtures import target

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
LINK = re.compile(r"(http://\S+/admin/setup\?token=\S+)")
Serve = Callable[..., SiteServer]

sync_api = pytest.importorskip("playwright.sync_api", reason="needs the playwright package")
if not Path(CHROMIUM).exists():
    pytest.skip(f"needs Chromium at {CHROMIUM}", allow_module_level=True)


OUT = REPO / ("docs" if os.environ.get("UPDATE_SCREENSHOTS") == "1" else "build") / "screenshots"


def shoot(page: Any, name: str) -> None:
    """A screenshot into build/screenshots/, or docs/screenshots/ when asked (as
    tests/server/test_screenshots.py)."""
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=OUT / f"{name}-1280.png")


@dataclass
class Served:
    base: str
    link: str
    output: list[str]
    data: Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _reader(stream: Any, lines: queue.Queue[str], kept: list[str]) -> None:
    for line in stream:  # drained to the end, so the server never blocks on a full pipe
        kept.append(line)
        lines.put(line)


@pytest.fixture
def trawl_serve(tmp_path: Path, allowed: SiteServer) -> Iterator[Served]:
    """`trawl serve` on an empty data folder, as a process of its own; the loopback
    fixture site is listed in admin_allow_hosts, as an operator would list it."""
    data = tmp_path / "data"
    assert not data.exists()
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAWL_")}
    env.update(
        TRAWL_ADMIN_ALLOW_HOSTS=target(allowed), TRAWL_PARSE_WORKERS="0", TRAWL_SEARCH_WORKERS="0"
    )
    command = [sys.executable, "-m", "trawl", "serve", "--data", str(data), "--port", str(port)]
    process = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    lines: queue.Queue[str] = queue.Queue()
    output: list[str] = []
    threading.Thread(target=_reader, args=(process.stderr, lines, output), daemon=True).start()
    try:
        link = _setup_link(lines, output)
        base = f"http://127.0.0.1:{port}"
        _wait_until_up(base)
        yield Served(base, link, output, data)
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def _setup_link(lines: queue.Queue[str], output: list[str]) -> str:
    deadline = time.monotonic() + 90  # a cold start imports the whole engine
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=1)
        except queue.Empty:
            continue
        found = LINK.search(line)
        if found:
            return found.group(1)
    raise AssertionError("trawl serve printed no setup link:\n" + "".join(output))


def _wait_until_up(base: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=5):
                return
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    raise AssertionError("trawl serve did not answer")


@pytest.fixture
def allowed(serve: Serve) -> SiteServer:
    """A small site about waders: slow enough pages to watch the crawl run, one that
    fails with a server error, one that is missing."""
    pages = {
        f"/wader{i}": html_page(f"Wader {i}", f"<p>Wader {i} probes the mudflat for worms.</p>")
        for i in range(24)
    }
    for route in pages.values():
        route.delay = 0.2
    curlew = html_page("Eurasian curlew", "<p>The curlew has a long down-curved bill.</p>")
    links = "".join(f'<a href="/wader{i}">wader {i}</a> ' for i in range(24))
    home = html_page(
        "Waders of the estuary",
        f'<a href="/curlew">Curlew</a> <a href="/broken">Broken</a> {links}',
    )
    broken = Route(b"<p>down</p>", 500, {"Content-Type": "text/html"})
    return serve({"/": home, "/curlew": curlew, "/broken": broken, **pages})


@pytest.fixture
def page() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        tab = context.new_page()
        tab.set_default_timeout(30_000)
        yield tab
        context.close()
        browser.close()


def test_from_an_empty_folder_to_a_search_result(
    trawl_serve: Served, allowed: SiteServer, page: Any
) -> None:
    served = trawl_serve
    # The home page of an empty index says what Trawl is and offers to add a site;
    # without a login that leads to the login page, which names the setup link.
    page.goto(served.base + "/")
    assert "search engine you run yourself" in page.inner_text("#welcome")
    shoot(page, "first-run-welcome")
    page.click("#add-first-site")
    page.wait_for_url(re.compile(re.escape(served.base) + "/admin/login"))
    assert "setup link" in page.inner_text("main")

    # The printed link logs in once.
    page.goto(served.link)
    page.wait_for_url(re.compile(re.escape(served.base) + r"/admin\?"))
    assert "Logged in with the setup link" in page.inner_text(".flash")

    start = allowed.url("/")
    page.fill("form[action='/admin/sites'] input[name=url]", start)
    page.click("#add-site")
    page.wait_for_selector(".flash:has-text('added')")
    assert start in page.inner_text("#sites")

    # The crawl form shows the defaults it starts from, and takes the CLI's options.
    assert page.input_value("#crawl-scope") == "host"
    assert page.get_attribute("#crawl-max_pages", "placeholder") == "10000"
    page.fill("#crawl-form input[name=url]", start)
    page.select_option("#crawl-speed", "fast")
    page.fill("#crawl-delay", "0.3")  # wins over the preset's: slow enough to watch
    page.fill("#crawl-max_pages", "100")
    page.fill("#crawl-max_depth", "3")
    page.click("#start")
    page.wait_for_selector(".flash:has-text('crawl started')")

    # Each figure is checked while the crawl still runs: the page updates itself.
    def running(condition: str) -> None:
        page.wait_for_function(
            "() => document.getElementById('crawl-state').textContent === 'running'"
            f" && ({condition})"
        )

    running("Number(document.getElementById('crawled').textContent) > 1")
    # Read once the home page's links are queued: drawn at the start, the bar may show
    # 1 of 1 done, which nothing can pass.
    drawn = float(page.evaluate("document.getElementById('crawl-bar').value"))
    running(f"document.getElementById('crawl-bar').value > {drawn}")
    running("document.getElementById('fetching').textContent.startsWith('http')")
    running("Number(document.getElementById('rate').textContent) > 0")
    running("/about \\d/.test(document.getElementById('eta').textContent)")
    running("Number(document.querySelector('#history tr[data-crawl] .ok').textContent) > 0")
    assert page.inner_text("#fetching").startswith(allowed.url("/"))
    assert int(page.inner_text("#left")) >= 0
    running("document.querySelectorAll('#last-errors li').length > 0")
    assert "HTTP 500" in page.inner_text("#last-errors")
    shoot(page, "first-run-crawling")

    page.wait_for_function(
        "() => document.getElementById('crawl-state').textContent === 'complete'", timeout=120_000
    )
    history = page.locator("#history tr[data-crawl]").first
    assert history.locator(".outcome").inner_text() == "complete"
    assert int(history.locator(".ok").inner_text()) >= 26

    # Back home: the welcome is gone and the site answers a search.
    page.click("a.brand")
    page.wait_for_url(served.base + "/")
    assert page.locator("#welcome").count() == 0
    page.fill("input[name=q]", "curlew bill")
    page.press("input[name=q]", "Enter")
    page.wait_for_selector("li.result")
    first = page.locator("li.result").first
    assert first.locator("a.title").inner_text() == "Eurasian curlew"

    # The link was for one login: opened again it logs nobody in.
    page.context.clear_cookies()
    page.goto(served.link)
    assert "used or has expired" in page.inner_text(".error")
    page.goto(served.base + "/admin")
    assert page.url == served.base + "/admin/login"
