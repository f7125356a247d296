"""The tantivy index on disk: one writer (the crawl or ``trawl index``), many readers.

Segments are immutable files, so a reader (``trawl serve``) keeps answering
while a writer commits, and picks the new commit up on ``reload``. A small
``trawl-schema.json`` beside the segments records the schema version: an
index built by another version is refused with a clear error instead of
answering wrongly.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tantivy

from trawl.errors import SearchIndexError
from trawl.index.documents import TEXT_FIELDS, discussions_from_field, index_fields
from trawl.records import Discussion, PageRecord

SCHEMA_VERSION = 3  # 2: anchors field; 3: discussed field
_SCHEMA_FILE = "trawl-schema.json"
_WRITER_HEAP = 128 * 1024 * 1024


def _schema() -> Any:
    b = tantivy.SchemaBuilder()
    b.add_text_field("url", stored=True, tokenizer_name="raw")
    b.add_text_field("title", stored=True, tokenizer_name="en_stem")
    b.add_text_field("headings", stored=True, tokenizer_name="en_stem")
    b.add_text_field("body", stored=True, tokenizer_name="en_stem")
    b.add_text_field("anchors", stored=False, tokenizer_name="en_stem")
    b.add_text_field("url_tokens", stored=False, tokenizer_name="en_stem")
    b.add_text_field("host", stored=False, tokenizer_name="default")
    b.add_text_field("lang", stored=True, tokenizer_name="raw")
    b.add_text_field("discussed", stored=True, tokenizer_name="raw")
    return b.build()


def _open(path: Path, *, create: bool, replace: bool = False) -> Any:
    """Open the index at ``path``; ``replace`` starts over when it has another schema."""
    marker = path / _SCHEMA_FILE
    try:
        if marker.exists():
            version = json.loads(marker.read_text()).get("version")
            if version != SCHEMA_VERSION and replace:
                shutil.rmtree(path)
            elif version != SCHEMA_VERSION:
                raise SearchIndexError(
                    f"index at {path} has schema version {version}, this Trawl needs"
                    f" {SCHEMA_VERSION}: rebuild it with `trawl index`"
                )
        elif not create:
            raise SearchIndexError(f"no index at {path}: crawl a site first")
        path.mkdir(parents=True, exist_ok=True)
        index = tantivy.Index(_schema(), path=str(path), reuse=True)
        marker.write_text(json.dumps({"version": SCHEMA_VERSION}))
        return index
    except (OSError, ValueError) as e:
        raise SearchIndexError(f"cannot open index at {path}: {e}") from e


class IndexWriter:
    """Adds, replaces and removes pages. Changes are visible after ``commit``."""

    def __init__(self, path: Path, *, fresh: bool = False) -> None:
        """``fresh``: start from an empty index (``trawl index``), whatever was there."""
        self._index = _open(path, create=True, replace=fresh)
        try:
            self._writer = self._index.writer(_WRITER_HEAP, 1)
        except ValueError as e:  # the writer lock is held by another process
            raise SearchIndexError(f"index at {path} is being written by another process") from e
        if fresh:
            self._writer.delete_all_documents()
        self.pending = 0

    def upsert(self, record: PageRecord, anchors: Sequence[str] = ()) -> None:
        self._writer.delete_documents_by_term("url", record.url)
        self._writer.add_document(tantivy.Document(**index_fields(record, anchors)))
        self.pending += 1

    def delete(self, url: str) -> None:
        self._writer.delete_documents_by_term("url", url)
        self.pending += 1

    def commit(self) -> None:
        if self.pending:
            self._writer.commit()
            self.pending = 0

    def close(self) -> None:
        self.commit()
        self._writer.wait_merging_threads()


@dataclass(frozen=True, slots=True)
class IndexHit:
    url: str
    title: str
    lang: str
    score: float
    fragment: str  # plain text around the matched terms, "" when the body had none
    highlights: tuple[tuple[int, int], ...]  # character offsets into fragment
    lead: str  # the body's first characters, shown when the body holds no match
    discussed_on: tuple[Discussion, ...] = ()


@dataclass(frozen=True, slots=True)
class IndexResults:
    total: int
    hits: tuple[IndexHit, ...]


class IndexReader:
    """Read-only view; ``search`` always sees the latest commit."""

    def __init__(self, path: Path) -> None:
        self._index = _open(path, create=False)
        self._schema = self._index.schema

    def num_docs(self) -> int:
        self._index.reload()
        return int(self._index.searcher().num_docs)

    def search(
        self,
        words: str,
        *,
        conjunction: bool,
        boosts: dict[str, float],
        limit: int,
        offset: int,
        snippet_chars: int,
    ) -> IndexResults:
        """Match ``words`` (plain words, no query syntax) over the text fields.

        Analysis is the fields' own (tantivy parses with each field's
        tokenizer), so query and document terms are stemmed alike.
        """
        self._index.reload()
        query = self._index.parse_query(
            words,
            list(TEXT_FIELDS),
            field_boosts=boosts,
            conjunction_by_default=conjunction,
        )
        searcher = self._index.searcher()
        found = searcher.search(query, limit, count=True, offset=offset)
        snippets = tantivy.SnippetGenerator.create(searcher, query, self._schema, "body")
        snippets.set_max_num_chars(snippet_chars)
        hits = []
        for score, address in found.hits:
            doc = searcher.doc(address)
            snippet = snippets.snippet_from_doc(doc)
            fragment = snippet.fragment()
            hits.append(
                IndexHit(
                    url=_first(doc, "url"),
                    title=_first(doc, "title"),
                    lang=_first(doc, "lang"),
                    score=float(score),
                    fragment=fragment,
                    highlights=_char_ranges(fragment, snippet.highlighted()),
                    lead=_first(doc, "body")[:snippet_chars],
                    discussed_on=discussions_from_field(_first(doc, "discussed")),
                )
            )
        return IndexResults(total=int(found.count), hits=tuple(hits))


def _first(doc: Any, field: str) -> str:
    values = doc.get_all(field)
    return str(values[0]) if values else ""


def _char_ranges(fragment: str, ranges: Any) -> tuple[tuple[int, int], ...]:
    # tantivy reports byte offsets into the UTF-8 fragment; Python slices characters.
    raw = fragment.encode("utf-8")
    return tuple(
        (len(raw[: r.start].decode("utf-8", "ignore")), len(raw[: r.end].decode("utf-8", "ignore")))
        for r in ranges
    )
