"""How good a page looks from what anyone can see on it: a score in [0, 1]. Pure.

A ranking prior with a small weight, and half of eviction's low-value rule
(quality under 0.2 and authority under 0.7). The signals, each in [0, 1]:

- length: words of main text on a log scale, 0 words -> 0, 1,000 and more -> 1.
  A thin page cannot be a good answer, so length multiplies everything else;
- content share: main-text words over visible words. Low when the page is
  mostly navigation, footers and other boilerplate;
- link density: words inside links over visible words. High on link farms,
  directory and tag pages;
- title: a page without a <title> or H1 was rarely made to be read;
- spam patterns: keyword stuffing (one word of three letters or more over 12%
  of a text of 150 words or more), shouting (over 40% of the words of four
  letters or more in capitals, among at least 20, with exclamation marks) and
  runs of !!! or $$$. Checked on the PostgreSQL manual: capitals alone are not
  shouting there (SQL synopses, tables of commands), nor a table of X marks
  stuffing.

    quality = length * (0.3 + 0.7 * (0.25 content + 0.25 (1 - link density)
                                     + 0.2 title + 0.3 (1 - spam)))
                     * (1 - 0.8 spam)

Spam counts twice on purpose: a stuffed page of any length must end low.
"""

from __future__ import annotations

import math
import re
from collections import Counter

LENGTH_FULL = 1_000  # words of main text that count as a full-length page
STUFFING_SHARE = 0.12
STUFFING_MIN_WORDS = 150
SHOUTING_SHARE = 0.4
SHOUTING_MIN_WORDS = 20
_WORD = re.compile(r"[^\W_]+")
_SHOUTED = re.compile(r"[!?$]{3,}")
# Words so common that their share says nothing about stuffing.
_STOPWORDS = frozenset(
    {"the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "is", "are", "was", "be"}
    | {"it", "that", "this", "with", "as", "at", "by", "from", "og", "i", "det", "en", "den"}
    | {"er", "til", "på", "de", "af", "med", "som", "har"}
)


def quality(
    *,
    text: str,
    visible_words: int,
    link_words: int,
    has_title: bool,
) -> float:
    """The page's quality in [0, 1] from its main ``text``, the number of visible words
    (boilerplate included), words inside links, and whether it has a title."""
    words = _WORD.findall(text)
    if not words:
        return 0.0
    length = min(1.0, math.log1p(len(words)) / math.log1p(LENGTH_FULL))
    visible = max(visible_words, len(words))
    content = len(words) / visible
    link_density = min(1.0, link_words / visible)
    spam = spam_score(text, words)
    rest = 0.25 * content + 0.25 * (1 - link_density) + 0.2 * has_title + 0.3 * (1 - spam)
    return round(max(0.0, min(1.0, length * (0.3 + 0.7 * rest) * (1 - 0.8 * spam))), 4)


def spam_score(text: str, words: list[str]) -> float:
    """[0, 1]: how strongly the text shows spam patterns (0: none)."""
    score = 0.0
    if len(words) >= STUFFING_MIN_WORDS and _top_share(words) > STUFFING_SHARE:
        score += 0.6
    # Shouting needs exclamation marks, which most pages lack: counted first.
    if text.count("!") >= 3:
        letters = [w for w in words if w.isalpha() and len(w) >= 4]
        if (
            len(letters) >= SHOUTING_MIN_WORDS
            and sum(map(str.isupper, letters)) / len(letters) > SHOUTING_SHARE
        ):
            score += 0.3
    # Three runs of three need nine of these characters: counting them (at memchr
    # speed) spares most pages the pattern's scan.
    marks = text.count("!") + text.count("?") + text.count("$")
    if marks >= 9 and len(_SHOUTED.findall(text)) >= 3:
        score += 0.3
    return min(1.0, score)


def _top_share(words: list[str]) -> float:
    """The share of ``words`` taken by the most common word of three letters or more
    that is not a stop word, case ignored."""
    # Every word counted in C, then the ranking read until a word qualifies (most
    # often the second or third): filtering each word first in Python cost ten times
    # as much, and this ran for every page of a crawl.
    for word, count in Counter(map(str.lower, words)).most_common():
        # U+0307 aside: lower-casing "İ" (Turkish) leaves it after the "i".
        if len(word) >= 3 and word.replace("\u0307", "").isalpha() and word not in _STOPWORDS:
            return count / len(words)
    return 0.0
