"""What a person asks for: the query text, which page of results, in what order, within
which filters. Pure.

The API, the search page and ``trawl search`` build a ``SearchRequest`` with
``search_request``, the one place their parameters are read and checked (a
bad one is a ``QueryError``: 400 in the API and on the page), and hand it
whole to ``searcher.search`` or ``searcher.rank``. Filters given here join
those typed in the text (``site:``, ``lang:``, ``after:``, ``before:``).
``api_request`` reads /api/search's query string, within the bounds its OpenAPI
document declares (``server/api_search.py`` builds the document from them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
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
# /api/search's bounds, declared in its OpenAPI document too.
MAX_TEXT = 1000  # characters of a query
MAX_PER_PAGE = 100
MAX_SITE = 253  # a DNS name's longest
SITE_PATTERN = r"^[A-Za-z0-9.:\[\]-]+$"  # a host name or address, with a port or not
LANG_PATTERN = r"^[a-z]{2,3}$"
_SITE = re.compile(SITE_PATTERN)
_LANG = re.compile(LANG_PATTERN)


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


def api_request(params: Mapping[str, str]) -> SearchRequest:
    """A request from /api/search's query parameters (a parameter given twice: its
    last value), each checked against the bound its OpenAPI document declares: a
    bad one is a ``QueryError`` naming it. Unknown parameters are ignored.

    Read here in one pass, not declared to FastAPI one by one: solving eight
    declared parameters was ~40% of the server's own CPU a request."""
    text = params.get("q")
    if text is None:
        raise QueryError("q: a query is required")
    if len(text) > MAX_TEXT:
        raise QueryError(f"q: at most {MAX_TEXT} characters")
    site = params.get("site")
    if site is not None and (len(site) > MAX_SITE or not _SITE.fullmatch(site)):
        raise QueryError("site: a host name such as docs.example.org (with a port or not)")
    lang = params.get("lang")
    if lang is not None and not _LANG.fullmatch(lang):
        raise QueryError("lang: a two- or three-letter language code such as en")
    sort = params.get("sort")
    return search_request(
        text,
        page=_whole("page", params.get("page"), MAX_PAGE) or 1,
        per_page=_whole("per_page", params.get("per_page"), MAX_PER_PAGE),
        sort=DEFAULT_SORT if sort is None else _sort(sort),
        lang=lang,
        site=site,
        after=_api_day("after", params.get("after")),
        before=_api_day("before", params.get("before")),
    )


def _whole(name: str, given: str | None, most: int) -> int | None:
    if given is None:
        return None
    # ASCII digits only: "²" is a digit to str.isdigit and not to int().
    number = int(given) if given.isascii() and given.isdigit() and len(given) < 8 else 0
    if not 1 <= number <= most:
        raise QueryError(f"{name}: a whole number from 1 to {most}")
    return number


def _api_day(name: str, given: str | None) -> date | None:
    if given is not None and not given.strip():
        raise QueryError(f"{name} must be a date such as 2024-05-31")  # not "not given"
    return _day(name, given)


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
