"""Render a snippet as safe HTML: escaped text, matched terms in <mark>. Pure."""

from __future__ import annotations

import re
from collections.abc import Callable
from html import escape, unescape

from trawl.analysis.text import fold


def mark(fragment: str, highlights: tuple[tuple[int, int], ...]) -> str:
    out: list[str] = []
    pos = 0
    for start, end in sorted(highlights):
        if start < pos:  # overlapping ranges: keep the first
            continue
        out.append(escape(fragment[pos:start]))
        out.append(f"<mark>{escape(fragment[start:end])}</mark>")
        pos = end
    out.append(escape(fragment[pos:]))
    return "".join(out)


def lead(text: str, limit: int) -> str:
    """The start of a text cut at a word boundary, escaped, for results with no match in it."""
    if len(text) <= limit:
        return escape(text)
    cut = text[:limit]
    if not text[limit].isspace():  # the limit falls inside a word: drop that word
        cut = cut.rsplit(" ", 1)[0]
    return escape(cut) + " …"


def strip_marks(snippet: str) -> str:
    """Plain text of a rendered snippet, for terminals."""
    return unescape(snippet.replace("<mark>", "").replace("</mark>", ""))


def best_fragment(
    text: str, terms: frozenset[str], stem: Callable[[str], str], limit: int
) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The ``limit`` characters of ``text`` holding the most distinct query terms.

    Our own because the index holds analysed terms, not the text the engine's
    snippet generator would need; words are found by a prefix scan (a stem is
    nearly always a prefix of its word) and confirmed by stemming the word.
    Returns the fragment (cut at word boundaries) and the matched ranges in it.
    """
    if not terms or not text:
        return "", ()
    prefixes = sorted({t[:4] for t in terms}, key=len, reverse=True)
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, prefixes)) + r")\w*")
    folded = _fold_same_length(text.lower())
    found = [
        (m.start(), m.end())
        for m in pattern.finditer(folded)
        if stem(m.group()) in terms or m.group() in terms
    ]
    if not found:
        return "", ()
    found = found[:200]  # bounds the window search on very long pages
    best_start, best_count = found[0][0], 0
    for i, (start, _) in enumerate(found):
        seen = {stem(folded[s:e]) for s, e in found[i:] if e - start <= limit}
        if len(seen) > best_count:
            best_start, best_count = start, len(seen)
    start = max(0, best_start - limit // 5)
    if start:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < best_start else start
    end = min(len(text), start + limit)
    if end < len(text):
        space = text.rfind(" ", start, end)
        end = space if space > start else end
    ranges = tuple((s - start, e - start) for s, e in found if s >= start and e <= end)
    return text[start:end], ranges


def _fold_same_length(text: str) -> str:
    # One character for one character, so offsets in the folded text are offsets in the text.
    if text.isascii():
        return text
    return "".join(fold(c)[:1] or c for c in text)
