"""Dates in sitemaps and feeds, and whether a sitemap's dates can be believed.

Sitemaps write ``<lastmod>`` in W3C datetime (a profile of ISO 8601), RSS
writes ``<pubDate>`` in RFC 822 and Atom writes ``<updated>`` in RFC 3339.
Every parsed value comes out timezone-aware in UTC; anything that cannot be
read without guessing comes out as None (seed 000: discard rather than guess).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta, timezone
from email.utils import parsedate_to_datetime

# Longer than any real date; checked first so a hostile value costs nothing.
MAX_DATE_LENGTH = 64

# YYYY, YYYY-MM, YYYY-MM-DD, then optionally a time. Each part is optional only
# after the one before it, so the pattern cannot backtrack badly. A space in
# place of "T", "+hhmm" in place of "+hh:mm" and a comma before the fraction are
# not W3C, but they are common and mean exactly one thing.
_W3C = re.compile(
    r"(?P<year>\d{4})"
    r"(?:-(?P<month>\d{2})"
    r"(?:-(?P<day>\d{2})"
    r"(?:[T ](?P<hour>\d{2}):(?P<minute>\d{2})"
    r"(?::(?P<second>\d{2})(?:[.,](?P<fraction>\d{1,9}))?)?"
    r" ?(?P<zone>Z|[+-]\d{2}(?::?\d{2})?)?"
    r")?)?)?",
    re.ASCII | re.IGNORECASE,
)


def parse_date(text: str | None) -> datetime | None:
    """A sitemap or feed date as an aware UTC datetime, or None if it cannot be trusted."""
    if text is None:
        return None
    text = text.strip()
    if not text or len(text) > MAX_DATE_LENGTH:
        return None
    if text[0].isdigit() and (match := _W3C.fullmatch(text)):
        return _from_w3c(match)
    return _from_rfc822(text)


def dates_trusted(dates: Iterable[datetime]) -> bool:
    """False when one value covers more than half of the dated URLs of one sitemap.

    Generators that stamp every entry with the build time produce this; such
    dates say when the file was written, not when each page changed.
    """
    counts = Counter(dates)
    if not counts:
        return True
    most = counts.most_common(1)[0][1]
    return most * 2 <= counts.total()


def _from_w3c(match: re.Match[str]) -> datetime | None:
    part = match.groupdict()
    zone = part["zone"]
    if part["hour"] is not None and zone is None:
        # A clock time without a zone could be any of 26 hours; W3C requires one.
        return None
    fraction = (part["fraction"] or "").ljust(6, "0")[:6]
    try:
        value = datetime(
            int(part["year"]),
            int(part["month"] or 1),
            int(part["day"] or 1),
            int(part["hour"] or 0),
            int(part["minute"] or 0),
            int(part["second"] or 0),
            int(fraction),
            tzinfo=_zone(zone),
        )
        return value.astimezone(UTC)
    except (ValueError, OverflowError):  # 2023-02-30, 25:00, +99:00, year 0001 west of UTC
        return None


def _zone(zone: str | None) -> timezone:
    if zone is None or zone.upper() == "Z":
        return UTC  # a bare date is read as that day in UTC: the day is what matters
    sign = -1 if zone[0] == "-" else 1
    digits = zone[1:].replace(":", "")
    minutes = int(digits[:2]) * 60 + int(digits[2:] or 0)
    return timezone(sign * timedelta(minutes=minutes))  # ValueError past 24 hours


# The year as written: four digits that are no part of the time or the zone offset.
_RFC822_YEAR = re.compile(r"(?<![\d:+-])(\d{4})(?![\d:])")


def _from_rfc822(text: str) -> datetime | None:
    try:
        value = parsedate_to_datetime(text)
    except (ValueError, TypeError, IndexError, OverflowError):
        # The email parser reports bad input through several exception types.
        return None
    # It reads a year under 100 as two digits even when written with four: "0001" is 2001.
    written = _RFC822_YEAR.search(text)
    if written is not None and int(written.group(1)) != value.year:
        return None
    if value.tzinfo is None:
        if not text.endswith("-0000"):
            return None  # no zone given: refuse to guess one
        # RFC 2822 3.3: "-0000" is UTC written on a machine of unknown zone.
        value = value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        return None
