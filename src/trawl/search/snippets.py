"""Render a snippet as safe HTML: escaped text, matched terms in <mark>. Pure."""

from __future__ import annotations

from html import escape, unescape


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
