"""The parts of the first run, each on its own: the setup link, the welcome on an
empty index, the crawl form's options and defaults, and the live progress figures.
A real store, index and loopback site; the server through FastAPI's test client."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from fixture_sites import Route, SiteServer, html_page
from service_fixtures import crawl_site, new_key, service_settings, site_routes, target
from trawl.crawl.crawler import CrawlStats
from trawl.server import auth
from trawl.server.app import create_app, setup_link
from trawl.server.auth import COOKIE, SetupLink
from trawl.server.crawls import estimate
from trawl.settings import Settings, table

Serve = Callable[..., SiteServer]
OWN = {"Origin": "http://testserver"}


def _client(settings: Settings) -> TestClient:
    return TestClient(create_app(settings), follow_redirects=False)


# -- the setup link ------------------------------------------------------------------


def test_a_setup_token_opens_one_login_only() -> None:
    link = SetupLink()
    token = link.issue()
    assert not link.redeem("trawl_" + token)
    assert not link.redeem("")
    assert not link.redeem("x" * 5000)
    assert link.redeem(token)
    assert not link.redeem(token)  # used up


def test_a_setup_token_expires_and_a_new_one_replaces_the_old() -> None:
    link = SetupLink()
    assert not link.redeem(link.issue(minutes=-1))
    first = link.issue()
    second = link.issue()
    assert not link.redeem(first)
    assert link.redeem(second)


def test_the_token_is_kept_only_as_its_digest() -> None:
    link = SetupLink()
    token = link.issue()
    assert token not in repr(vars(link)) and auth.digest(token) in repr(vars(link))


def test_a_setup_link_is_made_only_while_no_key_exists(tmp_path: Path) -> None:
    settings = Settings(data=tmp_path)
    app = create_app(settings)
    link = setup_link(app, "http://127.0.0.1:8080")
    assert link is not None and link.startswith("http://127.0.0.1:8080/admin/setup?token=")
    new_key(settings)
    assert setup_link(create_app(settings), "http://127.0.0.1:8080") is None


def test_the_setup_link_logs_in_once_to_the_admin_page(tmp_path: Path) -> None:
    settings = Settings(data=tmp_path)
    app = create_app(settings)
    link = setup_link(app, "")
    assert link is not None
    with TestClient(app, follow_redirects=False) as client:
        assert client.get("/admin").status_code == 303  # not logged in yet
        opened = client.get(link)
        assert opened.status_code == 303 and opened.headers["location"].startswith("/admin?")
        assert opened.headers["cache-control"] == "no-store"
        assert client.cookies.get(COOKIE)
        page = client.get("/admin")
        assert page.status_code == 200 and "Logged in" not in page.text
        assert "setup link" in page.text  # the key it made, in the key list

        client.cookies.clear()
        again = client.get(link)
        assert again.status_code == 401 and "used or has expired" in again.text
        assert not client.cookies.get(COOKIE)
        assert client.get("/admin/setup", params={"token": "\x00" * 300}).status_code < 500
        assert client.get("/admin/setup").status_code == 401


# -- the welcome on an empty index ----------------------------------------------------


def test_an_empty_index_gets_a_welcome_and_a_way_to_add_a_site(tmp_path: Path) -> None:
    with _client(Settings(data=tmp_path)) as client:
        home = client.get("/")
        searched = client.get("/", params={"q": "herons"})
    assert home.status_code == 200
    assert 'id="welcome"' in home.text and "search engine you run yourself" in home.text
    assert 'href="/admin#new-site"' in home.text
    assert 'id="welcome"' in searched.text


def test_a_crawled_index_gets_no_welcome(serve: Serve, tmp_path: Path) -> None:
    settings = service_settings(tmp_path)
    crawl_site(serve(site_routes()), settings)
    with _client(settings) as client:
        home = client.get("/")
    assert home.status_code == 200 and 'id="welcome"' not in home.text


# -- the crawl form -------------------------------------------------------------------


@pytest.fixture
def slow_site(serve: Serve) -> SiteServer:
    pages = {f"/p{i}": html_page(f"Page {i}", f"<p>page {i}</p>") for i in range(12)}
    for route in pages.values():
        route.delay = 0.3
    links = "".join(f'<a href="/p{i}">{i}</a>' for i in range(12))
    home = html_page("Home", links + '<a href="/broken">broken</a>')
    broken = Route(b"down", 500, {"Content-Type": "text/html"})
    return serve({"/": home, "/broken": broken, **pages})


@pytest.fixture
def admin(tmp_path: Path, slow_site: SiteServer) -> Iterator[TestClient]:
    settings = service_settings(tmp_path, admin_allow_hosts=target(slow_site), max_pages=777)
    key = new_key(settings)
    with _client(settings) as client:
        client.headers["X-API-Key"] = key
        yield client


def _wait(client: TestClient, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status: dict[str, Any] = client.get("/api/admin/crawls/current").json()
        if not status["running"]:
            return status
        time.sleep(0.1)
    raise AssertionError("the crawl did not end")


def test_the_crawl_form_shows_each_option_with_its_help_and_default(admin: TestClient) -> None:
    page = admin.get("/admin").text
    helps = {s.name: s.help for s in table()}
    for name in ("scope", "max_pages", "max_depth", "delay", "render"):
        assert f'name="{name}"' in page
        assert helps[name] in page.replace("&#39;", "'")
    assert 'placeholder="777"' in page  # the server's own setting, not the table's 10000
    assert 'placeholder="50"' in page  # max_depth's default
    assert '<option value="host" selected>' in page
    assert "gentle (4 in flight, 1 a host, 2.0 s apart)" in page
    render_box = page.split('type="checkbox" name="render"')[1].split(">")[0]
    assert "checked" not in render_box  # render is off unless configured on


def test_the_form_starts_a_crawl_with_the_options_given(
    admin: TestClient, slow_site: SiteServer
) -> None:
    form = {
        "options": "1",
        "url": slow_site.url("/"),
        "scope": "site",
        "speed": "gentle",
        "delay": "0",
        "max_pages": "5",
        "max_depth": "1",
    }
    started = admin.post("/admin/crawl/start", data=form, headers=OWN)
    assert started.status_code == 303, started.text[:300]
    status = admin.get("/api/admin/crawls/current").json()
    assert status["options"] == {
        "scope": "site",
        "max_pages": 5,
        "max_depth": 1,
        "delay": 0.0,  # given: wins over the preset's 2.0
        "concurrency": 4,  # the gentle preset's
        "host_concurrency": 1,
        "render": False,
    }
    assert _wait(admin)["crawled"] == 5


@pytest.mark.parametrize(
    "field",
    [
        {"scope": "galaxy"},
        {"speed": "ludicrous"},
        {"max_pages": "abc"},
        {"max_pages": "0"},
        {"max_depth": "-1"},
        {"delay": "nan"},
        {"delay": "1e400"},
        {"max_pages": "9" * 19},
        {"url": "ftp://example.org/"},
    ],
)
def test_bad_form_input_shows_the_page_again_with_a_4xx(
    admin: TestClient, slow_site: SiteServer, field: dict[str, str]
) -> None:
    form = {"options": "1", "url": slow_site.url("/"), **field}
    answer = admin.post("/admin/crawl/start", data=form, headers=OWN)
    assert 400 <= answer.status_code < 500, answer.text[:300]
    assert 'class="error"' in answer.text and 'id="crawl-form"' in answer.text
    assert not admin.get("/api/admin/crawls/current").json()["running"]


@pytest.mark.parametrize(
    "body",
    [
        {"scope": "galaxy"},
        {"speed": "ludicrous"},
        {"render": "perhaps"},
        {"max_depth": -1},
        {"scope": 3},
    ],
)
def test_bad_crawl_options_get_a_4xx_from_the_api(admin: TestClient, body: dict[str, Any]) -> None:
    answer = admin.post("/api/admin/crawls", json=body)
    assert answer.status_code == 400, answer.text


def test_the_api_takes_the_forms_options(admin: TestClient, slow_site: SiteServer) -> None:
    body = {"urls": [slow_site.url("/")], "speed": "fast", "max_pages": 3, "scope": "web"}
    started = admin.post("/api/admin/crawls", json=body)
    assert started.status_code == 202, started.text
    options = started.json()["options"]
    assert (options["concurrency"], options["delay"], options["scope"]) == (32, 0.1, "web")
    _wait(admin)


# -- live progress --------------------------------------------------------------------


def test_progress_tells_rate_url_errors_and_what_is_left(
    admin: TestClient, slow_site: SiteServer
) -> None:
    admin.post("/api/admin/crawls", json={"urls": [slow_site.url("/")], "concurrency": 2})
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = admin.get("/api/admin/crawls/current").json()
        if not status["running"]:
            break
        seen.append(status)
        time.sleep(0.05)
    final = _wait(admin)
    running = [s for s in seen if s["crawled"] > 1]
    assert running, "never saw the crawl running"
    mid = running[0]
    assert mid["fetching"].startswith(slow_site.url("/"))
    assert mid["pages_per_second"] > 0 and mid["eta_seconds"] is not None
    assert 0 < mid["progress"] < 1 and mid["left"] > 0
    assert mid["crawl_id"] is not None
    history = admin.get("/api/admin/crawls").json()
    assert history[0]["id"] == mid["crawl_id"]
    assert final["outcome"] == "complete" and final["progress"] == 1.0
    assert {"url": slow_site.url("/broken"), "error": "HTTP 500"} in final["last_errors"]


def test_the_estimate_counts_queued_pages_up_to_max_pages() -> None:
    stats = CrawlStats(started=time.monotonic() - 10, fetched=20, queued=500)
    capped = estimate(stats, max_pages=100)
    assert capped["left"] == 80 and capped["progress"] == 0.2
    assert capped["pages_per_second"] == pytest.approx(2, rel=0.05)
    assert capped["eta_seconds"] == pytest.approx(40, rel=0.05)
    open_ended = estimate(stats, max_pages=10_000)
    assert open_ended["left"] == 500
    assert estimate(CrawlStats(started=time.monotonic()), 10)["eta_seconds"] is None
    assert estimate(CrawlStats(started=time.monotonic() - 1, fetched=10, queued=3), 10)["left"] == 0
