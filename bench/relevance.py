"""Relevance and speed of Trawl's ranking against bm25s, in the same run.

For SciFact, NFCorpus (our copy), Cranfield, CISI and CACM: Trawl through its
own indexing and search path (`trawl eval`), and bm25s (k1=1.5, b=0.75, the
Elasticsearch variant) over the same tokenizer (trawl.analysis: words, Snowball
English, folding). Metrics from ir-measures for both. On SciFact also: indexing
documents/s, top-10 queries/s, p50 and p99 latency, one query at a time.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import bm25s

from trawl.analysis.text import terms
from trawl.evaluation.collections import Collection, read_beir, read_smart
from trawl.evaluation.runner import BEIR_MEASURES, build_index, evaluate_collection, score
from trawl.index.tantivy_index import IndexReader
from trawl.search.searcher import rank
from trawl.settings import Settings

IR = Path(__file__).resolve().parents[2] / "shared" / "data" / "ir"


def collections() -> list[Collection]:
    return [
        read_beir(IR / "scifact"),
        read_beir(IR / "nfcorpus-test" / "beir-format"),
        read_smart(IR / "cranfield"),
        read_smart(IR / "cisi"),
        read_smart(IR / "cacm"),
    ]


def bm25s_run(collection: Collection) -> tuple[dict[str, float], float, float, list[float]]:
    started = time.perf_counter()
    corpus = [terms(f"{title}\n{text}", "en") for _, title, text in collection.docs]
    retriever = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    retriever.index(corpus, show_progress=False)
    index_seconds = time.perf_counter() - started
    ids = [d[0] for d in collection.docs]
    run: dict[str, dict[str, float]] = {}
    latencies = []
    for qid, text in collection.queries.items():
        t0 = time.perf_counter()
        tokens = [t for t in terms(text[:1000], "en") if t in retriever.vocab_dict]
        if not tokens:
            run[qid] = {}
            latencies.append(time.perf_counter() - t0)
            continue
        docs, scores = retriever.retrieve([tokens], k=100, show_progress=False, n_threads=1)
        latencies.append(time.perf_counter() - t0)
        run[qid] = {ids[int(d)]: float(s) for d, s in zip(docs[0], scores[0], strict=True)}
    return score(collection.qrels, run, BEIR_MEASURES), index_seconds, len(ids), latencies


def trawl_speed(
    collection: Collection, settings: Settings
) -> tuple[float, list[float], list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        build_index(Path(tmp) / "index", collection.docs)
        index_seconds = time.perf_counter() - started
        reader = IndexReader(Path(tmp) / "index")
        top10, top100 = [], []
        for text in collection.queries.values():
            t0 = time.perf_counter()
            rank(reader, text, settings, limit=10, reload=False)
            top10.append(time.perf_counter() - t0)
        for text in collection.queries.values():
            t0 = time.perf_counter()
            rank(reader, text, settings, limit=100, reload=False)
            top100.append(time.perf_counter() - t0)
    return index_seconds, top10, top100


def pct(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))] * 1000


def main() -> list[str]:
    settings = Settings()
    lines = [
        "| collection | Trawl nDCG@10 | bm25s nDCG@10 | Trawl R@100 | bm25s R@100 |"
        " Trawl MRR@10 | bm25s MRR@10 |",
        "|---|---|---|---|---|---|---|",
    ]
    speed: list[str] = []
    for collection in collections():
        ours = evaluate_collection(collection, settings)
        theirs, bm_index, ndocs, bm_lat = bm25s_run(collection)
        lines.append(
            f"| {collection.name} | {ours['ndcg@10']:.4f} | {theirs['ndcg@10']:.4f} |"
            f" {ours['recall@100']:.4f} | {theirs['recall@100']:.4f} |"
            f" {ours['mrr@10']:.4f} | {theirs['mrr@10']:.4f} |"
        )
        print(lines[-1], flush=True)
        if collection.name == "scifact":
            t_index, top10, top100 = trawl_speed(collection, settings)
            speed = [
                "",
                f"SciFact speed ({ndocs} docs, {len(top10)} queries, one at a time):",
                "",
                "| | Trawl | bm25s | ratio |",
                "|---|---|---|---|",
                f"| indexing docs/s | {ndocs / t_index:.0f} | {ndocs / bm_index:.0f} |"
                f" {bm_index / t_index:.2f}x |",
                f"| top-10 queries/s | {len(top10) / sum(top10):.0f} |"
                f" {len(bm_lat) / sum(bm_lat):.0f} | {sum(bm_lat) / sum(top10):.2f}x |",
                f"| top-10 p50 / p99 ms | {pct(top10, 0.5):.2f} / {pct(top10, 0.99):.2f} |"
                f" {pct(bm_lat, 0.5):.2f} / {pct(bm_lat, 0.99):.2f} (k=100) | |",
                f"| top-100 queries/s | {len(top100) / sum(top100):.0f} |"
                f" {len(bm_lat) / sum(bm_lat):.0f} | {sum(bm_lat) / sum(top100):.2f}x |",
            ]
            print("\n".join(speed), flush=True)
    return lines + speed


def append(lines: list[str]) -> None:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    section = [
        f"\n## Relevance and search speed against bm25s, {stamp}",
        "",
        f"- commit: {commit}",
        "",
    ]
    with (Path(__file__).parent / "RESULTS.md").open("a", encoding="utf-8") as f:
        f.write("\n".join([*section, *lines]) + "\n")


if __name__ == "__main__":
    result = main()
    if "--quick" not in sys.argv:
        append(result)
