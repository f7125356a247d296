"""Rules for a URL a person types to start a crawl (seed 003, "Starting URL")."""

from __future__ import annotations

import re

from trawl.errors import InvalidUrl
from trawl.urls.identity import normalise

_HAS_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


def parse_start_url(text: str) -> str:
    """Normalised start URL: ``https://`` added when no scheme is given.

    Raises InvalidUrl (or its subclass CredentialsInUrl) with a message fit
    to show a person as it is.
    """
    text = text.strip()
    if not text:
        raise InvalidUrl("empty start URL")
    if not _HAS_SCHEME.match(text):
        if ":" in text.split("/", 1)[0] and not re.match(r"^[^:/]+:\d+(/|$)", text):
            # "mailto:x" or "javascript:..." -- a scheme, just not one we crawl.
            raise InvalidUrl(f"only http and https URLs can be crawled, not {text[:80]!r}")
        text = "https://" + text
    return normalise(text)
