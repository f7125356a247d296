"""Robots directives of a page, from its meta tags and X-Robots-Tag headers. Pure.

The rules (seed 000 section 4, seed 003, Google's robots meta documentation):

- Meta tags apply when named ``robots``, ``googlebot`` or our own product token
  (names compared case-insensitively); any other name is another crawler's.
- Every ``X-Robots-Tag`` header applies, however spelt, each one read
  separately. Within a value, ``bot: directives`` scopes what follows it (up to
  the next such prefix) to that bot: ``googlebot``, ``robots`` and our product
  token apply, any other bot's do not. The same holds inside a meta tag.
- Directives are separated by commas, whitespace or semicolons and compared
  whole and case-insensitively: ``NOINDEX`` is ``noindex``, ``noindexing`` is
  not. ``none`` means noindex and nofollow.
- A value stays attached to its name: ``max-image-preview: none`` is normalised
  to ``max-image-preview:none`` and prohibits nothing. ``unavailable_after``
  keeps its whole date, colons and an RFC 850 weekday comma included.
- All applicable fields are combined and restrictions win: ``index`` in one
  tag and ``noindex`` in another is noindex.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

GOOGLEBOT = "googlebot"
HEADER = "x-robots-tag"
SOURCE_HEADER = "X-Robots-Tag"

# Directives whose value is one word; anything after it is the next directive.
_VALUED = frozenset({"max-snippet", "max-image-preview", "max-video-preview"})
# Its value is a date of several words, so it takes the rest of the item.
_UNAVAILABLE_AFTER = "unavailable_after"
_WEEKDAYS = frozenset(
    {"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
    | {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
)
_NOINDEX = frozenset({"noindex", "none"})
_NOFOLLOW = frozenset({"nofollow", "none"})

_ITEM_SEPARATORS = re.compile(r"[,;]")
_NAME_COLON = re.compile(r"([a-z0-9_.-]+)\s*:\s*", re.IGNORECASE)
_WORD = re.compile(r"\S+")
_TOKEN = re.compile(r"[a-z0-9_.-]+")


@dataclass(frozen=True, slots=True)
class Directives:
    noindex: bool
    nofollow: bool
    values: tuple[str, ...]  # every directive that applied, normalised, first seen first
    sources: tuple[str, ...]  # where noindex, nofollow or none came from


def robots_directives(
    meta: Sequence[tuple[str, str]], headers: Sequence[tuple[str, str]], product_token: str
) -> Directives:
    """Combine the applicable meta tags and X-Robots-Tag headers of one response."""
    ours = {GOOGLEBOT, "robots"}
    token = product_token.strip().lower()
    if token:
        ours.add(token)
    found: list[tuple[str, str]] = []  # (source, directive)
    for name, content in meta:
        lname = name.strip().lower()
        if lname in ours:
            source = f"meta {lname}"
            found.extend((source, d) for d in _applicable(content, ours))
    for name, value in headers:
        if name.strip().lower() == HEADER:
            found.extend((SOURCE_HEADER, d) for d in _applicable(value, ours))
    directives = {d for _, d in found}
    restrictive = _NOINDEX | _NOFOLLOW
    return Directives(
        noindex=bool(directives & _NOINDEX),
        nofollow=bool(directives & _NOFOLLOW),
        values=tuple(dict.fromkeys(d for _, d in found)),
        sources=tuple(dict.fromkeys(s for s, d in found if d in restrictive)),
    )


def _applicable(text: str, ours: set[str]) -> Iterator[str]:
    return (d for bot, d in parse_directives(text) if bot is None or bot in ours)


def parse_directives(text: str) -> list[tuple[str | None, str]]:
    """Every directive in one field as (bot it is scoped to or None, normalised directive)."""
    scope: str | None = None
    out: list[tuple[str | None, str]] = []
    for item in _ITEM_SEPARATORS.split(text):
        rest = item.strip()
        if not rest:
            continue
        if out and _continues_date(out[-1][1], rest):
            # An RFC 850 date ("Friday, 25-Jun-10 ...") was cut at its comma.
            bot, last = out[-1]
            out[-1] = (bot, f"{last}, {_squash(rest)}")
            continue
        while rest:
            named = _NAME_COLON.match(rest)
            if named:
                name, after = named.group(1).lower(), rest[named.end() :]
                if name == _UNAVAILABLE_AFTER:
                    out.append((scope, f"{name}:{_squash(after)}"))
                    break
                if name in _VALUED:
                    word = _WORD.match(after)
                    value = word.group().lower() if word else ""
                    out.append((scope, f"{name}:{value}"))
                    rest = after[word.end() :].lstrip() if word else ""
                    continue
                # Not a directive of ours: a user-agent prefix, in force to the next one.
                scope, rest = name, after
                continue
            word = _WORD.match(rest)
            if word is None:  # only reachable with whitespace left, which strip() removed
                break
            lowered = word.group().lower()
            if _TOKEN.fullmatch(lowered):
                out.append((scope, lowered))
            rest = rest[word.end() :].lstrip()
    return out


def _continues_date(previous: str, item: str) -> bool:
    name, _, value = previous.partition(":")
    return name == _UNAVAILABLE_AFTER and value in _WEEKDAYS and item[:1].isdigit()


def _squash(text: str) -> str:
    return " ".join(text.split()).lower()
