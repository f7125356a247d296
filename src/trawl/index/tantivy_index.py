"""The tantivy index on disk: one writer (the crawl or ``trawl index``), many readers.

Segments are immutable files, so a reader (``trawl serve``) keeps answering
while a writer commits, and picks the new commit up on ``reload``. A small
``trawl-schema.json`` beside the segments records the schema version: an
index built by another version is refused with a clear error (``trawl index``
rebuilds it) instead of answering wrongly.

Text arrives analysed (index/documents.py), so every text field uses the
engine's whitespace tokenizer: the engine never stems or lower-cases.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import shutil
import time
from collections.abc import Hashable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import tantivy

from trawl.analysis.text import STEMMED_LANGUAGES
from trawl.errors import DiskFull, SearchIndexError
from trawl.index.documents import (
    LONG,
    SEPARATOR,
    TEXT_FIELDS,
    discussions_from_field,
    index_fields,
)
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

# 2: anchors; 3: discussed; 4: terms analysed per language in Python, priors, dates, plain, site;
# 5: no plain field (the cascade's last step analyses the words in every indexed language);
#    the rerank's keys as fast fields; 6: compound spellings after each field's words
#    (il-6: il6), so an index built before must be rebuilt to find them; 7: sections
#    (headed parts of the text, with their terms) for deep links; 8: shape (long pages);
# 9: title_key indexed, so a page titled exactly the query is found by one term
SCHEMA_VERSION = 9
_SCHEMA_FILE = "trawl-schema.json"
_WRITER_HEAP = 128 * 1024 * 1024
# The stored pages' block size. tantivy decompresses a whole block to read one page, and a
# search reads its top pages one by one: 4 KiB blocks, not tantivy's 16, cut that read by a
# third on SciFact (9.8 -> 6.6 us a page) for a store 6% larger.
_STORE_BLOCK_BYTES = 4096
_PHRASE_FIELDS = ("title", "headings", "body", "anchors")
_LOOKUP_FIELDS = ("host", "url_tokens")
_UNSTEMMED = frozenset(_LOOKUP_FIELDS)
_KEYS = ("title_key", "home", "name_chars")  # what the rerank reads before any stored page
_BUILT_MAX = 4096  # engine queries kept for reuse
# Document frequencies kept per reader (an int per field and term): a search asks for
# dozens, and most words come back in later queries.
_DF_MAX = 262_144
# Lookups a field answers 0 to, none more, before its term dictionary is read to tell
# whether any page holds a term in it (that walk is the field's whole dictionary).
_MISSES_BEFORE_CHECK = 4
_SHOULD = tantivy.Occur.Should
_MUST = tantivy.Occur.Must
_MUST_NOT = tantivy.Occur.MustNot


def _schema() -> Any:
    b = tantivy.SchemaBuilder()
    b.add_text_field("url", stored=True, tokenizer_name="raw")
    for name in TEXT_FIELDS:
        b.add_text_field(name, stored=False, tokenizer_name="whitespace")
    for name in ("site", "lang", "modified_source", "shape"):
        b.add_text_field(name, stored=False, tokenizer_name="raw", index_option="basic")
    b.add_date_field("modified", stored=False, indexed=True, fast=True)
    b.add_float_field("authority", stored=False, indexed=False, fast=True)
    b.add_float_field("quality", stored=False, indexed=False, fast=True)
    for name in _KEYS:
        # title_key is a term too: a page titled the query joins the rerank (search.Titled).
        b.add_unsigned_field(name, stored=False, indexed=name == "title_key", fast=True)
    for name in ("meta", "text", "terms", "discussed", "sections"):
        b.add_bytes_field(name, stored=True, indexed=False)
    return b.build()


def _open(path: Path, *, create: bool, replace: bool = False) -> Any:
    """Open the index at ``path``; ``replace`` starts over when it has another schema, or
    when its marker or the engine's own files are damaged."""
    marker = path / _SCHEMA_FILE
    try:
        if marker.exists():
            version = _marker_version(marker)
            if version != SCHEMA_VERSION and replace:
                _remove(path)
            elif version is None:
                raise SearchIndexError(
                    f"index at {path} has a damaged {_SCHEMA_FILE}: rebuild it with `trawl index`"
                )
            elif version != SCHEMA_VERSION:
                raise SearchIndexError(
                    f"index at {path} has schema version {version}, this Trawl needs"
                    f" {SCHEMA_VERSION}: rebuild it with `trawl index`"
                )
        elif (path / "meta.json").exists() and not replace:
            # The engine's files without the marker: a rebuild killed while it removed
            # an older index (or made this one), the old files' schema unknown.
            if not create:
                raise SearchIndexError(
                    f"index at {path} has lost its {_SCHEMA_FILE}: rebuild it with `trawl index`"
                )
        elif not create:
            raise SearchIndexError(f"no index at {path}: crawl a site first")
        if marker.exists() and not replace and not (path / "meta.json").exists():
            # The engine would quietly start an empty index: every page lost from search.
            raise SearchIndexError(
                f"index at {path} has lost its meta.json: rebuild it with `trawl index`"
            )
        path.mkdir(parents=True, exist_ok=True)
        try:
            index = _engine_index(path)
        except ValueError as e:
            if not replace:
                error = _write_error(f"cannot open index at {path}", e)
                if isinstance(error, DiskFull):
                    raise error from e
                raise SearchIndexError(f"{error}: rebuild it with `trawl index`") from e
            _remove(path)  # same version number, other fields: a rebuild starts over
            path.mkdir(parents=True)
            index = _engine_index(path)
        if create and not marker.exists():  # a reader writes nothing: servers open read-only
            write_atomically(marker, json.dumps({"version": SCHEMA_VERSION}))
        return index
    except (OSError, ValueError) as e:
        raise _write_error(f"cannot open index at {path}", e) from e


def _remove(path: Path) -> None:
    """Remove the index at ``path`` so that a kill part way leaves what every command
    calls damaged ("rebuild it with `trawl index`"): the engine's meta.json first, the
    marker last. `shutil.rmtree` goes in the file system's order, which may take the
    marker first and leave the old engine files looking like an index of no version."""
    (path / "meta.json").unlink(missing_ok=True)
    marker = path / _SCHEMA_FILE
    for child in path.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        elif child != marker:
            child.unlink()
    marker.unlink(missing_ok=True)
    path.rmdir()


# The engine's errors reach Python as ValueError text: these name a write that found no
# room (ENOSPC, EFBIG past a file size limit).
_NO_ROOM = ("No space left on device", "os error 28", "File too large", "os error 27")


def _write_error(doing: str, error: Exception) -> SearchIndexError:
    """``error`` as Trawl's: a full disk stops the command (DiskFull), not one page."""
    full = isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EFBIG)
    if full or any(sign in str(error) for sign in _NO_ROOM):
        return DiskFull(f"{doing}: the disk is full ({error})")
    return SearchIndexError(f"{doing}: {error}")


def _marker_version(marker: Path) -> int | None:
    """The schema version the marker names; None when it is empty or damaged (a kill
    while an older Trawl wrote it in place)."""
    try:
        found = json.loads(marker.read_text())
    except (OSError, ValueError):
        return None
    version = found.get("version") if isinstance(found, dict) else None
    return version if isinstance(version, int) else None


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` whole or not at all: a temporary file beside it,
    synced, renamed over it, and the folder synced, so a kill or a power cut leaves
    the old file or the new one, never an empty or half-written one."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        temporary.replace(path)
    finally:
        temporary.unlink(missing_ok=True)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def _engine_index(path: Path) -> Any:
    index = tantivy.Index(_schema(), path=str(path), reuse=True)
    # The Python binding takes no index settings, but tantivy reads them from meta.json on
    # every open: a new, empty index gets its block size there and is opened again.
    meta = path / "meta.json"
    found = json.loads(meta.read_text())
    settings = found["index_settings"]
    if not found["segments"] and settings.get("docstore_blocksize") != _STORE_BLOCK_BYTES:
        settings["docstore_blocksize"] = _STORE_BLOCK_BYTES
        write_atomically(meta, json.dumps(found))
        index = tantivy.Index(_schema(), path=str(path), reuse=True)
    return index


# tantivy's writer lock: an flock the one IndexWriter holds while it lives, dropped by
# the kernel when its process dies, however it dies. It is also the crawl lock.
_WRITER_LOCK = ".tantivy-writer.lock"
# Tries at the writer lock, this far apart: ``writer_held`` holds it for an instant.
_LOCK_TRIES = 3
_LOCK_PAUSE = 0.05


def writer_held(path: Path) -> bool:
    """Whether a live process holds the index's writer (a crawl, ``trawl index``): a
    shared try at tantivy's lock, dropped at once. No index, no lock file: False."""
    try:
        fd = os.open(path / _WRITER_LOCK, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:  # a file system without flock: no writer can lock there either
        return False
    finally:
        os.close(fd)  # drops the shared lock, if taken
    return False


class IndexWriter:
    """Adds, replaces and removes pages. Changes are visible after ``commit``."""

    def __init__(self, path: Path, *, fresh: bool = False, threads: int = 1) -> None:
        """``fresh``: start from an empty index (``trawl index``), whatever was there."""
        self._index = _open(path, create=True, replace=fresh)
        self._schema = self._index.schema
        for attempt in range(_LOCK_TRIES):
            try:
                self._writer = self._index.writer(_WRITER_HEAP, threads)
                break
            except ValueError as e:  # the writer lock is held by another process
                # ... or by /healthz's look at it (writer_held), for an instant.
                if attempt + 1 == _LOCK_TRIES:
                    message = f"index at {path} is being written by another process"
                    raise SearchIndexError(message) from e
                time.sleep(_LOCK_PAUSE)
        self.pending = 0
        self._searcher: Any = None
        if fresh:
            self._writer.delete_all_documents()
            self.pending = 1  # a rebuild commits even when the store has no page

    def upsert(self, record: PageRecord, anchors: Sequence[str] = ()) -> None:
        self.upsert_fields(index_fields(record, anchors))

    def add(self, record: PageRecord, anchors: Sequence[str] = ()) -> None:
        """Add a page known to be absent (a fresh index): no delete first."""
        self.add_fields(index_fields(record, anchors))

    def upsert_fields(self, fields: dict[str, Any]) -> None:
        """Replace the page ``fields`` (``index_fields``' answer, built elsewhere) names."""
        self._writer.delete_documents_by_term("url", fields["url"])
        self.add_fields(fields)

    def add_fields(self, fields: dict[str, Any]) -> None:
        # Converted by the schema's types: without it a Python int would be read as i64.
        document = tantivy.Document.from_dict(fields, self._schema)
        try:
            self._writer.add_document(document)  # may spill a segment to disk
        except ValueError as e:
            raise _write_error("cannot write the index", e) from e
        self.pending += 1

    def delete(self, url: str) -> None:
        self._writer.delete_documents_by_term("url", url)
        self.pending += 1

    def commit(self) -> None:
        if self.pending:
            try:
                self._writer.commit()
            except ValueError as e:  # a full disk, say
                raise _write_error("cannot commit the index", e) from e
            self.pending = 0
            self._searcher = None

    def contains(self, url: str) -> bool:
        """Whether the last commit holds the page ``url`` (deleted documents do not count)."""
        if self._searcher is None:
            self._index.reload()
            self._searcher = self._index.searcher()
        query = tantivy.Query.term_query(self._schema, "url", url)
        return int(self._searcher.search(query, 1).count or 0) > 0

    def rollback(self) -> None:
        """Drop every change since the last commit."""
        try:
            self._writer.rollback()
        finally:
            self.pending = 0  # nothing for close to commit, even from a writer killed

    def close(self) -> None:
        self.commit()
        self._writer.wait_merging_threads()


class IndexHit:
    """A matched page; its stored document is read when a field is first asked for, and
    each field decoded when first asked for.

    Ranking needs a few fields of a few pages, evaluation only the URL, a results page
    only the hits it shows: reading and decoding every field (the main text above all)
    of every page matched was most of a query's cost.
    """

    __slots__ = ("_address", "_doc", "_meta", "_searcher", "score")

    def __init__(self, searcher: Any, address: Any, score: float) -> None:
        # The searcher of the commit that matched: a reload meanwhile changes nothing here.
        self._searcher = searcher
        self._address = address
        self._doc: Any = None
        self._meta: list[str] | None = None
        self.score = score  # the engine's BM25F score, or 0 when sorted by date

    def _field(self, name: str) -> Any:
        if self._doc is None:
            self._doc = self._searcher.doc(self._address)
        return self._doc.get_first(name)

    def _meta_field(self, index: int) -> str:
        if self._meta is None:
            self._meta = bytes(self._field("meta")).decode("utf-8").split(SEPARATOR)
        return self._meta[index] if index < len(self._meta) else ""

    @property
    def url(self) -> str:
        return str(self._field("url"))

    @property
    def title(self) -> str:
        return self._meta_field(0)

    @property
    def host(self) -> str:
        return self._meta_field(1)

    @property
    def lang(self) -> str:
        return self._meta_field(2)

    @property
    def modified(self) -> datetime | None:
        found = self._meta_field(3)
        return datetime.fromisoformat(found) if found else None

    @property
    def published(self) -> datetime | None:
        found = self._meta_field(4)
        return datetime.fromisoformat(found) if found else None

    @property
    def modified_source(self) -> str | None:
        return self._meta_field(5) or None

    @property
    def text(self) -> str:
        return bytes(self._field("text") or b"").decode("utf-8")  # empty: not stored

    @property
    def sections(self) -> tuple[list[StoredSection], list[StoredPassage]]:
        """The text's headed sections and its passages (index/documents.py); none for a
        short page without headings."""
        stored = bytes(self._field("sections") or b"")
        if not stored:
            return [], []
        found = json.loads(stored.decode("utf-8"))  # bytes would be sniffed for their encoding
        return [tuple(s) for s in found["s"]], [tuple(p) for p in found["p"]]

    @property
    def terms(self) -> str:
        """The page's distinct terms, space-separated, with a space at each end."""
        return bytes(self._field("terms") or b"").decode("utf-8")

    @property
    def discussed_on(self) -> tuple[Discussion, ...]:
        return discussions_from_field(bytes(self._field("discussed") or b"").decode())


# meta.json's (inode, mtime_ns, size), and its text's digest while it is fresh.
CommitMark = tuple[int, int, int] | tuple[int, int, int, bytes]
# How long a meta.json counts as fresh: over any file system's mtime tick (FAT: 2 s).
_FRESH_NS = 5_000_000_000


class IndexReader:
    """Read-only view; ``reload`` picks up the latest commit. A ``spec.SearchIndex``."""

    def __init__(self, path: Path) -> None:
        self._meta = path / "meta.json"  # rewritten by every commit and merge
        # Marked before opening: a commit landing meanwhile is seen by the next reload.
        self._commit = self._commit_mark()
        self._index = _open(path, create=False)
        self._schema = self._index.schema
        self._searcher = self._index.searcher()
        self._languages: tuple[str | None, ...] | None = None
        # Engine queries and term counts for this commit (queries leave out absent terms).
        self._built: dict[tuple[object, ...], Any] = {}
        self._df: dict[tuple[str, str], int] = {}
        self._empty: set[str] = set()  # fields no page of this commit has a term in
        self._filled: set[str] = set()  # fields a lookup found a term in
        self._misses: dict[str, int] = {}  # per field not yet known: lookups that found 0

    def reload(self) -> None:
        """Load the latest commit, when there is a newer one than the view loaded.

        Every commit and merge replaces meta.json (a new file renamed over the old: a new
        inode), so one stat tells (and, while the file is seconds old, its text: see
        ``_commit_mark``); the engine's own reload, done for every search, cost ~120 us
        of CPU against ~6 us for the stat (SciFact's index).
        """
        # Marked before reloading: a commit landing in between is seen by the next reload.
        mark = self._commit_mark()
        if mark == self._commit and mark is not None:
            return
        self._index.reload()
        self._searcher = self._index.searcher()
        self._commit = mark
        self._languages = None
        self._built.clear()
        self._df.clear()
        self._empty.clear()
        self._filled.clear()
        self._misses.clear()

    def _commit_mark(self) -> CommitMark | None:
        try:
            found = self._meta.stat()
            stat = (found.st_ino, found.st_mtime_ns, found.st_size)
            if time.time_ns() - found.st_mtime_ns >= _FRESH_NS:
                return stat  # any later commit has a later mtime
            # A commit in the same clock tick can reuse this inode (freed by the commit
            # between) at the same size: the text tells them apart. Read only while
            # fresh: a search pays the read (~80 us) for a few seconds after a commit.
            digest = hashlib.blake2b(self._meta.read_bytes(), digest_size=16).digest()
        except OSError:
            return None
        return (*stat, digest)

    @property
    def generation(self) -> CommitMark | None:
        """The commit this view loaded (None: not known); the same mark, the same answers."""
        return self._commit

    def num_docs(self) -> int:
        self.reload()
        return int(self._searcher.num_docs)

    def present(self, urls: Iterable[str]) -> int:
        """How many of ``urls`` the latest commit holds (as loaded: no reload)."""
        search, schema = self._searcher.search, self._schema
        return sum(
            1
            for url in urls
            if search(tantivy.Query.term_query(schema, "url", url), 1, count=True).count
        )

    def urls(self) -> list[str]:
        """The URL of every document of the latest commit (a URL twice: two documents)."""
        return [hit.url for hit in self.pages()]

    def pages(self) -> list[IndexHit]:
        """Every document of the latest commit, each read when a field is asked for."""
        self.reload()
        searcher = self._searcher
        total = int(searcher.num_docs)
        if total == 0:
            return []
        found = searcher.search(tantivy.Query.all_query(), total)
        return [IndexHit(searcher, address, 0.0) for _, address in found.hits]

    @property
    def size(self) -> int:
        """Documents in the view last loaded (no reload)."""
        return int(self._searcher.num_docs)

    def doc_freq(self, field: str, term: str) -> int:
        key = (field, term)
        found = self._df.get(key)
        if found is None:
            if field in self._empty:
                return 0
            if len(self._df) >= _DF_MAX:
                self._df.clear()
            found = self._df[key] = int(self._searcher.doc_freq(field, term))
            if found:
                self._filled.add(field)
            elif field not in self._filled:
                self._missed(field)
        return found

    def _missed(self, field: str) -> None:
        """Tell, after a few lookups found nothing in it, whether no page of the loaded
        commit holds a term in ``field``: then it is not asked again.

        A collection of abstracts has no headings, anchors, asides or hosts: a query's
        words were looked up in each of them (62% of SciFact's 15,500 look-ups a round,
        ~7 us each), every answer 0. The test (the field's commonest term) walks its whole
        dictionary: 0 ms for an empty field, 15 ms for SciFact's titles and 50-80 ms for
        its bodies when every field was tested at a commit's first query. Fields a lookup
        found a term in are never tested.
        """
        misses = self._misses[field] = self._misses.get(field, 0) + 1
        if misses == _MISSES_BEFORE_CHECK and not self._searcher.terms_with_prefix(
            field, "", limit=1
        ):
            self._empty.add(field)

    def terms_with_prefix(
        self, field: str, prefix: str, limit: int | None = None
    ) -> list[tuple[str, int]]:
        """The field's terms that begin with ``prefix`` and their document counts, commonest
        first: the engine's term dictionary, for near spellings and completions."""
        key = ("prefix", field, prefix, limit)
        found: list[tuple[str, int]] | None = self._built.get(key)
        if found is None:
            # The engine answers a new list of (str, int) tuples: kept as it is. Copying it
            # cost as much as the engine's own walk (0.76 against 1.27 ms for "co", 727
            # terms), paid by every near spelling of a prefix new to the commit.
            found = self._remember(
                key, self._searcher.terms_with_prefix(field, prefix, limit=limit)
            )
        return found

    def languages(self) -> tuple[str | None, ...]:
        """Analyses the pages were indexed with: stemmed language codes, None for the rest."""
        if self._languages is None:
            found: list[str | None] = []
            counted = 0
            for code in sorted(STEMMED_LANGUAGES):
                df = self.doc_freq("lang", code)
                if df:
                    found.append(code)
                    counted += df
            if counted < self.size:
                found.append(None)
            self._languages = tuple(found)
        return self._languages

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
        query = self._query(node, boosts)
        if not filters.empty:
            query = tantivy.Query.boolean_query(
                [(_MUST, query), *((_MUST, q) for q in self._filters(filters))]
            )
        try:
            if by_date:
                found = self._searcher.search(
                    query, limit, count=count, offset=offset, order_by_field="modified"
                )
                pairs = tuple((0.0, address) for _, address in found.hits)
            else:
                found = self._searcher.search(query, limit, count=count, offset=offset)
                pairs = tuple((float(score), address) for score, address in found.hits)
        except ValueError as e:
            raise SearchIndexError(f"search failed: {e}") from e
        return IndexResults(total=int(found.count or 0) if count else len(pairs), addresses=pairs)

    def key(self, address: Any) -> Hashable:
        return (address.segment_ord, address.doc)

    def candidates(self, addresses: Sequence[tuple[float, Any]]) -> list[Candidate]:
        """The rerank's first look at matches: priors and keys from fast fields."""
        if not addresses:
            return []
        only = [address for _, address in addresses]
        read = self._searcher.fast_field_values
        columns = [read(name, only) for name in ("authority", "quality", *_KEYS)]
        rows = zip(addresses, *columns, strict=True)
        return [
            Candidate(address, score, auth or 0.0, qual or 0.0, key or 0, bool(home), chars or 0)
            for (score, address), auth, qual, key, home, chars in rows
        ]

    def fetch(self, addresses: Sequence[tuple[float, Any]]) -> list[IndexHit]:
        """The stored page behind each address, read when a field of it is first asked for."""
        searcher = self._searcher
        return [IndexHit(searcher, address, score) for score, address in addresses]

    # Translation of the engine-neutral tree (index/spec.py) into tantivy queries.

    def _query(self, node: Node, boosts: Boosts) -> Any:
        # The cascade asks for the same words twice (all, then any): build each once.
        key = (node, boosts.lookup, *boosts.fields.items())
        query = self._built.get(key)
        if query is None:
            query = self._remember(key, self._build(node, boosts))
        return query

    def _remember(self, key: tuple[object, ...], built: Any) -> Any:
        if len(self._built) > _BUILT_MAX:
            self._built.clear()
        self._built[key] = built
        return built

    def _build(self, node: Node, boosts: Boosts) -> Any:
        match node:
            case Word():
                return _any(self._clauses(node, boosts))
            case Phrase(variants=variants):
                return _any(
                    [
                        self._phrase(field, terms, boosts.fields.get(field, 1.0))
                        for terms in variants
                        for field in _PHRASE_FIELDS
                        if boosts.fields.get(field, 1.0) > 0
                    ]
                )
            case Near(pairs=pairs, slop=slop, boost=boost, long_boost=long_boost):
                near = [
                    (field, tantivy.Query.phrase_query(self._schema, field, list(pair), slop))
                    for pair in pairs
                    for field in ("title", "body")
                    if boosts.fields.get(field, 1.0) > 0
                ]
                clauses = [
                    tantivy.Query.boost_query(query, boost * boosts.fields.get(field, 1.0))
                    for field, query in near
                ]
                if long_boost > 0:
                    # On a page cut into passages, sharing the page says little of two
                    # words belonging together; being near each other says more.
                    long = tantivy.Query.const_score_query(
                        tantivy.Query.term_query(self._schema, "shape", LONG), 0.0
                    )
                    clauses += [
                        tantivy.Query.boolean_query(
                            [
                                (_MUST, long),
                                (_MUST, tantivy.Query.boost_query(query, long_boost)),
                            ]
                        )
                        for field, query in near
                        if field == "body"
                    ]
                return _any(clauses)
            case Lookup(forms=forms):
                return _any(
                    [
                        self._term(field, form, boosts.lookup * boosts.fields.get(field, 1.0))
                        for form in forms
                        for field in _LOOKUP_FIELDS
                        if self.doc_freq(field, form) > 0
                    ]
                )
            case Titled(key=key):
                found = tantivy.Query.term_query(self._schema, "title_key", key)
                return tantivy.Query.const_score_query(found, 0.0)
            case AllOf(children=children, excluded=excluded, optional=optional):
                subqueries = [(_MUST, self._query(c, boosts)) for c in children]
                if not subqueries:
                    subqueries = [(_MUST, tantivy.Query.all_query())]
                subqueries += [(_MUST_NOT, self._query(c, boosts)) for c in excluded]
                subqueries += [(_SHOULD, self._query(c, boosts)) for c in optional]
                return tantivy.Query.boolean_query(subqueries)
            case Filtered(score=score, match=match):
                condition = tantivy.Query.const_score_query(self._query(match, boosts), 0.0)
                return tantivy.Query.boolean_query(
                    [(_MUST, condition), (_MUST, self._query(score, boosts))]
                )
            case AnyOf(children=children):
                # One flat disjunction: the same sum of scores as nested ones, found faster.
                return _any([q for c in children for q in self._clauses(c, boosts)])
        raise SearchIndexError(f"cannot translate query node {node!r}")  # pragma: no cover

    def _clauses(self, node: Node, boosts: Boosts) -> list[Any]:
        """A word's clauses, one per field and stem the index holds; any other node whole."""
        if not isinstance(node, Word):
            return [self._query(node, boosts)]
        key = ("clauses", node, *boosts.fields.items())
        clauses: list[Any] | None = self._built.get(key)
        if clauses is None:
            # A term no page holds in a field costs the engine a lookup and a scorer for
            # nothing: a 12-word claim names 72 field terms, most of them absent (SciFact
            # search time halved). A field no page holds a term in is not asked at all.
            empty = self._empty
            clauses = [
                self._term(field, term, boost * weight * node.weight)
                for field, boost in boosts.fields.items()
                if boost > 0 and field not in empty
                for terms, plain, weight in (
                    (node.stems, node.plain, 1.0),
                    (node.fuzzy, node.fuzzy_plain, FUZZY_WEIGHT),
                )
                for term in ((plain,) if field in _UNSTEMMED and plain else terms)
                if term and self.doc_freq(field, term) > 0
            ]
            self._remember(key, clauses)
        return clauses

    def _term(self, field: str, term: str, boost: float) -> Any:
        query = tantivy.Query.term_query(self._schema, field, term)
        return query if boost == 1.0 else tantivy.Query.boost_query(query, boost)

    def _phrase(self, field: str, terms: Sequence[str], boost: float) -> Any:
        if len(terms) == 1:
            return self._term(field, terms[0], boost)
        query = tantivy.Query.phrase_query(self._schema, field, list(terms))
        return query if boost == 1.0 else tantivy.Query.boost_query(query, boost)

    def _filters(self, filters: Filters) -> list[Any]:
        out = []
        if filters.sites:
            out.append(self._terms("site", [s.lower().strip(".") for s in filters.sites]))
        if filters.lang:
            out.append(self._terms("lang", [filters.lang]))
        if filters.modified_sources:
            out.append(self._terms("modified_source", list(filters.modified_sources)))
        if filters.after or filters.before:
            out.append(
                tantivy.Query.range_query(
                    self._schema,
                    "modified",
                    tantivy.FieldType.Date,
                    _utc(filters.after),
                    _utc(filters.before),
                    include_upper=filters.before is None,
                )
            )
        return [tantivy.Query.const_score_query(q, 0.0) for q in out]

    def _terms(self, field: str, values: list[str]) -> Any:
        return _any([tantivy.Query.term_query(self._schema, field, v) for v in values])


def _any(clauses: list[Any]) -> Any:
    if not clauses:
        return tantivy.Query.empty_query()
    if len(clauses) == 1:
        return clauses[0]
    return tantivy.Query.boolean_query([(_SHOULD, q) for q in clauses])


# tantivy keeps dates as nanoseconds in an i64 and refuses a bound outside that span;
# a filter date beyond it (after:2300) means the same as the span's edge.
_EARLIEST = datetime(1678, 1, 1, tzinfo=UTC)
_LATEST = datetime(2262, 1, 1, tzinfo=UTC)


def _utc(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return min(max(moment, _EARLIEST), _LATEST)
