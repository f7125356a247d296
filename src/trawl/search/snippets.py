"""Render a snippet as safe HTML: escaped text, matched terms in <mark>. Pure."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from html import escape as _escape
from html import unescape

from trawl.analysis.text import fold

ELLIPSIS = "…"
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_WORD = re.compile(r"\w+")
_WORD_REST = re.compile(r"\w*")
_MAX_MATCHES = 200
_ASCII_BYTES = bytes(range(128))
# Each byte as ``_spaced`` leaves it: ASCII characters that are no word character (``\w``:
# letters, digits, "_") become spaces; the rest, non-ASCII bytes among them, stay.
_SPACED_BYTES = bytes(b if chr(b).isalnum() or b == 95 or b > 127 else 32 for b in range(256))
# Each non-ASCII character seen, lower-cased and folded to one character: built as pages
# show new characters, a few hundred in all for most sites.
_SAME_LENGTH: dict[str, str] = {}


def mark(fragment: str, highlights: tuple[tuple[int, int], ...]) -> str:
    out: list[str] = []
    pos = 0
    # ``escape`` changes only these five characters: the parts of a fragment holding none
    # (most fragments) are kept as they are (``str`` hands a str back), not each escaped.
    special = "&" in fragment or "<" in fragment or ">" in fragment or '"' in fragment
    escape = _escape if special or "'" in fragment else str
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
    cut = _lead(text, limit)
    return _escape(cut) + (f" {ELLIPSIS}" if len(cut) < len(text) else "")


def _lead(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit]
    if not text[limit].isspace():  # the limit falls inside a word: drop that word
        cut = cut.rsplit(" ", 1)[0]
    return cut


def strip_marks(snippet: str) -> str:
    """Plain text of a rendered snippet, for terminals."""
    return unescape(snippet.replace("<mark>", "").replace("</mark>", ""))


def snippet(
    text: str,
    terms: frozenset[str],
    stem: Callable[[str], str],
    limit: int,
    *,
    skip: str = "",
    cut_before: bool = False,
    cut_after: bool = False,
    known: dict[str, str | None] | None = None,
) -> str:
    """A result's snippet: the best window of ``text`` with its matches marked, else its start.

    ``skip``, a title or heading shown beside the snippet, is left out when the text
    begins with it, so the result does not say it twice. An ellipsis marks each end
    where the text was cut; ``cut_before`` and ``cut_after`` say ``text`` is itself a
    part of a longer one. ``known`` is ``window``'s.
    """
    text = without_prefix(text, skip)
    fragment, ranges, start = window(text, terms, stem, limit, known)
    if not fragment:
        fragment, ranges = _lead(text, limit), ()
    before = f"{ELLIPSIS} " if start > 0 or cut_before else ""
    end = start + len(fragment)
    after = f" {ELLIPSIS}" if end < len(text) or cut_after else ""
    return before + mark(fragment, ranges) + after


def without_prefix(text: str, prefix: str) -> str:
    prefix = prefix.strip()
    if prefix and text.startswith(prefix):
        rest = text[len(prefix) :]
        if not rest or not rest[0].isalnum():  # a whole word, not "VACUUMING" for "VACUUM"
            return rest.lstrip(" \t\n:|\u2013\u2014\u00b7-")
    return text


def best_fragment(
    text: str, terms: frozenset[str], stem: Callable[[str], str], limit: int
) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The ``limit`` characters of ``text`` holding the most distinct query terms, and the
    matched ranges in it; ("", ()) when no term is in the text."""
    fragment, ranges, _ = window(text, terms, stem, limit)
    return fragment, ranges


def window(
    text: str,
    terms: frozenset[str],
    stem: Callable[[str], str],
    limit: int,
    known: dict[str, str | None] | None = None,
) -> tuple[str, tuple[tuple[int, int], ...], int]:
    """``best_fragment`` and where the fragment starts in ``text``.

    Our own because the index holds analysed terms, not the text the engine's
    snippet generator would need; words are found by a prefix scan (a stem is
    nearly always a prefix of its word) and confirmed by stemming the word, once
    per distinct word. ``known``, each word seen and the term it stands for (None: no
    term), may be shared by the windows of one query's results for the same ``terms``
    and ``stem``: their words are then stemmed once for the whole results page.
    """
    if not terms or not text:
        return "", (), 0
    folded = fold_same_length(text)
    if known is None:
        known = {}
    found: list[tuple[int, int, str]] = []
    spaced = ""
    # Each prefix found by ``str.find`` (memchr speed), not one alternation tried at every
    # character: that scan was most of a snippet's time on long pages. With every
    # character that is no word character made a space, and a space put in front, a word
    # beginning with the prefix is " " + prefix: found at word starts only, it ends at the
    # next space. The bare prefix was met inside words too ("t", of a T cell, in every
    # "that"), each a step in Python; a prefix holding other characters (a term folded
    # from "½" or "℃") is still looked for bare.
    for prefix, plain in _prefixes(terms):
        if plain:
            spaced = spaced or " " + _spaced(folded)
            needle = " " + prefix
            at = spaced.find(needle)  # the word's start in ``folded``, the space before it
            while at != -1 and len(found) < _MAX_MATCHES:
                end = spaced.find(" ", at + len(needle)) - 1
                if end < 0:
                    end = len(folded)
                word = folded[at:end]
                term = known.get(word, "")
                if term == "":  # not inlined as the bare search's ``_term``: most matches
                    term = _term(word, terms, stem, known)
                if term is not None:
                    found.append((at, end, term))
                at = spaced.find(needle, end + 1)
            continue
        at = folded.find(prefix)
        while at != -1 and len(found) < _MAX_MATCHES:
            if at and (folded[at - 1].isalnum() or folded[at - 1] == "_"):  # inside a word
                at = folded.find(prefix, at + 1)
                continue
            end = _WORD_REST.match(folded, at + len(prefix)).end()  # type: ignore[union-attr]
            term = _term(folded[at:end], terms, stem, known)
            if term is not None:
                found.append((at, end, term))
            at = folded.find(prefix, end)
    # One word found by two prefixes ("tab", "tabl") counts once; bounded on very long pages.
    found = sorted({f[0]: f for f in found}.values())[:_MAX_MATCHES]
    if not found:
        return "", (), 0
    # The window of ``limit`` characters, from a match on, holding the most distinct terms.
    # A plain dict, not a Counter: Counter's Python-level methods were a fifth of a window.
    best_start, best_count = found[0][0], 0
    inside: dict[str, int] = {}
    last, count = 0, len(found)
    for first, (start, _, _) in enumerate(found):
        while last < count and found[last][1] - start <= limit:
            term = found[last][2]
            inside[term] = inside.get(term, 0) + 1
            last += 1
        if len(inside) > best_count:
            best_start, best_count = start, len(inside)
        if last > first:
            term = found[first][2]
            held = inside[term] - 1
            if held:
                inside[term] = held
            else:
                del inside[term]
    start = max(0, best_start - limit // 5)
    if start:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < best_start else start
    end = min(len(text), start + limit)
    if end < len(text):
        space = text.rfind(" ", start, end)
        end = space if space > start else end
    ranges = tuple((s - start, e - start) for s, e, _ in found if s >= start and e <= end)
    return text[start:end], ranges, start


def _term(
    word: str, terms: frozenset[str], stem: Callable[[str], str], known: dict[str, str | None]
) -> str | None:
    """The term ``word`` stands for, if any, remembered in ``known``."""
    term = known.get(word, "")
    if term == "":
        stemmed = stem(word)
        term = known[word] = stemmed if stemmed in terms else word if word in terms else None
    return term


@lru_cache(maxsize=256)
def _prefixes(terms: frozenset[str]) -> tuple[tuple[str, bool], ...]:
    """What ``window`` looks for, in order: each term's first four letters (a stem is
    nearly always a prefix of its word), and whether they are all word characters. A
    results page asks for the same terms for each of its hits."""
    return tuple((p, _WORD.fullmatch(p) is not None) for p in sorted({t[:4] for t in terms}))


def _spaced(folded: str) -> str:
    """``folded`` with every character that is no word character (``\\w``) a space; as long.

    ASCII through a byte table (UTF-8 keeps other characters' bytes above 127, so they
    pass unchanged); the few distinct non-ASCII characters each by a replace."""
    encoded = folded.encode("utf-8")
    spaced = encoded.translate(_SPACED_BYTES).decode("utf-8")
    if not folded.isascii():
        for c in set(encoded.translate(None, _ASCII_BYTES).decode("utf-8")):
            if not (c.isalnum() or c == "_"):
                spaced = spaced.replace(c, " ")
    return spaced


def fold_same_length(text: str) -> str:
    """``text`` lower-cased and folded, one character for one character: offsets in the
    answer are offsets in ``text``, even after "İ", whose lower case is two characters."""
    lowered = text.lower()
    if lowered.isascii():
        return lowered
    if len(lowered) != len(text):  # "İ" and the like: folded run by run, each as one
        return _NON_ASCII.sub(_fold_run, text).lower()
    # The distinct non-ASCII characters, found in C (UTF-8 bytes without the ASCII ones),
    # each replaced in one pass: a page makes a few calls, not one a character (the
    # PostgreSQL manual: 2.7 million calls for 10 queries before).
    others = lowered.encode("utf-8").translate(None, _ASCII_BYTES).decode("utf-8")
    table = _SAME_LENGTH
    for c in set(others):
        folded = table.get(c)
        if folded is None:
            folded = table[c] = _fold_char(c)
        if folded != c:
            lowered = lowered.replace(c, folded)
    return lowered


def _fold_run(found: re.Match[str]) -> str:
    run = found.group()
    table = _SAME_LENGTH
    try:
        return "".join([table[c] for c in run])
    except KeyError:
        for c in set(run) - table.keys():
            table[c] = _fold_char(c)
        return "".join([table[c] for c in run])


def _fold_char(c: str) -> str:
    lowered = c.lower()
    folded = fold(lowered)[:1] or lowered[:1] or c
    # The whole answer is lower-cased again: only a character that stays one character
    # when lower-cased keeps the lengths equal.
    return folded if len(folded.lower()) == 1 else " "
