"""A page's two dates: when it was published and when it last changed (seed 000, "Page dates").

``markup_dates`` reads what the page says about itself; ``page_dates`` combines
that with the sitemap and the HTTP headers. Both are pure and never raise on
what a web server sends.

Published comes only from the page's own markup, in this order: Schema.org
JSON-LD, Schema.org Microdata, Open Graph, Dublin Core. The first source with a
usable date wins; a source that is present but broken or implausible is silent.

Modified takes the first source that speaks, and sources are never merged:

1. the page's own modification date, from the same four markups in the same
   order: ``dateModified`` (JSON-LD, then Microdata), ``article:modified_time``
   then ``og:updated_time`` (Open Graph), ``dcterms.modified`` /
   ``DC.date.modified`` (Dublin Core). All four are the page describing its own
   content, which is the editorial claim seed 000 ranks first;
2. the sitemap's ``<lastmod>``, which the caller passes only when that sitemap's
   dates were trusted (``trawl.sitemaps.dates.dates_trusted``);
3. the HTTP ``Last-Modified`` header.

The newest value deliberately does not win: sitemaps and headers fail toward the
present (build stamps, pages rendered per request), so preferring the newest
would hand the least reliable source nearly every page.

Discarded rather than stored: dates before 1990 or more than a day after
``now``; a Last-Modified equal to the response's own Date header; a sitemap or
HTTP date earlier than the published date (the next source is consulted).
Published and modified are never reconciled otherwise: a page that claims to
have been published after its own dateModified is reported exactly so.

Reading the markup: selectolax (lexbor) parses the page, once and only when a
string test finds date markup; JSON-LD blocks are read with ``json`` (one block
at a time, forgiving trailing commas, // comments and comment wrappers), Microdata
by the WHATWG algorithm cut to what dates need, Open Graph and Dublin Core from
``<meta>``. extruct did this before; it pulls rdflib, pyRdfa, html5lib and
mf2py for four date sources, and on the 181 pages of the article benchmark the
dates read here are the same on every page, in under half extruct's time.

Parsing: markup dates are ISO 8601 / W3C (``trawl.sitemaps.dates.parse_date``);
a date without a time is midnight UTC, and a clock time without a zone
(``2019-11-19 02:24:00``, common in Microdata) is read as UTC. That is a guess,
at most a day off, and the day is what sorting by date needs; the sitemap parser
refuses such values because a sitemap has no other date to fall back on. Header
dates are HTTP dates (RFC 9110: IMF-fixdate, RFC 850, asctime), always GMT.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any, Final

from selectolax.lexbor import LexborHTMLParser, LexborNode

from trawl.sitemaps.dates import MAX_DATE_LENGTH, parse_date

JSON_LD: Final = "json-ld"
MICRODATA: Final = "microdata"
OPENGRAPH: Final = "opengraph"
DUBLINCORE: Final = "dublincore"

FROM_PAGE: Final = "page"
FROM_SITEMAP: Final = "sitemap"
FROM_HTTP: Final = "http"

# The web's dates start here; earlier values are epoch-zero and template defaults.
EARLIEST: Final = datetime(1990, 1, 1, tzinfo=UTC)
# Clocks and zones disagree by hours, not days; further ahead is a scheduled or bogus date.
FUTURE_SLACK: Final = timedelta(days=1)

# Schema.org's Article and everything below it: the types that are a page's content.
ARTICLE_TYPES: Final = frozenset(
    {
        "Article",
        "AdvertiserContentArticle",
        "AnalysisNewsArticle",
        "APIReference",
        "AskPublicNewsArticle",
        "BackgroundNewsArticle",
        "BlogPosting",
        "DiscussionForumPosting",
        "LiveBlogPosting",
        "MedicalScholarlyArticle",
        "NewsArticle",
        "OpinionNewsArticle",
        "Report",
        "ReportageNewsArticle",
        "ReviewNewsArticle",
        "SatiricalArticle",
        "ScholarlyArticle",
        "SocialMediaPosting",
        "TechArticle",
    }
)

# Real JSON-LD nests a few levels; the cap keeps hostile nesting from costing recursion.
MAX_DEPTH: Final = 16
# Elements the microdata walk may visit on one page. Each item walks its itemref
# targets anew, so N items naming one block of M elements cost N * M visits: 1000
# and 1000 on a 160 kB page took 266 s. A real page visits each element about once.
MAX_MICRODATA_VISITS: Final = 100_000

_OG_PUBLISHED: Final = ("article:published_time",)
_OG_MODIFIED: Final = ("article:modified_time", "og:updated_time")
# Dublin Core names after the "DC." or "dcterms." prefix, most specific first:
# "issued" is the formal publication, "created" the work's making, "date" whatever
# the site meant. "available" is left out: repositories use it for the ingest date.
_DC_PUBLISHED: Final = (("date.issued", "issued"), ("date.created", "created"), ("date",))
_DC_MODIFIED: Final = ("date.modified", "modified")
_DC_PREFIXES: Final = ("dc.", "dcterms.")

# Cheap gates, checked before any parsing: most pages carry none of these, and
# parsing the page costs far more than scanning the string.
_SCHEMA_WORDS: Final = ("datePublished", "dateModified")
_OG_WORDS: Final = ("published_time", "modified_time", "updated_time")
_ITEMPROP_DATE = re.compile(r"""itemprop\s*=\s*["']?[^"'>]*?\bdate(?:Published|Modified)""")
# Case spelled out rather than re.IGNORECASE, which would cost the literal "name"
# prefix scan and make this gate several times slower on pages without DC.
_DC_NAME = re.compile(r"""name\s*=\s*["']?\s*[dD][cC](?:[tT][eE][rR][mM][sS])?\.""")
# What breaks JSON-LD in the wild around otherwise valid JSON: an HTML comment
# or CDATA section kept from the days of XHTML around the block, // comment lines
# and trailing commas in templates. Strings are matched first so that what they
# hold is kept as it is.
_JSON_LD_WRAPPING = re.compile(r"^\s*(?://[^\n]*|<!--|<!\[CDATA\[)|(?://\s*)?(?:-->|\]\]>)\s*$")
# The year of an IMF-fixdate or asctime date as written: four digits that are no
# part of the time or the zone offset.
_HTTP_YEAR = re.compile(r"(?<![\d:+-])(\d{4})(?![\d:])")
_JSON_LD_LAXITY = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|,(?=\s*[\]}])')


@dataclass(frozen=True, slots=True)
class PageDates:
    """A page's resolved dates, timezone-aware UTC, and where each came from."""

    published: datetime | None
    modified: datetime | None
    modified_source: str | None  # "page", "sitemap" or "http"
    published_source: str | None  # "json-ld", "microdata", "opengraph" or "dublincore"


def markup_dates(
    html: str, url: str, *, now: datetime | None = None
) -> tuple[datetime | None, str | None, datetime | None]:
    """(published, published_source, page's own dateModified) from the page's markup.

    ``now`` bounds plausible dates, so that a date too far ahead falls through to
    the next source; it defaults to the current time. Never raises.
    """
    limit = (_as_utc(now) if now is not None else datetime.now(UTC)) + FUTURE_SLACK
    reader = _MarkupReader(html, url, limit)
    published: datetime | None = None
    source: str | None = None
    modified: datetime | None = None
    for syntax, read in (
        (JSON_LD, reader.json_ld),
        (MICRODATA, reader.microdata),
        (OPENGRAPH, reader.opengraph),
        (DUBLINCORE, reader.dublincore),
    ):
        if published is not None and modified is not None:
            break
        found_published, found_modified = read(want_published=published is None)
        if published is None and found_published is not None:
            published, source = found_published, syntax
        if modified is None:
            modified = found_modified
    return published, source, modified


def page_dates(
    *,
    published: datetime | None,
    published_source: str | None,
    page_modified: datetime | None,
    sitemap_lastmod: datetime | None,
    last_modified_header: str | None,
    date_header: str | None,
    now: datetime,
) -> PageDates:
    """Resolve a page's dates from its markup (``markup_dates``), sitemap and headers.

    ``sitemap_lastmod`` must be passed only when that sitemap's dates were
    trusted. Naive datetimes are read as UTC. Never raises on header junk.
    """
    limit = _as_utc(now) + FUTURE_SLACK
    published = _plausible(published, limit)
    if published is None:
        published_source = None

    modified: datetime | None
    if (modified := _plausible(page_modified, limit)) is not None:
        return PageDates(published, modified, FROM_PAGE, published_source)
    if (modified := _weaker(sitemap_lastmod, published, limit)) is not None:
        return PageDates(published, modified, FROM_SITEMAP, published_source)
    header = parse_http_date(last_modified_header)
    # Equal to the response's own Date: the page was stamped as it was generated.
    if header is not None and header == parse_http_date(date_header):
        header = None
    if (modified := _weaker(header, published, limit)) is not None:
        return PageDates(published, modified, FROM_HTTP, published_source)
    return PageDates(published, None, None, published_source)


def with_sitemap_lastmod(
    dates: PageDates, sitemap_lastmod: datetime | None, now: datetime
) -> PageDates:
    """What ``page_dates`` gives with ``sitemap_lastmod`` when it gave ``dates`` without
    it (the page was fetched before its sitemap was read), ``now`` being the fetch's
    time: the page's own date, or an earlier sitemap's, still wins, and the sitemap's
    date passes the same tests; when it fails them, the HTTP date already chosen stays."""
    if dates.modified_source in (FROM_PAGE, FROM_SITEMAP):
        return dates
    modified = _weaker(sitemap_lastmod, dates.published, _as_utc(now) + FUTURE_SLACK)
    if modified is None:
        return dates
    return PageDates(dates.published, modified, FROM_SITEMAP, dates.published_source)


def parse_markup_date(text: str) -> datetime | None:
    """A date written in markup as an aware UTC datetime, or None if unreadable."""
    text = text.strip()
    if not text or len(text) > MAX_DATE_LENGTH:
        return None
    value = parse_date(text)
    if value is not None or not text[0].isdigit():
        return value
    # parse_date refuses a clock time without a zone; markup is read as UTC (see above).
    try:
        value = datetime.fromisoformat(text)
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def parse_http_date(text: str | None) -> datetime | None:
    """An HTTP header date (RFC 9110 section 5.6.7) as an aware UTC datetime, or None."""
    if text is None:
        return None
    text = text.strip()
    if not text or len(text) > MAX_DATE_LENGTH:
        return None
    try:
        value = parsedate_to_datetime(text)
        # The email parser reads a year under 100 as two digits even when written
        # with four: .NET's "01 Jan 0001" became 2001 and a plausible date.
        written = _HTTP_YEAR.search(text)
        if written is not None and int(written.group(1)) != value.year:
            return None
        if value.tzinfo is None:
            # asctime dates carry no zone; every HTTP date is GMT by definition.
            value = value.replace(tzinfo=UTC)
        return value.astimezone(UTC)
    except (ValueError, TypeError, IndexError, OverflowError):
        # The email parser reports bad input through several exception types.
        return None


def _as_utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _plausible(value: datetime | None, limit: datetime) -> datetime | None:
    if value is None:
        return None
    try:
        value = _as_utc(value)
    except OverflowError:  # year 1 east of UTC
        return None
    return value if EARLIEST <= value <= limit else None


def _weaker(value: datetime | None, published: datetime | None, limit: datetime) -> datetime | None:
    """A sitemap or HTTP date, unless implausible or earlier than the page's own publication."""
    value = _plausible(value, limit)
    if value is None or (published is not None and value < published):
        return None
    return value


def _date_in(value: object, limit: datetime, depth: int = 0) -> datetime | None:
    """The first plausible date in a property value: a string, a list, or {"@value": ...}."""
    if isinstance(value, str):
        return _plausible(parse_markup_date(value), limit)
    if depth >= 2:
        return None
    if isinstance(value, list):
        for item in value:
            if (found := _date_in(item, limit, depth + 1)) is not None:
                return found
    elif isinstance(value, dict):
        return _date_in(value.get("@value"), limit, depth + 1)
    return None


class _MarkupReader:
    """One page's markup, parsed at most once and only if a gate says it may pay."""

    def __init__(self, html: str, url: str, limit: datetime) -> None:
        self.html = html
        self.url = url
        self.limit = limit
        self._tree: LexborHTMLParser | None = None
        self._parsed = False
        self._schema = any(word in html for word in _SCHEMA_WORDS)

    def _document(self) -> LexborHTMLParser | None:
        if not self._parsed:
            self._parsed = True
            self._tree = _parse(self.html)
        return self._tree

    def json_ld(self, *, want_published: bool) -> tuple[datetime | None, datetime | None]:
        if not self._schema or "ld+json" not in self.html:
            return None, None
        document = self._document()
        if document is None:
            return None, None
        items: list[Any] = []
        # Block by block: one broken block must not hide a good one beside it.
        for script in document.css('script[type="application/ld+json"]'):
            items.extend(_json_ld_items(script.text(deep=True)))
        return self._schema_dates(items, want_published)

    def microdata(self, *, want_published: bool) -> tuple[datetime | None, datetime | None]:
        if not self._schema or not _ITEMPROP_DATE.search(self.html):
            return None, None
        document = self._document()
        if document is None:
            return None, None
        return self._schema_dates(_microdata_items(document), want_published)

    def _schema_dates(
        self, items: list[Any], want_published: bool
    ) -> tuple[datetime | None, datetime | None]:
        roots = list(_roots(items, 0))
        published = self._schema_date(roots, "datePublished") if want_published else None
        return published, self._schema_date(roots, "dateModified")

    def _schema_date(self, roots: list[dict[str, Any]], prop: str) -> datetime | None:
        for item in _candidates(roots):
            if (found := _date_in(item.get(prop), self.limit)) is not None:
                return found
        return None

    def opengraph(self, *, want_published: bool) -> tuple[datetime | None, datetime | None]:
        if not any(word in self.html for word in _OG_WORDS):
            return None, None
        document = self._document()
        if document is None:
            return None, None
        # Open Graph describes the page from its head; a meta in the body is
        # usually an embedded card about another page.
        properties = [
            (attrs["property"] or "", attrs["content"] or "")
            for meta in document.css("head > meta[property][content]")
            if (attrs := meta.attributes)
        ]
        published = self._first(properties, _OG_PUBLISHED) if want_published else None
        return published, self._first(properties, _OG_MODIFIED)

    def dublincore(self, *, want_published: bool) -> tuple[datetime | None, datetime | None]:
        if not _DC_NAME.search(self.html):
            return None, None
        document = self._document()
        if document is None:
            return None, None
        named: list[tuple[str, str]] = []
        for meta in document.css("meta[name][content]"):
            attrs = meta.attributes
            name = _dc_name(attrs["name"])
            if name is not None and attrs["content"] is not None:
                named.append((name, attrs["content"]))
        published: datetime | None = None
        if want_published:
            for names in _DC_PUBLISHED:
                if (published := self._first(named, names)) is not None:
                    break
        return published, self._first(named, _DC_MODIFIED)

    def _first(self, pairs: list[tuple[str, str]], names: tuple[str, ...]) -> datetime | None:
        """The first plausible date among the first listed name present, then the next."""
        for name in names:
            for key, value in pairs:
                if key == name and (found := _date_in(value, self.limit)) is not None:
                    return found
        return None


def _parse(html: str) -> LexborHTMLParser | None:
    try:
        return LexborHTMLParser(html)
    except Exception:  # the parser on hostile input: the markup simply says nothing
        return None


def _json_ld_items(text: str) -> list[Any]:
    """The objects of one JSON-LD block; nothing when the block is not JSON."""
    for candidate in (text, _JSON_LD_LAXITY.sub(r"\1", _JSON_LD_WRAPPING.sub("", text))):
        try:
            # strict=False: raw control characters (newlines in strings) are common.
            data = json.loads(candidate, strict=False)
        except (ValueError, RecursionError):
            continue
        if isinstance(data, list):
            return [item for item in data if isinstance(item, dict)]
        return [data] if isinstance(data, dict) else []
    return []


# Elements whose microdata value is an attribute, not their text (WHATWG microdata, "Values").
_ATTRIBUTE_VALUED: Final = {
    "a": "href",
    "area": "href",
    "link": "href",
    "audio": "src",
    "embed": "src",
    "iframe": "src",
    "img": "src",
    "source": "src",
    "track": "src",
    "video": "src",
    "object": "data",
    "data": "value",
    "meter": "value",
    "meta": "content",
}


def _microdata_items(document: LexborHTMLParser) -> list[Any]:
    """Top-level microdata items as JSON-LD-like dicts: ``@type`` and one key a property.

    The WHATWG microdata algorithm, cut to what dates need: an item's properties
    are the ``itemprop`` elements under it that no nearer ``itemscope`` owns;
    ``itemref`` is followed; an element's value is its item, its URL or value
    attribute, its ``content`` (schema.org's extension) or its text.
    """
    ids: dict[str, LexborNode] = {}
    if document.css_first("[itemref]") is not None:
        for element in document.css("[id]"):
            ids.setdefault(element.attributes.get("id") or "", element)
    seen: set[int] = set()
    items: list[Any] = []
    budget = [MAX_MICRODATA_VISITS]
    for node in document.css("[itemscope]"):
        if budget[0] <= 0:
            break
        if node.mem_id not in seen:
            items.append(_microdata_item(node, ids, seen, 0, budget))
    return items


def _microdata_item(
    node: LexborNode, ids: dict[str, LexborNode], seen: set[int], depth: int, budget: list[int]
) -> dict[str, Any]:
    seen.add(node.mem_id)
    item: dict[str, Any] = {}
    types = (node.attributes.get("itemtype") or "").split()
    if types:
        item["@type"] = types if len(types) > 1 else types[0]
    properties: dict[str, list[Any]] = {}
    starts = [node]
    for ref in (node.attributes.get("itemref") or "").split()[:MAX_DEPTH]:
        if (found := ids.get(ref)) is not None and found not in starts:
            starts.append(found)
    for start in starts:
        for prop in _properties(start, include_self=start is not node, budget=budget):
            names = (prop.attributes.get("itemprop") or "").split()
            value = _microdata_value(prop, ids, seen, depth, budget)
            for name in names:
                properties.setdefault(name, []).append(value)
    for name, values in properties.items():
        item[name] = values[0] if len(values) == 1 else values
    return item


def _properties(
    start: LexborNode, *, include_self: bool, budget: list[int]
) -> Iterator[LexborNode]:
    """The itemprop elements under ``start`` that no nearer itemscope owns, in order,
    while ``budget`` (elements left to visit on this page) lasts."""
    # An explicit stack: a hostile page nests elements deeper than Python recurses.
    stack = [start] if include_self else list(reversed(list(_element_children(start))))
    while stack and budget[0] > 0:
        budget[0] -= 1
        element = stack.pop()
        attributes = element.attributes
        if "itemprop" in attributes:
            yield element
        if "itemscope" not in attributes:
            stack.extend(reversed(list(_element_children(element))))


def _element_children(node: LexborNode) -> Iterator[LexborNode]:
    child = node.child
    while child is not None:
        if child.is_element_node:
            yield child
        child = child.next


def _microdata_value(
    node: LexborNode, ids: dict[str, LexborNode], seen: set[int], depth: int, budget: list[int]
) -> Any:
    attributes = node.attributes
    if "itemscope" in attributes:
        if node.mem_id in seen or depth >= MAX_DEPTH:  # a loop through itemref, or too deep
            return None
        return _microdata_item(node, ids, seen, depth + 1, budget)
    tag = node.tag or ""
    if tag in _ATTRIBUTE_VALUED:
        return attributes.get(_ATTRIBUTE_VALUED[tag]) or ""
    if tag == "time" and attributes.get("datetime"):
        return attributes["datetime"]
    if attributes.get("content"):
        return attributes["content"]
    return " ".join(node.text(deep=True).split())


def _dc_name(name: object) -> str | None:
    """``DC.Date.Issued`` -> ``date.issued``; None for a name that is not Dublin Core."""
    if not isinstance(name, str):
        return None
    lowered = name.strip().lower()
    for prefix in _DC_PREFIXES:
        if lowered.startswith(prefix):
            return lowered[len(prefix) :]
    return None


def _types(item: dict[str, Any]) -> set[str]:
    """Bare type names: "schema:NewsArticle" and "https://schema.org/NewsArticle" alike."""
    declared = item.get("@type")
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list):
        return set()
    return {re.split(r"[/#:]", n.strip())[-1] for n in names if isinstance(n, str)}


def _is_article(item: dict[str, Any]) -> bool:
    return not _types(item).isdisjoint(ARTICLE_TYPES)


def _roots(value: object, depth: int) -> Iterator[dict[str, Any]]:
    """Top-level objects, with the members of any @graph counted as top-level."""
    if depth > MAX_DEPTH:
        return
    if isinstance(value, list):
        for item in value:
            yield from _roots(item, depth + 1)
    elif isinstance(value, dict):
        yield value
        if "@graph" in value:
            yield from _roots(value["@graph"], depth + 1)


def _candidates(roots: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Objects that may speak for the page, best first.

    Top-level articles, then articles nested in a top-level object (a WebPage's
    mainEntity, a Blog's blogPost), then any top-level object (WebPage,
    ClaimReview). Nested non-articles (a comment, an author) never speak.
    """
    yield from (root for root in roots if _is_article(root))
    for root in roots:
        yield from _nested_articles(root, 0)
    yield from roots


def _nested_articles(item: dict[str, Any], depth: int) -> Iterator[dict[str, Any]]:
    for key, value in item.items():
        if key != "@graph":  # its members are roots already
            yield from _articles_in(value, depth + 1)


def _articles_in(value: object, depth: int) -> Iterator[dict[str, Any]]:
    if depth > MAX_DEPTH:
        return
    if isinstance(value, dict):
        if _is_article(value):
            yield value
        yield from _nested_articles(value, depth)
    elif isinstance(value, list):
        found = [article for item in value for article in _articles_in(item, depth + 1)]
        # Several articles in one list (itemListElement, a Blog's blogPost on an
        # index page) are a listing: none of them is this page.
        if len(found) == 1:
            yield found[0]
