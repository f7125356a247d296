"""The HTML pages (left out of the OpenAPI document) get no 500 either, whatever the
query string: Hypothesis draws the parameters, logged in and not."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixture_sites import SiteServer
from service_fixtures import crawl_site, new_key, service_settings, site_routes
from trawl.server.app import create_app
from trawl.server.auth import COOKIE

PAGES = {
    "/": ("q", "page", "site", "lang", "sort", "after", "before"),
    "/admin": ("msg", "err"),
    "/admin/report": ("q", "status", "indexability", "lang", "sort", "order", "page"),
    "/admin/report/url": ("url",),
    "/admin/report/external": ("q", "page", "msg", "err"),
    "/admin/report/resources": ("broken", "page"),
    "/admin/metrics": (),
    "/admin/login": (),
}
values = st.one_of(
    st.text(max_size=40),
    st.integers(min_value=-(10**12), max_value=10**12).map(str),
    st.sampled_from(["", "2xx", "desc", "word_count", "2024-02-30", "http://x/", "%", "\x00"]),
)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    data: Path = tmp_path_factory.mktemp("ui")
    config = service_settings(
        data, search_rate_limit="100000/minute", admin_rate_limit="100000/minute"
    )
    with SiteServer(site_routes()) as site:
        crawl_site(site, config)
    key = new_key(config)
    with TestClient(create_app(config), follow_redirects=False) as c:
        login = c.post("/admin/login", data={"key": key}, headers={"Origin": "http://testserver"})
        assert login.status_code == 303 and c.cookies[COOKIE] != key
        yield c


@pytest.mark.parametrize("path", sorted(PAGES))
def test_no_query_string_gets_a_server_error(client: TestClient, path: str) -> None:
    @given(params=st.fixed_dictionaries({}, optional=dict.fromkeys(PAGES[path], values)))
    @settings(max_examples=40, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    def check(params: dict[str, str]) -> None:
        response = client.get(path, params=params)
        assert response.status_code < 500, (path, params, response.text[:500])

    check()


@pytest.mark.parametrize("path", ["/admin", "/admin/report", "/admin/metrics"])
def test_admin_pages_send_strangers_to_the_login(client: TestClient, path: str) -> None:
    token = client.cookies[COOKIE]
    client.cookies.clear()
    client.cookies.set(COOKIE, "trawl_nobody")
    try:
        response = client.get(path)
    finally:
        client.cookies.clear()
        client.cookies.set(COOKIE, token)
    assert response.status_code == 303 and response.headers["location"] == "/admin/login"


def test_forms_without_a_login_change_nothing(client: TestClient) -> None:
    token = client.cookies[COOKIE]
    client.cookies.clear()
    try:
        response = client.post("/admin/sites", data={"url": "https://evil.example/"})
        assert response.status_code == 303 and response.headers["location"] == "/admin/login"
        assert client.post("/admin/crawl/start", data={"url": "x"}).status_code == 303
    finally:
        client.cookies.set(COOKIE, token)
    assert "evil.example" not in client.get("/admin").text


@pytest.mark.parametrize(
    "origin",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Referer": "http://testserver.evil.example/admin"},
        {"Origin": "http://testserver:8080"},  # another port is another origin
        {},  # the login cookie came with it, so a browser sent it: browsers name the page
    ],
)
def test_forms_posted_from_another_site_change_nothing(
    client: TestClient, origin: dict[str, str]
) -> None:
    # The login cookie is valid: only the page the form came from is wrong.
    response = client.post("/admin/sites", data={"url": "https://forged.example/"}, headers=origin)
    assert response.status_code == 403
    assert "another site or port" in response.text
    assert client.post("/admin/crawl/stop", headers=origin).status_code == 403
    assert client.post("/admin/logout", headers=origin).status_code == 403
    assert "forged.example" not in client.get("/admin").text


def test_forms_posted_from_the_server_s_own_pages_are_taken(client: TestClient) -> None:
    # TestClient's requests go to host "testserver"; a browser on the admin page names it.
    for headers in ({"Origin": "http://testserver"}, {"Referer": "http://testserver/admin"}):
        url = "https://own-" + "-".join(sorted(headers)).lower() + ".example/"
        response = client.post("/admin/sites", data={"url": url}, headers=headers)
        assert response.status_code == 303 and "err=" not in response.headers["location"]
        host = urlsplit(url).hostname
        assert host and host in client.get("/admin").text
