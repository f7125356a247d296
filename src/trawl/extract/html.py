"""HTML -> ParsedPage: title, description, headings, main text and links.

selectolax (the lexbor parser) is used for speed: it is several times faster
than lxml on this work and never raises on broken markup. The decoding order
(HTTP header, BOM, <meta charset>, then UTF-8 with replacement) is w3lib's.
"""

from __future__ import annotations

import re

from selectolax.lexbor import LexborHTMLParser, LexborNode
from w3lib.encoding import html_to_unicode

from trawl.analysis.text import words
from trawl.errors import InvalidUrl
from trawl.extract.dates import markup_dates
from trawl.extract.language import detect_language
from trawl.extract.links import occurrences
from trawl.extract.main_text import main_text
from trawl.extract.nesting import attributes_bounded, nesting_bounded
from trawl.records import ParsedPage, Section
from trawl.urls.identity import normalise

# Never part of a page's readable text. Navigation is dropped too: it repeats on
# every page and would make every query match every page of a site.
NOT_TEXT = ["script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "nav"]

# Text nodes are joined with no separator, so that inline markup ("<b>T</b>he")
# never splits a word; a space is put before every block-level tag instead, so
# that blocks ("<p>a</p><p>b</p>") never run together. Done on the markup
# because selectolax reports no element ends while walking the tree.
MIN_MAIN_TEXT = 250  # characters
# A title, a description or a heading is cut past this many characters: a hostile
# page's megabyte <title> would otherwise ride along with every result it is in.
MAX_FIELD_CHARS = 1_000

# The tag names are grouped by first letter (address, article, aside; blockquote, br;
# ...): the engine then tries one group at each "<", not every name, which halves
# the cost of this pass over the page.
_BLOCK_TAG = re.compile(
    r"<(?=/?(?:a(?:ddress|rticle|side)|b(?:lockquote|r)|caption|d(?:d|etails|ialog|iv|l|t)"
    r"|f(?:ieldset|igcaption|igure|ooter|orm)|h(?:[1-6]|eader|r)|img|l(?:egend|i)|main|nav"
    r"|o(?:l|ption)|p(?:re)?|s(?:ection|ummary)|t(?:able|body|d|foot|h|head|r)|ul)\b)",
    re.IGNORECASE,
)
# Schema.org types in Microdata (itemtype) and JSON-LD (@type): read with a
# pattern, because parsing every page's structured data for one word costs more
# than the page's whole extraction.
_MARKUP_TYPE = re.compile(
    r"""itemtype\s*=\s*["']?https?://schema\.org/(\w+)|"@type"\s*:\s*\[?\s*"(?:https?://schema\.org/)?(\w+)""",
    re.IGNORECASE,
)
_COMMENT_BLOCK = re.compile(
    r"""<[a-z][^>]*?\b(?:class|id)\s*=\s*(?:["'][^"']*|[^\s>"']*)\b(?:comment|reply|replies)""",
    re.IGNORECASE,
)
_VISIBLE_NOT_TEXT = [t for t in NOT_TEXT if t != "nav"]
# Left out of the words kept aside (``left_out``) besides NOT_TEXT: menus, headers,
# footers, sidebars, forms and links, the furniture of every page of a site.
_FURNITURE = ["header", "footer", "aside", "form", "button", "select", "label", "a", "dialog"]


def parse_html(
    body: bytes,
    url: str,
    content_type: str | None = None,
    content_language: str | None = None,
) -> ParsedPage:
    """Parse one HTML document fetched from ``url``. Never raises on bad markup.

    ``content_type`` and ``content_language`` are the response's header values. The
    fingerprints and the quality score are left empty: pipeline/parse.py adds them.
    """
    text = _decode(body, content_type)
    # Every parse below is quadratic in the nesting and in one element's attributes.
    text = nesting_bounded(attributes_bounded(text))
    tree = LexborHTMLParser(_BLOCK_TAG.sub(" <", text))
    base = _base_url(tree, url)
    root = tree.root
    html_lang = root.attributes.get("lang") if root is not None else None

    title = _title(tree)[:MAX_FIELD_CHARS]
    description = _meta_content(tree, "description")[:MAX_FIELD_CHARS]
    h1 = _headings_text(tree, "h1")
    h2 = _headings_text(tree, "h2")
    headed = _headings(tree)  # before the tree loses its navigation below
    links, dropped = occurrences(tree, base)
    meta = _meta_pairs(tree)

    # The article or main content without navigation and boilerplate. On a page
    # with little text (or a page of links) the scorer has too little to judge
    # by: the visible text without navigation, scripts and styles stands in.
    text_of_page = " ".join(main_text(text, url).split())
    body_node = tree.body
    visible_words = 0
    if body_node is not None:
        # Boilerplate (navigation included) counts: quality compares the two.
        body_node.strip_tags(_VISIBLE_NOT_TEXT)
        visible_words = len(body_node.text(separator="").split())
    aside = ""
    if body_node is not None:
        body_node.strip_tags(NOT_TEXT)
        whole = False
        if len(text_of_page) < MIN_MAIN_TEXT:
            # A page that marks its content (<main>) stands in by it: the body around it
            # is the site's furniture (mdBook's help popup and theme menu around a short
            # chapter's list of links), and its words are kept aside below.
            main = _main_element(tree)
            marked = _collapse(main.text(separator="")) if main is not None else ""
            whole = not marked
            text_of_page = _collapse(body_node.text(separator="")) if whole else marked
        if not whole:
            # Page furniture repeats on every page of a site: its words left out would
            # match every page (a site's menu names "changelog" and "downloads").
            body_node.strip_tags(_FURNITURE)
            aside = left_out(body_node.text(separator=""), text_of_page)
    lang = detect_language(html_lang, content_language, text_of_page or title)
    sections = locate_sections(headed, text_of_page)
    published, published_source, page_modified = markup_dates(text, url)
    lowered = text.lower()
    return ParsedPage(
        title=title,
        description=description,
        h1=h1,
        h2=h2,
        text=text_of_page,
        lang=lang,
        word_count=len(text_of_page.split()),
        links=links,
        links_dropped=dropped,
        meta=meta,
        canonical=_canonical(tree, base),
        refresh=_http_equiv(tree, "refresh"),
        published=published,
        published_source=published_source,
        page_modified=page_modified,
        visible_words=visible_words,
        markup_types=_markup_types(text, lowered),
        comment_blocks=_comment_blocks(text, lowered),
        sections=sections,
        aside=aside,
    )


_SECTION_TAGS = "h1, h2, h3, h4"
# A reference page has hundreds of headings (the rustc book's warn-by-default lint listing
# 419, a SUMO page 323 h2): all are sections. Each heading is looked for in the text after
# the one before; one the text lacks costs a scan of the rest of the text, so a hostile
# page of thousands of those is looked through only until MAX_MISSED_HEADINGS are missed.
MAX_HEADINGS = 1024
MAX_MISSED_HEADINGS = 256
_PERMALINK_SIGNS = " ¶#§\U0001f517"
_ANCHOR_UP = 3  # ancestors that may carry a heading's id (DocBook: <div id=...><h2>)


def _headings(tree: LexborHTMLParser) -> list[tuple[str, int, str]]:
    """(text, level, anchor) of every h1-h4, in document order."""
    found = []
    for node in tree.css(_SECTION_TAGS)[:MAX_HEADINGS]:
        # Permalink signs (Sphinx and MkDocs put "¶" in the heading) are not its title.
        title = _text(node).strip(_PERMALINK_SIGNS)
        if title:
            found.append((title, int((node.tag or "h1")[1]), _anchor(node)))
    return found


def _anchor(heading: LexborNode) -> str:
    """The fragment that shows ``heading``: its id, an anchor inside it, or the id of an
    element it opens (the first child of a <section id> or a DocBook <div id>)."""
    if heading.id:
        return heading.id
    for inner in heading.css("[id], a[name]"):
        return inner.id or inner.attributes.get("name") or ""
    node = heading
    for _ in range(_ANCHOR_UP):
        parent = node.parent
        if parent is None or parent.tag in {"body", "html"}:
            break
        first = parent.child
        while first is not None and first.tag in {"-text", "_text", "-comment", "_comment"}:
            first = first.next
        if first is None or first.mem_id != node.mem_id:
            break  # the parent holds something before the heading: its id is not the heading's
        if parent.id:
            return parent.id
        node = parent
    return ""


MAX_ASIDE_WORDS = 2000
MAX_MAIN_ELEMENTS = 8  # a page of thousands of <main> elements is read no further


def _main_element(tree: LexborHTMLParser) -> LexborNode | None:
    """The page's <main> (or role=main) that is shown: where it says its content is."""
    for node in tree.css("main, [role=main]")[:MAX_MAIN_ELEMENTS]:
        if "hidden" not in node.attributes:
            return node
    return None


def left_out(readable: str, main: str) -> str:
    """The words of the readable text (navigation aside) that the main text lacks, once
    each: a malformed page's stray paragraph stays searchable (``<p>word <div><table>``
    puts ``word`` outside the block main-text extraction keeps)."""
    kept = set(words(main))
    missing = dict.fromkeys(w for w in words(readable) if w not in kept)
    return " ".join(list(missing)[:MAX_ASIDE_WORDS])


def locate_sections(headings: list[tuple[str, int, str]], text: str) -> tuple[Section, ...]:
    """Sections of ``text`` from its headings, each found after the one before it.

    A heading not in the text (in navigation, or dropped with boilerplate) opens no section;
    nor does one whose words are found only past the next heading, which is then found
    before them and nowhere after: its own line was left out (an h1 repeating the page's
    title) and its words come back later ("Overriding Build Scripts"), and taking them
    would lose every heading in between.
    """
    sections: list[Section] = []
    cursor = 0
    ahead = (-1, -1)  # the next heading's place after the one just taken: found once
    missed = 0
    for number, (title, level, anchor) in enumerate(headings):
        at = ahead[1] if ahead[0] == number else text.find(title, cursor)
        if at == -1:
            missed += 1
            if missed == MAX_MISSED_HEADINGS:
                break
            continue
        if number + 1 < len(headings):
            following = headings[number + 1][0]
            after = text.find(following, at + len(title))
            if after == -1 and text.find(following, cursor, at) != -1:
                continue
            ahead = (number + 1, after)
        sections.append(Section(title=title, level=level, anchor=anchor, start=at))
        cursor = at + len(title)
    return tuple(sections)


def _markup_types(text: str, lowered: str) -> tuple[str, ...]:
    # Most pages carry neither word: a substring search (memchr speed) rules the
    # pattern out. ``lowered`` is ``text.lower()``; the pattern ignores case, and of
    # the four non-ASCII letters it would take for ASCII ones (U+0130, U+0131,
    # U+017F, U+212A: dotted and dotless i, long s, Kelvin sign), none stands for a
    # letter of "temtype" or "@type", so the check never misses a match.
    if "temtype" not in lowered and '"@type"' not in lowered:
        return ()
    return tuple(dict.fromkeys(a or b for a, b in _MARKUP_TYPE.findall(text)))


def _comment_blocks(text: str, lowered: str) -> int:
    """Elements whose class or id names comments or replies (``_COMMENT_BLOCK``)."""
    # Only a tag around an occurrence of these words can match: the pattern is
    # tried at the start of those tags alone, where scanning the whole page for it
    # cost as much as parsing the page (pages about comments say the word often).
    starts: set[int] = set()
    for word in ("comment", "reply", "replie"):
        at = lowered.find(word)
        while at != -1:
            tag = lowered.rfind("<", 0, at)
            if tag != -1 and lowered.find(">", tag, at) == -1:
                starts.add(tag)
            at = lowered.find(word, at + len(word))
    return sum(1 for start in starts if _COMMENT_BLOCK.match(text, start))


# Codecs Python's registry knows by a name a page may give, which decode no HTML: w3lib
# hands any known name to bytes.decode, and these raise on most bytes or turn them into
# something else. (Bytes-to-bytes codecs, such as zlib and base64, raise LookupError.)
_NOT_PAGE_ENCODINGS = frozenset(
    {"undefined", "idna", "punycode", "unicode-escape", "raw-unicode-escape"}
)


def _decode(body: bytes, content_type: str | None) -> str:
    """``body`` as text in w3lib's order, a label naming no text encoding ignored, as
    browsers ignore labels outside the Encoding Standard: first in the header (the
    ``<meta>`` is read instead), then in the ``<meta>`` too (UTF-8, else windows-1252)."""
    for header in (content_type, None):
        try:
            encoding, text = html_to_unicode(header, body, auto_detect_fun=_detect_encoding)
        except (LookupError, UnicodeError):
            continue
        if encoding not in _NOT_PAGE_ENCODINGS:
            return text
    return body.decode(_detect_encoding(body), errors="replace")


def _detect_encoding(body: bytes) -> str:
    """The last resort, when neither header, BOM nor <meta> names an encoding.

    Valid UTF-8 is UTF-8. Anything else is read as windows-1252, which is what
    browsers fall back to in Western locales: statistical detectors
    (charset-normalizer) measured worse on short Nordic pages, taking Danish
    windows-1252 text for windows-1250.
    """
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return "cp1252"
    return "utf-8"


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _headings_text(tree: LexborHTMLParser, tag: str) -> tuple[str, ...]:
    """The non-empty ``tag`` headings' text, each cut (their number is bounded by the
    body's size; a SUMO docs page has 323 <h2>)."""
    return tuple(t[:MAX_FIELD_CHARS] for t in (_text(node) for node in tree.css(tag)) if t)


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


def _meta_pairs(tree: LexborHTMLParser) -> tuple[tuple[str, str], ...]:
    """(name, content) of every <meta name>: directives are read from these."""
    return tuple(
        ((n.attributes.get("name") or "").strip(), n.attributes.get("content") or "")
        for n in tree.css("meta[name]")
    )


def _http_equiv(tree: LexborHTMLParser, name: str) -> str | None:
    for node in tree.css("meta[http-equiv]"):
        if (node.attributes.get("http-equiv") or "").strip().lower() == name:
            return node.attributes.get("content") or ""
    return None


def _canonical(tree: LexborHTMLParser, base: str) -> str | None:
    for node in tree.css("link[rel][href]"):
        if "canonical" in (node.attributes.get("rel") or "").lower().split():
            try:
                return normalise(node.attributes.get("href") or "", base=base)
            except InvalidUrl:
                return None
    return None


def _meta_content(tree: LexborHTMLParser, name: str) -> str:
    for node in tree.css("meta[name]"):
        if (node.attributes.get("name") or "").strip().lower() == name:
            return _collapse(node.attributes.get("content") or "")
    return ""


def _base_url(tree: LexborHTMLParser, url: str) -> str:
    node = tree.css_first("base[href]")
    href = node.attributes.get("href") if node is not None else None
    if href:
        try:
            return normalise(href, base=url)
        except InvalidUrl:
            pass
    return url
