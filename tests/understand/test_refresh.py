"""Meta refresh parsing and the redirect rule (trawl.understand.refresh)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trawl.understand.refresh import REDIRECT_MAX_DELAY, parse_refresh, refresh_redirect


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("5; url=/next", (5.0, "/next")),
        ("0;URL='x'", (0.0, "x")),
        ("0; url=x", (0.0, "x")),
        ("0,url=x", (0.0, "x")),
        ('0;  URL = "x"', (0.0, "x")),
        ("0; Url=https://example.com/a?b=1;c=2", (0.0, "https://example.com/a?b=1;c=2")),
        ("0;url=http://example.com/", (0.0, "http://example.com/")),
        ("  0 ; url = /a  ", (0.0, "/a")),
        ("0 url=/a", (0.0, "/a")),  # whitespace alone separates
        ("0; /a", (0.0, "/a")),  # "url=" is optional
        ("0;https://example.com/", (0.0, "https://example.com/")),
        ("1; URL='/a b'", (1.0, "/a b")),
        ("1; url='/a'junk", (1.0, "/a")),  # the closing quote ends the target
        ('1; url="/a\'b"', (1.0, "/a'b")),
        ("1; url='/a", (1.0, "/a")),  # an unclosed quote runs to the end
        ("1; url=/a'b", (1.0, "/a'b")),  # quotes count only at the start
        ("1; urlx", (1.0, "urlx")),  # not "url=": a relative URL named so
        ("1; url /a", (1.0, "url /a")),
        ("1; u", (1.0, "u")),
        ("3", (3.0, None)),
        ("  3  ", (3.0, None)),
        ("3;", (3.0, None)),
        ("3; ", (3.0, None)),
        ("0; url=", (0.0, None)),  # an empty target refreshes the page itself
        ("0; url=''", (0.0, None)),
        ("0; url=' '", (0.0, None)),
        ("2.5; url=/a", (2.0, "/a")),  # browsers ignore the fraction
        ("10.9; url=/a", (10.0, "/a")),
        (".5; url=/a", (0.0, "/a")),
        ("1.2.3; url=/a", (1.0, "/a")),
        ("007;url=/a", (7.0, "/a")),
        ("\t\n5\r\n;\furl=/a", (5.0, "/a")),
        ("600; url=/dashboard", (600.0, "/dashboard")),
    ],
)
def test_parse_refresh(content: str, expected: tuple[float, str | None]) -> None:
    assert parse_refresh(content) == expected


@pytest.mark.parametrize(
    "content",
    [
        "",
        "   ",
        "junk",
        "url=/a",  # no delay at all
        "; url=/a",
        "-1; url=/a",
        "+1; url=/a",
        "5s; url=/a",
        "5abc",
        "five; url=/a",
        "\u0661; url=/a",  # an Arabic-Indic digit is not an ASCII digit
        "\u00a05; url=/a",  # nor is a no-break space ASCII whitespace
    ],
)
def test_unparseable_refresh_is_none(content: str) -> None:
    assert parse_refresh(content) is None


def test_huge_delay_is_infinite_not_an_error() -> None:
    parsed = parse_refresh("9" * 5000 + "; url=/a")
    assert parsed is not None
    assert math.isinf(parsed[0])
    assert refresh_redirect("9" * 5000 + "; url=/a") is None


@pytest.mark.parametrize(
    ("content", "target"),
    [
        ("0; url=/next", "/next"),
        ("0;URL='https://example.com/'", "https://example.com/"),
        ("5; url=/next", "/next"),
        ("10; url=/next", "/next"),  # the limit itself is still a redirect
        ("10.9; url=/next", "/next"),
        ("11; url=/next", None),  # a self-refreshing page indexes normally
        ("300; url=/dashboard", None),
        ("0", None),  # a refresh without a target reloads the page itself
        ("5", None),
        ("0; url=", None),
        ("junk", None),
        ("", None),
        (None, None),
    ],
)
def test_refresh_redirect(content: str | None, target: str | None) -> None:
    assert refresh_redirect(content) == target


def test_redirect_max_delay_is_ten_seconds() -> None:
    assert REDIRECT_MAX_DELAY == 10.0


@given(st.text())
def test_parse_refresh_never_raises(content: str) -> None:
    parsed = parse_refresh(content)
    if parsed is not None:
        delay, target = parsed
        assert delay >= 0
        if target is not None:  # trimmed of C0 controls and spaces, as the URL parser does
            assert target
            assert target[0] > " "
            assert target[-1] > " "
    refresh_redirect(content)


@given(
    st.lists(
        st.sampled_from(["0", "5", "11", ".", ";", ",", " ", "url", "URL", "=", "'", '"', "/a"]),
        max_size=12,
    ).map("".join)
)
def test_parse_refresh_never_raises_on_refresh_like_text(content: str) -> None:
    parsed = parse_refresh(content)
    redirect = refresh_redirect(content)
    if redirect is not None:
        assert parsed is not None
        assert parsed[1] == redirect
        assert parsed[0] <= REDIRECT_MAX_DELAY
