"""Sitemaps: which URLs does a site list, and can its dates be believed?

Pure: bytes in, records out. The crawler fetches the candidates
(``candidate_urls``), hands each body to ``parse_sitemap``, follows
``children`` of an index up to ``MAX_INDEX_DEPTH`` levels and seeds its
frontier with ``entries``.
"""

from trawl.sitemaps.parse import (
    MAX_BYTES,
    MAX_INDEX_DEPTH,
    MAX_URLS,
    Sitemap,
    SitemapEntry,
    candidate_urls,
    decompress,
    parse_sitemap,
)

__all__ = [
    "MAX_BYTES",
    "MAX_INDEX_DEPTH",
    "MAX_URLS",
    "Sitemap",
    "SitemapEntry",
    "candidate_urls",
    "decompress",
    "parse_sitemap",
]
