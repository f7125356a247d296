"""The one place where errors become HTTP statuses.

Every answer to a bad request is a 4xx with a JSON body ``{"error": ...}``
(or the HTML page with the message, for the browser UI); nothing a client
sends can produce a 500.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from trawl.errors import InvalidUrl, QueryError, SearchIndexError, TrawlError

STATUS: tuple[tuple[type[TrawlError], int], ...] = (
    (QueryError, 400),
    (InvalidUrl, 400),
    (SearchIndexError, 503),  # no index yet, or being rebuilt: try again later
)


def status_for(error: TrawlError) -> int:
    return next((code for cls, code in STATUS if isinstance(error, cls)), 500)


def install(app: FastAPI) -> None:
    @app.exception_handler(TrawlError)
    async def trawl_error(_: Request, exc: TrawlError) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status_code=status_for(exc))

    @app.exception_handler(RequestValidationError)
    async def bad_parameters(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            f"{'.'.join(str(p) for p in e.get('loc', ())[1:])}: {e.get('msg', 'invalid')}"
            for e in exc.errors()
        ]
        return JSONResponse({"error": "; ".join(problems) or "bad request"}, status_code=400)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code)
