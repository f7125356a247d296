"""The SEO report's shared parts: the crawl-table query, URL details, CSV export."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, fields
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import Query, Request
from fastapi.responses import StreamingResponse

from trawl.errors import NotFound, QueryError
from trawl.records import (
    REPORT_SORTS,
    ExternalLink,
    IssueThresholds,
    PageChange,
    PageRecord,
    ReportQuery,
    ReportRow,
    ReportSort,
)
from trawl.server.context import context_of
from trawl.settings import Settings
from trawl.store.base import Report, Store
from trawl.store.issues import ISSUE_SLUGS, Issue
from trawl.understand.indexability import Indexability

MAX_REDIRECT_HOPS = 20
CSV_CHUNK = 1000


def thresholds(settings: Settings) -> IssueThresholds:
    """Where the report's issues begin, from the report_* settings."""
    return IssueThresholds(
        title_max=settings.report_title_max,
        title_min=settings.report_title_min,
        description_max=settings.report_description_max,
        description_min=settings.report_description_min,
        thin_words=settings.report_thin_words,
        slow_seconds=settings.report_slow_ms / 1000,
    )


# The crawl table's sortable columns and their headings, left and right of the two
# link columns (redirect target, canonical); typed, so a misspelt name fails mypy.
Columns = tuple[tuple[ReportSort, str], ...]
COLUMNS_LEFT: Columns = (
    ("url", "URL"),
    ("status", "Status"),
    ("indexability", "Indexability"),
    ("title", "Title"),
    ("word_count", "Words"),
    ("depth", "Depth"),
    ("inlinks", "Inlinks"),
)
COLUMNS_RIGHT: Columns = (
    ("lang", "Lang"),
    ("published", "Published"),
    ("modified", "Modified"),
    ("response_time", "Response (ms)"),
    ("size", "Size (KB)"),
)


def report_sort(name: str) -> ReportSort:
    """``name`` when the crawl table can be sorted by it, else the URL."""
    return next((s for s in REPORT_SORTS if s == name), "url")


# The filter's choices are the stored labels themselves: a second list drifted once
# ("Blocked" never matched "Blocked (robots)").
INDEXABILITY_LABELS = tuple(label.value for label in Indexability)


def checked_filters(indexability: str, issue: str) -> None:
    """Refuse (400) a label or an issue the report does not know: an unknown one would
    silently match nothing."""
    if indexability and indexability not in INDEXABILITY_LABELS:
        raise QueryError(f"indexability must be one of: {', '.join(INDEXABILITY_LABELS)}")
    if issue and Issue.from_slug(issue) is None:
        raise QueryError(f"issue must be one of: {', '.join(ISSUE_SLUGS)}")


def report_query(
    request: Request,
    q: Annotated[str, Query(max_length=500, description="Contained in URL or title.")] = "",
    status: Annotated[
        str, Query(pattern=r"^([1-5]xx|[0-9]{1,3})?$", description="200, or 2xx, 3xx, ...")
    ] = "",
    indexability: Annotated[
        str, Query(max_length=40, description="An indexability label, such as Noindex.")
    ] = "",
    lang: Annotated[str, Query(max_length=20)] = "",
    host: Annotated[str, Query(max_length=253)] = "",
    issue: Annotated[
        str, Query(max_length=40, description="Only pages with this issue (see /report/issues).")
    ] = "",
    sort: ReportSort = "url",
    order: Literal["asc", "desc"] = "asc",
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
    per_page: Annotated[int, Query(ge=1, le=500)] = 100,
) -> ReportQuery:
    checked_filters(indexability, issue)
    return ReportQuery(
        text=q,
        status=status,
        indexability=indexability,
        lang=lang,
        host=host,
        issue=issue,
        thresholds=thresholds(context_of(request).settings),
        sort=sort,
        descending=order == "desc",
        limit=per_page,
        offset=(page - 1) * per_page,
    )


def row_json(row: ReportRow) -> dict[str, Any]:
    return asdict(row)


def all_rows(store: Report, query: ReportQuery) -> Iterator[ReportRow]:
    """Every row the filters match, in the table's order, a chunk at a time."""
    offset = 0
    while True:
        _, rows = store.report_pages(
            ReportQuery(**{**asdict(query), "limit": CSV_CHUNK, "offset": offset})
        )
        yield from rows
        if len(rows) < CSV_CHUNK:
            return
        offset += CSV_CHUNK


def all_external(store: Report, text: str = "") -> Iterator[ExternalLink]:
    offset = 0
    while True:
        _, rows = store.external_links(text, CSV_CHUNK, offset)
        yield from rows
        if len(rows) < CSV_CHUNK:
            return
        offset += CSV_CHUNK


# A spreadsheet reads a cell that starts with one of these as a formula: a crawled title
# "=HYPERLINK(...)" or a Location header "=cmd|..." would run when the admin opens the
# export. Such cells get a leading apostrophe, which spreadsheets show as text (OWASP's
# advice for CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_response(
    name: str, header: Sequence[str], rows: Iterable[Sequence[Any]]
) -> StreamingResponse:
    """A CSV download, written as it is read (100k rows never sit in memory); text
    that a spreadsheet would run as a formula is neutralised."""

    def lines() -> Iterator[str]:
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(header)
        for n, row in enumerate(rows):
            writer.writerow([csv_cell(v) for v in row])
            if n % 500 == 0:
                yield buffer.getvalue()
                buffer.seek(0)
                buffer.truncate()
        yield buffer.getvalue()

    return StreamingResponse(
        lines(),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}.csv"'},
    )


REPORT_HEADER = tuple(f.name for f in fields(ReportRow))
EXTERNAL_HEADER = tuple(f.name for f in fields(ExternalLink))


def iso_time(seconds: float | None) -> str | None:
    """Epoch seconds as the report's other dates read: ISO 8601, UTC."""
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")


def report_csv(store_rows: Iterable[ReportRow]) -> Iterator[tuple[Any, ...]]:
    for r in store_rows:
        yield tuple(
            iso_time(r.fetched_at) if name == "fetched_at" else getattr(r, name)
            for name in REPORT_HEADER
        )


def issue_overview(store: Report, settings: Settings) -> list[dict[str, Any]]:
    """Every issue with its group, label and page count, in declaration order."""
    counts = store.report_issue_counts(thresholds(settings))
    return [
        {"issue": i.slug, "group": i.group, "label": i.label, "pages": counts[i]} for i in Issue
    ]


CHANGES_HEADER = (
    "url",
    "changes",
    "status_before",
    "status_after",
    "title_before",
    "title_after",
    "indexability_before",
    "indexability_after",
)


def change_json(change: PageChange) -> dict[str, Any]:
    return {**asdict(change), "changes": [c.value for c in change.changes]}


def changes_csv(rows: Iterable[PageChange]) -> Iterator[tuple[Any, ...]]:
    for c in rows:
        row = change_json(c)
        yield tuple(" ".join(row[h]) if h == "changes" else row[h] for h in CHANGES_HEADER)


def compared(store: Report, host: str) -> tuple[str, int | None, int | None]:
    """The host to compare (the first one with snapshots when none is given) and its
    last two crawls; NotFound for a host no crawl has seen."""
    hosts = store.history_hosts()
    if not host:
        host = hosts[0] if hosts else ""
    elif host not in hosts:
        raise NotFound(f"no crawl of {host!r} to compare")
    if not host:
        return "", None, None
    after, before = store.compared_crawls(host)
    return host, before, after


def all_changes(store: Report, host: str, before: int, after: int) -> Iterator[PageChange]:
    offset = 0
    while True:
        _, rows = store.report_changes(host, before, after, CSV_CHUNK, offset)
        yield from rows
        if len(rows) < CSV_CHUNK:
            return
        offset += CSV_CHUNK


def external_csv(rows: Iterable[ExternalLink]) -> Iterator[tuple[Any, ...]]:
    for r in rows:
        yield tuple(getattr(r, name) for name in EXTERNAL_HEADER)


def page_details(store: Store, url: str) -> dict[str, Any]:
    """Everything the report knows about one URL."""
    record = store.page(url)
    if record is None:
        raise NotFound(f"no crawled page {url!r}")
    chain = [url]
    target = record.redirect_to
    while target and target not in chain and len(chain) <= MAX_REDIRECT_HOPS:
        chain.append(target)
        nxt = store.page(target)
        target = nxt.redirect_to if nxt else None
    inlinks = store.links_to(url)
    return {
        "url": record.url,
        "status": record.status,
        "indexability": record.indexability,
        "indexable": record.indexable,
        "title": record.title,
        "description": record.description,
        "headings": list(record.headings),
        "word_count": record.word_count,
        "depth": record.depth,
        "inlinks": record.inlinks,
        "lang": record.lang,
        "content_type": record.content_type,
        "canonical": record.canonical,
        "redirect_to": record.redirect_to,
        "redirect_chain": chain if len(chain) > 1 else [],
        "directives": list(record.directives),
        "error": record.error,
        "published": record.published.isoformat() if record.published else None,
        "modified": record.modified.isoformat() if record.modified else None,
        "modified_source": record.modified_source,
        "fetched_at": datetime.fromtimestamp(record.fetched_at, UTC).isoformat(),
        "response_time": record.response_time,
        "size": record.size,
        "h1_count": record.h1_count,
        "in_sitemap": record.in_sitemap,
        "headers": [list(h) for h in record.headers],
        "links_out": [asdict(link) for link in store.links_from(url)],
        "links_in": [asdict(i) for i in inlinks],
        "links_dropped": record.links_dropped,
        "duplicate_cluster": duplicate_cluster(store, record),
    }


def duplicate_cluster(store: Store, record: PageRecord) -> dict[str, Any] | None:
    """The page's cluster of (near-)duplicates: the canonical copy, the other copies,
    and why the canonical won (the batch step after a crawl decides); None when the
    page has no copies."""
    canonical = record.duplicate_of or record.url
    members = store.duplicates_of(canonical)
    if canonical == record.url and not members:
        return None
    owner = record if canonical == record.url else store.page(canonical)
    reason = (owner.canonical_reason if owner else None) or record.canonical_reason
    return {"canonical": canonical, "members": members, "reason": reason}
