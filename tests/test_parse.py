"""pipeline/parse.py: extraction, then the page's fingerprints and quality, in one call."""

from __future__ import annotations

from trawl.dedup.simhash import simhash, text_hash
from trawl.extract.html import parse_html
from trawl.pipeline.parse import parse_page
from trawl.understand.quality import quality

ARTICLE = "<p>" + "Herons wade in shallow water and wait for fish to pass. " * 40 + "</p>"
NAV = "<nav>" + "".join(f'<a href="/n{i}">menu entry {i}</a>' for i in range(30)) + "</nav>"


def test_quality_is_scored_where_the_page_is_parsed() -> None:
    with_title = parse_page(f"<title>Herons</title>{NAV}{ARTICLE}".encode(), "https://x.test/")
    untitled = parse_page(f"{NAV}{ARTICLE}".encode(), "https://x.test/")

    assert with_title.quality == quality(
        text=with_title.text,
        visible_words=with_title.visible_words,
        link_words=90,  # 30 anchors of three words
        has_title=True,
    )
    assert 0.5 < with_title.quality <= 1.0
    assert untitled.quality < with_title.quality  # the title counts
    assert parse_page(b"<title>Empty</title>", "https://x.test/").quality == 0.0


def test_the_text_is_fingerprinted_where_the_page_is_parsed() -> None:
    page = parse_page(f"<title>Herons</title>{ARTICLE}".encode(), "https://x.test/")
    assert page.text.startswith("Herons wade")
    assert (page.text_hash, page.simhash) == (text_hash(page.text), simhash(page.text))


def test_extraction_alone_leaves_the_later_stages_to_the_pipeline() -> None:
    body = f"<title>Herons</title>{ARTICLE}".encode()
    extracted = parse_html(body, "https://x.test/")
    assert (extracted.text_hash, extracted.simhash, extracted.quality) == (None, None, 0.0)
    parsed = parse_page(body, "https://x.test/")
    assert parsed.text == extracted.text and parsed.links == extracted.links
