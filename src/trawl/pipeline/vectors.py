"""The index's companion file of page vectors (the ``semantic`` setting).

Written after the index commits, from the committed pages: a kill before it leaves
the previous file (its pages' vectors are keyed by their text, so a page changed or
added meanwhile simply has none, and search ranks it by BM25F alone); the next
refresh embeds what is missing and drops what no page has.
"""

from __future__ import annotations

from trawl.index.tantivy_index import IndexReader
from trawl.settings import Settings


def refresh_vectors(settings: Settings) -> int:
    """Embed the index's pages that have no vector yet; how many were embedded.
    Nothing when the ``semantic`` setting is off."""
    if not settings.semantic or not (settings.index_path / "meta.json").exists():
        return 0
    from trawl.search.semantic import refresh_vectors as refresh  # noqa: PLC0415 - the extra

    pages = [(hit.title, hit.text) for hit in IndexReader(settings.index_path).pages()]
    return refresh(settings.vectors_path, pages)
