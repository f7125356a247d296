"""/api/search's query string, read once by ``api_request`` (not by FastAPI's parameter
solving): the same bounds as its OpenAPI document declares, a bad value a 400 naming
it, and the document still describing every parameter."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from trawl.errors import QueryError
from trawl.search.request import MAX_PAGE, MAX_PER_PAGE, SearchRequest, api_request
from trawl.server.app import create_app
from trawl.settings import Settings


def test_every_parameter_is_read() -> None:
    asked = api_request(
        {
            "q": "create index",
            "page": "3",
            "per_page": "50",
            "site": "www.postgresql.org:443",
            "lang": "en",
            "sort": "date",
            "after": "2024-01-01",
            "before": "2024-05-31",
            "utm_source": "ignored",
        }
    )
    assert (asked.text, asked.page, asked.per_page, asked.sort) == ("create index", 3, 50, "date")
    assert asked.filters.sites == ("www.postgresql.org",)
    assert asked.filters.lang == "en"
    assert asked.filters.after == datetime(2024, 1, 1, tzinfo=UTC)
    assert asked.filters.before == datetime(2024, 5, 31, tzinfo=UTC)


def test_defaults_when_only_the_text_is_given() -> None:
    assert api_request({"q": ""}) == SearchRequest("")
    assert api_request({"q": "heron"}) == SearchRequest("heron")


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({}, "q"),
        ({"q": "x" * 1001}, "q"),
        ({"q": "x", "page": "0"}, "page"),
        ({"q": "x", "page": str(MAX_PAGE + 1)}, "page"),
        ({"q": "x", "page": "abc"}, "page"),
        ({"q": "x", "page": "²"}, "page"),  # a digit to str.isdigit, not to int()
        ({"q": "x", "page": "-1"}, "page"),
        ({"q": "x", "page": ""}, "page"),
        ({"q": "x", "page": "9" * 40}, "page"),
        ({"q": "x", "per_page": str(MAX_PER_PAGE + 1)}, "per_page"),
        ({"q": "x", "site": "a b"}, "site"),
        ({"q": "x", "site": ""}, "site"),
        ({"q": "x", "site": "a" * 254}, "site"),
        ({"q": "x", "lang": "EN"}, "lang"),
        ({"q": "x", "lang": "en\n"}, "lang"),  # "$" would let a newline end it
        ({"q": "x", "lang": "english"}, "lang"),
        ({"q": "x", "sort": "sideways"}, "sort"),
        ({"q": "x", "after": "yesterday"}, "after"),
        ({"q": "x", "before": ""}, "before"),
    ],
)
def test_a_bad_parameter_is_a_query_error_naming_it(params: dict[str, str], named: str) -> None:
    with pytest.raises(QueryError, match=rf"^{named}\b"):
        api_request(params)


def test_the_api_answers_400_before_the_rate_limit_counts(tmp_path: Path) -> None:
    app = create_app(Settings(data=tmp_path, search_rate_limit="1/minute"), header_checker=None)
    with TestClient(app) as client:
        for _ in range(3):
            bad = client.get("/api/search", params={"q": "x", "page": "0"})
            assert bad.status_code == 400 and bad.json()["error"].startswith("page")
        assert client.get("/api/search", params={"q": "x"}).status_code == 503  # no index yet
        assert client.get("/api/search", params={"q": "x"}).status_code == 429


def test_the_openapi_document_describes_every_parameter(tmp_path: Path) -> None:
    document = create_app(Settings(data=tmp_path), header_checker=None).openapi()
    operation = document["paths"]["/api/search"]["get"]
    params = {p["name"]: p for p in operation["parameters"]}
    assert list(params) == ["q", "page", "per_page", "site", "lang", "sort", "after", "before"]
    assert all(p["in"] == "query" and p["description"] for p in params.values())
    assert [n for n, p in params.items() if p["required"]] == ["q"]
    assert params["q"]["schema"]["maxLength"] == 1000
    assert params["page"]["schema"]["maximum"] == MAX_PAGE
    assert params["per_page"]["schema"]["maximum"] == MAX_PER_PAGE
    assert params["sort"]["schema"]["enum"] == ["relevance", "date"]
    assert params["after"]["schema"]["format"] == "date"
    assert {"400", "429", "503"} <= set(operation["responses"])
