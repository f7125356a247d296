"""The SEO report's issues: each declared once, with its label and the filter that finds
its pages (what Screaming Frog users look for first).

A filter is a constant SQL condition over one ``pages`` row, in the subset both
databases read; where it compares with a threshold (``IssueThresholds``, from the
report_* settings) it holds one ``?`` for it. The overview counts every issue in one
scan of the table; the crawl table lists one issue's pages with the same condition.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from trawl.records import IssueThresholds
from trawl.understand.indexability import Indexability

# A page whose HTML was read: the only ones with a title, a description and headings.
_HTML = (
    "(status BETWEEN 200 AND 299 AND redirect_to IS NULL"
    " AND content_type IN ('text/html', 'application/xhtml+xml'))"
)
_INDEXABLE = f"indexability = '{Indexability.INDEXABLE.value}'"


def _duplicated(column: str) -> str:
    # Duplicates among indexable pages only: a canonicalised copy sharing its
    # canonical's title is what the canonical is for.
    return (
        f"({_INDEXABLE} AND {column} != '' AND {column} IN (SELECT d.{column} FROM pages d"  # noqa: S608
        f" WHERE d.indexability = '{Indexability.INDEXABLE.value}' AND d.{column} != ''"
        f" GROUP BY d.{column} HAVING count(*) > 1))"
    )


# Every URL on a cycle of redirects: following redirect_to from it comes back to it
# (a chain is walked at most MAX_HOPS hops, the crawler's own limit is lower).
MAX_HOPS = 20
_LOOP = (
    "url IN (WITH RECURSIVE hop(start, target, n) AS ("  # noqa: S608 - constants
    " SELECT r.url, r.redirect_to, 1 FROM pages r WHERE r.redirect_to IS NOT NULL"
    " UNION ALL SELECT h.start, p.redirect_to, h.n + 1 FROM hop h"
    " JOIN pages p ON p.url = h.target"
    f" WHERE p.redirect_to IS NOT NULL AND h.target != h.start AND h.n < {MAX_HOPS})"
    " SELECT start FROM hop WHERE target = start)"
)


class Issue(Enum):
    """(group, label, condition, threshold): ``threshold`` names the IssueThresholds
    field the condition's ``?`` stands for."""

    TITLE_MISSING = ("Titles", "Missing title", f"{_HTML} AND title = ''", None)
    TITLE_DUPLICATE = ("Titles", "Duplicate title", _duplicated("title"), None)
    TITLE_TOO_LONG = ("Titles", "Title too long", f"{_HTML} AND length(title) > ?", "title_max")
    TITLE_TOO_SHORT = (
        "Titles",
        "Title too short",
        f"{_HTML} AND title != '' AND length(title) < ?",
        "title_min",
    )
    DESCRIPTION_MISSING = (
        "Descriptions",
        "Missing description",
        f"{_HTML} AND description = ''",
        None,
    )
    DESCRIPTION_DUPLICATE = (
        "Descriptions",
        "Duplicate description",
        _duplicated("description"),
        None,
    )
    DESCRIPTION_TOO_LONG = (
        "Descriptions",
        "Description too long",
        f"{_HTML} AND length(description) > ?",
        "description_max",
    )
    DESCRIPTION_TOO_SHORT = (
        "Descriptions",
        "Description too short",
        f"{_HTML} AND description != '' AND length(description) < ?",
        "description_min",
    )
    H1_MISSING = ("Headings", "Missing H1", f"{_HTML} AND h1_count = 0", None)
    H1_MULTIPLE = ("Headings", "Multiple H1", f"{_HTML} AND h1_count > 1", None)
    THIN_CONTENT = ("Content", "Thin content", f"{_INDEXABLE} AND word_count < ?", "thin_words")
    CLIENT_ERROR = ("Response codes", "Client error (4xx)", "status BETWEEN 400 AND 499", None)
    SERVER_ERROR = ("Response codes", "Server error (5xx)", "status BETWEEN 500 AND 599", None)
    NO_RESPONSE = (
        "Response codes",
        "No response",
        f"status = 0 AND coalesce(indexability, '') != '{Indexability.BLOCKED.value}'",
        None,
    )
    REDIRECT_CHAIN = (
        "Redirects",
        "Redirect chain",
        "redirect_to IN (SELECT c.url FROM pages c WHERE c.redirect_to IS NOT NULL)",
        None,
    )
    REDIRECT_LOOP = ("Redirects", "Redirect loop", _LOOP, None)
    REDIRECT_301 = ("Redirects", "301 Moved Permanently", "status = 301", None)
    REDIRECT_302 = ("Redirects", "302 Found", "status = 302", None)
    REDIRECT_307 = ("Redirects", "307 Temporary Redirect", "status = 307", None)
    REDIRECT_308 = ("Redirects", "308 Permanent Redirect", "status = 308", None)
    META_REFRESH = (
        "Redirects",
        "Meta refresh",
        "status BETWEEN 200 AND 299 AND redirect_to IS NOT NULL",
        None,
    )
    CANONICALISED = (
        "Indexability",
        "Canonicalised",
        f"indexability = '{Indexability.CANONICALISED.value}'",
        None,
    )
    NOINDEX = ("Indexability", "Noindex", f"indexability = '{Indexability.NOINDEX.value}'", None)
    BLOCKED = (
        "Indexability",
        "Blocked by robots.txt",
        f"indexability = '{Indexability.BLOCKED.value}'",
        None,
    )
    SITEMAP_NON_INDEXABLE = (
        "Sitemaps",
        "Non-indexable URL in a sitemap",
        "in_sitemap = 1 AND indexable = 0",
        None,
    )
    ORPHAN = (
        "Sitemaps",
        "Orphan page (in a sitemap, no inlinks)",
        "in_sitemap = 1 AND inlinks = 0",
        None,
    )
    SLOW = ("Performance", "Slow response", "response_time > ?", "slow_seconds")

    def __init__(self, group: str, label: str, condition: str, threshold: str | None) -> None:
        self.group = group
        self.label = label
        self.condition = condition
        self.threshold = threshold

    @property
    def slug(self) -> str:
        """The issue's name in a URL (``?issue=title_missing``)."""
        return self.name.lower()

    def params(self, thresholds: IssueThresholds) -> tuple[Any, ...]:
        return () if self.threshold is None else (getattr(thresholds, self.threshold),)

    @classmethod
    def from_slug(cls, slug: str) -> Issue | None:
        return _BY_SLUG.get(slug)


_BY_SLUG = {issue.slug: issue for issue in Issue}
ISSUE_SLUGS = tuple(_BY_SLUG)
