"""What a response means for the index. Pure.

Two steps, because only HTML is parsed in between:

- ``understand_response``: the status and headers alone: a redirect (its
  target is followed), an error, a file that is not HTML, or HTML to parse.
- ``understand_page``: the parsed HTML: robots directives (noindex, nofollow),
  a meta refresh of at most ten seconds (a redirect), rel=canonical naming
  another URL (the canonical is followed; links that are only query-string
  variants of it are not, or pagination would be walked forever).

Each page ends with one indexability label (see ``indexability``) and
``indexable`` true only for the Indexable ones.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from urllib.parse import urlsplit

from trawl.errors import InvalidUrl
from trawl.extract.dates import PageDates, page_dates, with_sitemap_lastmod
from trawl.extract.links import followed
from trawl.records import CrawlUrl, FetchResult, Href, PageRecord, ParsedPage, SavedDates
from trawl.understand.community import is_community
from trawl.understand.directives import robots_directives
from trawl.understand.indexability import Indexability, indexability, is_query_variant
from trawl.understand.refresh import refresh_redirect
from trawl.urls.identity import forms


def understand_response(item: CrawlUrl, result: FetchResult) -> tuple[PageRecord, list[Href]]:
    """The record so far, and the URLs to follow when there is no HTML to parse.

    ``record.indexable`` is true when the response is HTML worth parsing; the
    final decision is ``understand_page``'s.
    """
    location = result.location
    # The HTML worth parsing is built indexable at once: a PageRecord has some forty
    # fields, and each copy (``replace``) costs as much as building one, per page.
    page = location is None and 200 <= result.status < 300 and result.is_html
    record = PageRecord(
        url=item.url,
        host=urlsplit(item.url).hostname or "",
        status=result.status,
        depth=item.depth,
        fetched_at=result.fetched_at,
        content_type=result.content_type,
        headers=result.headers,
        response_time=result.elapsed,
        size=_size(result),
        request_url=item.request,
        indexable=page,
        etag=result.header("etag") if page else None,
        last_modified=result.header("last-modified") if page else None,
    )
    if location is not None:
        try:
            # Against the URL requested: a relative Location is the server's answer to it.
            target, request = forms(location, base=item.request_url)
        except InvalidUrl as e:
            return _labelled(record, error=f"unusable redirect: {e}"), []
        return _labelled(record, redirect_to=target), [Href(target, request)]
    if result.status >= 400:
        return _labelled(record, error=f"HTTP {result.status}"), []
    return record, []  # a file or an odd status: recorded, not a page to label


def understand_page(
    record: PageRecord,
    parsed: ParsedPage,
    result: FetchResult,
    product_token: str,
    sitemap_lastmod: datetime | None = None,
) -> tuple[PageRecord, list[Href]]:
    """Apply what the HTML says about itself; return the final record and the URLs to follow.

    ``sitemap_lastmod`` is the page's lastmod from a sitemap whose dates are trusted.
    """
    directives = robots_directives(parsed.meta, result.headers, product_token)
    dates = page_dates(
        published=parsed.published,
        published_source=parsed.published_source,
        page_modified=parsed.page_modified,
        sitemap_lastmod=sitemap_lastmod,
        last_modified_header=result.header("last-modified"),
        date_header=result.header("date"),
        now=datetime.fromtimestamp(result.fetched_at, UTC),
    )
    follow = [] if directives.nofollow else followed(parsed.links)
    refresh = _refresh_target(parsed.refresh, record.url)
    redirect_to = refresh.url if refresh is not None else record.redirect_to
    # The label first, so the record is copied once: it depends only on fields set here.
    label = indexability(
        status=record.status,
        redirect_to=redirect_to,
        error=record.error,
        blocked=False,
        noindex=directives.noindex,
        canonical=parsed.canonical,
        url=record.url,
    )
    record = replace(
        record,
        title=parsed.title,
        description=parsed.description,
        headings=parsed.h1 + parsed.h2,
        h1_count=len(parsed.h1),
        text=parsed.text,
        sections=parsed.sections,
        aside=parsed.aside,
        lang=parsed.lang,
        word_count=parsed.word_count,
        links_dropped=parsed.links_dropped,
        canonical=parsed.canonical,
        directives=directives.values,
        published=dates.published,
        modified=dates.modified,
        modified_source=dates.modified_source,
        text_hash=parsed.text_hash,
        simhash=parsed.simhash,
        quality=parsed.quality,
        community=is_community(record.url, parsed.markup_types, parsed.comment_blocks),
        redirect_to=redirect_to,
        indexability=label.value,
        indexable=label == Indexability.INDEXABLE,
    )
    if refresh is not None:
        return record, [refresh]
    if label == Indexability.CANONICALISED and parsed.canonical:
        canonical = parsed.canonical
        follow = [
            Href(canonical),
            *(h for h in follow if not is_query_variant(h.url, canonical)),
        ]
    return record, follow


def sitemap_dated(page: SavedDates, sitemap_lastmod: datetime) -> PageDates | None:
    """The dates of a saved ``page`` once a sitemap gives it ``sitemap_lastmod``: what
    ``understand_page`` would have given it had the sitemap been read before the fetch.
    None when that changes nothing (a page never parsed as HTML has no dates)."""
    if not page.parsed:
        return None
    saved = PageDates(page.published, page.modified, page.modified_source, None)
    dates = with_sitemap_lastmod(
        saved, sitemap_lastmod, datetime.fromtimestamp(page.fetched_at, UTC)
    )
    return None if dates == saved else dates


def blocked_page(item: CrawlUrl, fetched_at: float) -> PageRecord:
    """A URL robots.txt did not let us fetch: recorded, so the report can show it."""
    return replace(_unfetched(item, fetched_at), indexability=Indexability.BLOCKED.value)


def failed_page(item: CrawlUrl, fetched_at: float, error: str) -> PageRecord:
    """A URL that gave no response at all (timeout, refused, blocked address)."""
    return _labelled(_unfetched(item, fetched_at), error=error)


def _unfetched(item: CrawlUrl, fetched_at: float) -> PageRecord:
    host = urlsplit(item.url).hostname or ""
    return PageRecord(
        url=item.url,
        host=host,
        status=0,
        depth=item.depth,
        fetched_at=fetched_at,
        request_url=item.request,
    )


def _size(result: FetchResult) -> int:
    """The body's bytes, or what Content-Length declares when the body was not read (a
    file type the crawler does not parse); 0 when neither says."""
    if result.body:
        return len(result.body)
    declared = (result.header("content-length") or "").strip()
    # ASCII digits only, and few: a hostile header must not raise or cost a huge int.
    if declared.isascii() and declared.isdigit() and len(declared) <= 15:
        return int(declared)
    return 0


def _labelled(
    record: PageRecord, *, error: str | None = None, redirect_to: str | None = None
) -> PageRecord:
    """``record`` with ``error`` or ``redirect_to`` set, and its label, in one copy."""
    error = error if error is not None else record.error
    redirect_to = redirect_to if redirect_to is not None else record.redirect_to
    label = indexability(
        status=record.status,
        redirect_to=redirect_to,
        error=error,
        blocked=False,
        noindex=False,
        canonical=record.canonical,
        url=record.url,
    )
    return replace(
        record,
        error=error,
        redirect_to=redirect_to,
        indexability=label.value,
        indexable=label == Indexability.INDEXABLE,
    )


def _refresh_target(content: str | None, url: str) -> Href | None:
    raw = refresh_redirect(content)
    if raw is None:
        return None
    try:
        target, request = forms(raw, base=url)
    except InvalidUrl:
        return None
    # A page that refreshes itself is no redirect.
    return None if target == url else Href(target, request)
