"""What the index can be asked and what it answers, without naming the engine. Pure.

search/ plans a query as a tree of these nodes over analysed terms and runs it
on a ``SearchIndex``; ``tantivy_index.py`` alone turns the tree into engine
queries. search/ sees the engine through this module only, so its logic can be
tested on a small index in memory (tests/memory_index.py).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple, Protocol

from trawl.records import Discussion


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
class Titled:
    """Pages whose title's key (index/documents.title_key) is ``key``: a page titled exactly
    the query, however common or stop-worded its words. One term; scored 0."""

    key: int


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


Node = Word | Phrase | Near | Lookup | Titled | AllOf | AnyOf | Filtered


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


# -- what the index answers -----------------------------------------------------------

# The engine's handle of a matched document: opaque to search/, which hands it back and
# asks the index for its ``key`` (tantivy's addresses are not hashable).
Address = Any
StoredSection = tuple[str, int, str, int]  # title, level, anchor, start in the text
StoredPassage = tuple[int, int, str]  # start in the text, section position or -1, " terms "


class Candidate(NamedTuple):
    """A match as the rerank first sees it: fast fields only, no stored page read.

    A named tuple, not a frozen dataclass: a query makes a few dozen, and a frozen
    dataclass's checked ``__init__`` was 4% of a SciFact query's time.
    """

    address: Address
    score: float
    authority: float
    quality: float
    title_key: int
    home: bool
    name_chars: int


@dataclass(frozen=True, slots=True)
class IndexResults:
    total: int
    addresses: tuple[tuple[float, Address], ...]  # (score, engine address), best first
    # How many leading addresses are known to hold every query word; None: not known
    # (a soft AND's first step), each page's words tell.
    complete: int | None = 0


class StoredPage(Protocol):
    """A matched page's stored fields (index/documents.py), read when first asked for."""

    @property
    def score(self) -> float: ...  # the engine's score, or 0 when sorted by date
    @property
    def url(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def host(self) -> str: ...
    @property
    def lang(self) -> str: ...
    @property
    def modified(self) -> datetime | None: ...
    @property
    def published(self) -> datetime | None: ...
    @property
    def modified_source(self) -> str | None: ...
    @property
    def text(self) -> str: ...
    @property
    def sections(self) -> tuple[Sequence[StoredSection], Sequence[StoredPassage]]: ...
    @property
    def terms(self) -> str: ...  # the page's distinct terms, a space at each end
    @property
    def discussed_on(self) -> tuple[Discussion, ...]: ...


class SearchIndex(Protocol):
    """What search/ asks of an index: term statistics, matches of a query tree, the
    rerank's fast fields and stored pages."""

    @property
    def size(self) -> int:
        """Documents in the view last loaded."""
        ...

    def reload(self) -> None:
        """See the latest commit."""

    def languages(self) -> tuple[str | None, ...]:
        """Analyses the pages were indexed with: stemmed language codes, None for the rest."""
        ...

    def doc_freq(self, field: str, term: str) -> int: ...

    def terms_with_prefix(
        self, field: str, prefix: str, limit: int | None = None
    ) -> list[tuple[str, int]]:
        """The field's terms beginning with ``prefix`` and their document counts,
        commonest first."""
        ...

    def search(
        self,
        node: Node,
        filters: Filters,
        boosts: Boosts,
        *,
        limit: int,
        offset: int = 0,
        by_date: bool = False,
        count: bool = True,
    ) -> IndexResults: ...

    def key(self, address: Address) -> Hashable:
        """Equal for two addresses of one document (the cascade merges its steps by it)."""
        ...

    def candidates(self, addresses: Sequence[tuple[float, Address]]) -> list[Candidate]: ...

    def fetch(self, addresses: Sequence[tuple[float, Address]]) -> Sequence[StoredPage]: ...
