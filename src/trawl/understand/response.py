"""What a response means for the index: a page to parse, a redirect, an error, a file. Pure.

Issue by issue this grows into the full indexability decision (noindex,
canonical, meta refresh); for now: only a 2xx HTML response is indexable.
"""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import urlsplit

from trawl.errors import InvalidUrl
from trawl.records import CrawlUrl, FetchResult, PageRecord, ParsedPage
from trawl.urls.identity import normalise


def understand_response(item: CrawlUrl, result: FetchResult) -> tuple[PageRecord, list[str]]:
    """What kind of response this is; the links to follow if it is not HTML to parse."""
    record = PageRecord(
        url=item.url,
        host=urlsplit(item.url).hostname or "",
        status=result.status,
        depth=item.depth,
        fetched_at=result.fetched_at,
        content_type=result.content_type,
    )
    location = result.location
    if location is not None:
        try:
            target = normalise(location, base=item.url)
        except InvalidUrl as e:
            return replace(record, error=f"unusable redirect: {e}"), []
        return replace(record, redirect_to=target), [target]
    if result.status >= 400:
        return replace(record, error=f"HTTP {result.status}"), []
    if 200 <= result.status < 300 and result.is_html:
        etag, last_modified = result.header("etag"), result.header("last-modified")
        return replace(record, indexable=True, etag=etag, last_modified=last_modified), []
    return record, []


def with_content(record: PageRecord, parsed: ParsedPage) -> PageRecord:
    return replace(
        record,
        title=parsed.title,
        description=parsed.description,
        headings=parsed.h1 + parsed.h2,
        text=parsed.text,
        lang=parsed.lang,
        word_count=parsed.word_count,
    )
