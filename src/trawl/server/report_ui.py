"""The SEO report's browser pages: the crawl table, one URL's details, external links,
resources and their header checks (admin only; the shared parts live in report.py)."""

from __future__ import annotations

import math
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response

from trawl.errors import NotFound, TrawlError
from trawl.records import PageChange, ReportQuery
from trawl.server import api_admin, report
from trawl.server.charts import REPORT_CHARTS, RESPONSE_BOUNDS, report_chart
from trawl.server.context import Context
from trawl.server.ui import CHART_CSP, _admin, _back, _error_page, _page
from trawl.store.issues import Issue

router = APIRouter(include_in_schema=False)


# -- admin: the SEO report ----------------------------------------------------------------


@router.get("/admin/report", response_class=HTMLResponse, response_model=None)
def admin_report(
    request: Request,
    q: Annotated[str, Query(max_length=500)] = "",
    status: Annotated[str, Query(max_length=3)] = "",
    indexability: Annotated[str, Query(max_length=40)] = "",
    lang: Annotated[str, Query(max_length=20)] = "",
    issue: Annotated[str, Query(max_length=40)] = "",
    sort: Annotated[str, Query(max_length=20)] = "url",
    order: Annotated[str, Query(max_length=4)] = "asc",
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
) -> Response:
    ctx = _admin(request)
    if not isinstance(ctx, Context):
        return ctx
    try:
        report.checked_filters(indexability, issue)
    except TrawlError as e:
        return _error_page(request, e)
    sort_by = report.report_sort(sort)
    per_page = 100
    query = ReportQuery(
        text=q,
        status=status,
        indexability=indexability,
        lang=lang,
        issue=issue,
        thresholds=report.thresholds(ctx.settings),
        sort=sort_by,
        descending=order == "desc",
        limit=per_page,
        offset=(page - 1) * per_page,
    )
    with ctx.store() as store:
        total, rows = store.report_pages(query)
    filters = {
        "q": q,
        "status": status,
        "indexability": indexability,
        "lang": lang,
        "issue": issue,
    }
    kept = {k: v for k, v in filters.items() if v}

    def link(**changes: Any) -> str:
        return "?" + urlencode({**kept, "sort": sort_by, "order": order, **changes})

    def sort_link(column: str) -> str:
        flip = "desc" if column == sort_by and order == "asc" else "asc"
        return "?" + urlencode({**kept, "sort": column, "order": flip})

    chosen = Issue.from_slug(issue)
    return _page(
        request,
        "report.html",
        {
            "rows": rows,
            "total": total,
            "page": page,
            "last_page": max(1, math.ceil(total / per_page)),
            "sort": sort_by,
            "order": order,
            "link": link,
            "sort_link": sort_link,
            "csv_link": "/api/admin/report/pages.csv?"
            + urlencode({**kept, "sort": sort_by, "order": order}),
            "columns_left": report.COLUMNS_LEFT,
            "columns_right": report.COLUMNS_RIGHT,
            "labels": report.INDEXABILITY_LABELS,
            "issue_label": chosen.label if chosen else "",
            "charts": REPORT_CHARTS,
            **filters,
        },
    )


@router.get("/admin/report/issues", response_class=HTMLResponse, response_model=None)
def admin_issues(request: Request) -> Response:
    """The issues overview, a page of its own: counting every issue scans the whole table
    (about 1-4 s at 100,000 pages), which paging through the crawl table must not pay."""
    ctx = _admin(request)
    if not isinstance(ctx, Context):
        return ctx
    with ctx.store() as store:
        issues = report.issue_overview(store, ctx.settings)
    return _page(request, "issues.html", {"issues": issues})


@router.get("/admin/report/charts/{name}.svg", response_model=None)
def admin_report_chart(request: Request, name: str) -> Response:
    ctx = _admin(request)
    if not isinstance(ctx, Context):
        return ctx
    if name not in REPORT_CHARTS:
        return _error_page(request, NotFound(f"no chart {name!r}"))
    with ctx.store() as store:
        svg = report_chart(
            name,
            store.status_counts() if name == "status" else {},
            store.depth_counts() if name == "depth" else {},
            store.response_time_counts(RESPONSE_BOUNDS) if name == "response_time" else [],
        )
    headers = {"Content-Security-Policy": CHART_CSP, "Cache-Control": "no-store"}
    return Response(svg, media_type="image/svg+xml", headers=headers)


@router.get("/admin/report/changes", response_class=HTMLResponse, response_model=None)
def admin_changes(
    request: Request,
    host: Annotated[str, Query(max_length=253)] = "",
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
) -> Response:
    """What changed on a site since its previous crawl."""
    ctx = _admin(request)
    if not isinstance(ctx, Context):
        return ctx
    per_page = 100
    try:
        with ctx.store() as store:
            hosts = store.history_hosts()
            host, before, after = report.compared(store, host)
            total, rows = 0, list[PageChange]()
            if before is not None and after is not None:
                total, rows = store.report_changes(
                    host, before, after, per_page, (page - 1) * per_page
                )
    except TrawlError as e:
        return _error_page(request, e)
    return _page(
        request,
        "changes.html",
        {
            "hosts": hosts,
            "host": host,
            "before": before,
            "after": after,
            "rows": rows,
            "total": total,
            "page": page,
            "last_page": max(1, math.ceil(total / per_page)),
            "link": lambda n: "?" + urlencode({"host": host, "page": n}),
            "csv_link": "/api/admin/report/changes.csv?" + urlencode({"host": host}),
        },
    )


@router.get("/admin/report/url", response_class=HTMLResponse, response_model=None)
def admin_url(request: Request, url: Annotated[str, Query(max_length=4096)] = "") -> Response:
    ctx = _admin(request)
    if not isinstance(ctx, Context):
        return ctx
    try:
        with ctx.store() as store:
            details = report.page_details(store, url)
    except TrawlError as e:
        return _error_page(request, e)
    return _page(request, "url.html", {"d": details, "q_url": urlencode({"url": url})})


@router.get("/admin/report/external", response_class=HTMLResponse, response_model=None)
def admin_external(
    request: Request,
    q: Annotated[str, Query(max_length=500)] = "",
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
    msg: str = "",
    err: str = "",
) -> Response:
    ctx = _admin(request)
    if not isinstance(ctx, Context):
        return ctx
    per_page = 100
    with ctx.store() as store:
        total, rows = store.external_links(q, per_page, (page - 1) * per_page)
    return _page(
        request,
        "external.html",
        {
            "rows": rows,
            "total": total,
            "q": q,
            "page": page,
            "last_page": max(1, math.ceil(total / per_page)),
            "can_check": ctx.header_checks.available,
            "check": ctx.header_checks.status(),
            "csv_link": "/api/admin/report/external.csv?" + urlencode({"q": q} if q else {}),
            "msg": msg[:300],
            "err": err[:300],
        },
    )


@router.get("/admin/report/resources", response_class=HTMLResponse, response_model=None)
def admin_resources(
    request: Request,
    broken: Annotated[str, Query(max_length=5)] = "",
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
) -> Response:
    ctx = _admin(request)
    if not isinstance(ctx, Context):
        return ctx
    per_page = 100
    only_broken = broken in ("1", "true", "on")
    rows = api_admin.resource_rows(ctx, only_broken, per_page, (page - 1) * per_page)
    return _page(
        request,
        "resources.html",
        {
            "rows": rows,
            "broken": only_broken,
            "page": page,
            "more": len(rows) == per_page,
            "csv_link": "/api/admin/report/resources.csv" + ("?broken=true" if only_broken else ""),
        },
    )


@router.post("/admin/report/external/check", response_model=None)
async def admin_check(request: Request) -> Response:
    ctx = _admin(request)
    if not isinstance(ctx, Context):
        return ctx
    try:
        total = api_admin.check_external(ctx)
    except TrawlError as e:
        return _back("/admin/report/external", error=str(e))
    urls = "URL" if total == 1 else "URLs"
    return _back("/admin/report/external", message=f"checking {total} {urls} in the background")


@router.post("/admin/report/external/check/cancel", response_model=None)
async def admin_check_cancel(request: Request) -> Response:
    ctx = _admin(request)
    if not isinstance(ctx, Context):
        return ctx
    if ctx.header_checks.cancel():
        message = "header check cancelled; what it checked is kept"
        return _back("/admin/report/external", message=message)
    return _back("/admin/report/external", error="no header check is running")
