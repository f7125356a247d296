"""Which URLs belong to a crawl (trawl.urls.scope: HostScope, SiteScope, WebScope).

``contains`` is given identities (``normalise`` output), as the crawler does.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from trawl.errors import CredentialsInUrl, InvalidUrl
from trawl.urls import scope as scope_module
from trawl.urls.identity import normalise
from trawl.urls.scope import (
    CrawlScope,
    HostScope,
    Scope,
    SiteScope,
    WebScope,
    make_scope,
    registrable_domain,
)


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


# -- SiteScope -------------------------------------------------------------------


def in_site(start: str, url: str) -> bool:
    return SiteScope.of(start).contains(normalise(url))


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("example.com", "example.com"),
        ("www.example.com", "example.com"),
        ("a.b.c.example.com", "example.com"),
        ("www.bbc.co.uk", "bbc.co.uk"),
        ("bbc.co.uk", "bbc.co.uk"),
        # нэб.рф, written as identities hold it.
        ("www.xn--90ax2c.xn--p1ai", "xn--90ax2c.xn--p1ai"),
        ("alice.github.io", "alice.github.io"),  # the list's private section counts
        ("docs.alice.github.io", "alice.github.io"),
    ],
)
def test_registrable_domain(host: str, expected: str) -> None:
    assert registrable_domain(host) == expected


@pytest.mark.parametrize(
    "host",
    ["", "127.0.0.1", "::1", "[::1]", "localhost", "docs.corp.internal", "co.uk", "github.io"],
)
def test_hosts_without_a_registrable_domain(host: str) -> None:
    assert registrable_domain(host) is None


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/",
        "https://www.example.com/a",
        "https://docs.example.com/a",
        "https://a.b.example.com/a",
        "http://blog.example.com/",  # scheme and port are not part of a site
        "https://example.com:8443/",
    ],
)
def test_the_whole_registrable_domain_is_one_site(url: str) -> None:
    assert in_site("https://www.example.com/start", url)


@pytest.mark.parametrize(
    "url",
    [
        "https://example.org/",
        "https://notexample.com/",
        "https://example.com.evil.net/",
        "https://wwwexample.com/",
        "ftp://example.com/",
    ],
)
def test_other_domains_are_outside_the_site(url: str) -> None:
    scope = SiteScope.of("https://www.example.com/")
    if url.startswith("ftp:"):
        assert not scope.contains(url)  # identities are http(s); never inside anyway
    else:
        assert not scope.contains(normalise(url))


def test_a_public_suffix_is_not_a_site() -> None:
    assert in_site("https://www.bbc.co.uk/", "https://news.bbc.co.uk/")
    assert not in_site("https://www.bbc.co.uk/", "https://www.itv.co.uk/")
    assert not in_site("https://alice.github.io/", "https://bob.github.io/")
    assert in_site("https://alice.github.io/", "https://docs.alice.github.io/")


@pytest.mark.parametrize(
    ("start", "inside", "outside"),
    [
        ("http://127.0.0.1:8000/", "http://127.0.0.1:9000/", "http://127.0.0.2/"),
        ("http://localhost:3000/", "https://localhost/", "http://a.localhost/"),
        ("https://github.io/", "https://github.io/x", "https://alice.github.io/"),
        ("http://[::1]:8080/", "http://[::1]/", "http://[::2]/"),
    ],
)
def test_a_start_host_without_a_registrable_domain_is_a_site_of_its_own(
    start: str, inside: str, outside: str
) -> None:
    assert in_site(start, inside)
    assert not in_site(start, outside)


def test_site_scope_refuses_what_normalise_refuses() -> None:
    with pytest.raises(InvalidUrl):
        SiteScope.of("ftp://example.com/")
    with pytest.raises(CredentialsInUrl):
        SiteScope.of("https://u:p@example.com/")


@pytest.fixture
def no_network_no_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """Every road to the network fails; every cache location is an empty directory."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the suffix list must never be fetched")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    for variable in ("HOME", "XDG_CACHE_HOME", "TLDEXTRACT_CACHE"):
        monkeypatch.setenv(variable, str(tmp_path))
    monkeypatch.delenv("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", raising=False)
    import requests
    import tldextract.cache

    monkeypatch.setattr(requests.Session, "send", refuse)
    monkeypatch.setattr(tldextract.cache.DiskCache, "set", refuse)
    monkeypatch.setattr(tldextract.cache, "_make_dir", refuse)
    # A fresh extractor, so the suffix list is loaded under these conditions.
    scope_module._extractor.cache_clear()
    registrable_domain.cache_clear()
    yield tmp_path
    scope_module._extractor.cache_clear()
    registrable_domain.cache_clear()


def test_the_suffix_list_is_the_bundled_snapshot(no_network_no_cache: Path) -> None:
    assert registrable_domain("www.bbc.co.uk") == "bbc.co.uk"
    assert in_site("https://www.example.com/", "https://docs.example.com/")
    assert list(no_network_no_cache.iterdir()) == []  # no cache file written


# -- WebScope and make_scope -------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    ["https://example.com/", "http://other.org:8080/x", "https://127.0.0.1/", "http://[::1]/"],
)
def test_web_scope_holds_every_http_url(url: str) -> None:
    assert WebScope.of("https://example.com/").contains(normalise(url))


def test_web_scope_holds_nothing_else() -> None:
    scope = WebScope.of("https://example.com/")
    assert not scope.contains("ftp://example.com/")
    assert not scope.contains("mailto:a@example.com")


def test_web_scope_refuses_an_unusable_start_url() -> None:
    with pytest.raises(InvalidUrl):
        WebScope.of("ftp://example.com/")


@pytest.mark.parametrize(
    ("kind", "cls"), [("host", HostScope), ("site", SiteScope), ("web", WebScope)]
)
def test_make_scope_builds_each_kind(kind: str, cls: type) -> None:
    scope: Scope = make_scope(kind, "https://www.example.com/")
    assert isinstance(scope, cls)


def test_make_scope_kinds_differ_as_documented() -> None:
    url = normalise("https://docs.example.com/")
    start = "https://www.example.com/"
    assert not make_scope("host", start).contains(url)
    assert make_scope("site", start).contains(url)
    assert make_scope("web", start).contains(normalise("https://example.org/"))


@pytest.mark.parametrize("kind", ["", "domain", "Host", "everything"])
def test_make_scope_refuses_an_unknown_kind(kind: str) -> None:
    with pytest.raises(InvalidUrl, match="scope"):
        make_scope(kind, "https://example.com/")


def test_make_scope_refuses_an_unusable_start_url() -> None:
    for kind in ("host", "site", "web"):
        with pytest.raises(InvalidUrl):
            make_scope(kind, "ftp://example.com/")


STARTS = [
    "http://example.com/",
    "https://docs.example.org:8443/guide/",
    "http://127.0.0.1:8080/",
    "http://[::1]:9000/",
    "https://shop.example.co.uk/",
    "http://localhost/",
]
PROBES = [
    "http://example.com/a",
    "https://example.com/",  # the upgrade on default ports
    "http://www.example.com/",
    "https://docs.example.org:8443/x",
    "https://docs.example.org/x",
    "https://api.example.org:8443/",
    "http://127.0.0.1:8080/p?q=/r",
    "http://127.0.0.1:8081/",
    "http://[::1]:9000/",
    "https://example.co.uk/",
    "https://shop.example.co.uk/cart",
    "http://localhost/x",
    "http://localhost:81/",
    "http://example.net/",
    "mailto:someone@example.com",
    "http://example.com",
]


@pytest.mark.parametrize("kind", ["host", "site", "web"])
def test_crawl_scope_is_the_union_of_each_start_urls_scope(kind: str) -> None:
    union = CrawlScope(kind, STARTS)
    scopes = [make_scope(kind, u) for u in STARTS]
    for url in PROBES:
        identity = normalise(url) if url.startswith("http") and url.count("/") > 2 else url
        expected = any(s.contains(identity) for s in scopes)
        assert union.contains(identity) == expected, (kind, identity)
    assert not CrawlScope(kind, []).contains("http://example.com/")


@pytest.mark.parametrize("kind", ["host", "site"])
def test_crawl_scope_asks_no_start_urls_scope_in_turn(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """1,000 start hosts cost one lookup a URL, not 1,000 calls (500,000 before a many-host
    crawl's first request)."""
    union = CrawlScope(kind, [f"http://h{i}.example{i}.com/" for i in range(1000)])
    for cls in (HostScope, SiteScope):
        monkeypatch.setattr(cls, "contains", lambda self, url: pytest.fail("asked in turn"))
    assert union.contains("http://h999.example999.com/p")
    assert not union.contains("http://other.test/")
