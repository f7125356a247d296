"""Meta refresh: ``<meta http-equiv="refresh" content="5; url=/next">``. Pure.

``parse_refresh`` reads the content the way browsers do (the WHATWG HTML
"shared declarative refresh steps"), so a page is judged by where a visitor
actually lands:

- leading whitespace, then the delay in whole seconds; a fraction (``2.5``) is
  read and ignored, as browsers ignore it; no digits and no ``.`` is junk;
- then ``;``, ``,`` or whitespace, and optionally ``url`` (any case), ``=``,
  whitespace around each; the target may be quoted with ``'`` or ``"``, and a
  closing quote ends it;
- a delay alone (``"3"``), or a target that is empty after trimming, is a
  refresh of the page itself: no target.

``refresh_redirect`` applies seed 000: a refresh with a target within
``REDIRECT_MAX_DELAY`` seconds is a client-side redirect to a stub page; a
longer one is a self-refreshing page (a dashboard) and indexes normally.
"""

from __future__ import annotations

REDIRECT_MAX_DELAY = 10.0

# ASCII only, as in the standard: str.isdigit and str.isspace accept far more.
_DIGITS = frozenset("0123456789")
_WHITESPACE = frozenset("\t\n\f\r ")
# What the URL parser strips from both ends of a URL: C0 controls and space.
_URL_TRIM = "".join(chr(c) for c in range(0x21))


def parse_refresh(content: str) -> tuple[float, str | None] | None:
    """The delay in seconds and the raw target (None if none); None when unparseable."""
    pos, end = 0, len(content)

    def skip(chars: frozenset[str]) -> None:
        nonlocal pos
        while pos < end and content[pos] in chars:
            pos += 1

    def at(chars: str) -> bool:
        return pos < end and content[pos] in chars

    skip(_WHITESPACE)
    start = pos
    skip(_DIGITS)
    digits = content[start:pos]
    if not digits and not at("."):
        return None
    # float() rather than int(): a thousand-digit delay is inf, not a ValueError.
    delay = float(digits) if digits else 0.0
    skip(_DIGITS | {"."})
    if pos < end:
        if not at(";,\t\n\f\r "):
            return None
        skip(_WHITESPACE)
        if at(";,"):
            pos += 1
        skip(_WHITESPACE)
    if pos == end:
        return delay, None
    target = _target(content[pos:])
    return delay, target or None


def _target(text: str) -> str:
    """What follows the delay: an optional ``url =`` and an optionally quoted URL."""
    rest = text
    if rest[:3].lower() == "url":
        after = rest[3:].lstrip("\t\n\f\r ")
        if not after.startswith("="):
            # "url" not followed by "=" is the start of a relative URL, as browsers read it.
            return text.strip(_URL_TRIM)
        rest = after[1:].lstrip("\t\n\f\r ")
    if rest[:1] in {"'", '"'}:
        quote, rest = rest[0], rest[1:]
        rest = rest.split(quote, 1)[0]
    return rest.strip(_URL_TRIM)


def refresh_redirect(content: str | None) -> str | None:
    """The raw target when this refresh is a redirect; None when it is not."""
    if content is None:
        return None
    parsed = parse_refresh(content)
    if parsed is None:
        return None
    delay, target = parsed
    return target if target is not None and delay <= REDIRECT_MAX_DELAY else None
