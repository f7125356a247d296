"""/api/suggest: completions for the search box, as a person types."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from trawl.search.suggest import MAX_SUGGESTIONS, suggest
from trawl.server.context import context_of

router = APIRouter()


@router.get("/api/suggest", tags=["search"])
def api_suggest(
    request: Request,
    q: Annotated[str, Query(max_length=200, description="What has been typed so far.")],
    limit: Annotated[
        int, Query(ge=1, le=MAX_SUGGESTIONS, description="Completions at most.")
    ] = MAX_SUGGESTIONS,
) -> dict[str, Any]:
    """Page titles that complete the text typed so far (its last word as a prefix)."""
    ctx = context_of(request)
    ctx.limit_search(request)
    return {"query": q, "suggestions": suggest(ctx.index.get(), q, limit)}
