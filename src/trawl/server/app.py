"""The FastAPI application: ``/api/search``, ``/healthz`` and the HTML search page."""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from trawl import __version__
from trawl.errors import QueryError, SearchIndexError, TrawlError
from trawl.index.tantivy_index import IndexReader
from trawl.pipeline import recrawl_sites
from trawl.records import SearchPage
from trawl.search.searcher import search
from trawl.server import errors
from trawl.settings import Settings
from trawl.store import open_store

_HERE = Path(__file__).parent
log = logging.getLogger(__name__)


def page_json(page: SearchPage) -> dict[str, Any]:
    """The API's answer; ``trawl search --json`` prints the same shape."""
    return {
        "query": page.query,
        "total": page.total,
        "took_ms": page.took_ms,
        "page": page.page,
        "per_page": page.per_page,
        "results": [
            {
                "url": h.url,
                "title": h.title,
                "snippet": h.snippet,
                "score": h.score,
                "lang": h.lang,
                "discussed_on": [
                    {"host": d.host, "url": d.url, "quote": d.quote} for d in h.discussed_on
                ],
            }
            for h in page.hits
        ],
    }


class _Index:
    """Opens the index lazily, so the server starts before the first crawl."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._reader: IndexReader | None = None

    def get(self) -> IndexReader:
        if self._reader is None:
            self._reader = IndexReader(self._path)
        return self._reader


async def _recrawl_forever(settings: Settings) -> None:
    """Re-crawl every enabled site every ``recrawl_hours``, for as long as the server runs."""
    while True:
        await asyncio.sleep(settings.recrawl_hours * 3600)
        try:
            store = open_store(settings)
            try:
                await recrawl_sites(settings, store)
            finally:
                store.close()
        except TrawlError as e:  # a crawl already running, a broken store: try next time
            log.warning("scheduled recrawl failed: %s", e)


def create_app(settings: Settings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        task = None
        if settings.recrawl_hours > 0:
            task = asyncio.create_task(_recrawl_forever(settings))
        yield
        if task is not None:
            task.cancel()

    app = FastAPI(title="Trawl", version=__version__, docs_url="/docs", lifespan=lifespan)
    errors.install(app)
    index = _Index(settings.index_path)
    templates = Jinja2Templates(directory=_HERE / "templates")
    app.mount("/static", StaticFiles(directory=_HERE / "static"), name="static")

    @app.get("/healthz")
    def healthz() -> dict[str, Any]:
        try:
            docs: int | None = index.get().num_docs()
        except SearchIndexError:
            docs = None
        return {"status": "ok", "version": __version__, "documents": docs}

    @app.get("/api/search")
    def api_search(
        q: Annotated[str, Query(max_length=1000, description="the query")],
        page: Annotated[int, Query(ge=1, le=1000)] = 1,
        per_page: Annotated[int | None, Query(ge=1, description="results a page")] = None,
    ) -> dict[str, Any]:
        return page_json(search(index.get(), q, settings, page=page, per_page=per_page))

    @app.get("/", response_class=HTMLResponse)
    def home(request: Request, q: str = "", page: str = "1") -> HTMLResponse:
        context: dict[str, Any] = {"q": q, "result": None, "error": None, "pages": []}
        status = 200
        if q.strip():
            try:
                number = int(page) if page.isdigit() else 1
                if number < 1:
                    raise QueryError("page must be 1 or more")
                result = search(index.get(), q, settings, page=number)
                context["result"] = result
                last = max(1, math.ceil(result.total / result.per_page))
                context["pages"] = list(range(max(1, number - 4), min(last, number + 4) + 1))
                context["last_page"] = last
            except TrawlError as e:
                context["error"] = str(e)
                status = errors.status_for(e)
        return templates.TemplateResponse(request, "search.html", context, status_code=status)

    return app
