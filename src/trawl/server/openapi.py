"""The OpenAPI document, made to say what the server sends.

FastAPI documents a 422 ``HTTPValidationError`` for every route with
parameters, while ``errors.py`` answers bad input with a 400 ``{"error": ...}``;
it knows nothing of the 401, 403, 404, 409, 429 and 503 answers, and calls
the CSV, Prometheus and OpenSearch answers JSON. The document FastAPI makes is
corrected here, once, so /docs and clients (and schemathesis in the tests,
which checks every answer against it) see the truth.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

ERROR = {
    "type": "object",
    "properties": {"error": {"type": "string", "description": "What was wrong."}},
    "required": ["error"],
}
_WHY = {
    "400": "Bad parameters or body.",
    "401": "No key (or login), an unknown one, or an expired one.",
    "403": "The key lacks the scope, or a cookie-authenticated change came from another origin.",
    "404": "Nothing by that name.",
    "409": "Not now: a crawl (or a header check) is running, or none is.",
    "413": "Request body too large.",
    "414": "URL too long.",
    "429": "Over the rate limit; Retry-After says when to try again.",
    "501": "Not offered by this build.",
    "503": "No index yet, the index is being rebuilt, the store is unavailable, or the"
    " search took too long (over search_worker_timeout).",
}
# Media types of the answers that are not JSON.
_MEDIA = {
    "/metrics": ("text/plain", {"type": "string"}),
    "/opensearch.xml": ("application/opensearchdescription+xml", {"type": "string"}),
}
# Answers particular routes give, beyond what every route of their kind gives.
_CONFLICTS = (
    "/api/admin/crawls",
    "/api/admin/crawls/stop",
    "/api/admin/recrawl",
    "/api/admin/evict",
    "/api/admin/report/external/check",
    "/api/admin/sites/{host}",
)


# Operations that name something which may not exist (a page, a host to compare).
_NOT_FOUND = (
    "/api/admin/report/page",
    "/api/admin/report/links.csv",
    "/api/admin/report/changes",
    "/api/admin/report/changes.csv",
)
_SEARCHES = ("/api/search", "/api/suggest")  # the search key and rate limit apply to both


def _statuses(path: str, method: str, op: dict[str, Any], search_key: bool) -> list[str]:
    codes = ["503"]
    if op.get("parameters") or op.get("requestBody"):
        codes += ["400", "414"]
    if op.get("requestBody"):
        codes.append("413")
    if path.startswith("/api/admin") or path == "/metrics" or (search_key and path in _SEARCHES):
        codes += ["401", "403", "429"]
    if path in _SEARCHES:
        codes.append("429")
    if "{" in path or path in _NOT_FOUND:
        codes.append("404")
    if method == "post" and path in ("/api/admin/crawls", "/api/admin/recrawl"):
        codes.append("404")  # no enabled site to crawl
    if path in _CONFLICTS and method in ("post", "delete"):
        codes.append("409")
    if path == "/api/admin/report/external/check" and method == "post":
        codes.append("501")
    return sorted(set(codes))


def corrected(document: dict[str, Any], *, search_requires_key: bool) -> dict[str, Any]:
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    schemas["Error"] = ERROR
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path, operations in document.get("paths", {}).items():
        for method, op in operations.items():
            responses: dict[str, Any] = op.setdefault("responses", {})
            responses.pop("422", None)
            for code in _statuses(path, method, op, search_requires_key):
                responses[code] = {"description": _WHY[code], "content": error}
            ok = next(c for c in responses if c.startswith("2"))
            if path.endswith(".csv"):
                media: tuple[str, dict[str, Any]] | None = ("text/csv", {"type": "string"})
            else:
                media = _MEDIA.get(path)
            if media is not None:
                responses[ok]["content"] = {media[0]: {"schema": media[1]}}
            elif "content" not in responses[ok]:
                responses[ok]["content"] = {"application/json": {"schema": {}}}
    return document


def install(app: FastAPI, *, search_requires_key: bool) -> None:
    original = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = corrected(original(), search_requires_key=search_requires_key)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
