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

import importlib
import importlib.util
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from types import ModuleType

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
    return frozenset(fold(w.lower()) for w in getattr(_bm25s_stopwords(), name))


@cache
def _bm25s_stopwords() -> ModuleType:
    """bm25s's module of lists, read alone: importing the package loads scipy (0.3 s, measured),
    a cost every one-off `trawl search` would pay for a few tuples of words."""
    found = importlib.util.find_spec("bm25s")  # finds the package without running it
    folders = list(found.submodule_search_locations or []) if found else []
    path = Path(folders[0]) / "stopwords.py" if folders else None
    spec = importlib.util.spec_from_file_location("trawl_bm25s_stopwords", path) if path else None
    if path is None or not path.is_file() or spec is None or spec.loader is None:
        return importlib.import_module("bm25s.stopwords")  # another layout: the plain way
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def is_stop_word(word: str, languages: Iterable[str | None]) -> bool:
    """A stop word in any of the languages the query may be in."""
    folded = fold(word.lower())
    return any(folded in stop_words(lang) for lang in languages)
