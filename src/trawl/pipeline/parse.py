"""One HTML response through the stages that read its markup and text: extraction,
then the page's fingerprints (dedup) and its quality score (understand).

Composed here, not in extract/, so that no stage imports a later one; run where
parsing runs (the stage pool's workers), off the crawl's event loop, which every
page's storing and indexing also wait on.
"""

from __future__ import annotations

from dataclasses import replace

from trawl.dedup.simhash import simhash, text_hash
from trawl.extract.html import parse_html
from trawl.records import ParsedPage
from trawl.understand.quality import quality


def parse_page(
    body: bytes,
    url: str,
    content_type: str | None = None,
    content_language: str | None = None,
) -> ParsedPage:
    """``parse_html``'s answer with ``text_hash``, ``simhash`` and ``quality`` filled in.
    Never raises on bad markup."""
    page = parse_html(body, url, content_type, content_language)
    return replace(
        page,
        text_hash=text_hash(page.text),
        simhash=simhash(page.text),
        quality=quality(
            text=page.text,
            visible_words=page.visible_words,
            link_words=sum(len(k.anchor.split()) for k in page.links if k.element == "a"),
            has_title=bool(page.title or page.h1),
        ),
    )
