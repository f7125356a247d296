"""The search API's answer, built from the index alone: a search opens no store.

Its own module, without the web framework, because search workers
(``search_pool.py``) build it too.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from trawl.records import SearchPage


def page_json(page: SearchPage) -> dict[str, Any]:
    """The API's answer; ``trawl search --json`` prints the same shape. Built from the
    index alone: a search opens no store."""
    results = []
    for h in page.hits:
        results.append(
            {
                "url": h.url,
                "title": h.title,
                "snippet": h.snippet,
                "score": h.score,
                "lang": h.lang,
                "published": h.published.isoformat() if h.published else None,
                "modified": h.modified.isoformat() if h.modified else None,
                "modified_source": h.modified_source,
                "discussed_on": [asdict(d) for d in h.discussed_on],
                # The part of the page that answers best: its heading path and deep link.
                "section": (
                    {"title": h.section.title, "path": list(h.section.path), "url": h.section.url}
                    if h.section
                    else None
                ),
            }
        )
    return {
        "query": page.query,
        "total": page.total,
        "took_ms": page.took_ms,
        "page": page.page,
        "per_page": page.per_page,
        # The query with misspelt words corrected, when the corrections found the results.
        "did_you_mean": page.did_you_mean,
        "results": results,
    }
