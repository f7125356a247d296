"""A hostile client against the app served by a real uvicorn: raw bytes on a socket,
so what no HTTP library would send (lone surrogates, NULs, odd Host headers, every
method on every route, broken bodies, a client that hangs up mid-answer) reaches the
server. Nothing may answer a 5xx other than the deliberate 501/503."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixture_sites import SiteServer
from service_fixtures import LiveServer, crawl_site, new_key, service_settings, site_routes
from trawl.server import api_admin, api_search, api_suggest, docs, report_ui, ui
from trawl.server.app import create_app

# Starting crawls would fetch whatever URL a case names; test_api_service covers them.
STARTS_CRAWLS = {"/api/admin/crawls", "/api/admin/recrawl", "/admin/crawl/start"}
ROUTES = sorted(
    {
        (route.path, method)
        for module in (api_admin, api_search, api_suggest, ui, report_ui, docs)
        for route in module.router.routes
        for method in getattr(route, "methods", ())
        if getattr(route, "path", "") not in STARTS_CRAWLS
    }
    | {("/metrics", "GET"), ("/openapi.json", "GET")}
)
PATH_VALUES = {"{host}": "127.0.0.1", "{key_id}": "999", "{name}": "x", "{action}": "enable"}
NASTY = [
    "%ED%A0%80", "%00", "a%00b", "-1", "1" + "0" * 30, "nan", "inf", "1e309", "", "%FF%FE",
    "%C0%AF", "..%2F..%2Fetc%2Fpasswd", "%", "%zz", "%EF%BC%91", "%D9%A3", "1_0", "+1", "x" * 3000,
]  # fmt: skip
PARAMS = ["q", "page", "size", "site", "host", "url", "limit", "sort", "issue", "since", "crawl"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int, str]]:
    data: Path = tmp_path_factory.mktemp("hostile")
    config = service_settings(
        data, search_rate_limit="1000000/minute", admin_rate_limit="1000000/minute"
    )
    with SiteServer(site_routes()) as site:
        crawl_site(site, config)
    key = new_key(config)
    with LiveServer(create_app(config)) as base:
        host, port = base.removeprefix("http://").split(":")
        yield host, int(port), key


def exchange(server: tuple[str, int, str], raw: bytes) -> int:
    """The status of the answer to ``raw``, sent on a fresh connection."""
    host, port, _ = server
    with socket.create_connection((host, port), timeout=30) as conn:
        conn.sendall(raw)
        head = b""
        while b"\r\n" not in head:
            chunk = conn.recv(4096)
            assert chunk, f"connection closed with no answer to {raw[:120]!r}"
            head += chunk
    line = head.split(b"\r\n", 1)[0].split()
    return int(line[1])


def request(
    server: tuple[str, int, str],
    method: str,
    target: str,
    body: bytes = b"",
    headers: tuple[bytes, ...] = (),
) -> bytes:
    key = server[2].encode()
    lines = [
        f"{method} {target} HTTP/1.1".encode(),
        b"Host: 127.0.0.1",
        b"X-API-Key: " + key,
        f"Origin: http://127.0.0.1:{server[1]}".encode(),
        b"Connection: close",
        *headers,
    ]
    if body or method in {"POST", "PUT", "PATCH", "DELETE"}:
        lines.append(f"Content-Length: {len(body)}".encode())
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def no_server_error(status: int, what: object) -> None:
    assert status < 500 or status in {501, 503}, f"{status} for {what!r}"


def fill(path: str) -> str:
    for name, value in PATH_VALUES.items():
        path = path.replace(name, value)
    return path


@given(
    route=st.sampled_from([path for path, method in ROUTES if method == "GET"]),
    query=st.lists(st.tuples(st.sampled_from(PARAMS), st.sampled_from(NASTY)), max_size=6),
)
@settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
def test_no_query_string_gets_a_server_error(
    served: tuple[str, int, str], route: str, query: list[tuple[str, str]]
) -> None:
    # Repeated and unknown parameters come with the lists; the values stay percent-encoded
    # on the wire, so lone surrogates and NULs reach the server's decoder.
    target = fill(route) + "?" + "&".join(f"{name}={value}" for name, value in query)
    no_server_error(exchange(served, request(served, "GET", target)), target)


@pytest.mark.parametrize(("path", "method"), ROUTES)
def test_no_method_on_any_route_gets_a_server_error(
    served: tuple[str, int, str], path: str, method: str
) -> None:
    for other in ("GET", "HEAD", "OPTIONS", "PUT", "PATCH", "DELETE", "POST"):
        no_server_error(exchange(served, request(served, other, fill(path))), (other, path))


BODIES = [
    b"{", b"[]", b"null", b'"x"', b"\xff\xfe", b'{"url": "\\ud800"}', b'{"url": 1e999}',
    b'{"start_url": "http://[::1"}', b'{"name": "\\u0000"}', b'{"scope": "nope"}',
    b"[" * 5000 + b"]" * 5000, b"a=b&c", b"url=%ED%A0%80&host=%00&key=%FF",
]  # fmt: skip
CONTENT_TYPES = [
    b"application/json", b"text/plain", b"application/x-www-form-urlencoded",
    b"multipart/form-data; boundary=x", b"multipart/form-data", b"application/json; charset=nope",
]  # fmt: skip


@pytest.mark.parametrize("path", sorted({p for p, m in ROUTES if m in {"POST", "DELETE"}}))
def test_no_body_gets_a_server_error(served: tuple[str, int, str], path: str) -> None:
    method = next(m for p, m in ROUTES if p == path and m in {"POST", "DELETE"})
    for body in BODIES:
        for kind in CONTENT_TYPES:
            raw = request(served, method, fill(path), body, (b"Content-Type: " + kind,))
            no_server_error(exchange(served, raw), (path, kind, body[:40]))


RAW = [
    b"GET / HTTP/1.1\r\nHost: \xff\xfe\r\n\r\n",
    b"GET /?q=heron HTTP/1.1\r\nHost: [::1\r\n\r\n",
    b"GET /opensearch.xml HTTP/1.1\r\nHost: a b\r\n\r\n",
    b"GET /opensearch.xml HTTP/1.1\r\nHost: ex.com:99999999\r\n\r\n",
    b"GET /opensearch.xml HTTP/1.1\r\nHost: " + b"h" * 10000 + b"\r\n\r\n",
    b"GET /opensearch.xml HTTP/1.0\r\n\r\n",
    b"GET /admin HTTP/1.1\r\nHost: x\r\nCookie: \xff=\xfe; trawl_session=%00\r\n\r\n",
    b"GET /api/search?q=a HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: \xff\r\n"
    b'Forwarded: for="[zz"\r\n\r\n',
    b"GET /api/search?q=a HTTP/1.1\r\nHost: x\r\nAccept-Language: \xff;q=nan\r\n\r\n",
    b"GET /api/admin/sites HTTP/1.1\r\nHost: x\r\nX-API-Key: \xff\xfe\r\n\r\n",
    b"GET /api/admin/sites HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \xff\xfe\r\n\r\n",
    b"GET /api/admin/sites HTTP/1.1\r\nHost: x\r\nAuthorization: Basic %%%\r\n\r\n",
    b"GET /%ED%A0%80 HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /api/search?q=" + b"x" * 100_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /static/../app.py HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /static/%2e%2e/app.py HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /static/..%2fapp.py HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /static/%00 HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /static/style.css HTTP/1.1\r\nHost: x\r\nRange: bytes=999999999-1\r\n\r\n",
    b"GET /static/style.css HTTP/1.1\r\nHost: x\r\nRange: bytes=zz\r\n\r\n",
    b"GET /static/style.css HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: \xff\r\n\r\n",
    b"POST /admin/login HTTP/1.1\r\nHost: x\r\nOrigin: \xff\r\n"
    b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 9\r\n\r\nkey=%ED%A0",
    b"POST /api/admin/sites HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n",
]


@pytest.mark.parametrize("raw", RAW, ids=range(len(RAW)))
def test_odd_headers_and_paths_get_no_server_error(
    served: tuple[str, int, str], raw: bytes
) -> None:
    status = exchange(served, raw)
    no_server_error(status, raw[:80])
    if b"app.py" in raw:  # the static mount never serves what lies outside it
        assert status == 404


def test_clients_that_hang_up_mid_answer_leave_the_server_serving(
    served: tuple[str, int, str],
) -> None:
    host, port, _ = served
    for path in ("/api/admin/report/pages.csv", "/api/search?q=heron", "/admin/report"):
        for _ in range(10):
            with socket.create_connection((host, port)) as conn:
                conn.sendall(request(served, "GET", path))
    assert exchange(served, request(served, "GET", "/healthz")) == 200
    assert exchange(served, request(served, "GET", "/api/search?q=heron")) == 200
