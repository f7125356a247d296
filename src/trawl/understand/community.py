"""Community pages (forum threads, comment pages, Q&A) and "Discussed on X". Pure.

A page is a community page when its markup says so (schema.org
DiscussionForumPosting, Comment, QAPage and kin), when its URL has the shape of
forum software (/forum/, /thread/, /t/slug/123, /questions/123, viewtopic.php,
a forum. or community. host...), or when its structure does: three or more
elements whose class or id names a comment or a reply.

"Discussed on X" (seed 004): a community page on host X links to a page; that
link's anchor text is the quote. Built only from what the crawl already has:
the page's category and the links table. At most three per page, one per
host, most authoritative first.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

from trawl.records import Discussion

MAX_DISCUSSIONS = 3
COMMENT_BLOCKS = 3
QUOTE_CHARS = 200
COMMUNITY_TYPES = frozenset(
    {
        "discussionforumposting",
        "comment",
        "qapage",
        "question",
        "answer",
        "socialmediaposting",
        "userComments".lower(),
    }
)
_PATH = re.compile(
    r"/(?:forums?|threads?|topics?|discussions?|boards?|community|comments?)(?:/|$)"
    r"|/t/[^/]+/\d+"
    r"|/questions/\d+"
    r"|/(?:viewtopic|showthread|viewthread)\.php"
    r"|/r/[^/]+/comments/",
    re.IGNORECASE,
)
_HOST = re.compile(r"^(?:forums?|community|discuss|discourse|board|boards)\.", re.IGNORECASE)
_URLISH = re.compile(r"^(?:https?://|www\.)\S*$", re.IGNORECASE)


def is_community(url: str, markup_types: Iterable[str], comment_blocks: int) -> bool:
    if any(t.lower() in COMMUNITY_TYPES for t in markup_types):
        return True
    parts = urlsplit(url)
    if _HOST.match(parts.hostname or "") or _PATH.search(parts.path):
        return True
    return comment_blocks >= COMMENT_BLOCKS


def quote(anchor: str) -> str:
    """The anchor text as a quote: a bare URL says nothing, so it becomes ""."""
    text = " ".join(anchor.split())
    if _URLISH.match(text):
        return ""
    return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1].rstrip() + "…"


def discussions(
    links: Iterable[tuple[str, str, str]],
    community_pages: Mapping[str, tuple[str, float]],
    canonical_of: Mapping[str, str],
) -> dict[str, tuple[Discussion, ...]]:
    """Target URL -> its "Discussed on" entries.

    ``links``: (from URL, to URL, anchor text) of every link; ``community_pages``:
    URL -> (host, authority) of each community page; ``canonical_of``: a duplicate's
    canonical, which is credited with the discussion of any of its copies.
    """
    found: dict[str, dict[str, tuple[float, Discussion]]] = defaultdict(dict)
    for source, linked, anchor in links:
        page = community_pages.get(source)
        if page is None:
            continue
        host, weight = page
        target = canonical_of.get(linked, linked)
        if urlsplit(target).hostname == host:
            continue  # a site discussing itself is navigation, not discussion
        entry = Discussion(host=host, url=source, quote=quote(anchor))
        best = found[target].get(host)
        # Per host the most authoritative page, and one with a quote over one without.
        key = (bool(entry.quote), weight)
        if best is None or key > (bool(best[1].quote), best[0]):
            found[target][host] = (weight, entry)
    return {
        target: tuple(d for _, d in sorted(by_host.values(), key=lambda wd: (-wd[0], wd[1].host)))[
            :MAX_DISCUSSIONS
        ]
        for target, by_host in found.items()
    }
