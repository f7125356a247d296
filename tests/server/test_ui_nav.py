"""The header of every page: admin links and a logout button for those logged in,
neither for a visitor (who gets a login link)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from fixture_sites import SiteServer
from service_fixtures import crawl_site, service_settings, site_routes
from trawl.records import KeyScope
from trawl.server.app import create_app
from trawl.server.auth import COOKIE, create_key
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

ADMIN_LINKS = ('href="/admin"', 'href="/admin/report"', 'href="/admin/metrics"')
LOGOUT = 'action="/admin/logout"'
OWN = {"Origin": "http://testserver"}


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    settings = service_settings(tmp_path_factory.mktemp("nav"))
    with SiteServer(site_routes()) as site:
        crawl_site(site, settings)
    return settings


@pytest.fixture
def client(config: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(config), follow_redirects=False) as c:
        yield c


def _key(config: Settings, *scopes: KeyScope) -> str:
    store = SQLiteStore(config.sqlite_path)
    try:
        return create_key(store, "nav", scopes)[1]
    finally:
        store.close()


def _login(client: TestClient, key: str) -> None:
    assert client.post("/admin/login", data={"key": key}, headers=OWN).status_code == 303


@pytest.mark.parametrize("path", ["/", "/?q=heron", "/?q=heron&page=7", "/admin/login"])
def test_a_visitor_sees_no_admin_link_and_no_logout(client: TestClient, path: str) -> None:
    body = client.get(path).text
    assert not any(link in body for link in ADMIN_LINKS) and LOGOUT not in body
    assert 'href="/admin/login"' in body


def test_a_stale_login_cookie_is_a_visitor(client: TestClient) -> None:
    client.cookies.set(COOKIE, "trawl_expired_or_made_up")
    body = client.get("/?q=heron").text
    assert not any(link in body for link in ADMIN_LINKS) and LOGOUT not in body


def test_the_admin_sees_the_links_and_logs_out(client: TestClient, config: Settings) -> None:
    _login(client, _key(config, "search", "admin"))
    for path in ("/", "/?q=heron", "/admin", "/admin/report"):
        body = client.get(path).text
        assert all(link in body for link in ADMIN_LINKS) and LOGOUT in body, path
        assert 'href="/admin/login"' not in body

    out = client.post("/admin/logout", headers=OWN)
    assert out.status_code == 303 and out.headers["location"] == "/"
    body = client.get("/").text
    assert not any(link in body for link in ADMIN_LINKS) and LOGOUT not in body


def test_a_search_only_login_gets_logout_but_no_admin_links(
    client: TestClient, config: Settings
) -> None:
    _login(client, _key(config, "search"))
    body = client.get("/?q=heron").text
    assert LOGOUT in body and not any(link in body for link in ADMIN_LINKS)
