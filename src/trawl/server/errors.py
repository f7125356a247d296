"""The one place where errors become HTTP statuses.

Every answer to a bad request is a 4xx with a JSON body ``{"error": ...}``
(or the HTML page with the message, for the browser UI); nothing a client
sends can produce a 500.
"""

from __future__ import annotations

import logging
import re

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from trawl.errors import (
    ConfigError,
    Conflict,
    Forbidden,
    InvalidUrl,
    NotFound,
    QueryError,
    RateLimited,
    SearchIndexError,
    SearchTimeout,
    StoreError,
    TrawlError,
    Unauthorized,
    Unavailable,
)

log = logging.getLogger(__name__)

STATUS: tuple[tuple[type[TrawlError], int], ...] = (
    (QueryError, 400),
    (InvalidUrl, 400),
    (ConfigError, 400),  # a crawl option out of bounds, say
    (Unauthorized, 401),
    (Forbidden, 403),
    (NotFound, 404),
    (Conflict, 409),
    (RateLimited, 429),
    (Unavailable, 501),
    (SearchIndexError, 503),  # no index yet, or being rebuilt: try again later
    (SearchTimeout, 503),  # the query too slow, or the server too busy, just now
    (StoreError, 503),
)


def status_for(error: TrawlError) -> int:
    return next((code for cls, code in STATUS if isinstance(error, cls)), 500)


def headers_for(error: TrawlError) -> dict[str, str]:
    if isinstance(error, RateLimited):
        return {"Retry-After": str(error.retry_after)}
    if isinstance(error, Unauthorized):
        return {"WWW-Authenticate": 'ApiKey header="X-API-Key"'}
    return {}


# An absolute path (a data folder, the store's file) in a message: the operator's CLI
# shows it, an API answer must not.
_ABSOLUTE_PATH = re.compile(r"(?<![\w:/.])/(?:[^\s'\"/:]+/)*([^\s'\"/:]+)")


def public_message(error: TrawlError) -> str:
    """The error's message as a client may see it: absolute paths cut to their last part."""
    return _ABSOLUTE_PATH.sub(r"\1", str(error))


def error_response(error: TrawlError) -> JSONResponse:
    status = status_for(error)
    if status >= 500 and status not in {501, 503}:
        log.error("unexpected error: %s", error)
    message = public_message(error) if status >= 500 else str(error)
    return JSONResponse({"error": message}, status_code=status, headers=headers_for(error))


def install(app: FastAPI) -> None:
    @app.exception_handler(TrawlError)
    async def trawl_error(_: Request, exc: TrawlError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def bad_parameters(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            f"{'.'.join(str(p) for p in e.get('loc', ())[1:])}: {e.get('msg', 'invalid')}"
            for e in exc.errors()
        ]
        return JSONResponse({"error": "; ".join(problems) or "bad request"}, status_code=400)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse(
            {"error": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers
        )
