"""/docs: Swagger UI over /openapi.json, from files on this server only.

Swagger UI's files come from the ``fastapi-offline`` package (pinned in
pyproject), so the page works with no network and runs no script from a
CDN with the admin's authority. FastAPI's own /docs page starts Swagger UI
with an inline script, which the CSP refuses: a static ``docs.js`` does it.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = Path(str(files("fastapi_offline") / "static"))

router = APIRouter(include_in_schema=False)

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Trawl API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/static/docs.js"></script>
</body>
</html>
"""


@router.get("/docs", response_class=HTMLResponse)
def docs() -> HTMLResponse:
    return HTMLResponse(PAGE)


def install(app: FastAPI) -> None:
    app.mount("/docs/assets", StaticFiles(directory=ASSETS), name="docs-assets")
    app.include_router(router)
