"""The URL a person types to start a crawl (trawl.urls.start)."""

from __future__ import annotations

import pytest

from trawl.errors import CredentialsInUrl, InvalidUrl
from trawl.urls.start import parse_start_url, start_forms, start_request


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("example.com", "https://example.com/"),
        ("Example.COM/Docs/Index.html", "https://example.com/Docs/Index.html"),
        ("example.com/a?b=2&a=1", "https://example.com/a?a=1&b=2"),
        ("www.example.com/", "https://www.example.com/"),
    ],
)
def test_no_scheme_gets_https(typed: str, expected: str) -> None:
    assert parse_start_url(typed) == expected


def test_a_start_url_is_requested_as_typed_and_known_by_its_identity() -> None:
    typed = "Example.COM:443/a/./b?z=1&y=2&utm_source=x#top"
    # Host, default port, dot segments and fragment as a browser reads them; the query
    # as typed (seed 003).
    assert start_request(typed) == "https://example.com/a/b?z=1&y=2&utm_source=x"
    assert parse_start_url(typed) == "https://example.com/a/b?y=2&z=1"
    assert start_request("example.com") == "https://example.com/"
    again = "https://example.com/a/b?y=2&z=1"  # the same identity, typed second: seen
    assert start_forms([start_request(typed), again, "https://example.com/"]) == (
        ["https://example.com/a/b?y=2&z=1", "https://example.com/"],
        {"https://example.com/a/b?y=2&z=1": "https://example.com/a/b?z=1&y=2&utm_source=x"},
    )


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("example.com:8080", "https://example.com:8080/"),
        ("example.com:8080/docs", "https://example.com:8080/docs"),
        ("localhost:3000", "https://localhost:3000/"),
        ("example.com:443", "https://example.com/"),
    ],
)
def test_host_and_port_without_scheme(typed: str, expected: str) -> None:
    assert parse_start_url(typed) == expected


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("example.com:8080?lang=da", "https://example.com:8080/?lang=da"),
        ("example.com:8080#top", "https://example.com:8080/"),
    ],
)
def test_host_and_port_followed_by_query_or_fragment(typed: str, expected: str) -> None:
    assert parse_start_url(typed) == expected


def test_ipv6_literal_with_port_without_scheme() -> None:
    assert parse_start_url("[2001:db8::1]:8080") == "https://[2001:db8::1]:8080/"


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("http://example.com", "http://example.com/"),
        ("https://example.com/a", "https://example.com/a"),
        ("HTTP://Example.com:80/", "http://example.com/"),
        ("HTTPS://EXAMPLE.COM", "https://example.com/"),
    ],
)
def test_http_and_https_are_kept_as_given(typed: str, expected: str) -> None:
    assert parse_start_url(typed) == expected


@pytest.mark.parametrize(
    "typed",
    [
        "ftp://example.com/",
        "file:///etc/passwd",
        "mailto:x",
        "mailto:someone@example.com",
        "javascript:alert(1)",
        "data:text/html,hi",
        "ws://example.com/",
    ],
)
def test_other_schemes_are_refused(typed: str) -> None:
    with pytest.raises(InvalidUrl) as caught:
        parse_start_url(typed)
    assert not isinstance(caught.value, CredentialsInUrl)
    assert "http" in str(caught.value)


@pytest.mark.parametrize(
    "typed",
    [
        "https://user:pass@example.com/",
        "http://user@example.com/",
        "user@example.com",
        "user@example.com:8080/x",
    ],
)
def test_credentials_are_refused(typed: str) -> None:
    with pytest.raises(CredentialsInUrl):
        parse_start_url(typed)


def test_user_and_password_without_scheme_are_refused_as_credentials() -> None:
    with pytest.raises(CredentialsInUrl):
        parse_start_url("user:secret@example.com")


def test_fragment_is_dropped() -> None:
    assert parse_start_url("https://example.com/page#intro") == "https://example.com/page"
    assert parse_start_url("example.com/page#intro") == "https://example.com/page"


def test_tracking_parameters_are_dropped() -> None:
    assert parse_start_url("example.com/?utm_source=mail&id=3") == "https://example.com/?id=3"


def test_surrounding_whitespace_is_ignored() -> None:
    assert parse_start_url("  \texample.com\n") == "https://example.com/"


@pytest.mark.parametrize("typed", ["", "   ", "\n\t"])
def test_empty_input_is_refused(typed: str) -> None:
    with pytest.raises(InvalidUrl, match="empty"):
        parse_start_url(typed)


@pytest.mark.parametrize(
    "typed", ["https://", "//example.com", "http:///x", "example.com:99999", "example.com:abc"]
)
def test_unusable_input_is_refused(typed: str) -> None:
    with pytest.raises(InvalidUrl):
        parse_start_url(typed)


def test_result_is_a_fixed_point() -> None:
    once = parse_start_url("Example.com:8080/a/../b?z=1&a=2#x")
    assert once == "https://example.com:8080/b?a=2&z=1"
    assert parse_start_url(once) == once


@pytest.mark.parametrize(
    "typed",
    [
        "http://x'+alert(document.domain)+'.example/",
        'http://x"onmouseover=alert(1)".example/',
        "http://x{y}.example/",
        "http://a+b.example/",
    ],
)
def test_a_host_with_characters_no_dns_name_holds_is_refused(typed: str) -> None:
    with pytest.raises(InvalidUrl, match="letters, digits, hyphens"):
        parse_start_url(typed)


@pytest.mark.parametrize(
    "typed",
    ["http://a_b.example/", "http://bücher.de/", "http://[::1]:8080/", "http://localhost:9/"],
)
def test_dns_names_idna_and_ip_literals_are_accepted(typed: str) -> None:
    assert parse_start_url(typed).startswith("http://")
