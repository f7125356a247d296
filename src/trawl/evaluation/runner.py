"""Index a collection through Trawl's own indexing path, run its queries, score the run.

Metrics come from ir-measures (trec_eval's implementations underneath), never
from our own formulas.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from trawl.extras import reraise_missing

try:
    import ir_measures
    from ir_measures import RR, R, Success, nDCG
except ImportError as e:
    reraise_missing(e, "eval")
    raise

from trawl.evaluation.collections import Collection
from trawl.index.tantivy_index import IndexReader, IndexWriter
from trawl.pipeline.stage_pool import BULK_DOCUMENT_BATCH, start_pool
from trawl.records import PageRecord
from trawl.search.query import MAX_QUERY_CHARS
from trawl.search.searcher import rank
from trawl.settings import Settings

BEIR_MEASURES = {"ndcg@10": nDCG @ 10, "recall@100": R @ 100, "mrr@10": RR @ 10}
GOLDEN_MEASURES = {"mrr": RR, "hits@1": Success @ 1, "hits@10": Success @ 10}
DOC_SCHEME = "doc:"  # collection documents get URLs no host or path token comes from

Run = dict[str, dict[str, float]]


def doc_record(ident: str, title: str, text: str, lang: str = "en") -> PageRecord:
    return PageRecord(
        url=DOC_SCHEME + ident, host="", status=200, depth=0, fetched_at=0.0,
        title=title, text=text, lang=lang, indexable=True,
    )  # fmt: skip


def build_index(
    path: Path, docs: Iterable[tuple[str, str, str]], lang: str = "en", *, workers: int = -1
) -> int:
    """Index ``docs`` (id, title, text) into a fresh index at ``path``; return how many.

    The documents are built as ``trawl index`` builds a site's: by the stage pool's
    workers (``workers``: the ``parse_workers`` setting), while this process hands them
    to the engine, so an evaluation measures the indexing path users run. Runs its own
    event loop: call it from synchronous code, not from a running loop."""
    return asyncio.run(_build_index(path, docs, lang, workers))


async def _build_index(
    path: Path, docs: Iterable[tuple[str, str, str]], lang: str, workers: int
) -> int:
    pool = start_pool(workers, parsing=False)  # before the index writer
    count = 0
    try:
        writer = IndexWriter(path, fresh=True)
        pages = ((doc_record(ident, title, text, lang), ()) for ident, title, text in docs)
        async for fields in pool.documents(pages, batch=BULK_DOCUMENT_BATCH):
            writer.add_fields(fields)  # a fresh index: nothing to replace
            count += 1
        writer.close()
    finally:
        await pool.close()
    return count


@contextmanager
def collection_index(collection: Collection, *, workers: int = -1) -> Iterator[IndexReader]:
    with tempfile.TemporaryDirectory(prefix="trawl-eval-") as tmp:
        build_index(Path(tmp) / "index", collection.docs, workers=workers)
        yield IndexReader(Path(tmp) / "index")


def run_queries(
    reader: IndexReader,
    queries: dict[str, str],
    settings: Settings,
    *,
    depth: int = 100,
    key: Callable[[str], str] | None = None,
    syntax: bool = False,
) -> Run:
    """``syntax``: read operators (a golden set) or take every token as a word (collections)."""
    reader.reload()
    run: Run = {}
    for qid, text in queries.items():
        # Some classic queries are whole paragraphs: the query box's cap applies to them too.
        ranked = rank(
            reader, text[:MAX_QUERY_CHARS], settings, limit=depth, reload=False, syntax=syntax
        )
        scores: dict[str, float] = {}
        for position, (_, hit) in enumerate(ranked.hits):
            doc = key(hit.url) if key else hit.url
            # Ranks, not scores, carry the order: rerank ties must not be re-sorted by id.
            scores.setdefault(doc, float(depth - position))
        run[qid] = scores
    return run


def score(
    qrels: dict[str, dict[str, int]], run: Run, measures: Mapping[str, Any]
) -> dict[str, float]:
    totals = ir_measures.calc_aggregate(list(measures.values()), qrels, run)
    by_name = {str(m): v for m, v in totals.items()}
    return {name: round(float(by_name.get(str(m), 0.0)), 4) for name, m in measures.items()}


def per_query(
    qrels: dict[str, dict[str, int]], run: Run, measures: Mapping[str, Any]
) -> dict[str, dict[str, float]]:
    """Each judged query's value of each measure; a query the run misses scores 0."""
    names = {str(m): name for name, m in measures.items()}
    scores = {qid: dict.fromkeys(measures, 0.0) for qid in qrels}
    for metric in ir_measures.iter_calc(list(measures.values()), qrels, run):
        scores[metric.query_id][names[str(metric.measure)]] = float(metric.value)
    return scores


def evaluate_collection(collection: Collection, settings: Settings) -> dict[str, float]:
    with collection_index(collection, workers=settings.parse_workers) as reader:
        run = run_queries(reader, collection.queries, settings, key=_doc_id)
    return score(collection.qrels, run, BEIR_MEASURES)


def _doc_id(url: str) -> str:
    return url.removeprefix(DOC_SCHEME)
