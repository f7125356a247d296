"""What a person asks for: the query text, which page of results, in what order, within
which filters. Pure.

The API, the search page and ``trawl search`` build a ``SearchRequest`` with
``search_request``, the one place their parameters are read and checked (a
bad one is a ``QueryError``: 400 in the API and on the page), and hand it
whole to ``searcher.search`` or ``searcher.rank``. Filters given here join
those typed in the text (``site:``, ``lang:``, ``after:``, ``before:``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Literal, get_args
from urllib.parse import urlsplit

from trawl.analysis.text import language_code
from trawl.errors import QueryError
from trawl.index.spec import Filters

Sort = Literal["relevance", "date"]  # date: newest first
SORTS: tuple[Sort, ...] = get_args(Sort)
DEFAULT_SORT: Sort = "relevance"
MAX_PAGE = 1000  # result pages the API and the search page go to


@dataclass(frozen=True, slots=True)
class SearchRequest:
    text: str
    page: int = 1
    per_page: int | None = None  # None: the per_page setting
    sort: Sort = DEFAULT_SORT
    # Given beside the text; the sites a page may be on, its language, its modified date.
    filters: Filters = field(default_factory=Filters)

    def __post_init__(self) -> None:
        if self.page < 1:
            raise QueryError("page must be 1 or more")
        if self.per_page is not None and self.per_page < 1:
            raise QueryError("per_page must be 1 or more")
        _sort(self.sort)


def search_request(
    text: str,
    *,
    page: int = 1,
    per_page: int | None = None,
    sort: str | None = None,
    lang: str | None = None,
    site: str | None = None,
    after: date | str | None = None,
    before: date | str | None = None,
) -> SearchRequest:
    """A request from parameters as they arrive (form fields are strings; empty: not
    given; no sort: by relevance). Raises ``QueryError`` naming the first bad one."""
    filters = Filters(
        sites=_sites(site),
        lang=_lang(lang),
        after=_midnight(_day("after", after)),
        before=_midnight(_day("before", before)),
    )
    return SearchRequest(text, page, per_page, _sort(sort or DEFAULT_SORT), filters)


def _sort(given: str) -> Sort:
    for name in SORTS:
        if given == name:
            return name
    raise QueryError(f"sort must be one of {', '.join(SORTS)}")


def _lang(given: str | None) -> str | None:
    text = (given or "").strip().lower()
    if not text:
        return None
    if not (text.isalpha() and 2 <= len(text) <= 3):
        raise QueryError("language must be a two- or three-letter code such as en")
    return language_code(text) or None


def _sites(given: str | None) -> tuple[str, ...]:
    # Pages are filed under their host name alone, so a port given with it is dropped.
    text = (given or "").strip().strip("./ ")
    if not text:
        return ()
    try:
        host = urlsplit(f"//{text}").hostname or ""
    except ValueError:  # a bracketed host that is no IPv6 address
        host = text.lower()
    return (host,) if host else ()


def _day(name: str, given: date | str | None) -> date | None:
    if given is None or isinstance(given, date):
        return given
    text = given.strip()
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise QueryError(f"{name} must be a date such as 2024-05-31") from None


def _midnight(day: date | None) -> datetime | None:
    if day is None:
        return None
    return datetime(day.year, day.month, day.day, tzinfo=UTC)
