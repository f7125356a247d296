"""Stop words by language: words that say how a query is put, not what it is about. Pure.

Beside other words they are not searched (search/plan.py), and they have no
say in the rerank's coverage or in proximity pairs: a page about "diet and
cellulite" need not hold "and" (NFCorpus's documents have their stop words
removed) and "who should be careful about curcumin" is about curcumin. A query
of stop words alone ("the who") still searches them.

The lists are the Snowball project's, as NLTK ships them, kept as package data
in ``stop_lists/`` (its README says where they come from and why they are not
read from a library). A language without a list has none: the index's own
counts (a word on most pages) still catch its commonest words.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from importlib.resources import files

from trawl.analysis.text import fold, language_code

# ISO 639-1 code -> the list's file in stop_lists/.
_LISTS = {
    "en": "english", "da": "danish", "nl": "dutch", "fr": "french", "de": "german",
    "it": "italian", "no": "norwegian", "nb": "norwegian", "nn": "norwegian",
    "pt": "portuguese", "ru": "russian", "es": "spanish", "sv": "swedish", "tr": "turkish",
}  # fmt: skip


# Question words and auxiliaries the Snowball lists leave out: "how could I ..." is about
# what follows, and a page need not say "could" (issue 16: questions in a user's words).
_QUESTION_WORDS = {
    "en": "could would might must shall may cannot whose whether",
    "de": "kann kannst können könnte wie warum weshalb wieso wo wann welche welcher welches",
    "fr": "comment pourquoi où quand quel quelle quels quelles peut peux pouvez",
    "es": "cómo cuándo dónde cuál cuáles puede puedo podemos",
}


@cache
def stop_words(lang: str | None) -> frozenset[str]:
    """The language's stop words, lower-cased and folded; empty when it has no list."""
    code = language_code(lang)
    name = _LISTS.get(code)
    if name is None:
        return frozenset()
    text = files("trawl.analysis").joinpath("stop_lists", f"{name}.txt").read_text("utf-8")
    words = text.split() + _QUESTION_WORDS.get(code, "").split()
    return frozenset(fold(w.lower()) for w in words)


def is_stop_word(word: str, languages: Iterable[str | None]) -> bool:
    """A stop word in any of the languages the query may be in."""
    return fold(word.lower()) in stop_words_of(tuple(languages))


@cache
def stop_words_of(languages: tuple[str | None, ...]) -> frozenset[str]:
    """The stop words of any of ``languages``: one set, asked once per query word."""
    return frozenset().union(*map(stop_words, languages))
