"""A golden set: queries a person wrote, each with the URL(s) that answer it.

The file is TSV: ``query<TAB>url[<TAB>url...]``; lines starting with # and
blank lines are skipped. It runs against a crawled data folder's index. An
expected URL is a full URL, or a path (with its query string, if any), which a
page at that path on any host answers: the manual is crawled from a loopback
port that changes from run to run.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from trawl.evaluation.collections import CollectionError
from trawl.evaluation.runner import GOLDEN_MEASURES, Run, run_queries, score
from trawl.index.tantivy_index import IndexReader
from trawl.settings import Settings


def read_golden(path: Path) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise CollectionError(f"cannot read {path}: {e.strerror}") from e
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split("\t")]
        if len(parts) < 2 or not parts[0] or not all(parts[1:]):
            raise CollectionError(f"{path}:{number}: expected query<TAB>url[<TAB>url...]")
        qid = f"q{number}"
        queries[qid] = parts[0]
        qrels[qid] = dict.fromkeys(parts[1:], 1)
    if not queries:
        raise CollectionError(f"{path}: no queries")
    return queries, qrels


def evaluate_golden(path: Path, settings: Settings) -> dict[str, float]:
    queries, qrels = read_golden(path)
    reader = IndexReader(settings.index_path)
    run = run_queries(reader, queries, settings, depth=100, syntax=True)
    return score(qrels, _as_answered(run, qrels), GOLDEN_MEASURES)


def _as_answered(run: Run, qrels: dict[str, dict[str, int]]) -> Run:
    """Each hit under the form its query's answers use: its URL when that URL is
    expected, else its path when that path is, else its URL (a miss either way).
    Decided per answer, so one file may hold both forms."""
    answered: Run = {}
    for qid, hits in run.items():
        expected = qrels.get(qid, {})
        keyed: dict[str, float] = {}
        for url, rank in hits.items():
            path = _path(url)
            doc = path if url not in expected and path in expected else url
            keyed.setdefault(doc, rank)  # the same path on two hosts: the better one
        answered[qid] = keyed
    return answered


def _path(url: str) -> str:
    parts = urlsplit(url)
    path = parts.path or "/"
    return f"{path}?{parts.query}" if parts.query else path
