"""Lookup forms of a query beyond its words: how a site may spell them in its name. Pure.

Seed 002's idea: for "anne hathaway archive" a site may be annehathaway.com,
anne-hathaway.org or hathawayarchive.net. Adjacent original words are joined
(without and with a hyphen) in every run of two or more, up to a small cap,
and matched against host and URL tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

MAX_RUN = 4  # words joined at most
MAX_FORMS = 24


def concatenations(originals: Sequence[str]) -> list[str]:
    """Joined runs of adjacent words, plain and hyphenated, shortest runs first."""
    forms: list[str] = []
    n = len(originals)
    for size in range(2, min(n, MAX_RUN) + 1):
        for start in range(n - size + 1):
            run = originals[start : start + size]
            for form in ("".join(run), "-".join(run)):
                if form not in forms:
                    forms.append(form)
    return forms[:MAX_FORMS]
