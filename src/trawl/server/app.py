"""The FastAPI application: wires the routers, the error mapping and the background tasks.

api_search  public: /api/search, /healthz, /opensearch.xml
api_suggest public: /api/suggest (completions as a person types)
api_admin   behind an API key: sites, crawls, the SEO report, header checks
ui          the browser pages: search, admin, metrics
report_ui   the SEO report's browser pages
/metrics    Prometheus text
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles

from trawl import __version__
from trawl.errors import TrawlError
from trawl.pipeline.resource_checks import check_external_headers
from trawl.server import (
    api_admin,
    api_search,
    api_suggest,
    auth,
    docs,
    errors,
    openapi,
    report_ui,
    ui,
)
from trawl.server.context import Context, context_of, context_of_app
from trawl.server.header_checks import HeaderChecker
from trawl.server.limits_middleware import RequestLimits
from trawl.server.security_headers import SecurityHeaders
from trawl.settings import Settings

_HERE = Path(__file__).parent
log = logging.getLogger(__name__)


async def _recrawl_forever(context: Context) -> None:
    """Re-crawl every enabled site every ``recrawl_hours``, for as long as the server runs,
    through the crawl manager: the admin page shows its progress, and a crawl
    started by hand is never run twice at once."""
    while True:
        await asyncio.sleep(context.settings.recrawl_hours * 3600)
        try:
            with context.store() as store:
                sites = [s.start_url for s in store.sites() if s.enabled]
            if sites:
                context.crawls.start_recrawl(sites)
        except TrawlError as e:  # a crawl already running, a broken store: try next time
            log.warning("scheduled recrawl skipped: %s", e)


def create_app(
    settings: Settings, header_checker: HeaderChecker | None = check_external_headers
) -> FastAPI:
    """The app; ``header_checker`` answers "Check headers" (None: not offered)."""
    context = Context(settings, header_checker)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            await asyncio.to_thread(context.stores.open)  # the schema checked once, here
        except TrawlError as e:  # a store down now may be up by the first request
            log.warning("store not opened at start: %s", e)
        context.search_pool.start()  # the workers import while the first requests come
        tasks = [asyncio.create_task(context.metrics.sample_forever())]
        if settings.recrawl_hours > 0:
            tasks.append(asyncio.create_task(_recrawl_forever(context)))
        yield
        for task in tasks:  # first, so no scheduled recrawl starts while a crawl stops
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await context.header_checks.close()
        await context.crawls.close()
        await asyncio.to_thread(context.search_pool.close)
        context.stores.close()

    app = FastAPI(
        title="Trawl",
        version=__version__,
        docs_url=None,  # served by server/docs.py, from local files
        redoc_url=None,
        lifespan=lifespan,
        description="Search the crawled sites; manage sites, crawls and the SEO report"
        " with an API key (header X-API-Key, made by `trawl keys create`).",
    )
    app.state.context = context
    errors.install(app)
    openapi.install(app, search_requires_key=settings.search_requires_key)
    app.add_middleware(RequestLimits, max_body=settings.max_request_bytes)
    # Outermost, so even the size limits' refusals carry the headers.
    app.add_middleware(SecurityHeaders)
    app.mount("/static", StaticFiles(directory=_HERE / "static"), name="static")
    docs.install(app)
    app.include_router(api_search.router)
    app.include_router(api_suggest.router)
    app.include_router(api_admin.router)
    app.include_router(ui.router)
    app.include_router(report_ui.router)

    @app.get("/metrics", tags=["search"], response_class=Response)
    def metrics(request: Request) -> Response:
        """Prometheus text: queries, latency histogram, index size, crawl counters (with
        metrics_requires_key: for a key with the admin scope)."""
        ctx = context_of(request)
        if ctx.settings.metrics_requires_key:
            ctx.caller(request, "admin", count=False)
        body = ctx.metrics.prometheus_text()
        return Response(body, media_type="text/plain; version=0.0.4; charset=utf-8")

    return app


def setup_link(app: FastAPI, base: str) -> str | None:
    """A one-time login link to the admin page at ``base`` while no API key exists
    (the first start); None once there is one (log in with a key then)."""
    ctx = context_of_app(app)
    with ctx.store() as store:
        if store.api_keys():
            return None
    return f"{base}{auth.SETUP_PATH}?token={ctx.setup.issue()}"
