"""The public API: /api/search, /healthz, /opensearch.xml."""

from __future__ import annotations

import time
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic_core import to_json
from starlette.concurrency import run_in_threadpool

from trawl import __version__
from trawl.errors import SearchIndexError, StoreError
from trawl.pipeline.integrity import quick_check, stalled_runs, stalled_summary
from trawl.records import Outcome
from trawl.search.request import (
    DEFAULT_SORT,
    LANG_PATTERN,
    MAX_PAGE,
    MAX_PER_PAGE,
    MAX_SITE,
    MAX_TEXT,
    SITE_PATTERN,
    SORTS,
    SearchRequest,
    api_request,
)
from trawl.server.answers import page_json
from trawl.server.context import Context, context_of
from trawl.server.errors import public_message
from trawl.server.search_pool import Answer, Searched

__all__ = ["page_json", "router", "run_search"]  # page_json: `trawl search --json` too

router = APIRouter()


def _cached(ctx: Context, request: SearchRequest, started: float) -> tuple[Any, Answer | None]:
    """The index reader a search now would read, and this commit's cached answer to
    ``request`` if it has one (its ``took_ms`` then this answer's own)."""
    reader = ctx.index.get()
    reader.reload()  # a stat: the commit mark a search now would read
    if reader.generation is None:
        return reader, None
    answer = ctx.results.get((request, reader.generation))
    if answer is not None:
        answer = {**answer, "took_ms": round((time.perf_counter() - started) * 1000, 2)}
    return reader, answer


def _kept(ctx: Context, request: SearchRequest, searched: Searched) -> Answer:
    generation, answer, _ = searched
    if generation is not None:  # keyed by the commit the search read, not the one now
        ctx.results.put((request, generation), answer)
    return answer


def run_search(ctx: Context, request: SearchRequest, *, source: str) -> Answer:
    """The answer to ``request``: from the result cache when this index commit already
    answered it, else searched."""
    started = time.perf_counter()
    reader, answer = _cached(ctx, request, started)
    if answer is None:
        answer = _kept(ctx, request, ctx.search_pool.search(reader, request))
    ctx.metrics.observe_query(time.perf_counter() - started, source)
    return answer


async def arun_search(ctx: Context, request: SearchRequest, *, source: str) -> Answer:
    """``run_search`` on the event loop: the server's part of a search (a stat, the
    cache, the metrics) needs no thread, so an answer from the cache takes none; with
    search workers the loop waits on a worker's pipe, without them the search runs in
    a thread."""
    started = time.perf_counter()
    reader, answer = _cached(ctx, request, started)
    if answer is None:
        answer = _kept(ctx, request, await ctx.search_pool.asearch(reader, request))
    ctx.metrics.observe_query(time.perf_counter() - started, source)
    return answer


def _parameter(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": name == "q", "schema": schema,
            "description": description}  # fmt: skip


# What api_request reads, documented from the same bounds.
SEARCH_PARAMETERS = [
    _parameter("q", "What to look for.", {"type": "string", "maxLength": MAX_TEXT}),
    _parameter(
        "page",
        "Result page, from 1.",
        {"type": "integer", "minimum": 1, "maximum": MAX_PAGE, "default": 1},
    ),
    _parameter(
        "per_page",
        "Results a page (default: the per_page setting).",
        {"type": "integer", "minimum": 1, "maximum": MAX_PER_PAGE},
    ),
    _parameter(
        "site",
        "Only this host.",
        {"type": "string", "maxLength": MAX_SITE, "pattern": SITE_PATTERN},
    ),
    _parameter("lang", "Only pages in this language.", {"type": "string", "pattern": LANG_PATTERN}),
    _parameter(
        "sort",
        "relevance, or date: newest first.",
        {"type": "string", "enum": list(SORTS), "default": DEFAULT_SORT},
    ),
    _parameter("after", "Modified on or after this day.", {"type": "string", "format": "date"}),
    _parameter("before", "Modified before this day.", {"type": "string", "format": "date"}),
]


# The parameters are read by api_request, not declared in the signature: FastAPI's
# solving of eight declared parameters was ~40% of the server's own CPU a request
# (bench/RESULTS.md). The answer is JSON bytes written here: FastAPI's own path would
# validate it against the declared model and encode it again (~0.2 ms for 10 results).
@router.get(
    "/api/search",
    tags=["search"],
    response_model=dict[str, Any],
    openapi_extra={"parameters": SEARCH_PARAMETERS},
)
async def api_search(request: Request) -> Response:
    """Search the index. Results carry dates and where a page was discussed.

    The filters here do what the same operators typed in ``q`` do (site:, lang:,
    after:, before:); both kinds combine."""
    asked = api_request(request.query_params)  # a bad one: 400, before key and limit
    ctx = context_of(request)
    if ctx.settings.search_requires_key:  # the key is looked up in the store
        await run_in_threadpool(ctx.limit_search, request)
    else:
        ctx.limit_search(request)
    answer = await arun_search(ctx, asked, source="api")
    return Response(to_json(answer), media_type="application/json")


@router.get("/healthz", tags=["search"])
def healthz(request: Request) -> JSONResponse:
    """Liveness, the version, how many documents the index holds (null: no index yet),
    and whether store and index agree (their counts: the cheap check of `trawl
    check`). 503 with ``status: broken`` and what is broken when the store or the
    index cannot be read; ``status: drifted`` when they disagree outside a crawl;
    ``status: stalled`` (``stalled``: the crawl ids) when a crawl is marked running but
    no process runs it (killed, not resumed since)."""
    ctx = context_of(request)
    body: dict[str, Any] = {"status": "ok", "version": __version__, "documents": None}
    problems: list[str] = []
    index_error: str | None = None
    try:
        body["documents"] = ctx.index.documents()
    except SearchIndexError as e:
        index_error = public_message(e)
    try:
        with ctx.store() as store:
            if index_error is not None:
                if store.searchable_counts()[0]:
                    problems.append(index_error)  # pages to search, and no index to search
            elif stalled := stalled_runs(store, ctx.settings.index_path):
                body["status"] = "stalled"  # its pages are indexed when it is resumed
                body["stalled"] = [run.id for run in stalled]
                body["problems"] = [stalled_summary(run) for run in stalled]
            elif not any(run.outcome == Outcome.RUNNING for run in store.crawls(limit=1)):
                drift = quick_check(store, ctx.index.get())
                if not drift.agrees:
                    body["status"] = "drifted"
                    body["problems"] = [drift.summary()]
    except StoreError as e:
        problems.append(public_message(e))
    if problems:
        body["status"] = "broken"
        body["problems"] = problems
        return JSONResponse(body, status_code=503)
    return JSONResponse(body)


@router.get("/opensearch.xml", tags=["search"], response_class=Response)
def opensearch(request: Request) -> Response:
    """An OpenSearch description, so a browser can add Trawl as a search engine. Its URLs
    start with the public_url setting (the Host header is the client's to choose, and a
    cache in front would keep whatever one client named)."""
    public = context_of(request).settings.public_url
    base = (public or str(request.base_url)).rstrip("/")
    html = quoteattr(f"{base}/?q={{searchTerms}}")
    json_url = quoteattr(f"{base}/api/search?q={{searchTerms}}")
    self_url = quoteattr(f"{base}/opensearch.xml")
    body = f"""<?xml version="1.0" encoding="UTF-8"?>
<OpenSearchDescription xmlns="http://a9.com/-/spec/opensearch/1.1/">
  <ShortName>Trawl</ShortName>
  <Description>Search the sites this Trawl has crawled</Description>
  <InputEncoding>UTF-8</InputEncoding>
  <Url type="text/html" method="get" template={html}/>
  <Url type="application/json" method="get" template={json_url}/>
  <Url type="application/opensearchdescription+xml" rel="self" template={self_url}/>
  <Developer>{escape("Trawl " + __version__)}</Developer>
</OpenSearchDescription>
"""
    return Response(body, media_type="application/opensearchdescription+xml")
