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
import unicodedata
from collections.abc import Callable, Collection
from dataclasses import dataclass
from urllib.parse import urlsplit

from selectolax.lexbor import LexborHTMLParser, LexborNode

from trawl.extract.main_text_rules import (
    AD_LABEL,
    ANCESTOR_LEVELS,
    ARTICLE_BODY_ITEMPROPS,
    ARTICLE_BODY_WEIGHT,
    BLOCK_TAGS,
    BOILERPLATE,
    CAPTION_BOX_TAGS,
    CAPTION_MAX,
    CAPTION_TAGS,
    CARD_MAX,
    CARD_OR_ITEM_TAGS,
    CARD_ROW_TAGS,
    CARD_ROWS,
    CARDS_SHARE,
    CLEAN_MAX_SHARE,
    COMMENT_HEADING,
    CONTENT_WORDS,
    CONTROLS_MAX,
    CREDIT_LINE,
    DATE_ONLY,
    DATE_ONLY_TAGS,
    DATELINE,
    DATELINE_MAX,
    DEFAULT_TUNING,
    EDITOR_LINE,
    EMBEDDED_POST_SHARE,
    EMBEDDED_POSTS,
    FORM_LEVELS,
    FURNITURE_LINE,
    FURNITURE_ROLES,
    FURNITURE_TAGS,
    GALLERY_LEVELS,
    HEADING_RANK,
    HIDING_CLASSES,
    HIDING_STYLES,
    IDEOGRAPH_WEIGHT,
    IDEOGRAPHS,
    INVISIBLE_CHARACTERS,
    LED_LIST_ELSEWHERE,
    LED_LIST_HOSTS,
    LIST_PAGE_BELOW,
    MAX_DEPTH,
    MAX_GALLERIES,
    MAX_THREADS,
    MAYBE_HIDDEN_OR_FURNITURE,
    MIN_CARDS,
    MIN_CONTROLS,
    MIN_PARAGRAPH,
    MIN_THREAD_ITEMS,
    NEGATIVE,
    NEVER_DROPPED,
    NEVER_TEXT_OR_META,
    P_LINKS_MIN,
    PARAGRAPH_OR_LOOSE_TAGS,
    PARAGRAPH_TAG_SET,
    PICTURE_CREDIT,
    POSITIVE,
    SENTENCE_END,
    SHOWING_CLASS,
    SLIDE_COUNTER,
    SLIDE_COUNTER_IN_TEXT,
    SLIDE_COUNTER_MAX,
    SLIDE_WORD,
    STAMP_LINE,
    TAG_SCORE,
    THIN_WRAPPER_SHARE,
    THREAD_HEADING_TAGS,
    THREAD_HEADING_WRAPPERS,
    THREAD_ITEM_TAGS,
    THREAD_ITEMS_NAMED,
    UNLIKELY,
    WHITESPACE,
    WORD,
    WRAPPED_SHARE,
    WRAPPER_STOPS,
    Tuning,
)


def main_text(html: str, url: str | None = None, *, tuning: Tuning = DEFAULT_TUNING) -> str:
    """The main text of ``html``, paragraphs separated by newlines; "" when there is none.

    Pure, and never raises on broken markup. ``url`` is accepted for callers that
    have it; no rule depends on it yet.
    """
    del url
    text, prose = _extract(html, tuning, drop_unlikely=True)
    if _reading_size(text) < tuning.retry_below or not prose:
        # A class rule can name the article's own wrapper ("widget Blog"): try again
        # without them, as readability does. Prose found beats none (a blog post
        # beats the list of labels beside it); else the longer answer wins.
        second, second_prose = _extract(html, tuning, drop_unlikely=False)
        if (second_prose, len(second)) > (prose, len(text)):
            text = second
    if _reading_size(text) < tuning.retry_below:
        # Both passes cut nearly everything (a category page whose content is lists
        # of links, a page of loose text): the page's visible text less its furniture
        # is better than none, as trafilatura falls back to its baseline.
        loose = _loose(html)
        if len(loose) > len(text):
            text = loose
    # Soft hyphens and zero-width spaces split a word for any tokeniser ("réac\xadtion"
    # is two words to \w+); the reader never sees them.
    for invisible in INVISIBLE_CHARACTERS:
        if invisible in text:
            text = text.replace(invisible, "")
    # A page written on some systems spells "ü" as "u" and a combining diaeresis: the
    # same word to a reader, another string to the index and to a quoted search.
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return text


def _reading_size(text: str) -> int:
    """The length of ``text`` in Latin characters' worth of reading.

    A Chinese or Japanese character is most of a word: 190 of them are a short news
    item, which 190 Latin letters are not, and the retry thresholds are in letters.
    """
    return len(text) + (IDEOGRAPH_WEIGHT - 1) * len(IDEOGRAPHS.findall(text))


def _loose(html: str) -> str:
    """The lines of the body, less what is never text and the page's furniture."""
    tree = LexborHTMLParser(html)
    body = tree.body
    if body is None:
        return ""
    for node in reversed(tree.css(NEVER_TEXT_OR_META)):
        node.decompose()
    if not _deeper_than(body, MAX_DEPTH):
        _drop_furniture(tree, body, drop_unlikely=True)
    return "\n".join(_lines(body))


@dataclass
class _Candidate:
    node: LexborNode
    score: float


@dataclass(frozen=True)
class _Paragraph:
    node: LexborNode  # the paragraph's element
    container: LexborNode  # the nearest element it gives points to
    text: str


def _extract(html: str, tuning: Tuning, *, drop_unlikely: bool) -> tuple[str, bool]:
    """The main text, and whether it was found in prose (not in lists, not the body)."""
    tree = LexborHTMLParser(html)
    body = tree.body
    if body is None:
        return "", False
    # One selection for the elements that are never text and the <meta> elements that
    # may name the page: every selection walks the whole tree, as long as the parse.
    found = tree.css(NEVER_TEXT_OR_META)
    titles = _titles(tree, [node for node in found if node.tag == "meta"])
    # A form to write in (a comment form, "Leave a Reply") is no part of any article;
    # its text box goes with the rest below, so the form is found first.
    # Once each: a form of thousands of text boxes would have its text read as often.
    forms = list(
        {
            form.mem_id: form
            for node in found
            if node.tag == "textarea" and (form := _form_of(node))
        }.values()
    )
    # Removed last first, so that a node goes before any ancestor that contains it:
    # decomposing the ancestor first would free the node under its Python object.
    for node in reversed(found):
        if node.tag != "meta":
            node.decompose()
    if _deeper_than(body, MAX_DEPTH):
        return "\n".join(_lines(body)), True  # no second try on a hostile tree
    _drop_furniture(tree, body, drop_unlikely=drop_unlikely, forms=forms)
    paragraphs = _find_paragraphs(tree)
    candidates = _score(tree, paragraphs)
    prose = max((c.score for c in candidates.values()), default=0.0) >= LIST_PAGE_BELOW
    if not prose:
        # No prose worth the name: the content may be lists (a changelog, an index).
        paragraphs += _list_items(tree)
        candidates = _score(tree, paragraphs)
    if not candidates:
        return "\n".join(_lines(body)), prose
    top = _expand(_choose(candidates, tuning), paragraphs, tuning)
    parts = _gather(top, candidates, tuning)
    for part in parts:
        _clean(part, tuning)
    lines: list[str] = []
    tags: list[str] = []
    for part in parts:
        lines += _lines(part, tags)
    lines, tags = _undated(lines, tags)
    lines = _without_empty_headings(lines, tags)
    # What is left of a comment box at the end of the article: its label ("Comments",
    # "Post Comment (+)"). Only at the end: a table of the docs may hold the word.
    while lines and (
        FURNITURE_LINE.match(lines[-1])
        or CREDIT_LINE.match(lines[-1])
        or EDITOR_LINE.match(lines[-1])
    ):
        lines.pop()
    # Only a line not much longer than a title can repeat it (as words, punctuation gone).
    longest = 2 * max((len(title) for title in titles), default=0) + 10
    kept = "\n".join(
        line
        for line in lines
        if not AD_LABEL.match(line)
        and not (len(line) <= longest and _repeats_title(line, titles))
        # A caption that no box marked as one, told by the credit it ends in.
        and not (len(line) <= CAPTION_MAX and PICTURE_CREDIT.search(line))
        and not (len(line) <= DATELINE_MAX and DATELINE.match(line))
    )
    return kept, prose


def _deeper_than(root: LexborNode, limit: int) -> bool:
    """Whether an element sits more than ``limit`` levels down from ``root`` (itself 1).

    A chain of child combinators from root's tag (the body's, which never nests),
    matched in C, right to left: at most ``limit`` steps up from each element, and a
    third faster than a walk in Python over every element.
    """
    return root.css_first(" > ".join([root.tag or "body"] + ["*"] * limit)) is not None


def _words(text: str) -> str:
    return " ".join(WORD.findall(text.lower()))


def _titles(tree: LexborHTMLParser, metas: list[LexborNode]) -> list[str]:
    """The page's titles, as words: <title>, and ``metas`` for og: and twitter:title."""
    head = tree.head
    titles = [_words(node.text()) for node in head.css("title")] if head is not None else []
    # Attributes tested in Python: lexbor's attribute selectors walk the tree once per
    # selector, and cost more than the few dozen <meta> elements of a page.
    for node in metas:
        attributes = node.attrs
        if attributes.get("property") == "og:title" or attributes.get("name") == "twitter:title":
            titles.append(_words(attributes.get("content") or ""))
    return [title for title in titles if title]


def _repeats_title(line: str, titles: list[str]) -> bool:
    # The headline is the page's title, indexed on its own; in the text it is noise.
    lowered = line.lower()
    # Its first word must be a word of a title: a search for one word settles most
    # lines, where listing every word was a tenth of the time on pages of short lines.
    first = WORD.search(lowered)
    if first is None or not any(f" {first.group()} " in f" {title} " for title in titles):
        return False
    words = " ".join(WORD.findall(lowered))  # _words(line)
    return " " in words and any(f" {words} " in f" {title} " for title in titles)


# -- furniture --------------------------------------------------------------------


def _form_of(node: LexborNode) -> LexborNode | None:
    """The <form> around ``node``, a few levels up at most; None outside one."""
    parent = node.parent
    for _ in range(FORM_LEVELS):
        if parent is None:
            return None
        if parent.tag == "form":
            return parent
        parent = parent.parent
    return None


def _drop_furniture(
    tree: LexborHTMLParser,
    body: LexborNode,
    *,
    drop_unlikely: bool,
    forms: Collection[LexborNode] = (),
) -> None:
    text = body.text()
    half = len(text) / 2
    # A site may wrap the whole page in one <form> (ASP.NET): only a smaller one goes.
    doomed = [form for form in forms if len(form.text()) < half]
    if SLIDE_COUNTER_IN_TEXT.search(text.lower()):  # the walk below only on a page that may need it
        doomed += _galleries(body, half)
    threads = 0
    # Hidden elements and furniture in one selection: each walks the whole tree.
    for node in tree.css(MAYBE_HIDDEN_OR_FURNITURE):
        if (
            node.tag in THREAD_HEADING_TAGS
            and threads < MAX_THREADS
            and COMMENT_HEADING.match(_collapse(node.text()))
        ):
            # Each heading reads the rest of its section: a hostile page of thousands
            # of them would cost their square.
            threads += 1
            doomed += _thread_under(node)
        elif node.tag == "img" and (captioned := _captioned(node)) is not None:
            doomed.append(captioned)
        # Hidden text can be the article itself, waiting for a script to show it.
        furniture = (
            _furniture(node)
            and (node.tag == "footer" or not _names_content(_names(node)))
            and not _article_header(node)
        )
        if (_hidden(node) or furniture) and len(node.text()) < half:
            doomed.append(node)
    if drop_unlikely:
        # Inlined: this loop runs over every element with a class or an id, and a
        # function call per element was a fifth of the whole extraction.
        for node in tree.css("[class], [id]"):
            names = f"{node.attrs.get('class') or ''} {node.id or ''}"
            # An element without words is left: dropping it changes no word, and an
            # empty link over a card ("overlay-link") shows the card links elsewhere.
            if (
                _is_unlikely(names)
                and node.tag not in NEVER_DROPPED
                # A heading's own link (mdBook's <h2 id><a class="header">) is its title.
                and (node.parent is None or node.parent.tag not in HEADING_RANK)
                and len(text := node.text()) < half
                and not text.isspace()
                and text
                and not _embedded_post(node, text)
            ):
                doomed.append(node)
    _remove(doomed)


def _galleries(body: LexborNode, half: float) -> list[LexborNode]:
    """The photo galleries under ``body``: the box around each slide counter.

    A counter ("Image 1 of 8") sits in the gallery's controls, next to the slides'
    captions repeated for the viewer and its "Back to Gallery"; the gallery is the
    smallest box around the counter that holds a picture. Found by the counter's
    words, so a gallery whose class names say nothing goes too.
    """
    found: list[LexborNode] = []
    looked = 0
    for node in body.traverse(include_text=True):
        if node.tag != "-text" or not SLIDE_WORD.match(node.text_content or ""):
            continue
        counter = node.parent
        if counter is None or counter.tag == "body":
            continue
        # Each word read up from costs its box's text, and a counter's box a few
        # boxes' more: a hostile page of thousands would cost their count times the page.
        looked += 1
        if looked > MAX_GALLERIES:
            break
        words = _collapse(counter.text())
        if len(words) > SLIDE_COUNTER_MAX or not SLIDE_COUNTER.match(words):
            continue
        box = counter.parent
        for _ in range(GALLERY_LEVELS):
            if box is None or box.tag == "body":
                break
            if box.css_first("img, picture") is not None:
                if len(box.text()) < half:
                    found.append(box)
                break
            box = box.parent
    return found


def _captioned(image: LexborNode) -> LexborNode | None:
    """The box of ``image`` and its caption, when that is all the box holds; else None.

    A figure without <figure>: a photo and one short block of text, side by side in
    a box of their own. The caption reads as a paragraph ("In this Dec. 12, 2006,
    file photo, ..."), and on a short article it outscored the article.
    """
    box = image.parent
    if box is None or box.tag not in CAPTION_BOX_TAGS:
        return None
    caption = None
    for child in box.iter(include_text=True):
        tag = child.tag
        if tag == "-text":
            if (child.text_content or "").strip():
                return None
        elif tag != "-comment" and child.mem_id != image.mem_id:  # not by HTML
            if caption is not None:
                return None
            caption = child
    if caption is None or caption.tag not in CAPTION_TAGS:
        return None
    size = _size(caption.text())
    return box if 0 < size <= CAPTION_MAX else None


def _thread_under(heading: LexborNode) -> list[LexborNode]:
    """The comment thread a heading such as "34 responses to ..." opens, with the heading.

    What follows the heading up to the next heading of its rank or above, when it
    holds replies of one shape (MIN_THREAD_ITEMS elements of one tag and first class
    word, side by side); else nothing: a section of a manual may be called
    "Comments" too, and its paragraphs are not a thread. A heading alone in its
    wrapper looks from the wrapper on, a few levels up.
    """
    rank = HEADING_RANK.get(heading.tag or "", 6)
    node = heading
    for _ in range(THREAD_HEADING_WRAPPERS):
        section = []
        sibling = node.next
        while sibling is not None:
            tag = sibling.tag or ""
            if tag in HEADING_RANK and HEADING_RANK[tag] <= rank:
                break  # the next section of the page
            if not tag.startswith("-"):  # text and comment nodes neither open nor end a thread
                section.append(sibling)
            sibling = sibling.next
        if any(part.text().strip() for part in section):
            return [heading, *section] if _replies(section) else []
        parent = node.parent
        if parent is None or parent.tag in WRAPPER_STOPS:
            return []
        node = parent
    return []


def _replies(nodes: list[LexborNode]) -> bool:
    """Whether ``nodes``, or the children of one of them, are replies of one shape."""
    if _same_shape(nodes) or any(_same_shape(list(node.iter())) for node in nodes):
        return True
    # Replies to a reply nest inside it: of one class, at any depth ("2 comments",
    # the second an answer inside the first).
    return _same_shape([found for node in nodes for found in node.css(THREAD_ITEMS_NAMED)])


def _same_shape(nodes: list[LexborNode]) -> bool:
    """Whether MIN_THREAD_ITEMS of ``nodes`` with text share their tag and first class."""
    shapes: dict[tuple[str, str], int] = {}
    for node in nodes:
        tag = node.tag or ""
        if tag in THREAD_ITEM_TAGS and node.text().strip():
            names = (node.attrs.get("class") or "").split()
            shape = (tag, names[0] if names else "")
            shapes[shape] = shapes.get(shape, 0) + 1
    return max(shapes.values(), default=0) >= MIN_THREAD_ITEMS


def _embedded_post(node: LexborNode, text: str) -> bool:
    """Whether ``node`` is mostly a post quoted from a social network ("twitter-tweet").

    The platforms' embed code sets the post's text in a <blockquote> of their own
    class, and sites wrap it in a box named "social-embed": a quotation of the
    article, not a share bar.
    """
    quote = node if node.tag == "blockquote" else node.css_first("blockquote")
    if quote is None:
        return False
    names = (quote.attrs.get("class") or "").lower().split()
    return bool(EMBEDDED_POSTS.intersection(names)) and (
        _size(quote.text()) >= EMBEDDED_POST_SHARE * _size(text)
    )


def _furniture(node: LexborNode) -> bool:
    return node.tag in FURNITURE_TAGS or node.attrs.get("role") in FURNITURE_ROLES


def _article_header(node: LexborNode) -> bool:
    """A <header> inside an <article>: the article's own headline and standfirst.

    The page's masthead is a header of the body; an article's header holds its lede,
    which is prose (its byline and date go by their class names, as anywhere).
    """
    if node.tag != "header":
        return False
    parent = node.parent
    while parent is not None:
        if parent.tag == "article":
            return True
        parent = parent.parent
    return False


def _hidden(node: LexborNode) -> bool:
    attributes = node.attrs
    if "hidden" in attributes or attributes.get("aria-hidden") == "true":
        return True
    style = (attributes.get("style") or "").lower()
    return any(hiding in style for hiding in HIDING_STYLES)


def _names(node: LexborNode) -> str:
    attributes = node.attrs
    return f"{attributes.get('class') or ''} {attributes.get('id') or ''}"


def _names_content(names: str) -> bool:
    lowered = names.lower()
    return any(word in lowered for word in CONTENT_WORDS)


@functools.lru_cache(maxsize=65536)
def _is_unlikely(names: str) -> bool:
    # Cached: a site repeats the same few hundred class names on every page, and a
    # regex per element was the costliest step of the whole extraction.
    lowered = names.lower()
    if BOILERPLATE.search(lowered) is not None:
        return True  # "main-box related-box": a box of something else, on any page
    # Hidden by a class ("hidden", Bootstrap's "d-none"), unless another class shows
    # it on some screens ("d-none d-md-block", Tailwind's "hidden md:block"); shown in
    # print only is still hidden.
    tokens = lowered.split()
    if HIDING_CLASSES.intersection(tokens) and not any(
        SHOWING_CLASS.match(token) and not token.startswith("d-print") for token in tokens
    ):
        return True
    return UNLIKELY.search(lowered) is not None and not _names_content(names)


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

    Counted rather than collapsed, which would build a list of every word. ASCII text
    (isascii() is a flag, not a scan) has its whitespace deleted in one C pass over
    bytes, two to three times faster than four counts; the big containers of a page
    are measured several times each.
    """
    if text.isascii():
        return len(text.encode("ascii").translate(None, WHITESPACE))
    return len(text) - text.count(" ") - text.count("\n") - text.count("\t") - text.count("\r")


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _class_weight(node: LexborNode) -> float:
    attributes = node.attrs  # a view, cheaper than the dict of node.attributes
    weight = _names_weight(attributes.get("class"), attributes.get("id"))
    # The publisher's own word, in schema.org microdata, for where the article is.
    if attributes.get("itemprop") in ARTICLE_BODY_ITEMPROPS:
        weight += ARTICLE_BODY_WEIGHT
    return weight


@functools.lru_cache(maxsize=8192)
def _names_weight(*names: str | None) -> float:
    # Cached like _is_unlikely: two regexes per candidate, on names a site repeats.
    weight = 0.0
    for name in names:
        if name:
            if NEGATIVE.search(name):
                weight -= 25
            if POSITIVE.search(name):
                weight += 25
    return weight


def _link_density(node: LexborNode, size: int | None = None) -> float:
    # Links first: without them the density is 0 whatever the length, and most
    # candidates have none, so their whole text need not be taken. Joined, then
    # measured once: _size is additive, and a call per link cost a third of the
    # scoring on pages of many short links.
    links = _size("".join([a.text() for a in node.css("a")]))
    if not links:
        return 0.0
    length = _size(node.text()) if size is None else size
    if not length:
        return 0.0
    return min(1.0, links / length)


def _find_paragraphs(tree: LexborHTMLParser) -> list[_Paragraph]:
    # One selection for both kinds, parted by tag: each selection walks the whole tree.
    found = tree.css(PARAGRAPH_OR_LOOSE_TAGS)
    paragraphs = []
    for p in found:
        if p.tag not in PARAGRAPH_TAG_SET:
            continue
        text = p.text()
        if len(text) < MIN_PARAGRAPH:
            continue  # collapsing whitespace only shortens it
        text = _collapse(text)
        parent = p.parent
        if len(text) >= MIN_PARAGRAPH and parent is not None:
            paragraphs.append(_Paragraph(p, parent, text))
    blocks: dict[int, LexborNode | None] = {}
    seen: set[int] = set()
    for node in found:
        if node.tag in PARAGRAPH_TAG_SET:
            continue
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


def _score(tree: LexborHTMLParser, paragraphs: list[_Paragraph]) -> dict[int, _Candidate]:
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
    links = _link_sizes(tree.css("a"), candidates)
    for mem_id, candidate in candidates.items():
        if links[mem_id]:
            length = _size(candidate.node.text())
            if length:
                candidate.score *= 1 - min(1.0, links[mem_id] / length)
    return candidates


def _link_sizes(links: list[LexborNode], nodes: Collection[int]) -> dict[int, int]:
    """The size of the link text in each of ``nodes`` (mem_ids), given all their links.

    As _link_density counts it (a node's links include itself, when it is one), but
    each link measured once and credited to the nodes around it: a selection and a
    text per node and link cost more than the rest of the scoring.
    """
    sizes = dict.fromkeys(nodes, 0)
    known: dict[int, tuple[int, ...]] = {}
    for a in links:
        size = _size(a.text())
        if size:
            for mem_id in _nodes_around(a, nodes, known):
                sizes[mem_id] += size
    return sizes


def _nodes_around(
    node: LexborNode, nodes: Collection[int], known: dict[int, tuple[int, ...]]
) -> tuple[int, ...]:
    """Those of ``nodes`` at or above ``node``; ``known`` remembers answers, as in _block_of."""
    climbed = []
    current: LexborNode | None = node
    found: tuple[int, ...] = ()
    while current is not None:
        if current.mem_id in known:
            found = known[current.mem_id]
            break
        climbed.append(current.mem_id)
        current = current.parent
    for mem_id in reversed(climbed):  # from the top down: each adds itself to its parent's
        if mem_id in nodes:
            found = (mem_id, *found)
        known[mem_id] = found
    return found


def _ancestor_ids(node: LexborNode) -> set[int]:
    ids = set()
    current: LexborNode | None = node
    while current is not None:
        ids.add(current.mem_id)
        current = current.parent
    return ids


def _choose(candidates: dict[int, _Candidate], tuning: Tuning) -> LexborNode:
    ranked = sorted(candidates.values(), key=lambda c: c.score, reverse=True)
    best = ranked[0]
    top = best.node
    # An article split into blocks (between ads, or one per "card") gives several
    # near-equal candidates: their common ancestor is the article.
    rivals = [
        _ancestor_ids(c.node) for c in ranked[1:5] if c.score >= tuning.rival_share * best.score
    ]
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


def _expand(top: LexborNode, paragraphs: list[_Paragraph], tuning: Tuning) -> LexborNode:
    """Widen to an ancestor when what it adds is mostly paragraphs: an article in sections.

    Never past an <article> or <main>: beyond them are teasers of other articles,
    whose excerpts look like paragraphs too.
    """
    # Only top and its ancestors are ever asked how much paragraph text they hold.
    # Each paragraph is credited to the nearest of them above it, found by a climb
    # that remembers where it went (as _block_of does): a walk from every paragraph
    # to the root cost depth x paragraphs.
    chain: dict[int, int] = {}  # mem_id -> distance up from top
    node: LexborNode | None = top
    while node is not None:
        chain[node.mem_id] = len(chain)
        node = node.parent
    direct = [0] * (len(chain) + 1)  # paragraph text credited to each chain level
    nearest: dict[int, int] = {}  # mem_id -> level of the nearest chain node above
    for p in paragraphs:
        climbed = []
        node = p.node
        level = len(chain)  # outside the chain: in another tree (never, in practice)
        while node is not None:
            mem_id = node.mem_id
            found = chain.get(mem_id, nearest.get(mem_id))
            if found is not None:
                level = found
                break
            climbed.append(mem_id)
            node = node.parent
        for mem_id in climbed:
            nearest[mem_id] = level
        direct[level] += _size(p.text)

    def held(node: LexborNode) -> int:
        return sum(direct[: chain[node.mem_id] + 1])

    text, size = held(top), None
    ancestor = top.parent if not _bounds_article(top) else None
    while ancestor is not None and ancestor.tag not in {"body", "html"}:
        more = held(ancestor)
        if more > text:
            # Sizes taken only here: the text of the page's big containers was most of
            # the time, spent on ancestors that add no paragraph.
            if size is None:
                size = _size(top.text())
            bigger = _size(ancestor.text())
            if more - text >= tuning.expand_share * (bigger - size) and (
                # Excerpts of other articles read as paragraphs too: what the
                # ancestor adds must be prose even without its rows of teasers.
                more - text - _teaser_size(ancestor, top) >= tuning.expand_share * (bigger - size)
            ):
                top, text, size = ancestor, more, bigger
        if _bounds_article(ancestor):
            break
        ancestor = ancestor.parent
    return top


def _bounds_article(node: LexborNode) -> bool:
    """Whether ``node`` is a whole article: <main>, or an <article> with its headline.

    Some sites set each block of one article (a text, a box, a text with a photo) in
    an <article> of its own: one without a heading, beside others, is a block.
    """
    if node.tag != "article":
        return node.tag == "main"
    if node.css_first("h1, h2, h3") is not None:
        return True
    # Blocks come several to a column: a lone <article> without a heading (the
    # headline set above it) is still the article.
    parent = node.parent
    column = parent.parent if parent is not None else None
    return column is None or len(column.css("article")) < 2


def _gather(top: LexborNode, candidates: dict[int, _Candidate], tuning: Tuning) -> list[LexborNode]:
    """The best container and the siblings that look like more of the same article.

    When it has none and its parent is a thin wrapper around it (a "group" div that
    adds a share bar or nothing), the parent's siblings are asked instead: the
    standfirst often sits beside the wrapper of the body, not beside the body.
    """
    top_score = candidates[top.mem_id].score if top.mem_id in candidates else 0.0
    threshold = max(10.0, top_score * tuning.sibling_share)
    parts = _alike(top, candidates, threshold)
    wrapper = top.parent
    if len(parts) == 1 and wrapper is not None and wrapper.tag not in WRAPPER_STOPS:
        size = _size(wrapper.text())
        if size - _size(top.text()) <= THIN_WRAPPER_SHARE * size:
            parts = [
                top if part == wrapper else part for part in _alike(wrapper, candidates, threshold)
            ]
    # A sibling that is mostly a row of teasers ("Breaking News": headline, excerpt)
    # scores as prose, but is other pages' prose: inside it, the row is all of it, and
    # no cut inside a part takes a part's bulk.
    return [
        part
        for part in parts
        if part == top or _teaser_size(part, top) < CLEAN_MAX_SHARE * _size(part.text())
    ]


def _alike(
    node: LexborNode, candidates: dict[int, _Candidate], threshold: float
) -> list[LexborNode]:
    """``node`` and those of its siblings that score ``threshold`` or read as paragraphs."""
    parent = node.parent
    if parent is None or parent.tag in {"html", "-document"}:
        return [node]
    parts = []
    inner: dict[int, list[_Candidate]] | None = None  # taken once, when first needed
    for sibling in parent.iter():
        if sibling.mem_id == node.mem_id:  # by node: == compares their serialised HTML
            parts.append(sibling)
            continue
        candidate = candidates.get(sibling.mem_id)
        if candidate is None and sibling.tag in {"div", "section"}:
            if inner is None:
                inner = _under_siblings(parent, candidates)
            candidate = _wrapped(sibling, inner.get(sibling.mem_id, []))
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


def _under_siblings(
    parent: LexborNode, candidates: dict[int, _Candidate]
) -> dict[int, list[_Candidate]]:
    """The candidates inside each child of ``parent`` (by the child's mem_id).

    One climb per candidate, remembering where each node led (as _block_of).
    """
    known: dict[int, int] = {}  # mem_id -> the child of parent above it (0: none)
    inside: dict[int, list[_Candidate]] = {}
    for candidate in candidates.values():
        climbed = []
        node: LexborNode | None = candidate.node
        child = 0
        while node is not None:
            if node.mem_id in known:
                child = known[node.mem_id]
                break
            above = node.parent
            if above is not None and above.mem_id == parent.mem_id:
                child = node.mem_id
                break
            climbed.append(node.mem_id)
            node = above
        for mem_id in climbed:
            known[mem_id] = child
        if child:
            inside.setdefault(child, []).append(candidate)
    return inside


def _wrapped(node: LexborNode, inside: list[_Candidate]) -> _Candidate | None:
    """The best candidate in ``node`` that holds nearly all of it: ``node`` only wraps it.

    A column around a block of the article (a box, a second column) is never scored
    itself when the paragraphs sit deeper than the levels they give points to.
    """
    if not inside:
        return None
    size = _size(node.text())
    best = None
    for candidate in sorted(inside, key=lambda c: c.score, reverse=True):
        if _size(candidate.node.text()) >= WRAPPED_SHARE * size:
            best = candidate
            break
    return best


def _clean(part: LexborNode, tuning: Tuning) -> None:
    """Cut lists, tables and blocks inside the content that are mostly links, and rows
    of teasers.
    """
    whole = 0  # taken at the first block that may go: most parts have none
    doomed = []
    blocks = part.css("ul, ol, div, table, section")
    links = _link_sizes(part.css("a"), {node.mem_id for node in blocks})
    # Looked up once: a search of the whole tree per list made a long page quadratic
    # (the Cargo book's print.html: 491 look-ups, 4 of its 6 s).
    page_host = functools.cache(lambda: _page_host(part))
    for node in blocks:
        if _teasers(node):
            whole = whole or _size(part.text())
            if _size(node.text()) <= CLEAN_MAX_SHARE * whole:
                doomed.append(node)
            continue
        if not links[node.mem_id]:
            continue  # no link, no density: the text need not be taken
        text = node.text()
        size = _size(text)
        whole = whole or _size(part.text())
        if not size or size > CLEAN_MAX_SHARE * whole:
            continue  # the bulk of the content: a table of contents is the page
        if size <= CONTROLS_MAX and _only_controls(node):
            doomed.append(node)
            continue
        density = min(1.0, links[node.mem_id] / size)  # as _link_density(node, size)
        if node.tag in {"ul", "ol"} and _introduced(node, page_host):
            continue  # the prose leads into it: part of the article
        if density > tuning.clean_links_high or (
            # A list in the article's prose names its sources as links ("the Elbkantinchen
            # in Geesthacht"): only a list that is mostly links is a box of them (as
            # readability, which holds lists to its higher threshold only).
            node.tag not in {"ul", "ol"}
            and density > tuning.clean_links_low
            and _class_weight(node) < 25
            and text.count(",") < 10
        ):
            doomed.append(node)
    # Only paragraphs broken by <br>: few are, and most pages have thousands of <p>.
    seen = set()
    for br in part.css("p br"):
        paragraph = br.parent
        while paragraph is not None and paragraph.tag != "p":
            paragraph = paragraph.parent
        if paragraph is None or paragraph.mem_id in seen:
            continue
        seen.add(paragraph.mem_id)
        if _links_one_a_line(paragraph) and _link_density(paragraph) > tuning.clean_links_high:
            doomed.append(paragraph)
    _remove(doomed)


def _only_controls(node: LexborNode) -> bool:
    """Whether every link of ``node`` (two or more) is a button that script drives.

    "Sign up now", "Log in" under a paywall's notice, "Report an error": links to
    "javascript:void(0)", "#" or nowhere lead to no page; a box of them is the site's
    controls, whatever it is named.
    """
    hrefs = [(a.attrs.get("href") or "").strip().lower() for a in node.css("a")]
    return len(hrefs) >= MIN_CONTROLS and all(
        href in {"", "#"} or href.startswith("javascript:") for href in hrefs
    )


def _links_one_a_line(node: LexborNode) -> bool:
    """Whether the paragraph ``node`` is links, one a line: a list written without <ul>.

    "Related: <br> <a>Headline</a> <br> <a>Headline</a>", "DON'T MISS" and its
    teasers: at least P_LINKS_MIN links, each with words (the caller finds the <br>). A
    linked picture and its credit ("<a><img></a><br>Portrait by <a>...</a>") is not.
    """
    links = node.css("a")
    return len(links) >= P_LINKS_MIN and all(link.text().strip() for link in links)


def _introduced(node: LexborNode, page_host: Callable[[], str | None]) -> bool:
    """Whether the list ``node`` follows a paragraph that announces it ("Our picks:").

    A box of related links comes under a heading of its own; a list the article's
    prose leads into is the article (its sources, the products it recommends), links
    or not.
    """
    prev = node.prev
    while prev is not None and prev.tag == "-text" and not (prev.text_content or "").strip():
        prev = prev.prev
    if prev is None:
        return False
    hrefs = [a.attrs.get("href") or "" for a in node.css("a[href]")]
    if prev.tag in THREAD_HEADING_TAGS:
        # A heading inside the article over a list of links to many other sites ("Mac
        # Apps": BBEdit, Acorn, ...) names the article's picks; a box of related links
        # under its heading leads to the site's own pages.
        hosts = [_host(href) for href in hrefs]
        found = {h.removeprefix("www.") for h in hosts if h}
        page = page_host()
        if page is not None:
            found.discard(page.removeprefix("www."))
        elsewhere = sum(h is not None and h.removeprefix("www.") in found for h in hosts)
        return len(found) >= LED_LIST_HOSTS and elsewhere >= LED_LIST_ELSEWHERE * len(hrefs)
    if prev.tag != "p" or not _collapse(prev.text()).endswith(":"):
        return False
    # "Also read:" leads into a list too, of the site's own pages: the article's own
    # list leads elsewhere.
    host = page_host()
    if host is None:
        return False
    elsewhere = sum(not _same_site(_host(href), host) for href in hrefs)
    return elsewhere >= LED_LIST_ELSEWHERE * len(hrefs)


def _page_host(node: LexborNode) -> str | None:
    """The host of the page ``node`` is in, as its canonical link or og:url names it."""
    root = node
    while root.parent is not None:
        root = root.parent
    canonical = root.css_first('link[rel="canonical"], meta[property="og:url"]')
    if canonical is None:
        return None
    return _host(canonical.attrs.get("href") or canonical.attrs.get("content") or "")


def _host(href: str) -> str | None:
    try:
        return urlsplit(href.strip()).hostname
    except ValueError:  # "http://[::1" and other broken URLs: no host to compare
        return None


def _same_site(host: str | None, page: str) -> bool:
    if host is None:
        return True  # a relative link: the page's own site
    return host.removeprefix("www.") == page.removeprefix("www.")


def _teasers(node: LexborNode) -> bool:
    """Whether ``node`` is mostly a row of cards, each linking elsewhere: teasers.

    "Related", "most read", "top ten": cards of one class, each with a link to another
    page, their excerpts plain text. Link density misses them when the excerpt is not
    a link or the card's link is an empty overlay; their class names are the site's
    own. The repeated card is the evidence, as a list of further articles looks on any
    site.
    """
    if node.tag not in CARD_ROW_TAGS:
        return False
    groups: dict[tuple[str, str], list[LexborNode]] = {}
    for item in node.iter():
        # A list of cards: each item holds one card ("li > article.post_teaser"), or
        # is one: a headline link and an excerpt, side by side.
        child = _card_in(item) if item.tag == "li" else item
        if child is not None and child.tag in CARD_OR_ITEM_TAGS:
            name = (child.attrs.get("class") or "").split()
            if name or child.tag == "li":  # the items of one list are alike by their tag
                groups.setdefault((child.tag or "", name[0] if name else ""), []).append(child)
    size = 0  # taken once a group of cards is found: most blocks have none
    for cards in groups.values():
        if len(cards) < MIN_CARDS:
            continue
        if any(
            # A card's text sits in its parts (title, excerpt); a paragraph styled
            # as a div has text of its own around its links.
            card.text(deep=False).strip() or card.css_first("a[href]") is None
            for card in cards
        ):
            continue
        sizes = [_size(card.text()) for card in cards]
        size = size or _size(node.text())
        # A card is a title and an excerpt: sections of the article are longer.
        if max(sizes) <= CARD_MAX and sum(sizes) >= CARDS_SHARE * size:
            return True
    return False


def _card_in(item: LexborNode) -> LexborNode | None:
    """The card a list item holds or is (a headline link first); else None.

    An item with text of its own is no card: _teasers asks every card that.
    """
    only = _only_child(item)
    if only is not None:
        return only
    first = item.child
    while first is not None and first.tag in {"-text", "-comment"}:
        first = first.next
    if first is None or first.tag != "a":
        return None
    # An excerpt beside the headline: an item of a list of links has none.
    return item if _size(item.text()) >= 2 * _size(first.text()) else None


def _only_child(node: LexborNode) -> LexborNode | None:
    """The one element inside ``node`` when it holds nothing else; else None."""
    found = None
    for child in node.iter(include_text=True):
        if child.tag == "-text":
            if (child.text_content or "").strip():
                return None
        elif child.tag != "-comment":
            if found is not None:
                return None
            found = child
    return found


def _teaser_size(root: LexborNode, inside: LexborNode) -> int:
    """The size of the rows of teasers in ``root`` outside ``inside``."""
    rows = [
        node
        for node in root.css(CARD_ROWS)
        if _teasers(node) and inside.mem_id not in _ancestor_ids(node)
    ]
    outermost = {node.mem_id for node in rows}
    return sum(
        _size(node.text())
        for node in rows
        if not outermost.intersection(_ancestor_ids(node.parent) if node.parent else ())
    )


# -- text -------------------------------------------------------------------------


def _undated(lines: list[str], tags: list[str]) -> tuple[list[str], list[str]]:
    """``lines`` and their ``tags`` less a line that is only a date, above the text (only
    headings before it) or at its very end, and a line of particulars with a time above
    the text: the article's date and byline, not its text.

    Further down, a date alone opens an entry of a log or a diary ("Web Pages",
    "07.03.2011", then what was done that day) and stays.
    """
    kept_lines: list[str] = []
    kept_tags: list[str] = []
    above = True  # nothing but headings so far
    for index, (line, tag) in enumerate(zip(lines, tags, strict=True)):
        if tag not in DATE_ONLY_TAGS and (
            ((above or index == len(lines) - 1) and DATE_ONLY.match(line))
            or (above and STAMP_LINE.match(line))
        ):
            continue
        above = above and tag in HEADING_RANK
        kept_lines.append(line)
        kept_tags.append(tag)
    return kept_lines, kept_tags


def _without_empty_headings(lines: list[str], tags: list[str]) -> list[str]:
    """``lines`` less the headings whose section is empty: at the end, or followed by a
    heading of the same or a higher rank.

    What is left of a box of links once its links are cut ("Related posts",
    "Auch interessant"): its heading, announcing nothing. A heading that ends as a
    sentence does is prose styled as one (a standfirst), and counts as body text.
    """
    kept: list[str] = []
    rank_after = 7  # rank of the next heading kept below; 7: body text follows (or nothing)
    for line, tag in zip(reversed(lines), reversed(tags), strict=True):
        rank = HEADING_RANK.get(tag)
        if rank is None or line.endswith("."):  # a sentence set as a heading: a lede
            rank_after = 8
        elif rank_after == 7 or rank_after <= rank:
            continue  # nothing of its own follows it
        else:
            rank_after = rank
        kept.append(line)
    kept.reverse()
    return kept


def _lines(root: LexborNode, tags: list[str] | None = None) -> list[str]:
    """Text of ``root``, one line per block: inline markup never splits a word.

    With ``tags``, the tag of each line's block is appended to it.
    """
    lines: list[str] = []
    pieces: list[str] = []
    blocks: dict[int, LexborNode | None] = {}
    # mem_id of a text node's parent -> mem_id of its block (0: none). Looked up
    # inline: a call per text node was most of the time on pages of short lines.
    block_ids: dict[int, int] = {}
    block_tags: dict[int, str] = {}  # mem_id of a block -> its tag
    current = -1  # mem_id of the block the pending pieces belong to

    def flush() -> None:
        if pieces:
            line = _collapse("".join(pieces))
            if line:
                lines.append(line)
                if tags is not None:
                    tags.append(block_tags.get(current, ""))
            pieces.clear()

    for node in root.traverse(include_text=True):
        tag = node.tag  # one property read for both tests: "-text" for a text node
        if tag == "-text":
            parent = node.parent
            block_id = 0
            if parent is not None:
                parent_id = parent.mem_id
                found = block_ids.get(parent_id)
                if found is None:
                    block = _block_of(parent, blocks)
                    found = block_ids[parent_id] = block.mem_id if block is not None else 0
                    if block is not None:
                        block_tags[found] = block.tag or ""
                block_id = found
            if block_id != current:
                if pieces:
                    flush()
                current = block_id
            pieces.append(node.text_content or "")
        elif tag in BLOCK_TAGS:
            if pieces:
                flush()
            current = -1
    flush()
    return lines
