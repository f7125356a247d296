"""The main text of an HTML page: the article, without navigation, headers, footers
and boilerplate.

A readability-style scorer over selectolax's lexbor tree. Paragraphs give points to
the containers around them, the best container (with its siblings that score
nearly as well) is the content, and lists, tables and blocks inside it that are
mostly links are cut out. On the article-extraction benchmark (181 news and blog
pages with ground truth, bench/extraction.py) this scores above trafilatura at
several times its speed; the figures are in bench/RESULTS.md.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from selectolax.lexbor import LexborHTMLParser, LexborNode

# Never part of the main text, with everything inside them. Figures go too: captions
# and credits repeat what the article says, and readers of a result want prose.
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

# Page furniture, by tag or by class/id words. Dropped before scoring, unless one
# holds most of the page's text: some sites wrap the whole page in a <header>, or in
# a div whose class names a "sidebar" layout.
FURNITURE = "nav, aside, header, footer, menu, [role=navigation], [role=banner], [role=contentinfo]"
UNLIKELY_WORDS = (
    "-ad-",
    "ad-break",
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
# A class or id with one of these words names content, whatever else it says.
CONTENT_WORDS = ("article", "body", "content", "main", "column")
UNLIKELY = re.compile("|".join(re.escape(word) for word in UNLIKELY_WORDS))
HIDDEN = (
    "[hidden], [aria-hidden=true], [style*='display:none' i], [style*='display: none' i],"
    " [style*='visibility:hidden' i], [style*='visibility: hidden' i]"
)
NEVER_DROPPED = frozenset({"html", "body", "article", "main"})

# Class weights: a container named like content is likelier the article, one named
# like a comment thread, a share bar or an ad less likely.
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

# Elements that start a new paragraph in the text (the rest flow inline).
BLOCK_TAGS = frozenset(
    [
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
    ]
)
PARAGRAPH_TAGS = "p, pre, td, blockquote"
# Elements whose own text (not their children's) can be a paragraph: many sites
# write paragraphs as text broken by <br> inside a div or a span.
LOOSE_TEXT_TAGS = "div, span, font, section, article, center, b, strong, em, i"
MIN_PARAGRAPH = 25  # characters: shorter text is a label, a date, a button
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
ANCESTOR_LEVELS = 3
SIBLING_SHARE = 0.2  # a sibling scoring this share of the best container joins it
RETRY_BELOW = 250  # characters: so little text means the class rules cut the article


def main_text(html: str, url: str | None = None) -> str:
    """The main text of ``html``, paragraphs separated by newlines; "" when there is none.

    Pure and never raises on broken markup. ``url`` is accepted for callers that have
    it; no rule depends on it yet.
    """
    del url
    text = _extract(html, drop_unlikely=True)
    if len(text) < RETRY_BELOW:
        # A class rule can name the article's own wrapper ("widget", "sidebar-layout"):
        # try again without them, as readability does, and keep the longer answer.
        second = _extract(html, drop_unlikely=False)
        if len(second) > len(text):
            text = second
    return text


@dataclass
class _Candidate:
    node: LexborNode
    score: float
    links: float | None = field(default=None)


def _extract(html: str, *, drop_unlikely: bool) -> str:
    tree = LexborHTMLParser(html)
    body = tree.body
    if body is None:
        return ""
    titles = _titles(tree)
    tree.strip_tags(NEVER_TEXT)
    _drop_furniture(tree, body, drop_unlikely=drop_unlikely)
    paragraphs = _find_paragraphs(tree)
    candidates = _score(paragraphs)
    if LIST_BELOW and max((c.score for c in candidates.values()), default=0.0) < LIST_BELOW:
        # No prose worth the name: the content may be lists (a changelog, an index).
        paragraphs += _list_items(tree)
        candidates = _score(paragraphs)
    if not candidates:
        return "\n".join(_paragraphs(body))
    top = _expand(_choose(candidates), paragraphs)
    parts = _gather(top, candidates)
    for part in parts:
        _clean(part, candidates)
    lines = [line for part in parts for line in _paragraphs(part)]
    return "\n".join(_trim(lines, titles))


DROP_TITLE = True
WORD = re.compile(r"\w+")


def _words(text: str) -> str:
    return " ".join(WORD.findall(text.lower()))


def _titles(tree: LexborHTMLParser) -> list[str]:
    titles = [_words(n.text()) for n in tree.css("head title")]
    for node in tree.css("meta[property='og:title'], meta[name='twitter:title']"):
        titles.append(_words(node.attributes.get("content") or ""))
    return [t for t in titles if t]


def _trim(lines: list[str], titles: list[str]) -> list[str]:
    if DROP_TITLE and titles:
        kept = []
        for line in lines:
            words = _words(line)
            if words.count(" ") >= 1 and any(words in t for t in titles):
                continue
            kept.append(line)
        lines = kept
    return lines


def _drop_furniture(tree: LexborHTMLParser, body: LexborNode, *, drop_unlikely: bool) -> None:
    half = len(body.text()) / 2
    doomed = list(tree.css(HIDDEN))
    for node in tree.css(FURNITURE):
        if not _names_content(_names(node)) and len(node.text()) < half:
            doomed.append(node)
    if drop_unlikely:
        for node in tree.css("[class], [id]"):
            if _is_unlikely(_names(node)) and node.tag not in NEVER_DROPPED:
                if len(node.text()) < half:
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
    # Cached: a site repeats the same few hundred class names on every page.
    return UNLIKELY.search(names.lower()) is not None and not _names_content(names)


def _remove(nodes: list[LexborNode]) -> None:
    # Decompose only the outermost of the doomed nodes: once a node is destroyed,
    # touching one of its descendants would read freed memory.
    unique = {n.mem_id: n for n in nodes}
    ids = set(unique)
    outermost = []
    for node in unique.values():
        parent = node.parent
        while parent is not None and parent.mem_id not in ids:
            parent = parent.parent
        if parent is None:
            outermost.append(node)
    for node in outermost:
        node.decompose()


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


def _link_density(node: LexborNode, text_length: int | None = None) -> float:
    length = len(_collapse(node.text())) if text_length is None else text_length
    if not length:
        return 0.0
    links = sum(len(_collapse(a.text())) for a in node.css("a"))
    return min(1.0, links / length)


@dataclass(frozen=True)
class _Paragraph:
    node: LexborNode  # the paragraph's element
    container: LexborNode  # the nearest element it gives points to
    text: str


def _find_paragraphs(tree: LexborHTMLParser) -> list[_Paragraph]:
    paragraphs = []
    for p in tree.css(PARAGRAPH_TAGS):
        text = _collapse(p.text())
        if len(text) >= MIN_PARAGRAPH and p.parent is not None:
            paragraphs.append(_Paragraph(p, p.parent, text))
    seen: set[int] = set()
    for node in tree.css(LOOSE_TEXT_TAGS):
        own = node.text(deep=False)
        if len(own) < MIN_PARAGRAPH:
            continue  # collapsing whitespace only shortens: no need to
        own = _collapse(own)
        if len(own) < MIN_PARAGRAPH:
            continue
        block: LexborNode | None = node
        while block is not None and block.tag not in BLOCK_TAGS:
            block = block.parent
        if block is None or block.tag in {"p", "pre", "td", "blockquote", "body", "html"}:
            continue  # counted as a paragraph already, or no container to credit
        if block.mem_id not in seen:
            seen.add(block.mem_id)
            # Text straight in a container is both paragraph and container.
            paragraphs.append(_Paragraph(block, block, own))
    return paragraphs


LIST_BELOW = 10.0


def _list_items(tree: LexborHTMLParser) -> list[_Paragraph]:
    items = []
    for li in tree.css("li"):
        if li.parent is None or li.css_first("ul, ol") is not None:
            continue
        text = _collapse(li.text())
        if len(text) >= MIN_PARAGRAPH:
            items.append(_Paragraph(li, li.parent, text))
    return items


def _score(paragraphs: list[_Paragraph]) -> dict[int, _Candidate]:
    """Readability's scores: each paragraph gives points to its three nearest containers."""
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


def _is_within(node: LexborNode, ancestor: LexborNode) -> bool:
    parent = node.parent
    while parent is not None:
        if parent == ancestor:
            return True
        parent = parent.parent
    return False


def _choose(candidates: dict[int, _Candidate]) -> LexborNode:
    ranked = sorted(candidates.values(), key=lambda c: c.score, reverse=True)
    best = ranked[0]
    top = best.node
    # Articles split into several blocks (between ads, or one per "card") give several
    # near-equal candidates: their common ancestor is the article.
    rivals = [c.node for c in ranked[1:5] if c.score >= 0.75 * best.score]
    if len(rivals) >= 3:
        ancestor = top.parent
        while ancestor is not None and ancestor.tag != "body":
            if sum(_is_within(r, ancestor) for r in rivals) >= 3:
                top = ancestor
                break
            ancestor = ancestor.parent
    # A parent scoring higher than the best child holds more of the article.
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


EXPAND_RATIO = 0.8
EXPAND_MIN = 0
STOP_EXPAND = {'article', 'main'}


def _expand(top: LexborNode, paragraphs: list[_Paragraph]) -> LexborNode:
    """Widen to an ancestor when what it adds is mostly paragraphs: an article in sections."""
    chains = [(len(p.text), _ancestor_ids(p.node)) for p in paragraphs]

    def held(node: LexborNode) -> int:
        return sum(length for length, chain in chains if node.mem_id in chain)

    text, size = held(top), len(_collapse(top.text()))
    ancestor = top.parent if top.tag not in STOP_EXPAND else None
    while ancestor is not None and ancestor.tag not in {"body", "html"}:
        more, bigger = held(ancestor), len(_collapse(ancestor.text()))
        if more - text > EXPAND_MIN and more - text >= EXPAND_RATIO * (bigger - size):
            top, text, size = ancestor, more, bigger
        if ancestor.tag in STOP_EXPAND:
            break
        ancestor = ancestor.parent
    return top


def _ancestor_ids(node: LexborNode) -> set[int]:
    ids = set()
    current: LexborNode | None = node
    while current is not None:
        ids.add(current.mem_id)
        current = current.parent
    return ids


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
            density = _link_density(sibling, len(text))
            if (len(text) > 80 and density < 0.25) or (
                0 < len(text) <= 80 and density == 0 and re.search(r"\.( |$)", text)
            ):
                parts.append(sibling)
    return parts


CLEAN_HIGH = 0.5
CLEAN_LOW = 0.25
CLEAN_GUARD = 0.5


def _clean(part: LexborNode, candidates: dict[int, _Candidate]) -> None:
    """Cut lists, tables and blocks inside the content that are mostly links."""
    doomed = []
    whole = len(_collapse(part.text()))
    for node in part.css("ul, ol, div, table, section"):
        text = _collapse(node.text())
        if not text or len(text) > CLEAN_GUARD * whole:
            continue
        density = _link_density(node, len(text))
        if density > CLEAN_HIGH or (
            density > CLEAN_LOW and _class_weight(node) < 25 and text.count(",") < 10
        ):
            doomed.append(node)
    _remove(doomed)


def _paragraphs(root: LexborNode) -> list[str]:
    """Text of ``root``, one line per block: inline markup never splits a word."""
    lines: list[str] = []
    pieces: list[str] = []
    block = None  # mem_id of the block the pending pieces belong to

    def flush() -> None:
        line = _collapse("".join(pieces))
        if line:
            lines.append(line)
        pieces.clear()

    for node in root.traverse(include_text=True):
        if node.is_text_node:
            holder = node.parent
            while holder is not None and holder.tag not in BLOCK_TAGS:
                holder = holder.parent
            holder_id = holder.mem_id if holder is not None else 0
            if holder_id != block:
                flush()
                block = holder_id
            pieces.append(node.text_content or "")
        elif node.tag in BLOCK_TAGS:
            flush()
            block = None
    flush()
    return lines
