"""The tantivy index on disk: upserts, deletes, analysis, boosts, snippets."""

from __future__ import annotations

import fcntl
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
import tantivy

from trawl.analysis.text import terms
from trawl.errors import SearchIndexError
from trawl.index.documents import index_fields, page_name, title_key, url_path_words
from trawl.index.spec import AllOf, AnyOf, Boosts, Filters, Word
from trawl.index.tantivy_index import IndexReader, IndexWriter, writer_held
from trawl.records import PageRecord

BOOSTS = {"title": 4.0, "headings": 2.0, "body": 1.0, "url_tokens": 1.5, "host": 1.0}


def record(url: str, title: str = "", text: str = "", **kw: object) -> PageRecord:
    kw.setdefault("lang", "en")
    return PageRecord(
        url=url,
        host="docs.example.org",
        status=200,
        depth=0,
        fetched_at=0.0,
        title=title,
        text=text,
        indexable=True,
        **kw,  # type: ignore[arg-type]
    )


def write(path: Path, *records: PageRecord) -> None:
    writer = IndexWriter(path)
    for r in records:
        writer.upsert(r)
    writer.close()


def urls(path: Path, words: str, conjunction: bool = True) -> list[str]:
    reader = IndexReader(path)
    stems = [Word(tuple(terms(w, "en")), plain=w) for w in words.split()]
    node = AllOf(tuple(stems)) if conjunction else AnyOf(tuple(stems))
    found = reader.search(node, Filters(), Boosts(fields=BOOSTS), limit=10)
    return [h.url for h in reader.fetch(found.addresses)]


def test_upsert_replaces_the_document_for_a_url(tmp_path: Path) -> None:
    write(tmp_path, record("https://docs.example.org/a", "Alpha", "first version"))
    write(tmp_path, record("https://docs.example.org/a", "Alpha", "second version"))

    assert IndexReader(tmp_path).num_docs() == 1
    assert urls(tmp_path, "second") == ["https://docs.example.org/a"]
    assert urls(tmp_path, "first") == []


def test_delete_removes_a_url(tmp_path: Path) -> None:
    write(
        tmp_path,
        record("https://docs.example.org/a", "A", "apples"),
        record("https://docs.example.org/b", "B", "apples"),
    )
    writer = IndexWriter(tmp_path)
    writer.delete("https://docs.example.org/a")
    writer.close()

    assert urls(tmp_path, "apples") == ["https://docs.example.org/b"]


def test_stemming_matches_word_forms(tmp_path: Path) -> None:
    write(
        tmp_path, record("https://docs.example.org/a", "Indexes", "building indexes concurrently")
    )

    assert urls(tmp_path, "index build concurrent") == ["https://docs.example.org/a"]


def test_title_match_outranks_body_match(tmp_path: Path) -> None:
    write(
        tmp_path,
        record("https://docs.example.org/body", "Something else", "vacuum " + "filler words " * 20),
        record("https://docs.example.org/title", "Vacuum", "filler words " * 20),
    )

    assert urls(tmp_path, "vacuum")[0] == "https://docs.example.org/title"


def test_url_and_host_words_are_searchable(tmp_path: Path) -> None:
    write(tmp_path, record("https://docs.example.org/sql-createindex.html", "CREATE INDEX", "x"))

    assert urls(tmp_path, "createindex") == ["https://docs.example.org/sql-createindex.html"]
    assert urls(tmp_path, "example") == ["https://docs.example.org/sql-createindex.html"]


def test_accents_are_folded_for_matching(tmp_path: Path) -> None:
    write(
        tmp_path,
        record("https://docs.example.org/fr", "Café", "Crème brûlée à la café", lang="fr"),
    )
    reader = IndexReader(tmp_path)
    for typed in ("cafe", "CAFÉ", "creme"):
        node = Word(tuple(terms(typed, "fr")))
        found = reader.search(node, Filters(), Boosts(fields=BOOSTS), limit=1)
        assert found.total == 1, typed


def test_disjunction_finds_partial_matches(tmp_path: Path) -> None:
    write(tmp_path, record("https://docs.example.org/a", "A", "lemurs"))

    assert urls(tmp_path, "lemurs tapirs") == []
    assert urls(tmp_path, "lemurs tapirs", conjunction=False) == ["https://docs.example.org/a"]


def test_a_reloaded_reader_finds_words_new_since_its_last_query(tmp_path: Path) -> None:
    # Built queries leave out terms the index did not hold; a commit must not leave them stale.
    write(tmp_path, record("https://docs.example.org/a", "A", "lemurs"))
    reader = IndexReader(tmp_path)
    words = AnyOf((Word(tuple(terms("lemurs", "en"))), Word(tuple(terms("tapirs", "en")))))

    def found() -> list[str]:
        results = reader.search(words, Filters(), Boosts(fields=BOOSTS), limit=10)
        return sorted(h.url for h in reader.fetch(results.addresses))

    assert found() == ["https://docs.example.org/a"]
    write(tmp_path, record("https://docs.example.org/b", "B", "tapirs"))
    reader.reload()

    assert found() == ["https://docs.example.org/a", "https://docs.example.org/b"]


def test_a_field_empty_at_one_commit_is_looked_up_again_after_the_next(tmp_path: Path) -> None:
    # The reader skips look-ups in fields no page holds a term in (no link text yet, a
    # collection without headings); a commit that fills the field must end that.
    write(tmp_path, record("https://docs.example.org/a", "Lemurs", "lemurs"))
    reader = IndexReader(tmp_path)
    tapirs = Word(tuple(terms("tapirs", "en")))
    boosts = Boosts(fields={**BOOSTS, "anchors": 1.0})

    def found() -> list[str]:
        results = reader.search(tapirs, Filters(), boosts, limit=10)
        return [h.url for h in reader.fetch(results.addresses)]

    assert reader.doc_freq("anchors", "tapir") == 0
    assert found() == []
    writer = IndexWriter(tmp_path)
    writer.upsert(record("https://docs.example.org/b", "B", "zebus"), anchors=["tapirs"])
    writer.close()
    reader.reload()

    assert reader.doc_freq("anchors", "tapir") == 1
    assert found() == ["https://docs.example.org/b"]


class _Listing:
    """The reader's engine searcher, noting whose term dictionaries were read whole."""

    def __init__(self, searcher: Any) -> None:
        self._searcher = searcher
        self.walked: list[str] = []
        self.asked: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._searcher, name)

    def terms_with_prefix(self, field: str, prefix: str, limit: int | None = None) -> Any:
        self.walked.append(field)
        return self._searcher.terms_with_prefix(field, prefix, limit=limit)

    def doc_freq(self, field: str, term: str) -> int:
        self.asked.append(field)
        return int(self._searcher.doc_freq(field, term))


def test_a_field_a_lookup_found_a_term_in_is_never_read_whole(tmp_path: Path) -> None:
    # Telling whether a field is empty walks its whole dictionary (50-80 ms for SciFact's
    # bodies, paid by the first query after every commit): only fields that keep
    # answering 0 are tested, and an empty one is then not asked again.
    write(tmp_path, record("https://docs.example.org/a", "Lemurs", "lemurs and tapirs"))
    reader = IndexReader(tmp_path)
    engine = reader._searcher = _Listing(reader._searcher)
    for word in ("lemurs", "tapirs", "okapis", "zebus", "dingos", "quolls", "lemurs"):
        reader.search(Word(tuple(terms(word, "en"))), Filters(), Boosts(fields=BOOSTS), limit=5)

    assert "body" not in engine.walked and "title" not in engine.walked
    assert sorted(engine.walked) == ["headings", "host", "url_tokens"]  # once each
    assert engine.asked.count("headings") == 4  # then known empty: not asked again
    assert reader.doc_freq("headings", "lemur") == 0 and reader.doc_freq("body", "lemur") == 1


def test_a_reader_sees_each_of_quick_successive_commits(tmp_path: Path) -> None:
    # Reload skips the engine when meta.json is unchanged: commits within one clock tick,
    # of the same size, must still each be seen.
    write(tmp_path, record("https://docs.example.org/0", "A", "lemurs"))
    reader = IndexReader(tmp_path)
    for n in range(1, 6):
        write(tmp_path, record(f"https://docs.example.org/{n}", "A", "lemurs"))
        reader.reload()
        assert reader.size == n + 1


def test_a_commit_whose_meta_json_stats_like_the_loaded_one_is_seen(tmp_path: Path) -> None:
    # Commits within one clock tick can leave meta.json with the inode (freed by the
    # commit between, then reused), mtime and size of the one a reader loaded: then
    # neither the reader nor the result cache (keyed by the reader's generation) would
    # know. Inode reuse cannot be forced, so the collision is made here with the files:
    # the loaded meta.json is kept by a second link and given the next commit's text.
    write(tmp_path, record("https://docs.example.org/a", "A", "lemurs"))
    meta = tmp_path / "meta.json"
    meta.write_bytes(meta.read_bytes() + b" " * 4096)  # JSON may end in spaces
    reader = IndexReader(tmp_path)
    loaded, generation = meta.stat(), reader.generation
    os.link(meta, tmp_path / "kept")
    write(tmp_path, record("https://docs.example.org/b", "B", "tapirs"))
    committed = meta.read_bytes()
    assert len(committed) < loaded.st_size
    (tmp_path / "kept").write_bytes(committed.ljust(loaded.st_size))
    (tmp_path / "kept").replace(meta)
    os.utime(meta, ns=(loaded.st_atime_ns, loaded.st_mtime_ns))
    now = meta.stat()
    assert (now.st_ino, now.st_mtime_ns, now.st_size) == (
        loaded.st_ino,
        loaded.st_mtime_ns,
        loaded.st_size,
    )

    reader.reload()

    assert reader.size == 2
    assert reader.generation != generation


def test_a_reload_without_a_commit_keeps_the_loaded_view(tmp_path: Path) -> None:
    # The engine's reload re-reads every segment's metadata: a search reloads each time,
    # so nothing is redone when nothing was committed.
    write(tmp_path, record("https://docs.example.org/a", "A", "lemurs"))
    reader = IndexReader(tmp_path)
    loaded = reader._searcher
    reader.reload()
    assert reader._searcher is loaded
    write(tmp_path, record("https://docs.example.org/b", "B", "tapirs"))
    reader.reload()
    assert reader._searcher is not loaded


def test_a_hit_read_after_a_reload_is_still_the_page_that_matched(tmp_path: Path) -> None:
    # Hits read their stored page when first asked; by then the index may have moved on.
    write(tmp_path, record("https://docs.example.org/a", "Lemurs", "lemurs of madagascar"))
    reader = IndexReader(tmp_path)
    node = AnyOf((Word(tuple(terms("lemurs", "en"))),))
    (hit,) = reader.fetch(reader.search(node, Filters(), Boosts(fields=BOOSTS), limit=10).addresses)
    writer = IndexWriter(tmp_path)
    writer.delete("https://docs.example.org/a")
    writer.upsert(record("https://docs.example.org/b", "Tapirs", "tapirs " * 50))
    writer.close()
    reader.reload()
    assert (hit.url, hit.title, hit.text) == (
        "https://docs.example.org/a",
        "Lemurs",
        "lemurs of madagascar",
    )


def test_rerank_keys_are_fast_fields(tmp_path: Path) -> None:
    write(
        tmp_path,
        record("https://docs.example.org/", "Release Notes!", "home"),
        record("https://docs.example.org/guide/long-page-name.html", "Guide", "guide"),
    )
    reader = IndexReader(tmp_path)
    node = AnyOf((Word(("home",)), Word(("guid",))))
    results = reader.search(node, Filters(), Boosts(fields=BOOSTS), limit=10)
    keys = {
        h.url: (c.title_key, c.home, c.name_chars)
        for c, h in zip(
            reader.candidates(results.addresses), reader.fetch(results.addresses), strict=True
        )
    }
    home = keys["https://docs.example.org/"]
    assert home == (title_key("release notes"), True, len("docs.example.org"))
    guide = keys["https://docs.example.org/guide/long-page-name.html"]
    assert guide == (title_key("guide"), False, len("/guide/longpagename.html"))


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("What is rustc? - The rustc book", "What is rustc?"),
        ("Shapes - SUMO Documentation", "Shapes"),
        ("Glossary | Site", "Glossary"),
        ("Installing \u2014 Sphinx docs", "Installing"),
        ("A - B \u00b7 Site", "A - B"),  # only the last part is the site's
        ("PostgreSQL: Documentation: 15: CREATE INDEX", "CREATE INDEX"),
        # Not a site's name: kept whole
        ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-gnu"),
        ("Rust: a language", "Rust: a language"),  # one colon: a subtitle
        ("- Site", "- Site"),
        ("Page -", "Page -"),
    ],
)
def test_page_name_leaves_out_the_site_name(title: str, name: str) -> None:
    assert page_name(title) == name


def test_title_key_is_the_page_names(tmp_path: Path) -> None:
    fields = index_fields(record("https://docs.example.org/a", "What is rustc? - The rustc book"))
    assert fields["title_key"] == title_key("what is rustc")


def test_a_page_without_text_reads_back_empty(tmp_path: Path) -> None:
    write(tmp_path, record("https://docs.example.org/a", "Only A Title", ""))
    reader = IndexReader(tmp_path)
    found = reader.search(Word(("titl",)), Filters(), Boosts(fields=BOOSTS), limit=1)
    (hit,) = reader.fetch(found.addresses)

    assert (hit.title, hit.text, hit.discussed_on) == ("Only A Title", "", ())


def test_missing_index_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SearchIndexError, match="crawl a site first"):
        IndexReader(tmp_path / "nothing")


def test_index_from_another_schema_version_is_refused(tmp_path: Path) -> None:
    write(tmp_path, record("https://docs.example.org/a", "A", "x"))
    (tmp_path / "trawl-schema.json").write_text(json.dumps({"version": 0}))

    with pytest.raises(SearchIndexError, match="trawl index"):
        IndexReader(tmp_path)


def test_second_writer_is_refused(tmp_path: Path) -> None:
    first = IndexWriter(tmp_path)
    try:
        with pytest.raises(SearchIndexError, match="another process"):
            IndexWriter(tmp_path)
    finally:
        first.close()


def test_index_fields() -> None:
    fields = index_fields(
        record(
            "https://www.postgresql.org/docs/15/sql-createindex.html",
            "",
            "body",
            headings=("CREATE INDEX", "Description"),
            description="define a new index",
        )
    )
    assert fields["title"] == "creat index"  # no <title>: the first heading stands in
    assert fields["headings"] == "creat index descript defin a new index"
    assert fields["host"] == "www postgresql org"
    assert fields["site"] == ["www.postgresql.org", "postgresql.org", "org"]
    assert url_path_words("/docs/15/sql-createindex.html") == [
        "docs",
        "15",
        "sql",
        "createindex",
        "sqlcreateindex",
    ]


def test_a_rebuild_is_seen_whole_or_not_at_all(tmp_path: Path) -> None:
    path = tmp_path / "index"
    write(path, record("https://e.org/a", "kiwi"), record("https://e.org/b", "kiwi"))
    reader = IndexReader(path)  # a search server, open throughout

    rebuild = IndexWriter(path, fresh=True)
    rebuild.upsert(record("https://e.org/c", "kiwi"))
    assert reader.num_docs() == 2  # emptied and refilled, but not committed: the old index
    rebuild.rollback()
    rebuild.close()
    assert reader.num_docs() == 2  # a failed rebuild publishes nothing

    write_fresh = IndexWriter(path, fresh=True)
    write_fresh.upsert(record("https://e.org/c", "kiwi"))
    write_fresh.close()
    assert reader.num_docs() == 1  # the new one, whole


def test_a_new_index_stores_pages_in_small_blocks_and_keeps_them(tmp_path: Path) -> None:
    # tantivy-py takes no index settings: the block size is written into a new index's
    # meta.json, and must survive commits and a reopen (a later writer).
    text = "word " * 2000  # 10 kB: several blocks' worth of pages
    write(tmp_path, *(record(f"https://docs.example.org/{n}", "T", text) for n in range(8)))
    write(tmp_path, record("https://docs.example.org/late", "T", "late page"))
    settings = json.loads((tmp_path / "meta.json").read_text())["index_settings"]
    assert settings["docstore_blocksize"] == 4096
    reader = IndexReader(tmp_path)
    assert reader.num_docs() == 9
    assert {
        h.text
        for h in reader.fetch(
            reader.search(
                AnyOf((Word(("word",)),)), Filters(), Boosts(fields=BOOSTS), limit=20
            ).addresses
        )
    } == {text}


def test_an_index_left_without_its_marker_names_trawl_index(tmp_path: Path) -> None:
    """A `trawl index` killed while it removed an older index: a file system may list
    the marker first, so the engine's files of the old schema are left without it.
    Every command then says to run `trawl index` (not "crawl a site first", which then
    failed on the old files), and `trawl index` starts over."""
    old = tantivy.SchemaBuilder()
    old.add_text_field("url", stored=True)
    engine = tantivy.Index(old.build(), path=str(tmp_path))
    writer = engine.writer()
    writer.add_document(tantivy.Document(url="https://docs.example.org/old"))
    writer.commit()
    writer.wait_merging_threads()

    with pytest.raises(SearchIndexError, match="trawl index"):
        IndexReader(tmp_path)
    with pytest.raises(SearchIndexError, match="trawl index"):
        IndexWriter(tmp_path)
    rebuild = IndexWriter(tmp_path, fresh=True)  # `trawl index`: starts over
    rebuild.upsert(record("https://docs.example.org/a", "A", "x"))
    rebuild.close()
    assert IndexReader(tmp_path).urls() == ["https://docs.example.org/a"]


def test_a_look_at_the_writer_lock_never_refuses_a_writer(tmp_path: Path) -> None:
    """/healthz looks whether a crawl holds the writer (``writer_held``: a shared try
    at tantivy's lock, dropped at once); a crawl opening its writer in that instant
    tries again instead of failing as if another process were writing."""
    path = tmp_path / "index"
    assert not writer_held(path)  # no index yet
    IndexWriter(path).close()
    assert not writer_held(path)
    fd = os.open(path / ".tantivy-writer.lock", os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_SH)  # a look, held here for 60 ms
    threading.Timer(0.06, os.close, (fd,)).start()
    writer = IndexWriter(path)
    try:
        assert writer_held(path)
        with pytest.raises(SearchIndexError, match="another process"):
            IndexWriter(path)
    finally:
        writer.close()
    assert not writer_held(path)
