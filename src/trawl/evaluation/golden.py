"""A golden set: queries a person wrote, each with the URL(s) that answer it.

The file is TSV: ``query<TAB>url[<TAB>url...]``; lines starting with # and
blank lines are skipped. It runs against a crawled data folder's index.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from trawl.evaluation.collections import CollectionError
from trawl.evaluation.runner import GOLDEN_MEASURES, run_queries, score
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
    # Expected values that are paths match on any host: the manual is served on a loopback port.
    by_path = all(doc.startswith("/") for docs in qrels.values() for doc in docs)
    key = (lambda url: urlsplit(url).path or "/") if by_path else None
    run = run_queries(reader, queries, settings, depth=100, key=key, syntax=True)
    return score(qrels, run, GOLDEN_MEASURES)
