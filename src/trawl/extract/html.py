"""HTML -> ParsedPage: title, description, headings, main text and links.

selectolax (the lexbor parser) is used for speed: it is several times faster
than lxml on this work and never raises on broken markup. The decoding order
(HTTP header, BOM, <meta charset>, then UTF-8 with replacement) is w3lib's.
"""

from __future__ import annotations

import functools
import re

from selectolax.lexbor import LexborHTMLParser, LexborNode
from w3lib.encoding import html_to_unicode

from trawl.errors import InvalidUrl
from trawl.extract.language import detect_language
from trawl.records import Link, ParsedPage
from trawl.urls.identity import normalise

MAX_LINKS = 5_000  # a page listing more links than this is not worth following further
MAX_ANCHOR_CHARS = 300
# Never part of a page's readable text. Navigation is dropped too: it repeats on
# every page and would make every query match every page of a site.
NOT_TEXT = ["script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "nav"]

# Text nodes are joined with no separator, so that inline markup ("<b>T</b>he")
# never splits a word; a space is put before every block-level tag instead, so
# that blocks ("<p>a</p><p>b</p>") never run together. Done on the markup
# because selectolax reports no element ends while walking the tree.
_BLOCK_TAG = re.compile(
    r"<(?=/?(?:address|article|aside|blockquote|br|caption|dd|details|dialog|div|dl|dt|fieldset"
    r"|figcaption|figure|footer|form|h[1-6]|header|hr|img|legend|li|main|nav|ol|option|p|pre"
    r"|section|summary|table|tbody|td|tfoot|th|thead|tr|ul)\b)",
    re.IGNORECASE,
)


def parse_html(
    body: bytes,
    url: str,
    content_type: str | None = None,
    content_language: str | None = None,
) -> ParsedPage:
    """Parse one HTML document fetched from ``url``. Never raises on bad markup.

    ``content_type`` and ``content_language`` are the response's header values.
    """
    _, text = html_to_unicode(content_type, body)
    tree = LexborHTMLParser(_BLOCK_TAG.sub(" <", text))
    base = _base_url(tree, url)
    root = tree.root
    html_lang = root.attributes.get("lang") if root is not None else None

    title = _title(tree)
    description = _meta_content(tree, "description")
    h1 = tuple(t for t in (_text(n) for n in tree.css("h1")) if t)
    h2 = tuple(t for t in (_text(n) for n in tree.css("h2")) if t)
    links = _links(tree, base)

    body_node = tree.body
    main_text = ""
    if body_node is not None:
        body_node.strip_tags(NOT_TEXT)
        main_text = _collapse(body_node.text(separator=""))
    lang = detect_language(html_lang, content_language, main_text or title)
    return ParsedPage(
        title=title,
        description=description,
        h1=h1,
        h2=h2,
        text=main_text,
        lang=lang,
        word_count=len(main_text.split()),
        links=links,
    )


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _text(node: LexborNode) -> str:
    return _collapse(node.text(separator=""))


def _title(tree: LexborHTMLParser) -> str:
    # The first <title> wins, wherever it sits (some sites put it in <body>),
    # except an SVG's <title>, which names a picture, not the page.
    for node in tree.css("title"):
        parent = node.parent
        in_svg = False
        while parent is not None:
            if parent.tag == "svg":
                in_svg = True
                break
            parent = parent.parent
        if not in_svg:
            title = _text(node)
            if title:
                return title
    return ""


def _meta_content(tree: LexborHTMLParser, name: str) -> str:
    for node in tree.css("meta[name]"):
        if (node.attributes.get("name") or "").strip().lower() == name:
            return _collapse(node.attributes.get("content") or "")
    return ""


@functools.lru_cache(maxsize=32_768)
def _resolve(href: str, base: str) -> str | None:
    # Sites repeat the same links (navigation, footers) on every page, and
    # normalising is the costliest step of link extraction: remember answers.
    try:
        return normalise(href, base=base)
    except InvalidUrl:
        return None


def _base_url(tree: LexborHTMLParser, url: str) -> str:
    node = tree.css_first("base[href]")
    href = node.attributes.get("href") if node is not None else None
    if href:
        try:
            return normalise(href, base=url)
        except InvalidUrl:
            pass
    return url


def _links(tree: LexborHTMLParser, base: str) -> tuple[Link, ...]:
    links: list[Link] = []
    base_dir = base.split("?", 1)[0].rsplit("/", 1)[0] + "/"
    for node in tree.css("a[href]"):
        href = (node.attributes.get("href") or "").strip()
        if not href or href.startswith("#"):
            continue
        # A query-only link depends on the whole base URL; any other link only on
        # the base's folder, which every page of a flat site shares.
        target = _resolve(href, base if href.startswith("?") else base_dir)
        if target is None:
            continue  # mailto:, javascript:, malformed: not a crawlable link
        anchor = _text(node)
        if not anchor:
            img = node.css_first("img[alt]")
            anchor = _collapse(img.attributes.get("alt") or "") if img is not None else ""
        rel = (node.attributes.get("rel") or "").lower().split()
        links.append(Link(target, anchor[:MAX_ANCHOR_CHARS], "nofollow" in rel))
        if len(links) >= MAX_LINKS:
            break
    return tuple(links)
