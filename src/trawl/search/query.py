"""From what a person typed to the words the index is asked for. Pure.

For now a query is a bag of words: anything that is not a letter or digit
separates words, so no input can be a syntax error. Words are lower-cased,
which also keeps "AND", "OR" and "NOT" from being read as operators.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from trawl.errors import QueryError

MAX_QUERY_CHARS = 1_000
MAX_WORDS = 32

_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    text: str  # as typed, trimmed
    words: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return not self.words


def parse_query(text: str) -> ParsedQuery:
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"query longer than {MAX_QUERY_CHARS} characters")
    words = tuple(w.lower() for w in _WORD.findall(text))[:MAX_WORDS]
    return ParsedQuery(text=text.strip(), words=words)
