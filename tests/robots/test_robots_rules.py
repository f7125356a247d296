"""robots.txt parsing and matching (trawl.robots.rules): Google's cases, real files, limits."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from trawl.robots.policy import RobotsPolicy
from trawl.robots.rules import (
    MAX_BODY_BYTES,
    MAX_LINE_BYTES,
    escape_pattern,
    parse_robots,
    path_params_query,
)

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
CASES_FILE = DATA / "robots-cases.json"
TOP_SITES = DATA / "robots-txt-top-sites" / "files"
SITE = "https://example.com"


@cache
def _suite() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(CASES_FILE.read_text(encoding="utf-8"))
    return data


def _cases(key: str) -> list[Any]:
    if not CASES_FILE.is_file():
        reason = f"{CASES_FILE} not present (shared test data not checked out)"
        return [pytest.param(None, marks=pytest.mark.skip(reason=reason), id="no-data")]
    cases: list[dict[str, Any]] = _suite()[key]
    return [pytest.param(c, id=c.get("id") or str(c["source_line"])) for c in cases]


def _body(case: dict[str, Any]) -> bytes:
    text = case.get("robotstxt")
    return text.encode("utf-8") if text is not None else bytes.fromhex(case["robotstxt_hex"])


# -- Google's reference suite (google/robotstxt, robots_test.cc) -------------------


@pytest.mark.skipif(not CASES_FILE.is_file(), reason=f"{CASES_FILE} not present")
def test_the_whole_google_suite_is_here() -> None:
    # A shrunken data file must not pass for conformance.
    assert len(_suite()["google_is_user_agent_allowed"]) == 145


@pytest.mark.parametrize("case", _cases("google_is_user_agent_allowed"))
def test_google_is_user_agent_allowed(case: dict[str, Any]) -> None:
    # Google's IsUserAgentAllowed compares the crawler's token as given ("Foo Bar"
    # must not match "User-agent: Foo Bar"), so the rules are asked directly;
    # RobotsPolicy first reduces a User-Agent header to its product token.
    rules = parse_robots(_body(case))
    expected = RFC_OVER_GOOGLE.get(case.get("id", ""), case["allowed"])
    assert rules.allowed(case["url"], case["useragent"]) is expected, case["test"]


# The one case where we follow RFC 9309 2.2.2 and Google's parser does not: an escaped
# unreserved character is the character ("Allow: /foo/bar/%62%61%7A" allows
# /foo/bar/baz). Google's own test calls such a rule illegal and not to be relied on;
# protego's copy of the case (protego-331) expects the RFC's answer.
RFC_OVER_GOOGLE = {"google-067": True}


@pytest.mark.parametrize("case", _cases("google_get_path_params_query"))
def test_google_get_path_params_query(case: dict[str, Any]) -> None:
    assert path_params_query(case["url"]) == case["expected_path_params_query"]


@pytest.mark.parametrize("case", _cases("google_maybe_escape_pattern"))
def test_google_maybe_escape_pattern(case: dict[str, Any]) -> None:
    assert escape_pattern(case["pattern"].encode()) == case["expected_escaped"]


@pytest.mark.parametrize(
    ("rule", "path", "allowed"),
    [
        ("Disallow: /%7Efoo", "/~foo", False),
        ("Disallow: /%7efoo", "/~foo/bar", False),
        ("Disallow: /~foo", "/%7Efoo", False),
        ("Disallow: /b%61r", "/bar", False),
        ("Disallow: /b%61r", "/b%61r", False),
        ("Disallow: /bar", "/b%61r", False),
        ("Disallow: /a%2fb", "/a%2Fb", False),  # an escaped "/" stays escaped...
        ("Disallow: /a%2fb", "/a/b", True),  # ...and is not the path separator
        ("Disallow: /a%2Ab", "/a*b", True),  # an escaped "*" is no wildcard
        ("Disallow: /a%2Ab", "/axxb", True),
        ("Disallow: /%E3%83%84", "/%e3%83%84", False),
    ],
)
def test_rules_and_paths_are_compared_after_percent_normalisation(
    rule: str, path: str, allowed: bool
) -> None:
    # RFC 9309 2.2.2: unreserved characters compared unescaped, other escapes as escapes.
    rules = parse_robots(f"User-agent: *\n{rule}\n".encode())
    assert rules.allowed(path, "trawlbot") is allowed


# -- real files -----------------------------------------------------------------------


@pytest.mark.skipif(not TOP_SITES.is_dir(), reason=f"{TOP_SITES} not present")
def test_every_top_site_file_parses_and_matches_without_raising() -> None:
    files = sorted(TOP_SITES.iterdir())
    assert len(files) == 4231
    for path in files:
        policy = RobotsPolicy.from_response(200, path.read_bytes())
        for url in (f"{SITE}/", f"{SITE}/search?q=x", f"{SITE}/a/b/c.html", f"{SITE}/%E3%83%84"):
            policy.allows(url, "TrawlBot/0.1")
            policy.allows(url, "Googlebot/2.1")
        policy.crawl_delay("TrawlBot/0.1")
        policy.sitemaps()


# -- bounded work ---------------------------------------------------------------------

# A backtracking matcher (a regex with one ".*" per "*") needs exponential time
# for these; ours needs one pass over the path per pattern. The match runs in
# a subprocess because a thread stuck inside the regex engine cannot be
# interrupted: with the timeout a regression fails after 10 s instead of
# hanging the suite. The time limit is generous; what the test asserts is that
# the work is bounded at all (a naive regex takes seconds at 30 characters).
HOSTILE = [
    pytest.param(b"Disallow: /*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", True, id="stars-then-b"),
    pytest.param(b"Disallow: /*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a", False, id="stars-that-match"),
    # A whole line of stars: even a non-backtracking but quadratic matcher
    # (pattern length times path length, in Python) would take minutes.
    pytest.param(b"Disallow: /" + b"*" * 16_000 + b"b", True, id="line-of-stars"),
    pytest.param(b"Disallow: /" + b"*a" * 8_000 + b"b$", True, id="line-of-star-a"),
]


@pytest.mark.parametrize(("rule", "allowed"), HOSTILE)
def test_hostile_patterns_cannot_make_matching_explode(rule: bytes, allowed: bool) -> None:
    script = textwrap.dedent(
        """
        import sys
        from trawl.robots.rules import parse_robots
        rules = parse_robots(sys.stdin.buffer.read())
        print(rules.allowed("https://example.com/" + "a" * 100_000, "TrawlBot"))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=b"User-agent: *\n" + rule + b"\n",
        capture_output=True,
        timeout=10,
        check=True,
    )
    assert done.stdout.decode().strip() == str(allowed)


# -- limits ---------------------------------------------------------------------------


def test_nothing_past_500_kib_is_read() -> None:
    padding = b"# " + b"x" * 98 + b"\n"
    body = b"User-agent: *\nDisallow: /early\n" + padding * (MAX_BODY_BYTES // len(padding))
    rules = parse_robots(body + b"Disallow: /late\n")
    assert not rules.allowed(f"{SITE}/early", "TrawlBot")
    assert rules.allowed(f"{SITE}/late", "TrawlBot")


def test_a_line_cut_by_the_500_kib_limit_is_dropped() -> None:
    # Kept, "Allow: /a/b" cut to "Allow: /" would tie with "Disallow: /" and win.
    head = b"User-agent: *\nDisallow: /\n"
    padding = b"#" * (MAX_BODY_BYTES - len(head) - len(b"Allow: /")) + b"\n"
    body = head + padding + b"Allow: /a/b\n"
    assert len(head + padding) + len(b"Allow: /") == MAX_BODY_BYTES + 1
    rules = parse_robots(body)
    assert not rules.allowed(f"{SITE}/x", "TrawlBot")


def test_an_over_long_line_is_cut_not_dropped() -> None:
    rule = b"Disallow: /x/" + b"a" * 20_000
    rules = parse_robots(b"User-agent: *\n" + rule + b"\n")
    kept = rule[:MAX_LINE_BYTES].removeprefix(b"Disallow: ").decode()
    assert not rules.allowed(SITE + kept, "TrawlBot")
    assert rules.allowed(SITE + kept[:-1], "TrawlBot")


# -- groups, Google's way ---------------------------------------------------------------


def test_lines_that_are_not_rules_do_not_end_a_group() -> None:
    # bitbucket.org's file, shortened: Crawl-delay is not an RFC 9309 rule, so
    # "*" and "008" share one group and the Disallow applies to both (Google
    # reads it so too; protego would not).
    rules = parse_robots(b"User-Agent: *\nCrawl-delay: 120\n\nUser-agent: 008\nDisallow: /\n")
    assert not rules.allowed(f"{SITE}/", "TrawlBot")
    assert rules.crawl_delay("TrawlBot") == 120.0


def test_a_group_name_counts_up_to_its_first_character_outside_a_z_dash_underscore() -> None:
    rules = parse_robots(b"User-agent: TrawlBot2\nDisallow: /\n")
    assert not rules.allowed(f"{SITE}/", "TrawlBot")
    assert rules.allowed(f"{SITE}/", "TrawlBot2")  # the crawler's token is taken as given


def test_groups_naming_us_are_merged() -> None:
    rules = parse_robots(
        b"User-agent: trawlbot\nDisallow: /a\n\nUser-agent: *\nDisallow: /\n\n"
        b"User-agent: TRAWLBOT\nDisallow: /b\nCrawl-delay: 4\n"
    )
    assert not rules.allowed(f"{SITE}/a", "TrawlBot")
    assert not rules.allowed(f"{SITE}/b", "TrawlBot")
    assert rules.allowed(f"{SITE}/c", "TrawlBot")
    assert rules.crawl_delay("TrawlBot") == 4.0


def test_rules_before_any_user_agent_apply_to_nobody() -> None:
    assert parse_robots(b"Disallow: /\nUser-agent: *\nAllow: /x\n").allowed(f"{SITE}/y", "A")


@pytest.mark.parametrize("value", [b"nan", b"inf", b"-1", b"soon", b""])
def test_meaningless_crawl_delays_are_none(value: bytes) -> None:
    assert parse_robots(b"User-agent: *\nCrawl-delay: " + value + b"\n").crawl_delay("A") is None


@pytest.mark.parametrize(
    "body",
    [b"", b"\x00\xff\xfe", b":::\n#\n\r\r\n", b"User-agent:\nDisallow:\nSitemap:\n", b"\xef\xbb"],
)
def test_junk_parses_to_no_rules(body: bytes) -> None:
    rules = parse_robots(body)
    assert rules.allowed(f"{SITE}/x", "TrawlBot")
    assert rules.sitemaps == ()
