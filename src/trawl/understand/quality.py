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
    if len(words) >= STUFFING_MIN_WORDS:
        counts = Counter(
            w.lower() for w in words if len(w) >= 3 and w.isalpha() and w.lower() not in _STOPWORDS
        )
        if counts and counts.most_common(1)[0][1] / len(words) > STUFFING_SHARE:
            score += 0.6
    letters = [w for w in words if w.isalpha() and len(w) >= 4]
    if (
        len(letters) >= SHOUTING_MIN_WORDS
        and text.count("!") >= 3
        and sum(w.isupper() for w in letters) / len(letters) > SHOUTING_SHARE
    ):
        score += 0.3
    if len(_SHOUTED.findall(text)) >= 3:
        score += 0.3
    return min(1.0, score)
