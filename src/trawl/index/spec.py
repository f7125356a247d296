"""What the index can be asked, without naming the engine. Pure.

search/ plans a query as a tree of these nodes over analysed terms;
``tantivy_index.py`` alone turns the tree into engine queries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Word:
    """One query word: matches any of its stems in any text field (field boosts apply)."""

    stems: tuple[str, ...]  # matched in the analysed fields (title, headings, body, anchors)
    plain: str = ""  # matched in host and URL tokens, which are folded but not stemmed
    # Near spellings or completions of a word the index barely knows: they match too,
    # scored at FUZZY_WEIGHT of an exact match (search/typos.py).
    fuzzy: tuple[str, ...] = ()
    fuzzy_plain: str = ""
    weight: float = 1.0  # below 1: a word the query did not type (feedback terms)


FUZZY_WEIGHT = 0.5


@dataclass(frozen=True, slots=True)
class Phrase:
    """Words in this order, in one field; one term sequence per candidate analysis."""

    variants: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class Near:
    """Adjacent query words near each other in the body or title; never required."""

    pairs: tuple[tuple[str, str], ...]
    slop: int
    boost: float
    long_boost: float = 0.0  # added on long pages (index/documents.py's shape)


@dataclass(frozen=True, slots=True)
class Lookup:
    """URL forms of the query (joined words), matched in host and URL tokens; never required."""

    forms: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AllOf:
    children: tuple[Node, ...]
    excluded: tuple[Node, ...] = ()
    optional: tuple[Node, ...] = ()  # add to the score, never required


@dataclass(frozen=True, slots=True)
class AnyOf:
    children: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Filtered:
    """Pages ``match`` finds, scored by ``score`` alone: ``match`` adds nothing to a score."""

    score: Node
    match: Node


Node = Word | Phrase | Near | Lookup | AllOf | AnyOf | Filtered


@dataclass(frozen=True, slots=True)
class Filters:
    sites: tuple[str, ...] = ()  # host names; a page matches its host or any parent domain
    lang: str | None = None
    after: datetime | None = None  # modified on or after
    before: datetime | None = None  # modified before
    modified_sources: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.sites or self.lang or self.after or self.before or self.modified_sources)


@dataclass(frozen=True, slots=True)
class Boosts:
    fields: dict[str, float] = field(default_factory=dict)
    lookup: float = 1.0  # weight of a URL form's match in host and URL tokens
