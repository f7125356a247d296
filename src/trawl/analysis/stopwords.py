"""Stop words by language: words that say how a query is put, not what it is about. Pure.

They still score (BM25's IDF weighs them down); what they lose is a say in the
rerank's coverage, in the all-words step and in proximity pairs: a page about
"diet and cellulite" need not hold "and" (NFCorpus's documents have their stop
words removed) and "who should be careful about curcumin" is about curcumin.

The lists are the Snowball project's, as NLTK ships them; bm25s carries them
without a data download. A language without a list has none: the index's own
counts (a word on most pages) still catch its commonest words.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from trawl.analysis.text import fold, language_code

# ISO 639-1 code -> the list's name in bm25s.stopwords.
_LISTS = {
    "en": "STOPWORDS_EN_PLUS", "da": "STOPWORDS_DANISH", "nl": "STOPWORDS_DUTCH",
    "fr": "STOPWORDS_FRENCH", "de": "STOPWORDS_GERMAN", "it": "STOPWORDS_ITALIAN",
    "no": "STOPWORDS_NORWEGIAN", "nb": "STOPWORDS_NORWEGIAN", "nn": "STOPWORDS_NORWEGIAN",
    "pt": "STOPWORDS_PORTUGUESE", "ru": "STOPWORDS_RUSSIAN", "es": "STOPWORDS_SPANISH",
    "sv": "STOPWORDS_SWEDISH", "tr": "STOPWORDS_TURKISH",
}  # fmt: skip


@cache
def stop_words(lang: str | None) -> frozenset[str]:
    """The language's stop words, lower-cased and folded; empty when it has no list."""
    name = _LISTS.get(language_code(lang))
    if name is None:
        return frozenset()
    # Imported when first needed: bm25s's package brings numpy and scipy along.
    from bm25s import stopwords  # noqa: PLC0415

    return frozenset(fold(w.lower()) for w in getattr(stopwords, name))


def is_stop_word(word: str, languages: Iterable[str | None]) -> bool:
    """A stop word in any of the languages the query may be in."""
    folded = fold(word.lower())
    return any(folded in stop_words(lang) for lang in languages)
