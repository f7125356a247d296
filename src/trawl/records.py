"""The frozen records that flow between pipeline stages.

    CrawlUrl --fetch--> FetchResult --extract--> ParsedPage --pipeline--> PageRecord
    PageRecord --index--> (tantivy document) --search--> Hit, SearchPage

Stages never mutate a record; they build the next one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Literal, get_args


@dataclass(frozen=True, slots=True)
class CrawlUrl:
    """A URL admitted to the frontier. ``url`` is its normalised identity."""

    url: str
    depth: int
    source: str | None = None
    redirect_chain: tuple[str, ...] = ()  # URLs whose redirects led here, oldest first
    retries: int = 0  # times put back after a 429 or 503
    lastmod: datetime | None = None  # from a sitemap whose dates are trusted
    # The first exact form seen, when it is not ``url`` (seed 003): what is requested.
    request: str | None = None

    @property
    def request_url(self) -> str:
        """The URL sent: the link as first written (query order, escapes, tracking
        fields), or the identity."""
        return self.request or self.url


@dataclass(frozen=True, slots=True)
class Href:
    """A URL a response points to (a link, a redirect, a canonical): its identity, and
    the URL to request when the form written there is not the identity."""

    url: str
    request: str | None = None


@dataclass(frozen=True, slots=True)
class FetchResult:
    """What one HTTP request (one hop, no redirect followed) returned."""

    url: str
    status: int
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    truncated: bool = False
    elapsed: float = 0.0
    fetched_at: float = 0.0  # wall-clock seconds since the epoch

    def header(self, name: str) -> str | None:
        lname = name.lower()
        return next((v for k, v in self.headers if k.lower() == lname), None)

    @property
    def content_type(self) -> str:
        value = self.header("content-type") or ""
        return value.split(";", 1)[0].strip().lower()

    @property
    def is_html(self) -> bool:
        return self.content_type in {"text/html", "application/xhtml+xml"}

    @property
    def location(self) -> str | None:
        return self.header("location") if 300 <= self.status < 400 else None


@dataclass(frozen=True, slots=True)
class Link:
    """One occurrence of a URL on a page: a link (<a>, <area>) or a resource."""

    url: str  # resolved and normalised
    anchor: str  # anchor text, or alt/title text for a resource
    nofollow: bool = False
    element: str = "a"
    attribute: str = "href"
    rel: str = ""  # rel values, space-separated, lower-cased
    heading: str = ""  # nearest heading before it on the page
    request: str | None = None  # resolved as written, when that is not ``url``


@dataclass(frozen=True, slots=True)
class Section:
    """A part of a page's main text that begins with a heading (h1-h4)."""

    title: str  # the heading's text
    level: int  # 1 to 4
    anchor: str  # the fragment that links to it: its id or the nearest one; "" when none
    start: int  # where the heading begins in the page's text; the section runs to the next


def sections_json(sections: tuple[Section, ...]) -> str:
    """The form the store and the index keep sections in: [[title, level, anchor, start]]."""
    if not sections:
        return "[]"
    return json.dumps([[s.title, s.level, s.anchor, s.start] for s in sections], ensure_ascii=False)


def sections_from_json(stored: str) -> tuple[Section, ...]:
    if not stored or stored == "[]":
        return ()
    return tuple(
        Section(title=str(t), level=int(lv), anchor=str(a), start=int(st))
        for t, lv, a, st in json.loads(stored)
    )


@dataclass(frozen=True, slots=True)
class ParsedPage:
    """What extraction found in one HTML document."""

    title: str
    description: str
    h1: tuple[str, ...]
    h2: tuple[str, ...]
    text: str
    lang: str | None
    word_count: int
    links: tuple[Link, ...]
    links_dropped: int = 0  # occurrences over the per-page cap
    meta: tuple[tuple[str, str], ...] = ()  # (name, content) of every <meta name>
    canonical: str | None = None  # <link rel=canonical>, normalised
    refresh: str | None = None  # <meta http-equiv=refresh> content
    published: datetime | None = None  # from the page's own markup
    published_source: str | None = None
    page_modified: datetime | None = None  # the markup's dateModified
    visible_words: int = 0  # words of the visible text, boilerplate included
    markup_types: tuple[str, ...] = ()  # schema.org types named by itemtype or JSON-LD @type
    comment_blocks: int = 0  # elements whose class or id names a comment or a reply
    # Fingerprints of ``text`` (trawl.dedup.simhash) and its quality score
    # (trawl.understand.quality), taken where parsing runs: in a worker process, off
    # the crawl's event loop, which every page's storing and indexing also wait on.
    text_hash: int | None = None
    simhash: int | None = None
    quality: float = 0.0
    sections: tuple[Section, ...] = ()  # in the order of the text, starts increasing
    aside: str = ""  # visible words (navigation aside) the main text left out, once each


@dataclass(frozen=True, slots=True)
class SavedDates:
    """A saved page's dates, and what they were judged from: enough to date it again."""

    url: str
    fetched_at: float
    parsed: bool  # read as HTML, so its dates were resolved (PageRecord.h1_count set)
    published: datetime | None
    modified: datetime | None
    modified_source: str | None


@dataclass(frozen=True, slots=True)
class PageRecord:
    """One crawled URL as the store keeps it, whether it worked or not."""

    url: str
    host: str
    status: int
    depth: int
    fetched_at: float
    content_type: str = ""
    title: str = ""
    description: str = ""
    headings: tuple[str, ...] = ()
    text: str = ""
    sections: tuple[Section, ...] = ()  # the text's headed parts, in order
    aside: str = ""  # visible words the main text left out: searchable, at a low weight
    lang: str | None = None
    word_count: int = 0
    redirect_to: str | None = None
    error: str | None = None
    indexable: bool = False
    etag: str | None = None  # validators for the next crawl's conditional request
    last_modified: str | None = None
    links_dropped: int = 0  # occurrences over the per-page cap
    indexability: str | None = None  # one label: see trawl.understand.indexability
    canonical: str | None = None
    directives: tuple[str, ...] = ()  # robots directives that applied
    published: datetime | None = None
    modified: datetime | None = None
    modified_source: str | None = None  # "page", "sitemap" or "http"
    inlinks: int = 0  # links from other pages, counted when a crawl ends
    headers: tuple[tuple[str, str], ...] = ()  # the response's headers, as received
    response_time: float | None = None  # seconds to the whole body; None: no response
    size: int | None = None  # body bytes as received (before any rendering)
    h1_count: int | None = None  # None: not parsed as HTML
    in_sitemap: bool = False  # a sitemap of the crawl listed it
    request_url: str | None = None  # the URL requested, when not ``url`` (CrawlUrl.request)
    # From the page itself, when it is saved (trawl.dedup, trawl.understand):
    text_hash: int | None = None  # exact duplicates: 63-bit hash of the text
    simhash: int | None = None  # near duplicates: 63-bit SimHash of word trigrams
    quality: float = 0.0  # [0, 1] from visible signals: trawl.understand.quality
    community: bool = False  # a forum thread, comment page or Q&A
    # From the corpus as a whole, by the batch step after a crawl (trawl.pipeline.corpus);
    # saving a page again keeps them until the next batch step:
    authority: float = 0.0  # PageRank normalised to [0, 1]
    scored: bool = False  # authority has been computed for this page
    duplicate_of: str | None = None  # the canonical copy when this page is a duplicate
    canonical_reason: str | None = None  # why the cluster's canonical won
    discussed_on: tuple[Discussion, ...] = ()  # community pages on other hosts linking here

    @property
    def searchable(self) -> bool:
        """In the index: indexable, and not a duplicate of another copy."""
        return self.indexable and self.duplicate_of is None


@dataclass(frozen=True, slots=True)
class Discussion:
    """A community page on another host that links to a page: "Discussed on <host>"."""

    host: str
    url: str
    quote: str  # the link's anchor text


@dataclass(frozen=True, slots=True)
class CorpusPage:
    """What the batch step after a crawl reads of one stored page: no body, unless a
    fingerprint is missing (a page saved before fingerprints existed), so ``text``
    is None whenever both fingerprints are there."""

    url: str
    host: str
    indexable: bool
    redirect_to: str | None
    canonical: str | None
    text_hash: int | None
    simhash: int | None
    text: str | None
    quality: float
    community: bool
    authority: float
    scored: bool
    duplicate_of: str | None
    canonical_reason: str | None
    discussed_on: tuple[Discussion, ...]


@dataclass(frozen=True, slots=True)
class PageSignals:
    """What the batch step after a crawl learns about one page from the whole corpus."""

    url: str
    authority: float
    scored: bool
    duplicate_of: str | None
    canonical_reason: str | None
    discussed_on: tuple[Discussion, ...] = ()


@dataclass(frozen=True, slots=True)
class HitSection:
    """The part of a result's page that best answers the query: a deep link."""

    title: str  # its heading
    path: tuple[str, ...]  # the headings above it and its own: ("Simulation", "Output", "FCD")
    url: str  # the page's URL with the section's fragment


@dataclass(frozen=True, slots=True)
class Hit:
    url: str
    title: str
    snippet: str  # HTML: escaped text with matched terms in <mark>
    score: float
    lang: str | None = None
    discussed_on: tuple[Discussion, ...] = ()
    modified: datetime | None = None
    section: HitSection | None = None  # None: the page as a whole answers best
    published: datetime | None = None
    modified_source: str | None = None  # where ``modified`` came from: page, sitemap, http


@dataclass(frozen=True, slots=True)
class SearchPage:
    query: str
    total: int
    took_ms: float
    page: int
    per_page: int
    hits: tuple[Hit, ...] = field(default_factory=tuple)
    # The query with its misspelt words corrected, when the corrections found the results.
    did_you_mean: str | None = None


# The crawl log's skip reason for the one reason most fetched pages were not indexed.
NOT_INDEXED = "not indexed: "


class Outcome(StrEnum):
    """How a crawl ended, as the crawl log keeps it (``crawls.outcome``)."""

    RUNNING = "running"  # not ended yet (or died: the next crawl marks it interrupted)
    COMPLETE = "complete"  # whole and healthy: what it did not see was pruned
    CAPPED = "capped"  # a cap kept URLs out: nothing pruned
    STOPPED = "stopped"  # stopped by the user: resumable
    INTERRUPTED = "interrupted"  # died while running: resumable
    UNHEALTHY = "unhealthy"  # too many failures, or a start host did not answer
    FAILED = "failed"  # could not run at all (Chromium would not start)

    @classmethod
    def read(cls, stored: str) -> Outcome | str:
        """A stored outcome; a value this version does not know is kept as written."""
        try:
            return cls(stored)
        except ValueError:
            return stored


# The outcomes of a run that the same command resumes.
RESUMABLE: frozenset[Outcome] = frozenset({Outcome.INTERRUPTED, Outcome.STOPPED})


class SkipKind(StrEnum):
    """Why a URL of the crawl's frontier was not fetched (``frontier.kind``)."""

    ROBOTS = "robots"  # robots.txt refused it
    ROBOTS_UNANSWERED = "robots unanswered"  # robots.txt did not answer: nothing allowed
    PARKED = "parked"  # its host was given up after repeated failures


@dataclass(frozen=True, slots=True)
class Skip:
    """A skipped URL's reason: its kind, and the detail in words."""

    kind: SkipKind
    detail: str = ""


class MarkKind(StrEnum):
    """A fact about a crawl that a run resuming it must know (``crawl_marks.kind``)."""

    CAP = "cap"  # a cap kept URLs of the host out of the run (detail: the cap)
    EMBEDDED = "embedded"  # `trawl crawl` runs it alone: no `trawl worker` may join


@dataclass(frozen=True, slots=True)
class CrawlMark:
    host: str  # politeness host
    kind: MarkKind
    detail: str = ""


@dataclass(frozen=True, slots=True)
class CrawlRun:
    """One row of the crawl log."""

    id: int
    started_at: float
    finished_at: float | None
    start_urls: tuple[str, ...]
    pages_ok: int
    pages_failed: int
    outcome: Outcome | str  # a str only for a value a later version wrote
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> URLs not fetched
    resumed_from: int | None = None

    @property
    def note(self) -> str | None:
        """The one reason most of the run's pages were not indexed, when there is one:
        "368 pages canonicalised to sumo.dlr.de (outside the crawl): not indexed"."""
        for reason, count in self.skipped.items():
            if reason.startswith(NOT_INDEXED):
                return f"{count} pages {reason.removeprefix(NOT_INDEXED)}: not indexed"
        return None


@dataclass(frozen=True, slots=True)
class Site:
    host: str
    start_url: str
    enabled: bool


@dataclass(frozen=True, slots=True)
class HeaderCheck:
    """One HEAD request's answer (``trawl.net.header_check``): the first response only."""

    url: str
    status: int  # 0 when no HTTP response arrived (shown as 000)
    location: str | None  # a 3xx's Location, not followed
    headers: tuple[tuple[str, str], ...]  # lower-cased names, as received
    error: str | None  # why status is 0
    elapsed: float  # seconds

    @property
    def status_text(self) -> str:
        """The status as the report shows it: 000 for no response."""
        return f"{self.status:03d}"

    def header(self, name: str) -> str | None:
        lname = name.lower()
        return next((v for k, v in self.headers if k == lname), None)


# -- the SEO report (server/ asks, store/ answers) ---------------------------

# Columns the crawl table can be sorted by; each has an index in the store.
ReportSort = Literal[
    "url",
    "status",
    "indexability",
    "title",
    "word_count",
    "depth",
    "inlinks",
    "lang",
    "published",
    "modified",
    "fetched_at",
    "response_time",
    "size",
]
REPORT_SORTS: tuple[ReportSort, ...] = get_args(ReportSort)


@dataclass(frozen=True, slots=True)
class IssueThresholds:
    """Where the report's length, content and speed issues begin (settings report_*)."""

    title_max: int = 60  # characters
    title_min: int = 30
    description_max: int = 155
    description_min: int = 70
    thin_words: int = 200
    slow_seconds: float = 1.0


@dataclass(frozen=True, slots=True)
class ReportQuery:
    """One page of the crawl table: filters, order, window."""

    text: str = ""  # contained in the URL or the title
    status: str = ""  # "200", or a class: "2xx", "3xx", "4xx", "5xx"
    indexability: str = ""  # a label from understand/indexability
    lang: str = ""
    host: str = ""
    issue: str = ""  # an Issue's name (store/issues.py): only the pages that have it
    thresholds: IssueThresholds = field(default_factory=IssueThresholds)
    sort: ReportSort = "url"  # the store checks it again: it becomes SQL
    descending: bool = False
    limit: int = 100
    offset: int = 0


@dataclass(frozen=True, slots=True)
class ReportRow:
    """A page as the crawl table shows it (no body text)."""

    url: str
    status: int
    indexability: str | None
    title: str
    word_count: int
    depth: int
    inlinks: int
    redirect_to: str | None
    canonical: str | None
    lang: str | None
    published: str | None
    modified: str | None
    modified_source: str | None
    fetched_at: float
    content_type: str
    error: str | None
    response_time: float | None
    size: int | None


class Change(StrEnum):
    """How a page differs between two crawls of its site."""

    NEW = "new"
    GONE = "gone"
    STATUS = "status"
    TITLE = "title"
    INDEXABILITY = "indexability"


@dataclass(frozen=True, slots=True)
class PageChange:
    """One page of the crawl comparison: before (the earlier crawl) and after; None
    on the side that did not see the page."""

    url: str
    status_before: int | None
    status_after: int | None
    title_before: str | None
    title_after: str | None
    indexability_before: str | None
    indexability_after: str | None

    @property
    def changes(self) -> tuple[Change, ...]:
        if self.status_before is None:
            return (Change.NEW,)
        if self.status_after is None:
            return (Change.GONE,)
        found = (
            (Change.STATUS, self.status_before != self.status_after),
            (Change.TITLE, self.title_before != self.title_after),
            (Change.INDEXABILITY, self.indexability_before != self.indexability_after),
        )
        return tuple(change for change, differs in found if differs)


@dataclass(frozen=True, slots=True)
class Inlink:
    """A link to a page, seen from the page that holds it."""

    source: str
    anchor: str
    element: str
    nofollow: bool
    heading: str


@dataclass(frozen=True, slots=True)
class ExternalLink:
    """A link target on another host, with what its last header check found."""

    url: str
    occurrences: int
    sources: int  # pages linking to it
    example_source: str
    status: int | None = None  # None: never checked; 0: checked, no response
    location: str | None = None
    error: str | None = None
    checked_at: float | None = None


# What an API key may do: search (when search_requires_key is on), admin (everything else).
KeyScope = Literal["search", "admin"]
KEY_SCOPES: tuple[KeyScope, ...] = get_args(KeyScope)


@dataclass(frozen=True, slots=True)
class ApiKey:
    id: int
    name: str
    created_at: float
    last_used: float | None
    scopes: tuple[KeyScope, ...] = KEY_SCOPES
    expires_at: float | None = None  # None: never


@dataclass(frozen=True, slots=True)
class ResourceCheck:
    """A resource (image, script, stylesheet...) of crawled pages, checked without its body."""

    url: str
    status: int  # 0: no response, see error
    content_type: str | None
    content_length: int | None
    error: str | None
    checked_at: float  # wall-clock seconds since the epoch

    @property
    def broken(self) -> bool:
        return self.status == 0 or self.status >= 400


@dataclass(frozen=True, slots=True)
class HostTally:
    """One host's part of a crawl as its frontier in the store records it (pages
    carried from a resumed run included): what the crawl's health is judged on."""

    host: str
    fetched: int = 0  # requests that reached the network (answered or failed)
    failed: int = 0  # no answer at all
    server_errors: int = 0  # answered 5xx
    robots_unanswered: int = 0  # URLs skipped because robots.txt did not answer
    caps: tuple[str, ...] = ()  # caps that kept URLs of this host out of the run
