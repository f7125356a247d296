"""Every endpoint of the service API, over a real crawled site, a real store and index."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import sqlite3
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from fastapi.testclient import TestClient

from fixture_sites import Route, SiteServer, html_page
from service_fixtures import (
    ELSEWHERE,
    crawl_site,
    new_key,
    service_settings,
    site_routes,
    target,
)
from trawl.records import HeaderCheck
from trawl.server.app import create_app
from trawl.settings import Settings

Serve = Callable[..., SiteServer]


class Service:
    def __init__(self, client: TestClient, key: str, site: SiteServer, settings: Settings):
        self.client = client
        self.key = key
        self.site = site
        self.settings = settings

    def admin(self, method: str, path: str, **kwargs: Any) -> Any:
        headers = {"X-API-Key": self.key, **kwargs.pop("headers", {})}
        return self.client.request(method, path, headers=headers, **kwargs)


def _service(
    serve: Serve,
    tmp_path: Path,
    app_options: dict[str, Any] | None = None,
    allow: Sequence[SiteServer] = (),
    **settings: object,
) -> Iterator[Service]:
    site = serve(site_routes())
    listed = ",".join(target(s) for s in (site, *allow))
    config = service_settings(tmp_path, admin_allow_hosts=listed, **settings)
    crawl_site(site, config)
    key = new_key(config)
    with TestClient(create_app(config, **(app_options or {}))) as client:
        yield Service(client, key, site, config)


@pytest.fixture
def service(serve: Serve, tmp_path: Path) -> Iterator[Service]:
    yield from _service(serve, tmp_path)


served = contextlib.contextmanager(_service)


def wait_for_check(client: TestClient, key: str, timeout: float = 30) -> dict[str, Any]:
    """The header check's status once it has ended."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        response = client.get("/api/admin/report/external/check", headers={"X-API-Key": key})
        status: dict[str, Any] = response.json()
        if not status["running"]:
            return status
        time.sleep(0.05)
    raise AssertionError("the header check did not end")


def wait_for_crawl(service: Service, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status: dict[str, Any] = service.admin("GET", "/api/admin/crawls/current").json()
        if not status["running"]:
            return status
        time.sleep(0.1)
    raise AssertionError("the crawl did not end")


# -- public ------------------------------------------------------------------------


def test_search_results_carry_dates_and_discussion(service: Service) -> None:
    answer = service.client.get("/api/search", params={"q": "grey heron"}).json()

    first = answer["results"][0]
    assert first["url"] == service.site.url("/herons")
    assert set(first) >= {
        "url", "title", "snippet", "score", "lang", "published", "modified",
        "modified_source", "discussed_on",
    }  # fmt: skip
    assert first["published"].startswith("2024-03-01")
    assert first["modified"].startswith("2024-05-20") and first["modified_source"] == "page"
    assert first["discussed_on"] == []
    assert "<mark>" in first["snippet"]


def test_a_search_answer_comes_from_the_index_alone(service: Service) -> None:
    # Dates shown with a result are in the index: the served path opens no store (it
    # read each hit's whole stored page for them, the slowest part of an answer).
    db = sqlite3.connect(service.settings.sqlite_path)
    with db:
        db.execute("DELETE FROM pages")
    db.close()
    first = service.client.get("/api/search", params={"q": "grey heron"}).json()["results"][0]
    assert first["published"].startswith("2024-03-01")
    assert first["modified"].startswith("2024-05-20") and first["modified_source"] == "page"


def test_search_filters_are_applied(service: Service) -> None:
    def urls(**params: str) -> list[str]:
        answer = service.client.get("/api/search", params={"q": "heron", **params})
        assert answer.status_code == 200, answer.text
        return [r["url"] for r in answer.json()["results"]]

    everything = urls()
    assert len(everything) >= 2
    # /herons is the only dated page: modified 2024-05-20.
    assert urls(lang="en", sort="date", after="2024-01-01") == [service.site.url("/herons")]
    assert urls(after="2024-05-21") == []
    assert service.site.url("/herons") not in urls(before="2024-05-20")
    assert urls(site=f"{service.site.host}:{service.site.port}") == everything
    assert urls(site="elsewhere.example") == []
    assert urls(lang="fr") == []


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"q": "x", "per_page": "101"},
        {"q": "x", "page": "0"},
        {"q": "x", "lang": "EN!"},
        {"q": "x", "sort": "sideways"},
        {"q": "x", "after": "yesterday"},
        {"q": "x", "site": "a b"},
        {"q": "x" * 1001},
    ],
)
def test_bad_search_parameters_get_a_4xx_json_error(
    service: Service, params: dict[str, str]
) -> None:
    response = service.client.get("/api/search", params=params)
    assert response.status_code == 400 and response.json()["error"]


def test_healthz(service: Service) -> None:
    answer = service.client.get("/healthz").json()
    assert answer["status"] == "ok" and answer["documents"] == 3  # home, herons, egrets


def test_opensearch_description_points_at_the_search_page(service: Service) -> None:
    response = service.client.get("/opensearch.xml")
    assert response.headers["content-type"].startswith("application/opensearchdescription+xml")
    root = ElementTree.fromstring(response.text)
    ns = {"o": "http://a9.com/-/spec/opensearch/1.1/"}
    templates = {u.get("type"): u.get("template") for u in root.findall("o:Url", ns)}
    assert templates["text/html"] == "http://testserver/?q={searchTerms}"
    assert templates["application/json"] == "http://testserver/api/search?q={searchTerms}"


def test_prometheus_metrics(service: Service) -> None:
    service.client.get("/api/search", params={"q": "heron"})
    text = service.client.get("/metrics").text

    assert 'trawl_queries_total{source="api"} 1.0' in text
    assert "trawl_query_seconds_bucket" in text and "trawl_query_seconds_count 1.0" in text
    assert "trawl_index_documents 3.0" in text
    assert "trawl_index_bytes" in text and "trawl_crawl_crawled" in text


# -- keys and limits -------------------------------------------------------------------


def admin_routes(client: TestClient) -> list[tuple[str, str]]:
    """Every admin operation the OpenAPI document lists."""
    paths = client.get("/openapi.json").json()["paths"]
    return [
        (method.upper(), path)
        for path, operations in paths.items()
        if path.startswith("/api/admin")
        for method in operations
    ]


def test_every_admin_call_without_a_valid_key_is_refused(service: Service) -> None:
    routes = admin_routes(service.client)
    assert len(routes) >= 15
    for method, template in routes:
        path = template.replace("{host}", "127.0.0.1")
        for headers in ({}, {"X-API-Key": "trawl_not-a-key"}, {"Authorization": "Bearer nope"}):
            response = service.client.request(method, path, headers=headers)
            assert response.status_code == 401, (method, path, headers)
            assert response.json()["error"]
    assert service.admin("GET", "/api/admin/sites").status_code == 200
    bearer = {"Authorization": f"Bearer {service.key}"}
    assert service.client.get("/api/admin/sites", headers=bearer).status_code == 200


def test_search_rate_limit_answers_429_with_retry_after(serve: Serve, tmp_path: Path) -> None:
    for service in _service(serve, tmp_path, search_rate_limit="3/minute"):
        codes = [service.client.get("/api/search?q=heron").status_code for _ in range(4)]
        assert codes == [200, 200, 200, 429]
        limited = service.client.get("/api/search?q=heron")
        assert limited.status_code == 429 and 1 <= int(limited.headers["Retry-After"]) <= 60
        assert "rate limit" in limited.json()["error"]
        assert service.client.get("/?q=heron").status_code == 429  # the page shares the limit
        assert 'trawl_rate_limited_total{limit="search"}' in service.client.get("/metrics").text


def test_admin_rate_limit_is_per_key(serve: Serve, tmp_path: Path) -> None:
    for service in _service(serve, tmp_path, admin_rate_limit="2/minute"):
        codes = [service.admin("GET", "/api/admin/sites").status_code for _ in range(3)]
        assert codes == [200, 200, 429]
        other = new_key(service.settings, "other")
        response = service.client.get("/api/admin/sites", headers={"X-API-Key": other})
        assert response.status_code == 200


def test_request_size_limits(service: Service) -> None:
    big = {"url": "https://example.com/" + "a" * 70_000}
    response = service.admin("POST", "/api/admin/sites", json=big)
    assert response.status_code == 413 and "body" in response.json()["error"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        for _ in range(20):
            yield b"x" * 8192

    response = service.admin(
        "POST", "/api/admin/sites", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413
    response = service.client.get("/api/search", params={"q": "x" * 9000})
    assert response.status_code == 414


# -- sites and crawls -------------------------------------------------------------------


def test_sites_add_list_disable_enable_delete(service: Service) -> None:
    host = service.site.base.split("://")[1]
    sites = service.admin("GET", "/api/admin/sites").json()
    assert [s["host"] for s in sites] == [host] and sites[0]["enabled"]

    added = service.admin("POST", "/api/admin/sites", json={"url": "docs.example.org"})
    assert added.status_code == 201 and added.json()["start_url"] == "https://docs.example.org/"
    bad = service.admin("POST", "/api/admin/sites", json={"url": "ftp://x.example/"})
    assert bad.status_code == 400

    assert service.admin("POST", f"/api/admin/sites/{host}/disable").json()["enabled"] is False
    assert not service.admin("GET", "/api/admin/sites").json()[0]["enabled"]
    assert service.admin("POST", f"/api/admin/sites/{host}/enable").json()["enabled"] is True
    assert service.admin("POST", "/api/admin/sites/nowhere.example/enable").status_code == 404

    deleted = service.admin("DELETE", f"/api/admin/sites/{host}").json()
    assert deleted["deleted_pages"] >= 5
    assert [s["host"] for s in service.admin("GET", "/api/admin/sites").json()] == [
        "docs.example.org"
    ]
    assert service.client.get("/api/search?q=heron").json()["total"] == 0
    assert service.admin("DELETE", f"/api/admin/sites/{host}").status_code == 404


def test_start_a_crawl_watch_it_and_read_the_history(serve: Serve, tmp_path: Path) -> None:
    other = serve({"/": html_page("Kingfisher", '<p>kingfisher</p><a href="/b">b</a>'),
                   "/b": html_page("Blue", "<p>kingfisher blue</p>")})  # fmt: skip
    with served(serve, tmp_path, allow=[other]) as service:
        started = service.admin("POST", "/api/admin/crawls", json={"urls": [other.url("/")]})
        assert started.status_code == 202 and started.json()["started"] == [other.url("/")]

        status = wait_for_crawl(service)
        assert status["outcome"] == "complete" and status["crawled"] >= 2
        assert status["discovered"] >= 2 and status["errors"] == 0 and status["queued"] == 0
        assert service.client.get("/api/search?q=kingfisher").json()["total"] == 2

        history = service.admin("GET", "/api/admin/crawls").json()
        assert history[0]["start_urls"] == [other.url("/")] and history[0]["outcome"] == "complete"
        rows = list(csv.reader(io.StringIO(service.admin("GET", "/api/admin/crawls.csv").text)))
        assert rows[0][0] == "id" and len(rows) == 1 + len(history)


def test_a_started_crawl_requests_its_start_url_as_typed(serve: Serve, tmp_path: Path) -> None:
    typed = "/p?b=2&a=1&utm_source=news"  # seed 003: the identity is /p?a=1&b=2
    other = serve({typed: html_page("Kingfisher", "<p>kingfisher</p>")})
    with served(serve, tmp_path, allow=[other]) as service:
        started = service.admin("POST", "/api/admin/crawls", json={"urls": [other.url(typed)]})
        assert started.status_code == 202
        assert started.json()["started"] == [other.url("/p?a=1&b=2")]
        assert wait_for_crawl(service)["outcome"] == "complete"

    assert f"GET {typed} HTTP/1.1" in other.request_lines
    assert not [line for line in other.request_lines if "/p?a=1&b=2" in line]


def test_stop_a_running_crawl_and_only_one_at_a_time(serve: Serve, tmp_path: Path) -> None:
    pages = {f"/p{i}": html_page(f"P{i}", "<p>slow</p>") for i in range(40)}
    for route in pages.values():
        route.delay = 0.2
    home = html_page("Slow", "".join(f'<a href="/p{i}">p</a>' for i in range(40)))
    slow = serve({"/": home, **pages})
    with served(serve, tmp_path, allow=[slow]) as service:
        body = {"urls": [slow.url("/")], "concurrency": 1}
        assert service.admin("POST", "/api/admin/crawls", json=body).status_code == 202
        assert service.admin("POST", "/api/admin/crawls", json=body).status_code == 409
        deadline = time.monotonic() + 30
        while service.admin("GET", "/api/admin/crawls/current").json()["crawled"] < 2:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert service.admin("POST", "/api/admin/crawls/stop").status_code == 200
        status = wait_for_crawl(service)
        assert status["outcome"] == "stopped" and status["crawled"] < 41
        assert service.admin("POST", "/api/admin/crawls/stop").status_code == 409


def test_recrawl_crawls_every_enabled_site(service: Service) -> None:
    response = service.admin("POST", "/api/admin/recrawl")
    assert response.status_code == 202 and response.json()["started"] == [service.site.url("/")]
    assert wait_for_crawl(service)["outcome"] == "complete"
    assert len(service.admin("GET", "/api/admin/crawls").json()) == 2


def test_crawl_options_are_checked(service: Service) -> None:
    for body in ({"urls": ["javascript:alert(1)"]}, {"urls": [], "max_pages": 0}):
        response = service.admin("POST", "/api/admin/crawls", json=body)
        assert response.status_code == 400 and response.json()["error"]


# -- the SEO report -----------------------------------------------------------------------


def report(service: Service, **params: Any) -> dict[str, Any]:
    answer: dict[str, Any] = service.admin("GET", "/api/admin/report/pages", params=params).json()
    return answer


def test_report_table_filters_sorts_and_pages(service: Service) -> None:
    everything = report(service)
    urls = [r["url"] for r in everything["rows"]]
    assert everything["total"] == 6 and urls == sorted(urls)
    row = next(r for r in everything["rows"] if r["url"].endswith("/old"))
    assert row["status"] == 301 and row["redirect_to"] == service.site.url("/herons")
    assert row["indexability"] == "Redirected"

    assert [r["status"] for r in report(service, status="4xx")["rows"]] == [404]
    noindex = report(service, indexability="Noindex")["rows"]
    assert [r["url"] for r in noindex] == [service.site.url("/private")]
    by_words = [r["word_count"] for r in report(service, sort="word_count", order="desc")["rows"]]
    assert by_words == sorted(by_words, reverse=True)
    page2 = report(service, per_page=4, page=2)
    assert page2["total"] == 6 and len(page2["rows"]) == 2 and page2["offset"] == 4
    assert report(service, q="egret")["total"] == 1
    assert service.admin("GET", "/api/admin/report/pages?sort=body").status_code == 400


def test_report_csv_holds_every_filtered_row(service: Service) -> None:
    response = service.admin("GET", "/api/admin/report/pages.csv", params={"status": "2xx"})
    assert response.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert len(rows) == report(service, status="2xx")["total"] == 4
    wanted = "url status indexability title word_count depth inlinks redirect_to canonical lang"
    assert {*wanted.split(), "published", "modified"} <= set(rows[0])


def test_url_details(service: Service) -> None:
    url = service.site.url("/herons")
    details = service.admin("GET", "/api/admin/report/page", params={"url": url}).json()

    assert details["status"] == 200 and details["title"] == "Grey herons"
    assert ["Content-Type", "text/html"] in details["headers"]
    assert {link["source"] for link in details["links_in"]} == {service.site.url("/")}
    assert details["links_in"][0]["anchor"] == "Grey herons"
    assert [(link["url"], link["anchor"]) for link in details["links_out"]] == [
        (service.site.url("/egrets"), "egrets too")
    ]
    old = service.admin("GET", "/api/admin/report/page", params={"url": service.site.url("/old")})
    assert old.json()["redirect_chain"] == [service.site.url("/old"), url]
    private = service.site.url("/private")
    directives = service.admin("GET", "/api/admin/report/page", params={"url": private}).json()
    assert "noindex" in directives["directives"]
    missing = service.admin("GET", "/api/admin/report/page", params={"url": "https://nope/"})
    assert missing.status_code == 404

    out = service.admin("GET", "/api/admin/report/links.csv", params={"url": url})
    assert list(csv.reader(io.StringIO(out.text)))[1][:2] == [
        service.site.url("/egrets"),
        "egrets too",
    ]
    inbound = service.admin(
        "GET", "/api/admin/report/links.csv", params={"url": url, "direction": "in"}
    )
    assert list(csv.reader(io.StringIO(inbound.text)))[1][0] == service.site.url("/")


def test_external_links_and_the_real_header_checker(service: Service) -> None:
    answer = service.admin("GET", "/api/admin/report/external").json()
    assert answer["total"] == 1
    row = answer["rows"][0]
    assert row["url"] == ELSEWHERE and row["status"] is None  # never checked yet
    assert row["example_source"] == service.site.url("/") and row["sources"] == 1

    response = service.admin("POST", "/api/admin/report/external/check")
    assert response.status_code == 202 and response.json()["total"] == 1
    status = wait_for_check(service.client, service.key)
    assert status["checked"] == 1 and not status["cancelled"] and status["finished_at"]
    row = service.admin("GET", "/api/admin/report/external").json()["rows"][0]
    # A private address: refused by the checker's public-only rule, so no response (000).
    assert row["status"] == 0 and row["error"] and row["checked_at"] is not None
    csv_rows = list(csv.DictReader(io.StringIO(
        service.admin("GET", "/api/admin/report/external.csv").text
    )))  # fmt: skip
    assert [(r["url"], r["status"]) for r in csv_rows] == [(ELSEWHERE, "0")]


def test_without_a_header_checker_the_action_is_501(serve: Serve, tmp_path: Path) -> None:
    for service in _service(serve, tmp_path, {"header_checker": None}):
        response = service.admin("POST", "/api/admin/report/external/check")
        assert response.status_code == 501 and "not part of this build" in response.json()["error"]


async def head_on_loopback(urls: Sequence[str], _: Settings) -> list[HeaderCheck]:
    """A header checker for the test: a real HEAD to a loopback server stands in for
    the public one (the real checker refuses private addresses by design)."""
    checks = []
    for url in urls:
        request = urllib.request.Request(url, method="HEAD")
        with urllib.request.urlopen(request, timeout=5) as r:  # noqa: ASYNC210
            headers = tuple((k.lower(), v) for k, v in r.headers.items())
            checks.append(HeaderCheck(url, r.status, None, headers, None, 0.0))
    return checks


def test_check_headers_stores_what_the_checker_found(serve: Serve, tmp_path: Path) -> None:
    target = serve({"/page": html_page("Target", "<p>x</p>")})
    site = serve(site_routes(external=target.url("/page")))
    config = service_settings(tmp_path)
    crawl_site(site, config)
    key = {"X-API-Key": new_key(config)}
    with TestClient(create_app(config, head_on_loopback)) as client:
        response = client.post("/api/admin/report/external/check", headers=key)
        assert response.status_code == 202
        assert wait_for_check(client, key["X-API-Key"])["checked"] == 1
        row = client.get("/api/admin/report/external", headers=key).json()["rows"][0]
    assert row["url"] == target.url("/page") and row["status"] == 200
    assert row["checked_at"] is not None
    assert [m for _, m, _ in target.requests] == ["HEAD"]


async def head_never_answers(urls: Sequence[str], _: Settings) -> list[HeaderCheck]:
    """A header checker whose requests never come back (a target that hangs)."""
    await asyncio.sleep(3600)
    return []


def test_a_running_header_check_refuses_a_second_and_can_be_cancelled(
    serve: Serve, tmp_path: Path
) -> None:
    for service in _service(serve, tmp_path, {"header_checker": head_never_answers}):
        started = service.admin("POST", "/api/admin/report/external/check")
        assert started.status_code == 202 and started.json()["running"]
        again = service.admin("POST", "/api/admin/report/external/check")
        assert again.status_code == 409 and "already running" in again.json()["error"]
        cancelled = service.admin("POST", "/api/admin/report/external/check/cancel")
        assert cancelled.json() == {"cancelled": True}
        status = wait_for_check(service.client, service.key)
        assert status["cancelled"] and status["checked"] == 0 and status["finished_at"]
        again = service.admin("POST", "/api/admin/report/external/check/cancel")
        assert again.json() == {"cancelled": False}


def test_keys_are_listed_by_name_never_by_value(service: Service) -> None:
    keys = service.admin("GET", "/api/admin/keys").json()
    assert [k["name"] for k in keys] == ["tests"] and keys[0]["last_used"] is not None
    assert service.key not in str(keys)


def test_resources_broken_ones_and_where_they_are_used(serve: Serve, tmp_path: Path) -> None:
    routes = site_routes()
    routes["/egrets"] = html_page(
        "Little egrets", '<p>Egrets.</p><img src="/egret.png" alt="egret"><img src="/gone.png">'
    )
    routes["/egret.png"] = Route(b"\x89PNG....", 200, {"Content-Type": "image/png"})
    site = serve(routes)
    config = service_settings(tmp_path)
    crawl_site(site, config)
    key = {"X-API-Key": new_key(config)}
    with TestClient(create_app(config)) as client:
        every = client.get("/api/admin/report/resources", headers=key).json()
        broken = client.get("/api/admin/report/resources?broken=true", headers=key).json()
        exported = client.get("/api/admin/report/resources.csv?broken=true", headers=key).text
    assert {(r["url"], r["status"]) for r in every} == {
        (site.url("/egret.png"), 200),
        (site.url("/gone.png"), 404),
    }
    assert [(r["url"], r["used_on"]) for r in broken] == [
        (site.url("/gone.png"), [site.url("/egrets")])
    ]
    rows = list(csv.DictReader(io.StringIO(exported)))
    assert [(r["url"], r["status"], r["used_on"]) for r in rows] == [
        (site.url("/gone.png"), "404", site.url("/egrets"))
    ]


def test_url_details_show_the_duplicate_cluster_and_why(serve: Serve, tmp_path: Path) -> None:
    text = " ".join(
        f"<p>Paragraph {i} about wading birds and their long legs.</p>" for i in range(30)
    )
    routes = site_routes()
    routes["/"] = html_page("Home", '<a href="/a">A</a> <a href="/copy">Copy</a>')
    routes["/a"] = html_page("Waders", text)
    routes["/copy"] = html_page("Waders", text)
    site = serve(routes)
    config = service_settings(tmp_path)
    crawl_site(site, config)
    key = {"X-API-Key": new_key(config)}
    with TestClient(create_app(config)) as client:
        details = {
            path: client.get(
                "/api/admin/report/page", params={"url": site.url(path)}, headers=key
            ).json()
            for path in ("/a", "/copy", "/")
        }
    clusters = [details[p]["duplicate_cluster"] for p in ("/a", "/copy")]
    assert clusters[0] == clusters[1] and clusters[0] is not None
    assert {clusters[0]["canonical"], *clusters[0]["members"]} == {
        site.url("/a"),
        site.url("/copy"),
    }
    assert clusters[0]["reason"]
    assert details["/"]["duplicate_cluster"] is None


def test_evict_counts_first_then_removes(service: Service) -> None:
    before = report(service)["total"]
    dry = service.admin("POST", "/api/admin/evict")
    assert dry.status_code == 200 and dry.json()["removed"] == 0
    assert report(service)["total"] == before
    doomed = sum(dry.json()["counts"].values())
    assert doomed >= 1, dry.json()  # the 404 page at least
    applied = service.admin("POST", "/api/admin/evict", params={"dry_run": "false"}).json()
    assert applied["removed"] == doomed == sum(applied["counts"].values())
    assert report(service)["total"] == before - doomed
    assert service.client.post("/api/admin/evict").status_code == 401


def test_a_crawl_canonicalised_elsewhere_says_why_in_the_api_and_the_admin_page(
    serve: Serve, tmp_path: Path
) -> None:
    # A mirror: every page names its live host as canonical, so none is indexed.
    pages = {
        f"/m{i}": html_page(
            f"Mirror {i}",
            "<p>osprey</p>",
            head=f'<link rel="canonical" href="https://live.example/m{i}">',
        )
        for i in range(4)
    }
    home = "".join(f'<a href="/m{i}">m</a>' for i in range(4))
    pages["/"] = html_page(
        "Mirror", home, head='<link rel="canonical" href="https://live.example/">'
    )
    mirror = serve(pages)
    with served(serve, tmp_path, allow=[mirror]) as service:
        service.admin("POST", "/api/admin/crawls", json={"urls": [mirror.url("/")]})

        status = wait_for_crawl(service)
        admin = service.admin("GET", "/admin").text
        history = service.admin("GET", "/api/admin/crawls").json()

    why = "5 pages canonicalised to live.example (outside the crawl): not indexed"
    assert status["note"] == why
    assert history[0]["note"] == why
    assert admin.count(why) == 2  # the last crawl's status, and its row in the history


def test_a_crawl_that_fails_on_a_bug_says_so_in_the_api(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: object, **kwargs: object) -> None:
        # A fault no site can cause: an exception that is not a Trawl error.
        raise RuntimeError("a bug")

    with served(serve, tmp_path) as service:
        monkeypatch.setattr("trawl.server.crawls.crawl", broken)
        service.admin("POST", "/api/admin/crawls", json={"urls": [service.site.url("/")]})

        status = wait_for_crawl(service)

    assert status["error"].startswith("internal error (RuntimeError: a bug)")
