"""Every main page in real headless Chromium at a desktop and a phone width: a screenshot
of each, and none may scroll sideways (a wide table scrolls inside its own box).

The suite writes the screenshots to build/screenshots/ on every run (ignored by git);
with UPDATE_SCREENSHOTS=1 it writes them to docs/screenshots/, the set README shows.
The pages are reached by their routes and checked with generic selectors only, so the
markup of each page may change without touching this file.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from fixture_sites import REPO, SiteServer, html_page
from service_fixtures import LiveServer, crawl_site, new_key, service_settings, site_routes, target
from trawl.server.app import create_app

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
WIDTHS = {1280: 800, 390: 844}  # a laptop, and a phone (iPhone 12-15: 390 x 844 CSS px)
MAX_HEIGHT = 1200  # a README picture, not the whole page: keeps each PNG small
OUT = REPO / ("docs" if os.environ.get("UPDATE_SCREENSHOTS") == "1" else "build") / "screenshots"
Serve = Callable[..., SiteServer]

sync_api = pytest.importorskip("playwright.sync_api", reason="needs the playwright package")
if not Path(CHROMIUM).exists():
    pytest.skip(
        f"needs Chromium at {CHROMIUM} (Debian: apt-get install chromium)", allow_module_level=True
    )


@dataclass
class Live:
    base: str
    key: str
    page: Any
    site: SiteServer

    def api(self, method: str, path: str, body: object = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        headers = {"X-API-Key": self.key, "Content-Type": "application/json"}
        request = urllib.request.Request(self.base + path, data, headers, method=method)
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.load(answer)

    def login(self) -> None:
        self.page.goto(self.base + "/admin/login")
        self.page.fill("input[name=key]", self.key)
        self.page.click("main button[type=submit]")
        self.page.wait_for_url(self.base + "/admin")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def slow_site(serve: Serve) -> SiteServer:
    """Sixty pages, each answering after a second: a crawl of it runs long enough to be
    watched (the test stops it once photographed)."""
    pages = {f"/tide{i}": html_page(f"Tide table {i}", f"<p>high water {i}</p>") for i in range(60)}
    for route in pages.values():
        route.delay = 1.0
    links = "".join(f'<a href="/tide{i}">tide {i}</a> ' for i in range(60))
    return serve({"/": html_page("Tides", links), **pages})


@pytest.fixture
def live(serve: Serve, tmp_path: Path, browser: Any, slow_site: SiteServer) -> Iterator[Live]:
    site = serve(site_routes())
    config = service_settings(tmp_path, admin_allow_hosts=target(slow_site))
    crawl_site(site, config)
    crawl_site(site, config)  # a second crawl, so the report has changes to compare
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(20_000)
    with LiveServer(create_app(config)) as base:
        live = Live(base, new_key(config), page, site)
        yield live
        if live.api("GET", "/api/admin/crawls/current")["running"]:
            live.api("POST", "/api/admin/crawls/stop")
            _wait(lambda: not live.api("GET", "/api/admin/crawls/current")["running"], 30)
    context.close()


def _wait(done: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "waited too long"
        time.sleep(0.1)


# The elements sticking out past the window's right edge, outermost first (inside an
# element that scrolls on its own they stick out of nothing): what a failure names.
STICKING_OUT = """() => {
  const edge = document.documentElement.clientWidth, out = [];
  for (const e of document.body.querySelectorAll("*")) {
    if (e.getBoundingClientRect().right <= edge + 0.5) continue;
    let p = e.parentElement, hidden = false;
    for (; p && p !== document.body; p = p.parentElement) {
      const s = getComputedStyle(p);
      if (s.overflowX !== "visible" || p.getBoundingClientRect().right > edge + 0.5) {
        hidden = true; break;
      }
    }
    if (!hidden) out.push(e.tagName.toLowerCase() + (e.id ? "#" + e.id : "")
      + [...e.classList].map(c => "." + c).join(""));
  }
  return out.slice(0, 5);
}"""


def overflow(page: Any) -> tuple[int, list[str]]:
    """How many CSS pixels the page is wider than the window (0: no sideways scroll),
    and the elements that make it so."""
    width: int = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    return width, (page.evaluate(STICKING_OUT) if width > 0 else [])


def png_size(png: bytes) -> tuple[int, int]:
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def shoot(page: Any, name: str, width: int) -> Path:
    height = min(MAX_HEIGHT, page.evaluate("() => document.documentElement.scrollHeight"))
    clip = {"x": 0, "y": 0, "width": width, "height": height}
    png: bytes = page.screenshot(full_page=True, clip=clip)
    assert png_size(png) == (width, height), name
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}-{width}.png"
    path.write_bytes(png)
    return path


def test_every_page_fits_a_phone_and_is_photographed(live: Live, slow_site: SiteServer) -> None:
    page = live.page
    public = {"home": "/", "search": "/?q=heron"}  # as a visitor sees them
    admin = {
        "admin": "/admin",
        "report": "/admin/report",
        "report-issues": "/admin/report/issues",
        "report-changes": "/admin/report/changes",
        "url-details": "/admin/report/url?url=" + quote(live.site.url("/herons"), safe=""),
        "external-links": "/admin/report/external",
        "metrics": "/admin/metrics",
    }
    wide: dict[str, tuple[int, list[str]]] = {}
    written: list[Path] = []
    for pages in (public, admin):
        if pages is admin:
            live.login()
        for width, height in WIDTHS.items():
            page.set_viewport_size({"width": width, "height": height})
            for name, path in pages.items():
                answer = page.goto(live.base + path)
                assert answer is not None and answer.status == 200, (name, answer and answer.status)
                page.wait_for_load_state("networkidle")
                assert page.url == live.base + path, f"{name}: sent to {page.url}"
                wide[f"{name}-{width}"] = overflow(page)
                written.append(shoot(page, name, width))

    # The crawl progress: a crawl of the slow site, caught while it runs.
    live.api("POST", "/api/admin/crawls", {"urls": [slow_site.url("/")]})
    _wait(lambda: live.api("GET", "/api/admin/crawls/current")["crawled"] >= 2, 30)
    for width, height in WIDTHS.items():
        page.set_viewport_size({"width": width, "height": height})
        page.goto(live.base + "/admin")
        page.wait_for_timeout(1200)  # one poll of the progress script
        assert live.api("GET", "/api/admin/crawls/current")["running"], "the crawl ended early"
        wide[f"crawl-progress-{width}"] = overflow(page)
        written.append(shoot(page, "crawl-progress", width))

    assert {name: px for name, px in wide.items() if px[0] > 0} == {}
    assert len(written) == 2 * (len(public) + len(admin) + 1)
    assert all(p.stat().st_size > 0 for p in written)


def test_visitors_see_no_admin_links_and_the_admin_logs_out(live: Live) -> None:
    page = live.page
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(live.base + "/?q=heron")
    header = page.locator("header")
    assert header.locator("a[href^='/admin']:not([href='/admin/login'])").count() == 0
    assert header.locator("form[action='/admin/logout']").count() == 0

    live.login()
    page.goto(live.base + "/?q=heron")
    assert header.locator("a[href='/admin/report']").is_visible()
    logout = header.locator("form[action='/admin/logout'] button")
    assert logout.is_visible()
    logout.click()
    page.wait_for_url(live.base + "/")
    assert header.locator("a[href^='/admin']:not([href='/admin/login'])").count() == 0
    page.goto(live.base + "/admin")
    assert page.url == live.base + "/admin/login"  # the session ended on the server too
