"""The main text of an HTML page: the article, without navigation, headers, footers
and boilerplate.

A readability-style scorer over selectolax's lexbor tree. Page furniture (nav,
header, footer, aside, hidden elements, classes such as "comment", "share",
"related", "cookie") is dropped first; every paragraph then gives points to the
containers around it; the best container, widened to the sections of the same
article and joined by its siblings that score nearly as well, is the content;
lists, tables and blocks inside it that are mostly links are cut out, and a line
that only repeats the page's title goes.

On the article-extraction benchmark (181 news and blog pages with ground truth,
bench/extraction.py) this scores above trafilatura at several times its speed;
every option tried, with its figures, is in bench/RESULTS.md.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser, LexborNode

# Never part of the main text, with everything inside them. Figures go too: the
# captions and credits of photos are not the article's prose.
NEVER_TEXT = [
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "canvas",
    "iframe",
    "object",
    "embed",
    "button",
    "select",
    "input",
    "textarea",
    "dialog",
    "figure",
    "figcaption",
    "picture",
    "video",
    "audio",
    "map",
]
HIDDEN = (
    "[hidden], [aria-hidden=true], [style*='display:none' i], [style*='display: none' i],"
    " [style*='visibility:hidden' i], [style*='visibility: hidden' i]"
)
# Page furniture, by tag and role, then by words in a class or id. Either is dropped
# only while it holds under half of the page's text: some sites wrap the whole page
# in a <header>, or in a div whose class names a "sidebar" layout.
FURNITURE = "nav, aside, header, footer, menu, [role=navigation], [role=banner], [role=contentinfo]"
UNLIKELY_WORDS = (
    "-ad-",
    "ad-break",
    "advert",
    "agegate",
    "ai2html",
    "author",
    "banner",
    "breadcrumb",
    "byline",
    "caption",
    "combx",
    "comment",
    "community",
    "cookie",
    "cover-wrap",
    "disqus",
    "extra",
    "footer",
    "gdpr",
    "header",
    "legends",
    "menu",
    "newsletter",
    "pager",
    "pagination",
    "popup",
    "promo",
    "related",
    "remark",
    "replies",
    "rss",
    "share",
    "shoutbox",
    "sidebar",
    "skyscraper",
    "social",
    "sponsor",
    "subscribe",
    "supplemental",
    "tags",
    "widget",
    "yom-remote",
)
UNLIKELY = re.compile("|".join(re.escape(word) for word in UNLIKELY_WORDS))
# A class or id with one of these words names content, whatever else it says
# ("article-header", "main-sidebar-layout").
CONTENT_WORDS = ("article", "body", "content", "main", "column")
NEVER_DROPPED = frozenset({"html", "body", "article", "main"})

# Class weights: a container named like content is likelier the article; one named
# like a comment thread, a share bar or an advertisement less likely.
POSITIVE = re.compile(
    r"article|body|content|entry|hentry|h-entry|main|page|pagination|post|text|blog|story",
    re.IGNORECASE,
)
NEGATIVE = re.compile(
    r"-ad-|hidden|^hid$| hid$| hid |^hid |banner|combx|comment|com-|contact|foot|footer|footnote"
    r"|gdpr|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper"
    r"|sponsor|shopping|tags|tool|widget",
    re.IGNORECASE,
)

# Elements that start a new line of text; the others flow inline.
BLOCK_TAGS = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "br",
        "caption",
        "center",
        "dd",
        "details",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "html",
        "li",
        "main",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "ul",
    }
)
PARAGRAPH_TAGS = "p, pre, td, blockquote"
# Elements whose own text (not their children's) can be a paragraph: many sites
# write paragraphs as text broken by <br> straight inside a div or a span.
LOOSE_TEXT_TAGS = "div, span, font, section, article, center, b, strong, em, i"
MIN_PARAGRAPH = 25  # characters: shorter text is a label, a date, a button
# Readability's starting scores: a div is the likeliest wrapper of prose, a list or
# a heading the least likely.
TAG_SCORE = {
    "div": 5.0,
    "pre": 3.0,
    "td": 3.0,
    "blockquote": 3.0,
    "address": -3.0,
    "ol": -3.0,
    "ul": -3.0,
    "dl": -3.0,
    "dd": -3.0,
    "dt": -3.0,
    "li": -3.0,
    "form": -3.0,
    "h1": -5.0,
    "h2": -5.0,
    "h3": -5.0,
    "h4": -5.0,
    "h5": -5.0,
    "h6": -5.0,
    "th": -5.0,
}
ANCESTOR_LEVELS = 3  # a paragraph gives points to this many containers around it
LIST_PAGE_BELOW = 10.0  # best score: under it, the page's content is lists, not prose
RIVAL_SHARE = 0.75  # candidates this close to the best are parts of the same article
EXPAND_SHARE = 0.8  # an ancestor is taken when this share of what it adds is paragraphs
SIBLING_SHARE = 0.2  # a sibling scoring this share of the best container joins it
CLEAN_LINKS_HIGH = 0.5  # link density that cuts a block inside the content
CLEAN_LINKS_LOW = 0.25  # ... or this one, for a block not named like content
CLEAN_MAX_SHARE = 0.5  # a block holding more of the content than this is the content
RETRY_BELOW = 250  # characters: so little text means the class rules cut the article
# Deeper trees are broken or hostile (real pages nest under 60 levels): the scoring
# walks up from paragraphs, which would cost depth x size on them.
MAX_DEPTH = 128
WORD = re.compile(r"\w+")
SENTENCE_END = re.compile(r"\.( |$)")
# A line that only labels an advertisement slot.
AD_LABEL = re.compile(
    r"^\W*(advertisement|advertising|advert|ads?|sponsored|anzeige|publicit[ée]|publicidad"
    r"|pubblicit[àa]|реклама)\W*$",
    re.IGNORECASE,
)


def main_text(html: str, url: str | None = None) -> str:
    """The main text of ``html``, paragraphs separated by newlines; "" when there is none.

    Pure, and never raises on broken markup. ``url`` is accepted for callers that
    have it; no rule depends on it yet.
    """
    del url
    text = _extract(html, drop_unlikely=True)
    if len(text) < RETRY_BELOW:
        # A class rule can name the article's own wrapper ("widget Blog"): try again
        # without them, as readability does, and keep the longer answer.
        second = _extract(html, drop_unlikely=False)
        if len(second) > len(text):
            text = second
    return text


@dataclass
class _Candidate:
    node: LexborNode
    score: float


@dataclass(frozen=True)
class _Paragraph:
    node: LexborNode  # the paragraph's element
    container: LexborNode  # the nearest element it gives points to
    text: str


def _extract(html: str, *, drop_unlikely: bool) -> str:
    tree = LexborHTMLParser(html)
    body = tree.body
    if body is None:
        return ""
    titles = _titles(tree)
    tree.strip_tags(NEVER_TEXT)
    if _deeper_than(body, MAX_DEPTH):
        return "\n".join(_lines(body))
    _drop_furniture(tree, body, drop_unlikely=drop_unlikely)
    paragraphs = _find_paragraphs(tree)
    candidates = _score(paragraphs)
    if max((c.score for c in candidates.values()), default=0.0) < LIST_PAGE_BELOW:
        # No prose worth the name: the content may be lists (a changelog, an index).
        paragraphs += _list_items(tree)
        candidates = _score(paragraphs)
    if not candidates:
        return "\n".join(_lines(body))
    top = _expand(_choose(candidates), paragraphs)
    parts = _gather(top, candidates)
    for part in parts:
        _clean(part)
    lines = [line for part in parts for line in _lines(part)]
    # Only a line not much longer than a title can repeat it (as words, punctuation gone).
    longest = 2 * max((len(title) for title in titles), default=0) + 10
    return "\n".join(
        line
        for line in lines
        if not AD_LABEL.match(line) and not (len(line) <= longest and _repeats_title(line, titles))
    )


def _deeper_than(root: LexborNode, limit: int) -> bool:
    # Elements come in document order: an element's ancestors are the open ones.
    open_ids: list[int] = []
    for node in root.traverse():
        parent = node.parent
        parent_id = parent.mem_id if parent is not None else 0
        while open_ids and open_ids[-1] != parent_id:
            open_ids.pop()
        open_ids.append(node.mem_id)
        if len(open_ids) > limit:
            return True
    return False


def _words(text: str) -> str:
    return " ".join(WORD.findall(text.lower()))


def _titles(tree: LexborHTMLParser) -> list[str]:
    titles = [_words(node.text()) for node in tree.css("head title")]
    for node in tree.css("meta[property='og:title'], meta[name='twitter:title']"):
        titles.append(_words(node.attributes.get("content") or ""))
    return [title for title in titles if title]


def _repeats_title(line: str, titles: list[str]) -> bool:
    # The headline is the page's title, indexed on its own; in the text it is noise.
    words = _words(line)
    return " " in words and any(f" {words} " in f" {title} " for title in titles)


# -- furniture --------------------------------------------------------------------


def _drop_furniture(tree: LexborHTMLParser, body: LexborNode, *, drop_unlikely: bool) -> None:
    half = len(body.text()) / 2
    # Hidden text can be the article itself, waiting for a script to show it.
    doomed = [node for node in tree.css(HIDDEN) if len(node.text()) < half]
    for node in tree.css(FURNITURE):
        if not _names_content(_names(node)) and len(node.text()) < half:
            doomed.append(node)
    if drop_unlikely:
        for node in tree.css("[class], [id]"):
            unlikely = _is_unlikely(_names(node)) and node.tag not in NEVER_DROPPED
            if unlikely and len(node.text()) < half:
                doomed.append(node)
    _remove(doomed)


def _names(node: LexborNode) -> str:
    attributes = node.attributes
    return f"{attributes.get('class') or ''} {attributes.get('id') or ''}"


def _names_content(names: str) -> bool:
    lowered = names.lower()
    return any(word in lowered for word in CONTENT_WORDS)


@functools.lru_cache(maxsize=8192)
def _is_unlikely(names: str) -> bool:
    # Cached: a site repeats the same few hundred class names on every page, and a
    # regex per element was the costliest step of the whole extraction.
    return UNLIKELY.search(names.lower()) is not None and not _names_content(names)


def _remove(nodes: list[LexborNode]) -> None:
    # Decompose only the outermost of the doomed nodes: once a node is destroyed,
    # touching one of its descendants would read freed memory.
    unique = {node.mem_id: node for node in nodes}
    outermost = []
    for node in unique.values():
        parent = node.parent
        while parent is not None and parent.mem_id not in unique:
            parent = parent.parent
        if parent is None:
            outermost.append(node)
    for node in outermost:
        node.decompose()


# -- scoring ----------------------------------------------------------------------


def _size(text: str) -> int:
    """Characters other than whitespace: what markup indentation cannot inflate.

    Counted rather than collapsed, which would build a list of every word.
    """
    return len(text) - text.count(" ") - text.count("\n") - text.count("\t") - text.count("\r")


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _class_weight(node: LexborNode) -> float:
    weight = 0.0
    for name in (node.attributes.get("class"), node.attributes.get("id")):
        if name:
            if NEGATIVE.search(name):
                weight -= 25
            if POSITIVE.search(name):
                weight += 25
    return weight


def _link_density(node: LexborNode, size: int | None = None) -> float:
    length = _size(node.text()) if size is None else size
    if not length:
        return 0.0
    links = sum(_size(a.text()) for a in node.css("a"))
    return min(1.0, links / length)


def _find_paragraphs(tree: LexborHTMLParser) -> list[_Paragraph]:
    paragraphs = []
    for p in tree.css(PARAGRAPH_TAGS):
        text = _collapse(p.text())
        if len(text) >= MIN_PARAGRAPH and p.parent is not None:
            paragraphs.append(_Paragraph(p, p.parent, text))
    blocks: dict[int, LexborNode | None] = {}
    seen: set[int] = set()
    for node in tree.css(LOOSE_TEXT_TAGS):
        own = node.text(deep=False)
        if len(own) < MIN_PARAGRAPH:
            continue  # collapsing whitespace only shortens it
        own = _collapse(own)
        if len(own) < MIN_PARAGRAPH:
            continue
        block = _block_of(node, blocks)
        if block is None or block.tag in {"p", "pre", "td", "blockquote", "body", "html"}:
            continue  # counted as a paragraph already, or no container to credit
        if block.mem_id not in seen:
            seen.add(block.mem_id)
            # Text straight in a container is both paragraph and container.
            paragraphs.append(_Paragraph(block, block, own))
    return paragraphs


def _block_of(node: LexborNode, known: dict[int, LexborNode | None]) -> LexborNode | None:
    """The nearest block element at or above ``node``; ``known`` remembers answers."""
    climbed = []
    current: LexborNode | None = node
    block: LexborNode | None = None
    while current is not None:
        if current.mem_id in known:
            block = known[current.mem_id]
            break
        if current.tag in BLOCK_TAGS:
            block = current
            break
        climbed.append(current.mem_id)
        current = current.parent
    for mem_id in climbed:
        known[mem_id] = block
    return block


def _list_items(tree: LexborHTMLParser) -> list[_Paragraph]:
    items = []
    for li in tree.css("li"):
        if li.parent is None or li.css_first("ul, ol") is not None:
            continue  # an item holding a list would count its sub-items twice
        text = _collapse(li.text())
        if len(text) >= MIN_PARAGRAPH:
            items.append(_Paragraph(li, li.parent, text))
    return items


def _score(paragraphs: list[_Paragraph]) -> dict[int, _Candidate]:
    """Readability's scores: each paragraph gives points to its nearest containers."""
    candidates: dict[int, _Candidate] = {}
    for paragraph in paragraphs:
        text = paragraph.text
        points = 1 + text.count(",") + min(len(text) // 100, 3)
        node: LexborNode | None = paragraph.container
        for level in range(ANCESTOR_LEVELS):
            if node is None or node.tag in {"html", "-document"}:
                break
            candidate = candidates.get(node.mem_id)
            if candidate is None:
                initial = TAG_SCORE.get(node.tag or "", 0.0) + _class_weight(node)
                candidate = candidates[node.mem_id] = _Candidate(node, initial)
            candidate.score += points / (1 if level == 0 else 2 if level == 1 else level * 3)
            node = node.parent
    for candidate in candidates.values():
        candidate.score *= 1 - _link_density(candidate.node)
    return candidates


def _ancestor_ids(node: LexborNode) -> set[int]:
    ids = set()
    current: LexborNode | None = node
    while current is not None:
        ids.add(current.mem_id)
        current = current.parent
    return ids


def _choose(candidates: dict[int, _Candidate]) -> LexborNode:
    ranked = sorted(candidates.values(), key=lambda c: c.score, reverse=True)
    best = ranked[0]
    top = best.node
    # An article split into blocks (between ads, or one per "card") gives several
    # near-equal candidates: their common ancestor is the article.
    rivals = [_ancestor_ids(c.node) for c in ranked[1:5] if c.score >= RIVAL_SHARE * best.score]
    if len(rivals) >= 3:
        ancestor = top.parent
        while ancestor is not None and ancestor.tag != "body":
            if sum(ancestor.mem_id in ids for ids in rivals) >= 3:
                top = ancestor
                break
            ancestor = ancestor.parent
    # A parent scoring higher than its best child holds more of the article.
    last = candidates[top.mem_id].score if top.mem_id in candidates else best.score
    parent = top.parent
    while parent is not None and parent.tag != "body":
        candidate = candidates.get(parent.mem_id)
        if candidate is not None:
            if candidate.score < last / 3:
                break
            if candidate.score > last:
                top = parent
            last = candidate.score
        parent = parent.parent
    return top


def _expand(top: LexborNode, paragraphs: list[_Paragraph]) -> LexborNode:
    """Widen to an ancestor when what it adds is mostly paragraphs: an article in sections.

    Never past an <article> or <main>: beyond them are teasers of other articles,
    whose excerpts look like paragraphs too.
    """
    chains = [(_size(p.text), _ancestor_ids(p.node)) for p in paragraphs]

    def held(node: LexborNode) -> int:
        return sum(length for length, chain in chains if node.mem_id in chain)

    text, size = held(top), _size(top.text())
    ancestor = top.parent if top.tag not in {"article", "main"} else None
    while ancestor is not None and ancestor.tag not in {"body", "html"}:
        more, bigger = held(ancestor), _size(ancestor.text())
        if more > text and more - text >= EXPAND_SHARE * (bigger - size):
            top, text, size = ancestor, more, bigger
        if ancestor.tag in {"article", "main"}:
            break
        ancestor = ancestor.parent
    return top


def _gather(top: LexborNode, candidates: dict[int, _Candidate]) -> list[LexborNode]:
    """The best container and the siblings that look like more of the same article."""
    parent = top.parent
    if parent is None or parent.tag in {"html", "-document"}:
        return [top]
    top_score = candidates[top.mem_id].score if top.mem_id in candidates else 0.0
    threshold = max(10.0, top_score * SIBLING_SHARE)
    parts = []
    for sibling in parent.iter():
        if sibling == top:
            parts.append(sibling)
            continue
        candidate = candidates.get(sibling.mem_id)
        if candidate is not None and candidate.score >= threshold:
            parts.append(sibling)
        elif sibling.tag == "p":
            text = _collapse(sibling.text())
            density = _link_density(sibling, _size(text))
            if (len(text) > 80 and density < 0.25) or (
                0 < len(text) <= 80 and density == 0 and SENTENCE_END.search(text)
            ):
                parts.append(sibling)
    return parts


def _clean(part: LexborNode) -> None:
    """Cut lists, tables and blocks inside the content that are mostly links."""
    whole = _size(part.text())
    doomed = []
    for node in part.css("ul, ol, div, table, section"):
        text = node.text()
        size = _size(text)
        if not size or size > CLEAN_MAX_SHARE * whole:
            continue  # the bulk of the content: a table of contents is the page
        density = _link_density(node, size)
        if density > CLEAN_LINKS_HIGH or (
            density > CLEAN_LINKS_LOW and _class_weight(node) < 25 and text.count(",") < 10
        ):
            doomed.append(node)
    _remove(doomed)


# -- text -------------------------------------------------------------------------


def _lines(root: LexborNode) -> list[str]:
    """Text of ``root``, one line per block: inline markup never splits a word."""
    lines: list[str] = []
    pieces: list[str] = []
    blocks: dict[int, LexborNode | None] = {}
    current = -1  # mem_id of the block the pending pieces belong to

    def flush() -> None:
        if pieces:
            line = _collapse("".join(pieces))
            if line:
                lines.append(line)
            pieces.clear()

    for node in root.traverse(include_text=True):
        if node.is_text_node:
            parent = node.parent
            block = _block_of(parent, blocks) if parent is not None else None
            block_id = block.mem_id if block is not None else 0
            if block_id != current:
                flush()
                current = block_id
            pieces.append(node.text_content or "")
        elif node.tag in BLOCK_TAGS:
            flush()
            current = -1
    flush()
    return lines
