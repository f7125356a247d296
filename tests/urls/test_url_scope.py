"""Which URLs belong to a crawl (trawl.urls.scope.HostScope).

``contains`` is given identities (``normalise`` output), as the crawler does.
"""

from __future__ import annotations

import pytest

from trawl.errors import CredentialsInUrl, InvalidUrl
from trawl.urls.identity import normalise
from trawl.urls.scope import HostScope


def contains(start: str, url: str) -> bool:
    return HostScope.of(start).contains(normalise(url))


def test_of_records_scheme_host_and_explicit_port() -> None:
    assert HostScope.of("https://Example.com/a") == HostScope("https", "example.com", None)
    assert HostScope.of("https://example.com:443/") == HostScope("https", "example.com", None)
    assert HostScope.of("http://example.com:8080/") == HostScope("http", "example.com", 8080)


def test_of_refuses_what_normalise_refuses() -> None:
    with pytest.raises(InvalidUrl):
        HostScope.of("ftp://example.com/")
    with pytest.raises(CredentialsInUrl):
        HostScope.of("https://u:p@example.com/")


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/",
        "https://example.com/deep/page?x=1",
        "https://EXAMPLE.com/a",
        "https://example.com:443/a",
        "https://example.com./a",
    ],
)
def test_same_scheme_host_and_port_is_inside(url: str) -> None:
    assert contains("https://example.com/", url)


@pytest.mark.parametrize(
    "url",
    [
        "https://www.example.com/",
        "https://docs.example.com/",
        "https://example.org/",
        "https://notexample.com/",
        "https://example.com.evil.net/",
    ],
)
def test_other_hosts_are_outside(url: str) -> None:
    assert not contains("https://example.com/", url)


def test_www_and_bare_host_are_different_sites() -> None:
    assert not contains("https://www.example.com/", "https://example.com/")
    assert not contains("https://example.com/", "https://www.example.com/")


def test_subdomain_is_external() -> None:
    assert not contains("https://example.com/", "https://blog.example.com/post")
    assert not contains("https://blog.example.com/", "https://example.com/")


def test_http_to_https_upgrade_on_default_ports_is_allowed() -> None:
    assert contains("http://example.com/", "https://example.com/secure")
    assert contains("http://example.com:80/", "https://example.com:443/secure")


def test_https_to_http_downgrade_is_refused() -> None:
    assert not contains("https://example.com/", "http://example.com/")


def test_upgrade_with_a_non_default_port_is_refused() -> None:
    assert not contains("http://example.com:8080/", "https://example.com:8080/")
    assert not contains("http://example.com:8080/", "https://example.com/")
    assert not contains("http://example.com/", "https://example.com:8443/")


@pytest.mark.parametrize(
    ("start", "url"),
    [
        ("https://example.com/", "https://example.com:8443/"),
        ("https://example.com:8443/", "https://example.com/"),
        ("https://example.com:8443/", "https://example.com:9443/"),
        ("http://example.com/", "http://example.com:8080/"),
        ("http://example.com:443/", "http://example.com/"),
    ],
)
def test_port_change_is_refused(start: str, url: str) -> None:
    assert not contains(start, url)


def test_explicit_non_default_port_matches_itself() -> None:
    assert contains("http://example.com:8080/", "http://example.com:8080/x")


def test_scope_does_not_depend_on_the_start_path() -> None:
    assert contains("https://example.com/docs/", "https://example.com/blog/")
