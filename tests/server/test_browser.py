"""The web UI in real headless Chromium: search, admin, the report, CSV export.

Each test takes a screenshot of its page and checks it is an image; the pictures README
shows are made by tests/server/test_screenshots.py.
Chromium is Debian's package (.ci/run installs it); without it these tests skip.
"""

from __future__ import annotations

import asyncio
import csv
import json
import shutil
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from fixture_sites import Route, SiteServer, html_page
from service_fixtures import (
    ELSEWHERE,
    LiveServer,
    crawl_site,
    new_key,
    service_settings,
    site_routes,
    target,
)
from trawl.pipeline.resource_checks import check_external_headers
from trawl.records import HeaderCheck
from trawl.server.app import create_app
from trawl.server.header_checks import HeaderChecker
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
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
    site: SiteServer
    page: Any
    data: str = ""

    def login(self) -> None:
        self.page.goto(self.base + "/admin")
        self.page.fill("input[name=key]", self.key)
        self.page.click("button[type=submit]")
        self.page.wait_for_url(self.base + "/admin")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


def _live(
    serve: Serve,
    tmp_path: Path,
    browser: Any,
    checker: HeaderChecker = check_external_headers,
    allow: Sequence[SiteServer] = (),
) -> Iterator[Live]:
    site = serve(site_routes())
    config = service_settings(tmp_path, admin_allow_hosts=",".join(target(s) for s in allow))
    crawl_site(site, config)
    key = new_key(config)
    context = browser.new_context(viewport={"width": 1280, "height": 800}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(20_000)
    with LiveServer(create_app(config, checker)) as base:
        yield Live(base, key, site, page, str(config.data))
    context.close()


@pytest.fixture
def live(serve: Serve, tmp_path: Path, browser: Any) -> Iterator[Live]:
    yield from _live(serve, tmp_path, browser)


async def slow_answer(urls: Sequence[str], _: Settings) -> list[HeaderCheck]:
    """A header checker whose targets take two seconds to answer (204)."""
    await asyncio.sleep(2)
    return [HeaderCheck(url, 204, None, (), None, 0.0) for url in urls]


@pytest.fixture
def live_slow_check(serve: Serve, tmp_path: Path, browser: Any) -> Iterator[Live]:
    yield from _live(serve, tmp_path, browser, slow_answer)


def shoot(page: Any, name: str) -> None:
    png: bytes = page.screenshot(full_page=True)
    assert png.startswith(b"\x89PNG"), name


def test_search_from_the_page(live: Live) -> None:
    page = live.page
    page.goto(live.base + "/")
    page.fill("input[name=q]", "grey heron")
    page.press("input[name=q]", "Enter")
    page.wait_for_selector("li.result")

    first = page.locator("li.result").first
    assert first.locator("a.title").inner_text() == "Grey herons"
    assert first.locator("mark").count() >= 1
    assert "published 2024-03-01" in first.locator(".meta").inner_text()
    assert "results" in page.locator(".stats").inner_text() or "result" in page.inner_text("main")
    shoot(page, "search")


def test_login_is_required_and_a_bad_key_is_refused(live: Live) -> None:
    page = live.page
    page.goto(live.base + "/admin/report")
    assert page.url == live.base + "/admin/login"
    page.fill("input[name=key]", "trawl_wrong")
    page.click("button[type=submit]")
    assert "unknown API key" in page.inner_text(".error")


@pytest.fixture
def waders(serve: Serve) -> SiteServer:
    pages = {f"/bird{i}": html_page(f"Bird {i}", f"<p>wader number {i}</p>") for i in range(30)}
    for route in pages.values():
        route.delay = 0.15
    home = html_page("Waders", "".join(f'<a href="/bird{i}">bird {i}</a>' for i in range(30)))
    return serve({"/": home, **pages})


@pytest.fixture
def live_waders(serve: Serve, tmp_path: Path, browser: Any, waders: SiteServer) -> Iterator[Live]:
    """The service, with the waders' site listed in admin_allow_hosts (it is on loopback)."""
    yield from _live(serve, tmp_path, browser, allow=[waders])


def test_add_a_site_start_a_crawl_and_watch_progress(live_waders: Live, waders: SiteServer) -> None:
    live = live_waders
    page = live.page
    live.login()

    page.fill("#sites ~ form input[name=url], form[action='/admin/sites'] input[name=url]",
              waders.url("/"))  # fmt: skip
    page.click("#add-site")
    page.wait_for_selector(".flash")
    assert waders.url("/") in page.inner_text("#sites")

    row = page.locator("#sites tr", has_text=waders.url("/"))
    row.locator("button", has_text="Crawl").click()
    page.wait_for_function("() => document.getElementById('crawl-state').textContent === 'running'")
    page.wait_for_function("() => Number(document.getElementById('crawled').textContent) > 0")
    running = {k: int(page.inner_text(f"#{k}")) for k in ("discovered", "crawled", "queued")}
    assert running["discovered"] >= running["crawled"] > 0
    shoot(page, "admin-crawling")

    page.wait_for_function(
        "() => document.getElementById('crawl-state').textContent === 'complete'", timeout=60_000
    )
    assert int(page.inner_text("#crawled")) == 31
    history = page.inner_text("#history")
    assert waders.url("/") in history and "complete" in history
    shoot(page, "admin")


def test_report_url_details_and_csv_export(live: Live) -> None:
    page = live.page
    live.login()
    page.goto(live.base + "/admin/report")
    assert "6 URLs" in page.inner_text(".stats")
    page.click("#report thead a:text('Words')")
    page.wait_for_url("**sort=word_count**")
    shoot(page, "report")

    page.select_option("select[name=status]", "3xx")
    page.click("form.filters-bar button")
    page.wait_for_url("**status=3xx**")
    assert page.locator("#report tbody tr").count() == 1

    with page.expect_download() as download_info:
        page.click("#csv")
    path = download_info.value.path()
    with Path(path).open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["status"] for r in rows] == ["301"]
    assert rows[0]["redirect_to"] == live.site.url("/herons")

    page.click(f"#report a:text('{live.site.url('/old')}')")
    page.wait_for_selector("#redirects")
    assert live.site.url("/herons") in page.inner_text("#redirects")
    page.goto(live.base + "/admin/report/url?url=" + live.site.url("/herons"))
    assert "Grey herons" in page.inner_text("#links-in")
    assert "egrets too" in page.inner_text("#links-out")
    assert "Content-Type" in page.inner_text("#headers")
    shoot(page, "url-details")


def test_external_links_and_metrics_pages(live: Live) -> None:
    page = live.page
    live.login()
    page.goto(live.base + "/?q=heron")  # a query, so the latency chart has a point
    page.goto(live.base + "/admin/report/external")
    assert ELSEWHERE in page.inner_text("#external")
    page.click("#check")
    # The check runs in the background; the page follows it and shows the answers at its end.
    # (Refused before any request, it may end before the page shows its start message: the
    # reload at its end drops that message, so only the end is waited for.)
    page.wait_for_selector("#check-status :text('Last header check: 1 of 1 checked')")
    row = page.locator("#external tbody tr").first.inner_text()
    assert "000" in row and "non-public address" in row  # refused before any request
    shoot(page, "external-links")

    page.goto(live.base + "/admin/report/resources?broken=true")
    assert "No resources checked are broken" in page.inner_text("#resources")

    page.goto(live.base + "/admin/metrics")
    for chart in ("latency", "queries", "crawl", "statuses", "index"):
        image = page.locator(f"#chart-{chart} img")
        image.evaluate("i => i.decode()")  # waits until it is loaded and drawn
        assert image.evaluate("i => i.naturalWidth") == 640
    assert "3 documents" in page.inner_text(".stats")
    shoot(page, "metrics")


def test_a_header_check_is_followed_while_it_runs(live_slow_check: Live) -> None:
    live, page = live_slow_check, live_slow_check.page
    live.login()
    page.goto(live.base + "/admin/report/external")
    page.click("#check")
    # Back on the page at once, the check still running: its progress, a Cancel button.
    assert "Checking headers: 0 of 1 checked" in page.inner_text("#check-status")
    assert page.locator("#cancel-check").is_visible() and page.locator("#check").is_disabled()
    # The page polls the status and reloads itself when the check ends.
    page.wait_for_selector("#check-status :text('Last header check: 1 of 1 checked')")
    assert "204" in page.locator("#external tbody tr").first.inner_text()
    assert page.locator(".flash").count() == 0  # the reload dropped the start message


# -- the admin surface under attack (issue 18) -----------------------------------------


def _pages(live: Live) -> int:
    request = urllib.request.Request(
        live.base + "/api/admin/report/pages", headers={"X-API-Key": live.key}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        total: int = json.load(answer)["total"]
    return total


def test_a_form_on_another_port_changes_nothing(live: Live, serve: Serve) -> None:
    """Logged in, the admin visits a page on another port of the same host (the same
    site, so SameSite=Strict sends the cookie along), which posts forms to Trawl."""
    live.login()
    before = _pages(live)
    forms = "".join(
        f'<form method="post" action="{live.base}{action}" target="f{n}">{fields}</form>'
        f'<iframe name="f{n}"></iframe>'
        for n, (action, fields) in enumerate(
            [
                ("/api/admin/evict?dry_run=false", ""),
                ("/admin/evict", '<input name="apply" value="yes">'),
                ("/api/admin/keys", ""),
            ]
        )
    )
    script = "<script>for (const f of document.forms) f.submit();</script>"
    attacker = serve({"/": Route((forms + script).encode(), headers={"Content-Type": "text/html"})})
    assert urlsplit(attacker.url("/")).port != urlsplit(live.base).port
    answers: list[tuple[str, int]] = []
    live.page.on("response", lambda r: answers.append((urlsplit(r.url).path, r.status)))
    live.page.goto(attacker.url("/"))
    live.page.wait_for_function("document.querySelectorAll('iframe').length === 3")
    deadline = time.monotonic() + 10
    while len([a for a in answers if a[0] != "/"]) < 3 and time.monotonic() < deadline:
        live.page.wait_for_timeout(100)
    assert sorted(a for a in answers if a[0] != "/") == [
        ("/admin/evict", 403),
        ("/api/admin/evict", 403),
        ("/api/admin/keys", 403),
    ]
    assert _pages(live) == before  # the 404 page, which eviction would drop, is still there
    live.page.goto(live.base + "/admin")
    assert live.page.url == live.base + "/admin"  # still logged in: nothing else changed


HOSTILE = "x'+alert(document.domain)+'.example"


def test_a_hostile_host_runs_no_script(live: Live) -> None:
    # Stored before host names were checked (or by an older Trawl): the page must hold.
    store = SQLiteStore(service_settings(Path(live.data)).sqlite_path)
    store.add_site(f"http://{HOSTILE}/")
    store.close()
    dialogs: list[str] = []

    def answer(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()  # "Cancel": nothing is deleted

    live.page.on("dialog", answer)
    live.login()
    row = live.page.locator("#sites tr", has_text=HOSTILE)
    row.locator("button", has_text="Delete").click()
    live.page.wait_for_timeout(300)
    assert dialogs == [f"Delete {HOSTILE} and its pages?"]  # the question, and no alert
    assert HOSTILE in live.page.inner_text("#sites")


def test_pages_work_under_the_csp_with_no_violation_and_no_network(live: Live) -> None:
    page = live.page
    problems: list[str] = []
    outside: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))

    def only_loopback(route: Any) -> None:
        if urlsplit(route.request.url).hostname in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.context.route("**/*", only_loopback)
    first = page.goto(live.base + "/")
    assert first is not None
    headers = first.all_headers()
    assert "default-src 'self'" in headers["content-security-policy"]
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "same-origin"
    page.fill("input[name=q]", "heron")
    page.press("input[name=q]", "Enter")
    page.wait_for_selector("li.result")
    live.login()
    for path in (
        "/admin",
        "/admin/report",
        "/admin/report/url?url=" + live.site.url("/herons"),
        "/admin/report/external",
        "/admin/report/resources",
        "/admin/metrics",
    ):
        page.goto(live.base + path)
        page.wait_for_load_state("networkidle")
    page.goto(live.base + "/docs")
    page.wait_for_selector(".swagger-ui .info .title")
    assert "Trawl" in page.inner_text(".swagger-ui .info .title")
    assert page.locator(".swagger-ui .btn.authorize").count() == 1  # the key's scheme
    page.locator(".opblock-summary-path", has_text="/api/search").first.wait_for()
    assert problems == [] and outside == []
