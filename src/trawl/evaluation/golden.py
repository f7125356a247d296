"""A golden set: queries a person wrote, each with the URL(s) that answer it.

The file is TSV: ``query<TAB>url[ url...]<TAB>category``; lines starting with #
and blank lines are skipped. The category (one of ``CATEGORIES``) may be left
out, and the older ``query<TAB>url<TAB>url...`` form still reads. It runs
against a crawled data folder's index. An expected URL is a full URL, or a path
(with its query string, if any), which a page at that path on any host answers:
the manual is crawled from a loopback port that changes from run to run. An answer may
name its section (``/p.html#anchor``): the page is judged, the anchor kept in ``sections``.

Every query falls in a tuning half or a reporting half by a hash of its text
(``half_of``), fixed before any ranking was tuned on it: tune on one, report the
other, and a figure cannot be fitted to the queries it is reported on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args
from urllib.parse import unquote, urlsplit

from trawl.evaluation.collections import CollectionError
from trawl.evaluation.runner import GOLDEN_MEASURES, Run, per_query, run_queries
from trawl.index.tantivy_index import IndexReader
from trawl.settings import Settings

Category = Literal["keyword", "navigational", "question", "typo", "synonym"]
CATEGORIES: tuple[Category, ...] = get_args(Category)
Half = Literal["tuning", "reporting"]
HALVES: tuple[Half, ...] = get_args(Half)


@dataclass(frozen=True, slots=True)
class GoldenQuery:
    qid: str  # from the line number
    text: str
    expected: tuple[str, ...]
    category: Category | None
    half: Half
    sections: tuple[str, ...] = ()  # the expected answers as written, anchors included


def half_of(text: str) -> Half:
    """The query's half: the parity of a hash of its folded text. Fixed, so a set's halves
    never move as ranking changes, and about even in every category."""
    key = " ".join(text.lower().split()).encode()
    return HALVES[int(hashlib.sha256(key).hexdigest()[:8], 16) % 2]


def read_golden_set(path: Path) -> list[GoldenQuery]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise CollectionError(f"cannot read {path}: {e.strerror}") from e
    found: list[GoldenQuery] = []
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split("\t")]
        category: Category | None = None
        if len(parts) >= 3 and parts[-1] in CATEGORIES:
            category = next(c for c in CATEGORIES if c == parts[-1])
            parts = parts[:-1]
        if len(parts) < 2 or not parts[0] or not all(parts[1:]):
            raise CollectionError(
                f"{path}:{number}: expected query<TAB>url[ url...][<TAB>category]"
                f" (categories: {', '.join(CATEGORIES)})"
            )
        written = tuple(dict.fromkeys(u for p in parts[1:] for u in p.split()))
        strange = [u for u in written if not u.startswith("/") and "://" not in u]
        if strange:
            raise CollectionError(
                f"{path}:{number}: {strange[0]!r} is neither a URL, a path nor a category"
                f" ({', '.join(CATEGORIES)})"
            )
        # A hit is a page: an answer naming its section is found by finding its page.
        expected = tuple(dict.fromkeys(u.split("#", 1)[0] for u in written))
        sections = written if any("#" in u for u in written) else ()
        found.append(
            GoldenQuery(f"q{number}", parts[0], expected, category, half_of(parts[0]), sections)
        )
    if not found:
        raise CollectionError(f"{path}: no queries")
    return found


def read_golden(path: Path) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    golden = read_golden_set(path)
    return {q.qid: q.text for q in golden}, {q.qid: dict.fromkeys(q.expected, 1) for q in golden}


def evaluate_golden(path: Path, settings: Settings, half: Half | None = None) -> dict[str, float]:
    """MRR, hits@1 and hits@10 over the chosen half (every query when None), then the
    same per half and per category: ``reporting.question.mrr``, with ``.n`` queries."""
    golden = [q for q in read_golden_set(path) if half is None or q.half == half]
    if not golden:
        raise CollectionError(f"{path}: no queries in the {half} half")
    return breakdown(golden, golden_per_query(golden, settings))


def golden_per_query(
    golden: Sequence[GoldenQuery], settings: Settings
) -> dict[str, dict[str, float]]:
    """Per query id, each of GOLDEN_MEASURES (a query no page answers scores 0)."""
    queries = {q.qid: q.text for q in golden}
    qrels = {q.qid: dict.fromkeys(q.expected, 1) for q in golden}
    reader = IndexReader(settings.index_path)
    run = _as_answered(run_queries(reader, queries, settings, depth=100, syntax=True), qrels)
    return per_query(qrels, run, GOLDEN_MEASURES)


def breakdown(
    golden: Sequence[GoldenQuery], per_query: dict[str, dict[str, float]]
) -> dict[str, float]:
    metrics = _mean(golden, per_query, "")
    both = {q.half for q in golden} == set(HALVES)
    if both:
        for one in HALVES:
            metrics |= _mean([q for q in golden if q.half == one], per_query, f"{one}.")
    groups: tuple[Half | None, ...] = (None, *HALVES) if both else (None,)
    for half in groups:
        for category in CATEGORIES:
            group = [q for q in golden if q.category == category and half in (None, q.half)]
            if group and len(group) < len(golden):
                metrics |= _mean(group, per_query, f"{half or 'all'}.{category}.")
    return metrics


def _mean(
    group: Iterable[GoldenQuery], per_query: dict[str, dict[str, float]], prefix: str
) -> dict[str, float]:
    rows = [per_query[q.qid] for q in group]
    means = {
        f"{prefix}{name}": round(sum(r[name] for r in rows) / len(rows), 4)
        for name in GOLDEN_MEASURES
    }
    return means | ({f"{prefix}n": float(len(rows))} if prefix else {})


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
    path = unquote(parts.path) or "/"  # /Detectors_(E1).html however the crawl spelled it
    return f"{path}?{parts.query}" if parts.query else path
