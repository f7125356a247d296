"""Indexability: the one label a crawled URL gets, and why it is out of the index. Pure.

Decided in this order (seed 003's classification, with seed 000's meta refresh),
the first that holds wins:

1. Redirected: a 3xx status, or a redirect target (a short meta refresh);
2. Client Error: a 4xx status;
3. Server Error: a 5xx status;
4. Error: the crawl recorded an error (no response, an unusable one);
5. Blocked (robots): robots.txt disallows the URL;
6. Error: still no 2xx status (status 0, 1xx, 6xx and up): nothing to index;
7. Noindex: a noindex or none directive applied;
8. Canonicalised: rel=canonical names another URL;
9. Indexable.

So a 404 page carrying noindex is a Client Error, and a page whose canonical is
its own URL is Indexable. Step 6 sits after Blocked because a disallowed URL is
never requested, so it has no status and no error, and Blocked is why.
"""

from __future__ import annotations

from enum import StrEnum
from urllib.parse import urlsplit


class Indexability(StrEnum):
    REDIRECTED = "Redirected"
    CLIENT_ERROR = "Client Error"
    SERVER_ERROR = "Server Error"
    ERROR = "Error"
    BLOCKED = "Blocked (robots)"
    NOINDEX = "Noindex"
    CANONICALISED = "Canonicalised"
    INDEXABLE = "Indexable"


def indexability(
    *,
    status: int,
    redirect_to: str | None,
    error: str | None,
    blocked: bool,
    noindex: bool,
    canonical: str | None,
    url: str,
) -> Indexability:
    """The label for one URL; ``canonical`` and ``url`` are normalised identities."""
    if 300 <= status < 400 or redirect_to:
        return Indexability.REDIRECTED
    if 400 <= status < 500:
        return Indexability.CLIENT_ERROR
    if 500 <= status < 600:
        return Indexability.SERVER_ERROR
    if error is not None:
        return Indexability.ERROR
    if blocked:
        return Indexability.BLOCKED
    if not 200 <= status < 300:
        return Indexability.ERROR
    if noindex:
        return Indexability.NOINDEX
    if canonical and canonical != url:
        return Indexability.CANONICALISED
    return Indexability.INDEXABLE


def is_query_variant(link: str, canonical: str) -> bool:
    """Is ``link`` the canonical's URL with only another query string?

    Both are normalised identities, so the query is already sorted and cleaned
    and a difference in it is a real one. The canonical itself is not a variant.
    """
    try:
        a, b = urlsplit(link), urlsplit(canonical)
    except ValueError:  # a malformed bracketed host: not a URL we can compare
        return False
    same_resource = (a.scheme, a.netloc, a.path) == (b.scheme, b.netloc, b.path)
    return same_resource and a.query != b.query
