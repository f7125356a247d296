"""The indexability label and query-string variants (trawl.understand.indexability)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trawl.understand.indexability import Indexability, indexability, is_query_variant

URL = "https://example.com/docs/page"
OTHER = "https://example.com/docs/other"


def label(**overrides: Any) -> Indexability:
    fields: dict[str, Any] = {
        "status": 200,
        "redirect_to": None,
        "error": None,
        "blocked": False,
        "noindex": False,
        "canonical": None,
        "url": URL,
    }
    fields.update(overrides)
    return indexability(**fields)


def test_labels_are_the_reports_words() -> None:
    assert [str(i) for i in Indexability] == [
        "Redirected",
        "Client Error",
        "Server Error",
        "Error",
        "Blocked (robots)",
        "Noindex",
        "Canonicalised",
        "Indexable",
    ]


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({}, Indexability.INDEXABLE),
        ({"status": 203}, Indexability.INDEXABLE),
        ({"status": 299}, Indexability.INDEXABLE),
        # each rule alone
        ({"status": 301, "redirect_to": OTHER}, Indexability.REDIRECTED),
        ({"status": 302, "redirect_to": OTHER}, Indexability.REDIRECTED),
        ({"status": 308}, Indexability.REDIRECTED),
        ({"status": 300}, Indexability.REDIRECTED),
        ({"status": 399}, Indexability.REDIRECTED),
        ({"status": 301, "error": "unusable redirect: bad"}, Indexability.REDIRECTED),
        ({"redirect_to": OTHER}, Indexability.REDIRECTED),  # a meta refresh on a 200
        ({"status": 400}, Indexability.CLIENT_ERROR),
        ({"status": 404, "error": "HTTP 404"}, Indexability.CLIENT_ERROR),
        ({"status": 410}, Indexability.CLIENT_ERROR),
        ({"status": 429}, Indexability.CLIENT_ERROR),
        ({"status": 499}, Indexability.CLIENT_ERROR),
        ({"status": 500}, Indexability.SERVER_ERROR),
        ({"status": 503, "error": "HTTP 503"}, Indexability.SERVER_ERROR),
        ({"status": 599}, Indexability.SERVER_ERROR),
        ({"status": 0, "error": "timeout"}, Indexability.ERROR),
        ({"status": 200, "error": "parse failed"}, Indexability.ERROR),
        ({"status": 0, "blocked": True}, Indexability.BLOCKED),
        ({"blocked": True}, Indexability.BLOCKED),
        ({"noindex": True}, Indexability.NOINDEX),
        ({"canonical": OTHER}, Indexability.CANONICALISED),
        ({"canonical": "https://other.example/docs/page"}, Indexability.CANONICALISED),
        ({"canonical": URL + "?page=1"}, Indexability.CANONICALISED),
        ({"canonical": URL}, Indexability.INDEXABLE),  # self-referencing canonical
        ({"canonical": ""}, Indexability.INDEXABLE),
        ({"redirect_to": ""}, Indexability.INDEXABLE),
        # no 2xx answer and no other reason: nothing to index
        ({"status": 0}, Indexability.ERROR),
        ({"status": 100}, Indexability.ERROR),
        ({"status": 199}, Indexability.ERROR),
        ({"status": 600}, Indexability.ERROR),
        ({"status": 999}, Indexability.ERROR),
        ({"status": -1}, Indexability.ERROR),
    ],
)
def test_each_rule(overrides: dict[str, Any], expected: Indexability) -> None:
    assert label(**overrides) == expected


EVERYTHING = {
    "redirect_to": OTHER,
    "error": "something",
    "blocked": True,
    "noindex": True,
    "canonical": OTHER,
}


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        # Redirected beats everything after it
        ({"status": 301, **EVERYTHING}, Indexability.REDIRECTED),
        ({"status": 404, **EVERYTHING}, Indexability.REDIRECTED),  # a refresh on an error page
        ({"status": 200, **EVERYTHING}, Indexability.REDIRECTED),
        # Client Error beats Error, Blocked, Noindex, Canonicalised
        ({**EVERYTHING, "redirect_to": None, "status": 404}, Indexability.CLIENT_ERROR),
        ({"status": 404, "noindex": True}, Indexability.CLIENT_ERROR),
        ({"status": 404, "canonical": OTHER}, Indexability.CLIENT_ERROR),
        ({"status": 403, "blocked": True}, Indexability.CLIENT_ERROR),
        # Server Error beats Error, Blocked, Noindex, Canonicalised
        ({**EVERYTHING, "redirect_to": None, "status": 503}, Indexability.SERVER_ERROR),
        ({"status": 500, "noindex": True}, Indexability.SERVER_ERROR),
        # Error beats Blocked, Noindex, Canonicalised
        ({**EVERYTHING, "redirect_to": None, "status": 0}, Indexability.ERROR),
        ({**EVERYTHING, "redirect_to": None, "status": 200}, Indexability.ERROR),
        # Blocked beats Noindex, Canonicalised, and a missing status
        ({"blocked": True, "noindex": True, "canonical": OTHER}, Indexability.BLOCKED),
        ({"status": 0, "blocked": True, "noindex": True}, Indexability.BLOCKED),
        # Noindex beats Canonicalised
        ({"noindex": True, "canonical": OTHER}, Indexability.NOINDEX),
        ({"noindex": True, "canonical": URL}, Indexability.NOINDEX),
        # a missing status beats Noindex and Canonicalised
        ({"status": 0, "noindex": True, "canonical": OTHER}, Indexability.ERROR),
    ],
)
def test_precedence(overrides: dict[str, Any], expected: Indexability) -> None:
    assert label(**overrides) == expected


CANONICAL = "https://example.com/list"


@pytest.mark.parametrize(
    ("link", "canonical", "expected"),
    [
        ("https://example.com/list?page=2", CANONICAL, True),
        ("https://example.com/list?page=2&sort=asc", CANONICAL, True),
        ("https://example.com/list?page=3", CANONICAL + "?page=2", True),
        ("https://example.com/list", CANONICAL + "?page=2", True),
        ("https://example.com/list?a=1", CANONICAL + "?a=1&b=2", True),
        ("https://example.com/list", CANONICAL, False),  # the canonical itself
        (CANONICAL + "?page=2", CANONICAL + "?page=2", False),
        ("https://example.com/list/item?page=2", CANONICAL, False),  # another path
        ("https://example.com/List?page=2", CANONICAL, False),  # paths are case-sensitive
        ("https://example.com/list/?page=2", CANONICAL, False),
        ("http://example.com/list?page=2", CANONICAL, False),  # another scheme
        ("https://www.example.com/list?page=2", CANONICAL, False),  # another host
        ("https://example.com:8443/list?page=2", CANONICAL, False),  # another port
        ("https://example.com:8443/list?page=2", "https://example.com:8443/list", True),
        ("https://[::1]/list?page=2", "https://[::1]/list", True),
        ("https://[::1/list?page=2", CANONICAL, False),  # malformed: never raises
        ("", CANONICAL, False),
    ],
)
def test_is_query_variant(link: str, canonical: str, expected: bool) -> None:
    assert is_query_variant(link, canonical) is expected


@given(st.text(), st.text())
def test_is_query_variant_never_raises(link: str, canonical: str) -> None:
    assert is_query_variant(link, canonical) == is_query_variant(canonical, link)
    assert not is_query_variant(link, link)
