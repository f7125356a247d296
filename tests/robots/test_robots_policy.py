"""robots.txt decisions (trawl.robots.policy), after RFC 9309."""

from __future__ import annotations

from pathlib import Path

import pytest

from trawl.robots.policy import RobotsPolicy, product_token

UA = "TrawlBot/0.1 (+https://github.com/trawl-search/trawl)"
SITE = "https://example.com"
FIXTURES = (
    Path(__file__).resolve().parents[2]
    / ".."
    / "shared"
    / "data"
    / "crawler-commons-fixtures"
    / "robots"
)

ROBOTS = b"""\
User-agent: *
Disallow: /private
Allow: /private/public
Disallow: /*.pdf$
Disallow: /tmp*/cache
Crawl-delay: 3

User-agent: TrawlBot
Disallow: /no-trawl
Crawl-delay: 7.5

User-agent: OtherBot
Disallow: /

Sitemap: https://example.com/sitemap.xml
Sitemap: https://example.com/news/sitemap.xml
"""


def parsed(body: bytes) -> RobotsPolicy:
    return RobotsPolicy.from_response(200, body)


# -- 2xx: the file is parsed ----------------------------------------------------


def test_2xx_is_parsed() -> None:
    policy = parsed(ROBOTS)
    assert policy.rules is not None
    assert policy.allow_all is False
    assert policy.reason == "parsed"


@pytest.mark.parametrize("status", [200, 203, 204, 299])
def test_every_2xx_is_parsed(status: int) -> None:
    policy = RobotsPolicy.from_response(status, b"User-agent: *\nDisallow: /x\n")
    assert not policy.allows(f"{SITE}/x", UA)
    assert policy.allows(f"{SITE}/y", UA)


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("/", True),
        ("/private", False),
        ("/private/secret.html", False),
        ("/privateer", False),  # a prefix match, as RFC 9309 says
        ("/private/public/page.html", True),  # the longer Allow wins
        ("/public", True),
    ],
)
def test_disallow_and_allow_for_the_star_group(path: str, allowed: bool) -> None:
    assert parsed(ROBOTS).allows(SITE + path, "SomeBot/2.0") is allowed


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("/file.pdf", False),
        ("/docs/file.pdf", False),
        ("/file.pdf?download=1", True),  # "$" anchors at the end
        ("/file.pdfx", True),
        ("/tmp/cache", False),
        ("/tmp123/cache/x", False),  # "*" matches any run of characters
        ("/tmp/other", True),
    ],
)
def test_wildcards(path: str, allowed: bool) -> None:
    assert parsed(ROBOTS).allows(SITE + path, "SomeBot/2.0") is allowed


def test_the_group_for_our_product_token_replaces_the_star_group() -> None:
    policy = parsed(ROBOTS)
    assert not policy.allows(f"{SITE}/no-trawl/page", UA)
    # Our own group does not disallow /private, and groups are not merged with "*".
    assert policy.allows(f"{SITE}/private", UA)
    assert policy.allows(f"{SITE}/no-trawl/page", "SomeBot/2.0")


def test_user_agent_matching_is_case_insensitive() -> None:
    policy = parsed(b"User-agent: trawlbot\nDisallow: /\n")
    assert not policy.allows(f"{SITE}/x", UA)


def test_disallow_all_for_another_bot_does_not_touch_us() -> None:
    policy = parsed(ROBOTS)
    assert not policy.allows(f"{SITE}/anything", "OtherBot/1.0")
    assert policy.allows(f"{SITE}/anything", UA)


def test_empty_disallow_allows_everything() -> None:
    policy = parsed(b"User-agent: *\nDisallow: /\n\nUser-agent: TrawlBot\nDisallow:\n")
    assert policy.allows(f"{SITE}/page", UA)
    assert not policy.allows(f"{SITE}/page", "SomeBot")


def test_empty_or_junk_body_allows_everything() -> None:
    assert parsed(b"").allows(f"{SITE}/x", UA)
    assert parsed(b"<html><body>Welcome!</body></html>").allows(f"{SITE}/x", UA)
    assert parsed(b"\xff\xfe\x00garbage\x80").allows(f"{SITE}/x", UA)


def test_utf8_bom_is_ignored() -> None:
    policy = parsed(b"\xef\xbb\xbfUser-agent: *\nDisallow: /x\n")
    assert not policy.allows(f"{SITE}/x", UA)


def test_dos_line_endings() -> None:
    policy = parsed(b"User-agent: *\r\nDisallow: /x\r\n")
    assert not policy.allows(f"{SITE}/x", UA)
    assert policy.allows(f"{SITE}/y", UA)


def test_non_ascii_rule_matches_the_percent_encoded_identity() -> None:
    policy = parsed("User-agent: *\nDisallow: /æble\n".encode())
    assert not policy.allows(f"{SITE}/%C3%A6ble", UA)


# -- 4xx: no rules; 5xx and no answer: nothing allowed ----------------------------


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 451, 499])
def test_4xx_allows_everything(status: int) -> None:
    policy = RobotsPolicy.from_response(status, b"User-agent: *\nDisallow: /\n")
    assert policy.allow_all is True
    assert policy.rules is None
    assert policy.allows(f"{SITE}/anything", UA)
    assert str(status) in policy.reason


@pytest.mark.parametrize("status", [500, 502, 503, 504, 599])
def test_5xx_disallows_everything(status: int) -> None:
    policy = RobotsPolicy.from_response(status, b"User-agent: *\nAllow: /\n")
    assert policy.allow_all is False
    assert not policy.allows(f"{SITE}/", UA)
    assert not policy.allows(f"{SITE}/anything", UA)
    assert str(status) in policy.reason


def test_no_status_means_unreachable() -> None:
    policy = RobotsPolicy.from_response(0, b"")
    assert not policy.allows(f"{SITE}/", UA)
    assert "unreachable" in policy.reason


def test_unreachable_disallows_everything() -> None:
    policy = RobotsPolicy.unreachable("robots.txt: connection refused")
    assert not policy.allows(f"{SITE}/", UA)
    assert policy.reason.startswith("robots.txt: connection refused")
    assert "nothing allowed" in policy.reason
    assert policy.crawl_delay(UA) is None
    assert policy.sitemaps() == []


# -- crawl delay and sitemaps -------------------------------------------------------


def test_crawl_delay_of_our_group() -> None:
    assert parsed(ROBOTS).crawl_delay(UA) == 7.5


def test_crawl_delay_of_the_star_group() -> None:
    assert parsed(ROBOTS).crawl_delay("SomeBot/2.0") == 3.0


def test_crawl_delay_is_a_float() -> None:
    delay = parsed(b"User-agent: *\nCrawl-delay: 2\n").crawl_delay(UA)
    assert isinstance(delay, float)
    assert delay == 2.0


@pytest.mark.parametrize(
    "body",
    [
        b"User-agent: *\nDisallow: /x\n",
        b"User-agent: *\nCrawl-delay: soon\n",
        b"",
    ],
)
def test_missing_or_bad_crawl_delay_is_none(body: bytes) -> None:
    assert parsed(body).crawl_delay(UA) is None


@pytest.mark.parametrize("status", [404, 500])
def test_no_crawl_delay_without_rules(status: int) -> None:
    assert RobotsPolicy.from_response(status, b"Crawl-delay: 5\n").crawl_delay(UA) is None


def test_sitemaps() -> None:
    assert parsed(ROBOTS).sitemaps() == [
        "https://example.com/sitemap.xml",
        "https://example.com/news/sitemap.xml",
    ]


def test_sitemaps_without_rules_are_empty() -> None:
    assert RobotsPolicy.from_response(404, b"Sitemap: https://example.com/s.xml\n").sitemaps() == []
    assert parsed(b"User-agent: *\nDisallow:\n").sitemaps() == []


# -- product token ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("user_agent", "token"),
    [
        (UA, "TrawlBot"),
        ("TrawlBot", "TrawlBot"),
        ("TrawlBot/2", "TrawlBot"),
        ("Mozilla/5.0 (compatible; Googlebot/2.1)", "Mozilla"),
        ("My Crawler", "My"),
        ("", ""),
    ],
)
def test_product_token(user_agent: str, token: str) -> None:
    assert product_token(user_agent) == token


# -- crawler-commons fixtures -------------------------------------------------------


@pytest.mark.skipif(not FIXTURES.is_dir(), reason=f"{FIXTURES} not present")
def test_fixture_with_utf8_bom() -> None:
    policy = parsed((FIXTURES / "robots-with-utf8-bom.txt").read_bytes())
    assert not policy.allows("http://www.newsweek.com/login.aspx", UA)
    assert not policy.allows("http://www.newsweek.com/news/output/print", UA)
    assert policy.allows("http://www.newsweek.com/news/story.html", UA)
    assert policy.sitemaps() == ["http://www.newsweek.com/sitemap_index.xml"]


@pytest.mark.skipif(not FIXTURES.is_dir(), reason=f"{FIXTURES} not present")
def test_fixture_rfc9309_longest_match() -> None:
    policy = parsed((FIXTURES / "rfc9309-example-longest-match-robots.txt").read_bytes())
    assert policy.allows("https://example.com/example/page/", "foobot/1.0")
    assert not policy.allows("https://example.com/example/page/disallowed.gif", "foobot/1.0")


@pytest.mark.skipif(not FIXTURES.is_dir(), reason=f"{FIXTURES} not present")
def test_fixture_amazon_wildcards() -> None:
    policy = parsed((FIXTURES / "wildcards.txt").read_bytes())
    assert not policy.allows("http://www.amazon.com/wishlist/123", UA)
    assert policy.allows("http://www.amazon.com/wishlist/universal/abc", UA)
    assert not policy.allows("http://www.amazon.com/gp/registry/wishlist/7/reserve", UA)
    assert not policy.allows("http://www.amazon.com/any/gcrnsts", UA)
    assert policy.allows("http://www.amazon.com/gp/product/B000", UA)
    assert not policy.allows("http://www.amazon.com/x", "EtaoSpider/1.0")
    assert len(policy.sitemaps()) == 8
