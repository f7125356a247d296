"""A ``SearchIndex`` (index/spec.py) over a few pages in memory, for testing search/.

It takes the same analysed fields tantivy does (index/documents.index_fields)
and answers query trees by their meaning (which pages match, stored fields,
term statistics) with a plain TF-IDF score: the searcher's plan, cascade,
rerank, filters and paging can be tested in milliseconds, without the engine.
tests/index/test_memory_index.py checks it matches what tantivy matches.
"""

from __future__ import annotations

import json
import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from trawl.analysis.text import STEMMED_LANGUAGES
from trawl.index.documents import LONG, SEPARATOR, TEXT_FIELDS, discussions_from_field, index_fields
from trawl.index.spec import (
    FUZZY_WEIGHT,
    AllOf,
    AnyOf,
    Boosts,
    Candidate,
    Filtered,
    Filters,
    IndexResults,
    Lookup,
    Near,
    Node,
    Phrase,
    StoredPassage,
    StoredSection,
    Titled,
    Word,
)
from trawl.records import Discussion, PageRecord

_PHRASE_FIELDS = ("title", "headings", "body", "anchors")
_LOOKUP_FIELDS = ("host", "url_tokens")


@dataclass(frozen=True, slots=True)
class MemoryPage:
    """A ``spec.StoredPage``, decoded from the stored fields as the tantivy reader does."""

    score: float
    url: str
    title: str
    host: str
    lang: str
    modified: datetime | None
    published: datetime | None
    modified_source: str | None
    text: str
    sections: tuple[list[StoredSection], list[StoredPassage]]
    terms: str
    discussed_on: tuple[Discussion, ...]


@dataclass(slots=True)
class _Doc:
    fields: dict[str, Any]
    terms: dict[str, list[str]] = field(default_factory=dict)  # text field -> its terms

    def values(self, name: str) -> list[str]:
        """A raw field's values (site, lang, shape, modified_source)."""
        found = self.fields.get(name)
        if found is None:
            return []
        return list(found) if isinstance(found, list) else [found]


class MemoryIndex:
    """Addresses are positions in the page list; an upsert replaces a page in place."""

    def __init__(self, records: Iterable[PageRecord] = ()) -> None:
        self._docs: list[_Doc] = []
        for record in records:
            self.upsert(record)

    def upsert(self, record: PageRecord, anchors: Sequence[str] = ()) -> None:
        fields = index_fields(record, anchors)
        doc = _Doc(fields, {name: str(fields.get(name, "")).split() for name in TEXT_FIELDS})
        for position, old in enumerate(self._docs):
            if old.fields["url"] == record.url:
                self._docs[position] = doc
                return
        self._docs.append(doc)

    # -- term statistics ------------------------------------------------------------------

    @property
    def size(self) -> int:
        return len(self._docs)

    def reload(self) -> None:
        pass

    def key(self, address: Any) -> Hashable:
        return int(address)

    def doc_freq(self, field: str, term: str) -> int:
        return sum(1 for doc in self._docs if term in self._field_terms(doc, field))

    def terms_with_prefix(
        self, field: str, prefix: str, limit: int | None = None
    ) -> list[tuple[str, int]]:
        counts: dict[str, int] = {}
        for doc in self._docs:
            for term in set(self._field_terms(doc, field)):
                if term.startswith(prefix):
                    counts[term] = counts.get(term, 0) + 1
        found = sorted(counts.items(), key=lambda t: (-t[1], t[0]))
        return found if limit is None else found[:limit]

    def languages(self) -> tuple[str | None, ...]:
        found: list[str | None] = []
        counted = 0
        for code in sorted(STEMMED_LANGUAGES):
            df = self.doc_freq("lang", code)
            if df:
                found.append(code)
                counted += df
        if counted < self.size:
            found.append(None)
        return tuple(found)

    # -- matching -------------------------------------------------------------------------

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
    ) -> IndexResults:
        matched: list[tuple[float, int]] = []
        for position, doc in enumerate(self._docs):
            score = self._score(node, doc, boosts)
            if score is not None and self._passes(doc, filters):
                matched.append((score, position))
        if by_date:
            oldest = datetime.min.replace(tzinfo=UTC)
            newest = sorted(matched, key=lambda t: self._docs[t[1]].fields.get("modified", oldest))
            ordered = [(0.0, position) for _, position in reversed(newest)]
        else:
            ordered = sorted(matched, key=lambda t: (-t[0], t[1]))
        pairs = tuple(ordered[offset : offset + limit])
        return IndexResults(total=len(matched) if count else len(pairs), addresses=pairs)

    def candidates(self, addresses: Sequence[tuple[float, Any]]) -> list[Candidate]:
        found = []
        for score, address in addresses:
            f = self._docs[address].fields
            found.append(
                Candidate(
                    address,
                    score,
                    f.get("authority", 0.0),
                    f.get("quality", 0.0),
                    f.get("title_key", 0),
                    bool(f.get("home", 0)),
                    f.get("name_chars", 0),
                )
            )
        return found

    def fetch(self, addresses: Sequence[tuple[float, Any]]) -> list[MemoryPage]:
        return [self._page(score, self._docs[address].fields) for score, address in addresses]

    # -- what the engine does, plainly ---------------------------------------------------

    def _field_terms(self, doc: _Doc, field: str) -> list[str]:
        return doc.terms[field] if field in doc.terms else doc.values(field)

    def _weight(self, field: str, term: str, doc: _Doc) -> float:
        """TF-IDF of a term in a field of a page; 0 when the page lacks it."""
        tf = doc.terms.get(field, []).count(term)
        if not tf:
            return 0.0
        df = self.doc_freq(field, term)
        return (tf / (tf + 1.0)) * math.log(1 + (self.size - df + 0.5) / (df + 0.5))

    def _score(self, node: Node, doc: _Doc, boosts: Boosts) -> float | None:
        """The page's score for the node; None when it does not match."""
        fields = boosts.fields
        match node:
            case Word():
                found = [
                    self._weight(name, term, doc) * boost * weight * node.weight
                    for name, boost in fields.items()
                    if boost > 0
                    for terms, plain, weight in (
                        (node.stems, node.plain, 1.0),
                        (node.fuzzy, node.fuzzy_plain, FUZZY_WEIGHT),
                    )
                    for term in ((plain,) if name in _LOOKUP_FIELDS and plain else terms)
                    if term and term in doc.terms.get(name, ())
                ]
                return sum(found) if found else None
            case Phrase(variants=variants):
                found = [
                    fields.get(name, 1.0) * sum(self._weight(name, t, doc) for t in terms)
                    for terms in variants
                    for name in _PHRASE_FIELDS
                    if fields.get(name, 1.0) > 0 and _in_order(doc.terms[name], terms, 0)
                ]
                return sum(found) if found else None
            case Near(pairs=pairs, slop=slop, boost=boost, long_boost=long_boost):
                long = LONG in doc.values("shape")
                found = [
                    (boost + (long_boost if long and name == "body" else 0.0))
                    * fields.get(name, 1.0)
                    for pair in pairs
                    for name in ("title", "body")
                    if fields.get(name, 1.0) > 0 and _in_order(doc.terms[name], pair, slop)
                ]
                return sum(found) if found else None
            case Lookup(forms=forms):
                found = [
                    boosts.lookup * fields.get(name, 1.0) * self._weight(name, form, doc)
                    for form in forms
                    for name in _LOOKUP_FIELDS
                    if form in doc.terms[name]
                ]
                return sum(found) if found else None
            case Titled(key=key):
                return 0.0 if doc.fields.get("title_key") == key else None
            case AllOf(children=children, excluded=excluded, optional=optional):
                total = 0.0 if children else 1.0
                for child in children:
                    score = self._score(child, doc, boosts)
                    if score is None:
                        return None
                    total += score
                if any(self._score(c, doc, boosts) is not None for c in excluded):
                    return None
                return total + sum(self._score(c, doc, boosts) or 0.0 for c in optional)
            case AnyOf(children=children):
                scores = [self._score(c, doc, boosts) for c in children]
                held = [s for s in scores if s is not None]
                return sum(held) if held else None
            case Filtered(score=score, match=condition):
                if self._score(condition, doc, boosts) is None:
                    return None
                return self._score(score, doc, boosts)
        raise AssertionError(node)

    def _passes(self, doc: _Doc, filters: Filters) -> bool:
        if filters.sites:
            wanted = {s.lower().strip(".") for s in filters.sites}
            if not wanted & set(doc.values("site")):
                return False
        if filters.lang and filters.lang not in doc.values("lang"):
            return False
        if filters.modified_sources and not set(filters.modified_sources) & set(
            doc.values("modified_source")
        ):
            return False
        if filters.after or filters.before:
            modified = doc.fields.get("modified")
            if modified is None:
                return False
            if filters.after and modified < _utc(filters.after):
                return False
            if filters.before and modified >= _utc(filters.before):
                return False
        return True

    def _page(self, score: float, f: dict[str, Any]) -> MemoryPage:
        meta = bytes(f.get("meta", b"")).decode().split(SEPARATOR)
        meta += [""] * (6 - len(meta))
        stored = bytes(f.get("sections", b"")).decode()
        found = json.loads(stored) if stored else {"s": [], "p": []}
        return MemoryPage(
            score=score,
            url=f["url"],
            title=meta[0],
            host=meta[1],
            lang=meta[2],
            modified=datetime.fromisoformat(meta[3]) if meta[3] else None,
            published=datetime.fromisoformat(meta[4]) if meta[4] else None,
            modified_source=meta[5] or None,
            text=bytes(f.get("text", b"")).decode(),
            sections=([tuple(s) for s in found["s"]], [tuple(p) for p in found["p"]]),
            terms=bytes(f.get("terms", b"")).decode(),
            discussed_on=discussions_from_field(bytes(f.get("discussed", b"")).decode()),
        )


def _in_order(terms: list[str], wanted: Sequence[str], slop: int) -> bool:
    """The words in this order, at most ``slop`` other words between each two."""
    if not wanted:
        return False
    for start, term in enumerate(terms):
        if term != wanted[0]:
            continue
        at, ok = start, True
        for word in wanted[1:]:
            window = terms[at + 1 : at + 2 + slop]
            if word not in window:
                ok = False
                break
            at = at + 1 + window.index(word)
        if ok:
            return True
    return False


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
