"""trawl.sitemaps dates: W3C and RFC 822 parsing, and the lastmod trust rule (seed 000)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trawl.sitemaps import parse_sitemap
from trawl.sitemaps.dates import dates_trusted, parse_date

SITEMAP = "https://example.com/blog/sitemap.xml"


def urlset(*urls: str) -> bytes:
    return f"<urlset>{''.join(urls)}</urlset>".encode()


def url(loc: str, lastmod: str | None = None) -> str:
    date = f"<lastmod>{lastmod}</lastmod>" if lastmod is not None else ""
    return f"<url><loc>{loc}</loc>{date}</url>"


# -- dates ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2005", datetime(2005, 1, 1, tzinfo=UTC)),
        ("2005-07", datetime(2005, 7, 1, tzinfo=UTC)),
        ("2005-07-16", datetime(2005, 7, 16, tzinfo=UTC)),
        ("1997-07-16T19:20+01:00", datetime(1997, 7, 16, 18, 20, tzinfo=UTC)),
        ("1997-07-16T19:20:30+01:00", datetime(1997, 7, 16, 18, 20, 30, tzinfo=UTC)),
        ("1997-07-16T19:20:30.45+01:00", datetime(1997, 7, 16, 18, 20, 30, 450000, tzinfo=UTC)),
        ("2004-12-23T18:00:15Z", datetime(2004, 12, 23, 18, 0, 15, tzinfo=UTC)),
        ("2004-12-23T18:00:15-0500", datetime(2004, 12, 23, 23, 0, 15, tzinfo=UTC)),
        ("2004-12-23 18:00:15+00:00", datetime(2004, 12, 23, 18, 0, 15, tzinfo=UTC)),
        ("  2004-12-23\n", datetime(2004, 12, 23, tzinfo=UTC)),
        ("Sun, 06 Sep 2009 16:20:00 +0000", datetime(2009, 9, 6, 16, 20, tzinfo=UTC)),
        ("Sun, 06 Sep 2009 16:20:00 GMT", datetime(2009, 9, 6, 16, 20, tzinfo=UTC)),
        ("Sun, 06 Sep 2009 16:20:00 -0000", datetime(2009, 9, 6, 16, 20, tzinfo=UTC)),
        ("Sun, 06 Sep 2009 16:20:00 EST", datetime(2009, 9, 6, 21, 20, tzinfo=UTC)),
    ],
)
def test_dates_that_are_read(text: str, expected: datetime) -> None:
    value = parse_date(text)
    assert value == expected
    assert value is not None and value.utcoffset() == timedelta(0)


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "yesterday",
        "2004-12-23T18:00:15",  # a time with no zone
        "05 Jan 17 13:34:55",  # the same in RFC 822
        "2023-02-30",
        "2023-13-01",
        "2023-01-01T24:30Z",
        "2023-01-01T10:00+25:00",
        "0000-01-01",
        "0001-01-01T00:00+01:00",  # before year 1 once in UTC
        "9999-12-31T23:00-05:00",  # after year 9999 once in UTC
        "2023-01-01T10:00:00.1" + "0" * 100 + "+01:00",  # too long to look at
        "1" * 10_000,
        "Mon, 01 Jan 0001 00:00:00 GMT",  # year 1, not 2001 (the email parser's rule)
    ],
)
def test_dates_that_are_not_guessed(text: str | None) -> None:
    assert parse_date(text) is None


@given(st.text(max_size=80))
def test_any_text_gives_an_aware_utc_date_or_none(text: str) -> None:
    value = parse_date(text)
    assert value is None or value.tzinfo is UTC


# -- lastmod trust -------------------------------------------------------------------


def test_dates_trusted_rule() -> None:
    a, b, c = (datetime(2024, 1, d, tzinfo=UTC) for d in (1, 2, 3))
    assert dates_trusted([]) is True
    assert dates_trusted([a, b]) is True  # one value covers exactly half
    assert dates_trusted([a, a, b, c]) is True
    assert dates_trusted([a, a, b]) is False  # two thirds
    assert dates_trusted([a]) is False  # one dated URL is all of them


def test_a_build_stamped_sitemap_loses_all_its_dates() -> None:
    stamp = "2024-05-01T10:00:00+00:00"
    body = urlset(
        url("/a", stamp),
        url("/b", stamp),
        url("/c", "2023-01-01"),
        url("/d"),
    )
    sitemap = parse_sitemap(body, SITEMAP)
    assert sitemap.lastmod_trusted is False
    assert [e.lastmod for e in sitemap.entries] == [None, None, None, None]


def test_the_same_instant_written_two_ways_counts_as_one_value() -> None:
    body = urlset(
        url("/a", "2024-05-01T10:00:00Z"),
        url("/b", "2024-05-01T12:00:00+02:00"),
        url("/c", "2023-01-01"),
    )
    assert parse_sitemap(body, SITEMAP).lastmod_trusted is False


def test_each_sitemap_is_judged_on_its_own() -> None:
    stamped = urlset(*(url(f"/s{i}", "2024-05-01") for i in range(5)))
    tracked = urlset(*(url(f"/t{i}", f"2024-05-0{i + 1}") for i in range(5)))
    assert parse_sitemap(stamped, SITEMAP).lastmod_trusted is False
    kept = parse_sitemap(tracked, SITEMAP)
    assert kept.lastmod_trusted is True
    assert [e.lastmod for e in kept.entries] == [
        datetime(2024, 5, d, tzinfo=UTC) for d in range(1, 6)
    ]


def test_undated_and_unreadable_dates_do_not_count() -> None:
    body = urlset(url("/a", "2024-01-01"), url("/b", "2024-01-02"), url("/c"), url("/d", "soon"))
    sitemap = parse_sitemap(body, SITEMAP)
    assert sitemap.lastmod_trusted is True
    assert sum(e.lastmod is not None for e in sitemap.entries) == 2
