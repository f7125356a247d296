"""The admin API, behind an API key: sites, crawls, the SEO report, header checks."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request, Security
from fastapi.responses import StreamingResponse
from fastapi.security import APIKeyHeader
from pydantic import BaseModel, Field, field_validator

from trawl.errors import Conflict, MissingExtra, NotFound, Unavailable
from trawl.extras import require
from trawl.faults import fault_point
from trawl.index.tantivy_index import IndexWriter
from trawl.pipeline.integrity import stalled_runs
from trawl.pipeline.upkeep import evict
from trawl.records import KEY_SCOPES, ApiKey, KeyScope, PageChange, ReportQuery
from trawl.server import auth, report
from trawl.server.context import Context, context_of
from trawl.settings import SCOPES, SPEED_HELP, SPEED_PRESETS, info
from trawl.urls.start import parse_start_url, start_forms, start_request

MAX_CHECKS = 10_000  # external URLs one "Check headers" request may check


# Declared so the OpenAPI document names the scheme (and /docs has an Authorize button);
# the key itself is read by the context, which also takes Bearer and the login session.
KEY_SCHEME = APIKeyHeader(
    name=auth.KEY_HEADER,
    auto_error=False,
    description="An API key (`trawl keys create`); `Authorization: Bearer` works too.",
)


def require_key(request: Request, _: Annotated[str | None, Security(KEY_SCHEME)] = None) -> ApiKey:
    """Refuse the call without a key (or login) holding the admin scope; count it against
    the key's rate limit."""
    return context_of(request).caller(request, "admin")


router = APIRouter(prefix="/api/admin", tags=["admin"], dependencies=[Depends(require_key)])


class SiteIn(BaseModel):
    url: str = Field(min_length=1, max_length=2048, description="The site's start URL.")


class CrawlIn(BaseModel):
    """What a crawl may be told, as `trawl crawl` is; null: the server's setting."""

    urls: list[Annotated[str, Field(min_length=1, max_length=2048)]] = Field(
        default_factory=list,
        max_length=100,
        description="Start URLs; empty: every enabled site.",
    )
    max_pages: int | None = Field(
        default=None, ge=1, le=1_000_000, description=info("max_pages").help
    )
    max_depth: int | None = Field(default=None, ge=0, le=1000, description=info("max_depth").help)
    scope: str | None = Field(default=None, max_length=10, description=info("scope").help)
    speed: str | None = Field(
        default=None,
        max_length=20,
        description=f"{SPEED_HELP} One of {', '.join(SPEED_PRESETS)}.",
    )
    delay: float | None = Field(default=None, ge=0, le=60, description=info("delay").help)
    concurrency: int | None = Field(
        default=None, ge=1, le=100, description=info("concurrency").help
    )
    render: bool | None = Field(default=None, description=info("render").help)

    @field_validator("scope")
    @classmethod
    def _known_scope(cls, value: str | None) -> str | None:
        if value is not None and value not in SCOPES:
            raise ValueError(f"scope must be one of {', '.join(SCOPES)}")
        return value

    @field_validator("speed")
    @classmethod
    def _known_speed(cls, value: str | None) -> str | None:
        if value is not None and value not in SPEED_PRESETS:
            raise ValueError(f"speed must be one of {', '.join(SPEED_PRESETS)}")
        return value


def _site_json(ctx: Context) -> list[dict[str, Any]]:
    with ctx.store() as store:
        return [asdict(s) for s in store.sites()]


# -- sites ---------------------------------------------------------------------


@router.get("/sites")
def list_sites(request: Request) -> list[dict[str, Any]]:
    """Every site, with its start URL and whether scheduled recrawls include it."""
    return _site_json(context_of(request))


@router.post("/sites", status_code=201)
def add_site(request: Request, site: SiteIn) -> dict[str, Any]:
    """Add a site by its start URL (https:// is added when no scheme is given)."""
    url = parse_start_url(site.url)
    ctx = context_of(request)
    with ctx.store() as store:
        store.add_site(url)
        host = url.split("://", 1)[-1].split("/", 1)[0]
        found = next(s for s in store.sites() if s.host == host)
    return asdict(found)


def set_enabled(ctx: Context, host: str, enabled: bool) -> None:
    with ctx.store() as store:
        if not store.set_site_enabled(host, enabled):
            raise NotFound(f"no site {host!r}")


@router.post("/sites/{host}/enable")
def enable_site(request: Request, host: str) -> dict[str, Any]:
    set_enabled(context_of(request), host, True)
    return {"host": host, "enabled": True}


@router.post("/sites/{host}/disable")
def disable_site(request: Request, host: str) -> dict[str, Any]:
    set_enabled(context_of(request), host, False)
    return {"host": host, "enabled": False}


def delete_site(ctx: Context, host: str) -> int:
    """Forget the site and its pages, in the index and the store; return how many pages.

    The index writer is taken first (busy: 503, and the store is left whole), and the
    pages leave the index, committed, before the store: a kill in between leaves them
    stored but not searchable, and the same request again finishes the job.
    """
    if ctx.crawls.running:
        raise Conflict("a crawl is running: stop it before deleting a site")
    writer = IndexWriter(ctx.settings.index_path) if ctx.settings.index_path.exists() else None
    try:
        with ctx.store() as store:
            urls = store.site_pages(host)
            if urls is None:
                raise NotFound(f"no site {host!r}")
            if writer is not None:
                for url in urls:
                    writer.delete(url)
                writer.commit()
                fault_point("site_delete.after_index_commit")
            removed = store.delete_site(host) or []
            if writer is not None:
                # Pages stored meanwhile (a worker's): out of the index as well.
                for url in set(removed) - set(urls):
                    writer.delete(url)
                writer.commit()
    finally:
        if writer is not None:
            writer.close()
    return len(removed)


@router.delete("/sites/{host}")
def remove_site(request: Request, host: str) -> dict[str, Any]:
    """Delete a site: its pages leave the store and the index."""
    return {"host": host, "deleted_pages": delete_site(context_of(request), host)}


# -- crawls --------------------------------------------------------------------


def start_crawl(ctx: Context, urls: Sequence[str], options: CrawlIn | None = None) -> list[str]:
    typed = list(dict.fromkeys(start_request(u) for u in urls))
    starts, _ = start_forms(typed)
    if not starts:
        with ctx.store() as store:
            starts = [s.start_url for s in store.sites() if s.enabled]
        if not starts:
            raise NotFound("no enabled site to crawl: add one first")
    settings = ctx.settings
    if options is not None:
        if options.speed is not None:
            settings = settings.replace(**SPEED_PRESETS[options.speed])
        settings = settings.replace(
            max_pages=options.max_pages,
            max_depth=options.max_depth,
            scope=options.scope,
            delay=options.delay,
            concurrency=options.concurrency,
            render=options.render,
        )
    if settings.render:
        try:
            require("render")
        except MissingExtra as e:  # the install's, not the caller's: not a 500 either
            raise Unavailable(str(e)) from None
    ctx.crawls.start(typed or starts, settings)  # requested as typed (seed 003)
    return starts


@router.post("/crawls", status_code=202)
async def post_crawl(request: Request, body: CrawlIn) -> dict[str, Any]:
    """Start a crawl of these start URLs (or of every enabled site); one runs at a time."""
    ctx = context_of(request)
    starts = start_crawl(ctx, body.urls, body)
    return {"started": starts, **ctx.crawls.status()}


@router.get("/crawls/current")
def current_crawl(request: Request) -> dict[str, Any]:
    """Live counters: discovered, crawled, queued, errors, pages per second; once the
    crawl ended, its outcome and ``note``, the one reason most pages were not indexed."""
    return context_of(request).crawls.status()


@router.post("/crawls/stop")
async def stop_crawl(request: Request) -> dict[str, Any]:
    """Stop the running crawl: requests in flight finish, what was fetched stays indexed."""
    ctx = context_of(request)
    if not ctx.crawls.stop():
        raise Conflict("no crawl is running")
    return ctx.crawls.status()


@router.post("/recrawl", status_code=202)
async def recrawl(request: Request) -> dict[str, Any]:
    """Crawl every enabled site again, one after another."""
    ctx = context_of(request)
    with ctx.store() as store:
        sites = [s.start_url for s in store.sites() if s.enabled]
    if not sites:
        raise NotFound("no enabled site to crawl: add one first")
    ctx.crawls.start_recrawl(sites)
    return {"started": sites, **ctx.crawls.status()}


@router.get("/crawls")
def crawl_history(
    request: Request, limit: Annotated[int, Query(ge=1, le=1000)] = 50
) -> list[dict[str, Any]]:
    """The crawl log, newest first; ``note``: the one reason most of a run's pages were
    not indexed, when there is one; ``stalled``: marked running, but no process runs it
    (killed, not resumed since)."""
    ctx = context_of(request)
    with ctx.store() as store:
        stalled = {run.id for run in stalled_runs(store, ctx.settings.index_path)}
        return [
            {**asdict(c), "note": c.note, "stalled": c.id in stalled} for c in store.crawls(limit)
        ]


@router.get("/crawls.csv")
def crawl_history_csv(
    request: Request, limit: Annotated[int, Query(ge=1, le=10_000)] = 1000
) -> StreamingResponse:
    with context_of(request).store() as store:
        runs = store.crawls(limit)
    header = (
        "id",
        "started_at",
        "finished_at",
        "start_urls",
        "pages_ok",
        "pages_failed",
        "outcome",
    )
    rows = [
        (
            c.id,
            c.started_at,
            c.finished_at,
            " ".join(c.start_urls),
            c.pages_ok,
            c.pages_failed,
            c.outcome,
        )
        for c in runs
    ]
    return report.csv_response("crawls", header, rows)


# -- the SEO report --------------------------------------------------------------

ReportQ = Annotated[ReportQuery, Depends(report.report_query)]


@router.get("/report/pages")
def report_pages(request: Request, query: ReportQ) -> dict[str, Any]:
    """The crawl table: filtered, sorted, one page of rows at a time."""
    with context_of(request).store() as store:
        total, rows = store.report_pages(query)
    return {
        "total": total,
        "offset": query.offset,
        "limit": query.limit,
        "rows": [report.row_json(r) for r in rows],
    }


@router.get("/report/pages.csv")
def report_pages_csv(request: Request, query: ReportQ) -> StreamingResponse:
    """Every row the filters match, as CSV."""
    ctx = context_of(request)

    def rows() -> Iterator[tuple[Any, ...]]:
        with ctx.store() as store:
            yield from report.report_csv(report.all_rows(store, query))

    return report.csv_response("crawl", report.REPORT_HEADER, rows())


@router.get("/report/issues")
def report_issues(request: Request) -> list[dict[str, Any]]:
    """The issues overview: each issue's page count; ``/report/pages?issue=`` lists them."""
    ctx = context_of(request)
    with ctx.store() as store:
        return report.issue_overview(store, ctx.settings)


@router.get("/report/changes")
def report_changes(
    request: Request,
    host: Annotated[str, Query(max_length=253)] = "",
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
    per_page: Annotated[int, Query(ge=1, le=500)] = 100,
) -> dict[str, Any]:
    """What changed on a site since its previous crawl: pages new, gone, or with another
    status, title or indexability (``host`` empty: the first host crawled)."""
    with context_of(request).store() as store:
        host, before, after = report.compared(store, host)
        total, rows = 0, list[PageChange]()
        if before is not None and after is not None:
            total, rows = store.report_changes(host, before, after, per_page, (page - 1) * per_page)
    return {
        "host": host,
        "before": before,
        "after": after,
        "total": total,
        "rows": [report.change_json(r) for r in rows],
    }


@router.get("/report/changes.csv")
def report_changes_csv(
    request: Request, host: Annotated[str, Query(max_length=253)] = ""
) -> StreamingResponse:
    """The crawl comparison as CSV, every row."""
    ctx = context_of(request)
    with ctx.store() as store:
        host, before, after = report.compared(store, host)

    def rows() -> Iterator[tuple[Any, ...]]:
        if before is None or after is None:
            return
        with ctx.store() as store:
            yield from report.changes_csv(report.all_changes(store, host, before, after))

    return report.csv_response("changes", report.CHANGES_HEADER, rows())


@router.get("/report/page")
def report_page(
    request: Request, url: Annotated[str, Query(min_length=1, max_length=4096)]
) -> dict[str, Any]:
    """One URL's details: headers, redirect chain, directives, links in and out."""
    with context_of(request).store() as store:
        return report.page_details(store, url)


@router.get("/report/links.csv")
def report_links_csv(
    request: Request,
    url: Annotated[str, Query(min_length=1, max_length=4096)],
    direction: Literal["in", "out"] = "out",
) -> StreamingResponse:
    """A URL's links out (or in), with anchors, as CSV."""
    with context_of(request).store() as store:
        details = report.page_details(store, url)
    if direction == "out":
        header: tuple[str, ...] = (
            "url",
            "anchor",
            "nofollow",
            "element",
            "attribute",
            "rel",
            "heading",
        )
    else:
        header = ("source", "anchor", "element", "nofollow", "heading")
    rows = [tuple(link[h] for h in header) for link in details[f"links_{direction}"]]
    return report.csv_response(f"links-{direction}", header, rows)


@router.get("/report/external")
def external_links(
    request: Request,
    q: Annotated[str, Query(max_length=500)] = "",
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
    per_page: Annotated[int, Query(ge=1, le=500)] = 100,
) -> dict[str, Any]:
    """Links to other hosts, with how often they occur and their last header check."""
    with context_of(request).store() as store:
        total, rows = store.external_links(q, per_page, (page - 1) * per_page)
    return {"total": total, "rows": [asdict(r) for r in rows]}


@router.get("/report/external.csv")
def external_links_csv(
    request: Request, q: Annotated[str, Query(max_length=500)] = ""
) -> StreamingResponse:
    ctx = context_of(request)

    def rows() -> Iterator[tuple[Any, ...]]:
        with ctx.store() as store:
            yield from report.external_csv(report.all_external(store, q))

    return report.csv_response("external-links", report.EXTERNAL_HEADER, rows())


def check_external(ctx: Context) -> int:
    """Start header-checking every external link target in the background; return how
    many will be checked."""
    if not ctx.header_checks.available:
        raise Unavailable("header checks are not part of this build yet")
    with ctx.store() as store:
        urls = [e.url for e in report.all_external(store)][:MAX_CHECKS]
    return ctx.header_checks.start(urls)


# The job runs as a task in the server's event loop: these routes run in it too (async),
# never in FastAPI's thread pool.
@router.post("/report/external/check", status_code=202)
async def post_check_external(request: Request) -> dict[str, Any]:
    """Start checking the headers of every external link (HEAD only, seed 003's rules),
    in the background, a batch at a time; 409 while a check runs. Each batch is saved
    as it comes back: the report fills in, and GET on this path tells the progress."""
    ctx = context_of(request)
    check_external(ctx)
    return ctx.header_checks.status()


@router.get("/report/external/check")
async def get_check_external(request: Request) -> dict[str, Any]:
    """The running header check's progress, or the last one's result."""
    return context_of(request).header_checks.status()


@router.post("/report/external/check/cancel")
async def cancel_check_external(request: Request) -> dict[str, Any]:
    """Stop the running header check; what it checked so far stays saved."""
    return {"cancelled": context_of(request).header_checks.cancel()}


def resource_rows(ctx: Context, broken: bool, limit: int, offset: int) -> list[dict[str, Any]]:
    """Checked resources, each with a few of the pages that use it."""
    with ctx.store() as store:
        return [
            {**asdict(r), "broken": r.broken, "used_on": store.resource_pages(r.url, 5)}
            for r in store.resources(broken_only=broken, limit=limit, offset=offset)
        ]


@router.get("/report/resources")
def resources(
    request: Request,
    broken: bool = False,
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
    per_page: Annotated[int, Query(ge=1, le=500)] = 100,
) -> list[dict[str, Any]]:
    """Images, scripts, stylesheets... of crawled pages, as their HEAD check found them,
    with the pages that use them; ``broken``: only status 000 or >= 400."""
    return resource_rows(context_of(request), broken, per_page, (page - 1) * per_page)


@router.get("/report/resources.csv")
def resources_csv(request: Request, broken: bool = False) -> StreamingResponse:
    ctx = context_of(request)
    header = ("url", "status", "content_type", "content_length", "error", "checked_at", "used_on")

    def rows() -> Iterator[tuple[Any, ...]]:
        offset = 0
        while True:
            chunk = resource_rows(ctx, broken, report.CSV_CHUNK, offset)
            for r in chunk:
                yield (*(r[h] for h in header[:-1]), " ".join(r["used_on"]))
            if len(chunk) < report.CSV_CHUNK:
                return
            offset += report.CSV_CHUNK

    return report.csv_response("resources", header, rows())


def run_eviction(ctx: Context, dry_run: bool) -> dict[str, Any]:
    if ctx.crawls.running:
        raise Conflict("a crawl is running: evict when it has ended")
    with ctx.store() as store:
        return asdict(evict(store, ctx.settings, dry_run=dry_run))


@router.post("/evict")
def post_evict(request: Request, dry_run: bool = True) -> dict[str, Any]:
    """Apply the eviction rules (near-duplicates, gone and low-value pages, unwanted
    languages: `trawl evict`); ``dry_run`` (the default) only counts what would go."""
    return run_eviction(context_of(request), dry_run)


@router.get("/keys")
def list_keys(request: Request) -> list[dict[str, Any]]:
    """API keys by name, with their scopes and expiry (the keys themselves are never
    stored)."""
    with context_of(request).store() as store:
        return [asdict(k) for k in store.api_keys()]


class KeyIn(BaseModel):
    name: str = Field(min_length=1, max_length=100, description="Who or what it is for.")
    scopes: list[KeyScope] = Field(
        default_factory=lambda: list(KEY_SCOPES), min_length=1, max_length=len(KEY_SCOPES)
    )
    expires_days: float | None = Field(
        default=None, gt=0, le=36_500, description="Days until it stops working; null: never."
    )


def create_key(ctx: Context, name: str, scopes: Sequence[KeyScope], days: float | None) -> Any:
    expires = time.time() + days * 86400 if days is not None else None
    with ctx.store() as store:
        key_id, key = auth.create_key(store, name, tuple(dict.fromkeys(scopes)), expires)
        found = next(k for k in store.api_keys() if k.id == key_id)
    return {**asdict(found), "key": key}


@router.post("/keys", status_code=201)
def post_key(request: Request, body: KeyIn) -> dict[str, Any]:
    """Make a key; the answer holds it, once: only its digest is stored."""
    answer: dict[str, Any] = create_key(
        context_of(request), body.name, body.scopes, body.expires_days
    )
    return answer


def revoke_key(ctx: Context, key_id: int) -> None:
    with ctx.store() as store:
        if not store.revoke_api_key(key_id):
            raise NotFound(f"no key {key_id}")


@router.delete("/keys/{key_id}")
def delete_key(request: Request, key_id: Annotated[int, Path(ge=1, le=2**62)]) -> dict[str, Any]:
    """Revoke a key: requests and logins made with it are refused from now on."""
    revoke_key(context_of(request), key_id)
    return {"id": key_id, "revoked": True}
