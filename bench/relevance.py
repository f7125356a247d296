"""Relevance and speed of Trawl's ranking against bm25s, in the same run.

For SciFact, NFCorpus (our copy), Cranfield, CISI and CACM: Trawl through its
own indexing and search path (`trawl eval`), and bm25s (k1=1.5, b=0.75, the
Elasticsearch variant) over the same tokenizer (trawl.analysis: words and the
other spellings of compounds, Snowball English, folding), given every query
term as the target says, and also given the query without its stop words, as
Trawl searches it, at k1 1.5 and at tantivy's fixed k1 1.2 (the like-for-like
peer). SciFact's train split has a row of its own: the queries to tune on,
the test split's for reporting. Metrics from ir-measures for both. On SciFact
also: indexing documents/s, top-10 queries/s, p50 and p99 latency, one query at
a time; a query's time includes
handing back the results' identities (Trawl's URLs, read from its stored pages;
the collection's ids for bm25s's row numbers).

Speed is measured interleaved, because the machine is shared and its load
swings within seconds: indexing alternates engine by engine over several
rounds (median per engine), and every query is asked of both engines back to
back, in alternating order. Both tokenize through trawl.analysis, which
remembers the stems of words it has seen: both run with it warm, as a
long-running indexer or server would.

Trawl indexes as `trawl index` does: its documents (the tokenizing) are built
by the stage pool's worker processes, one per core, while the main process
feeds the engine. bm25s has no parallel indexing: it tokenizes and builds in
one process. That is the comparison a user sees, and the bench says so.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import bm25s
import tqdm

from trawl.analysis.stopwords import is_stop_word
from trawl.analysis.text import terms_with_variants as terms
from trawl.analysis.text import words
from trawl.evaluation.collections import Collection, read_beir, read_smart
from trawl.evaluation.runner import BEIR_MEASURES, build_index, evaluate_collection, score
from trawl.index.tantivy_index import IndexReader
from trawl.search.searcher import rank
from trawl.settings import Settings

# bm25s's progress bars (off here) still start tqdm's monitor thread, and a process
# with a second thread spawns the stage pool's workers instead of forking them.
tqdm.tqdm.monitor_interval = 0
IR = Path(__file__).resolve().parents[2] / "shared" / "data" / "ir"


def collections() -> list[Collection]:
    return [
        read_beir(IR / "scifact"),
        # The split to tune on: the test queries are for reporting (issue 16).
        replace(read_beir(IR / "scifact", "train"), name="scifact-train"),
        read_beir(IR / "nfcorpus-test" / "beir-format"),
        read_smart(IR / "cranfield"),
        read_smart(IR / "cisi"),
        read_smart(IR / "cacm"),
    ]


def bm25s_tokens(collection: Collection) -> list[list[str]]:
    return [terms(f"{title}\n{text}", "en") for _, title, text in collection.docs]


# tantivy's BM25 has k1 1.2 and b 0.75, fixed: bm25s at k1 1.2 is the like-for-like peer,
# which tells what Trawl's ranking adds or costs from what the engine's k1 costs.
ENGINE_K1 = 1.2


def bm25s_index(collection: Collection, k1: float = 1.5) -> bm25s.BM25:
    retriever = bm25s.BM25(k1=k1, b=0.75, method="lucene")
    retriever.index(bm25s_tokens(collection), show_progress=False)
    return retriever


def without_stop_words(text: str) -> list[str]:
    """The query's terms less its stop words' (unless it has nothing else), as Trawl searches."""
    found = terms(text, "en")
    stops = [w for w in words(text) if is_stop_word(w, ["en"])]
    if not stops or len(stops) == len(words(text)):
        return found
    dropped = set(terms(" ".join(stops), "en")) - set(
        terms(" ".join(w for w in words(text) if w not in stops), "en")
    )
    return [t for t in found if t not in dropped]


def bm25s_query(
    retriever: bm25s.BM25, text: str, k: int, *, stop_words: bool = True
) -> tuple[list[int], list[float]]:
    found = terms(text[:1000], "en") if stop_words else without_stop_words(text[:1000])
    tokens = [t for t in found if t in retriever.vocab_dict]
    if not tokens:
        return [], []
    docs, scores = retriever.retrieve([tokens], k=k, show_progress=False, n_threads=1)
    return [int(d) for d in docs[0]], [float(s) for s in scores[0]]


def bm25s_ids(retriever: bm25s.BM25, ids: list[str], text: str, k: int) -> list[str]:
    """The ids of bm25s's top ``k``: what Trawl's timed search hands back (its URLs)."""
    return [ids[d] for d in bm25s_query(retriever, text, k)[0]]


def trawl_urls(reader: IndexReader, text: str, settings: Settings, limit: int) -> list[str]:
    """Trawl's top ``limit`` URLs: a stored page is read only when a field of it is."""
    ranked = rank(reader, text, settings, limit=limit, reload=False)
    return [hit.url for _, hit in ranked.hits]


def bm25s_run(
    collection: Collection, *, stop_words: bool = True, k1: float = 1.5
) -> dict[str, float]:
    retriever = bm25s_index(collection, k1)
    ids = [d[0] for d in collection.docs]
    run: dict[str, dict[str, float]] = {}
    for qid, text in collection.queries.items():
        docs, scores = bm25s_query(retriever, text, 100, stop_words=stop_words)
        run[qid] = {ids[d]: s for d, s in zip(docs, scores, strict=True)}
    return score(collection.qrels, run, BEIR_MEASURES)


ROUNDS = 3  # of the 300 queries
# Builds of the index, alternating engines: one build takes about a second, and the
# machine's load swings within seconds, so a median of three moved by 0.2x run to run.
BUILD_ROUNDS = 7


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def speed(collection: Collection, settings: Settings) -> list[str]:
    """Indexing and query speed of both engines, interleaved (see the module's docstring)."""
    ndocs = len(collection.docs)
    ours: list[float] = []
    theirs: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(BUILD_ROUNDS):
            path = Path(tmp) / f"index{n}"
            trawl_build = partial(build_index, path, collection.docs)
            builds: list[tuple[list[float], Callable[[], object]]] = [
                (ours, trawl_build),
                (theirs, partial(bm25s_index, collection)),
            ]
            for seconds, build in builds if n % 2 == 0 else builds[::-1]:
                seconds.append(timed(build))
        retriever = bm25s_index(collection)
        ids = [d[0] for d in collection.docs]
        latency: dict[str, list[float]] = {"t10": [], "t100": [], "b10": [], "b100": []}
        for _ in range(ROUNDS):
            # Fresh readers: no query is found already built from an earlier round or depth.
            top10, top100 = IndexReader(Path(tmp) / "index0"), IndexReader(Path(tmp) / "index0")
            for n, text in enumerate(collection.queries.values()):
                pair: list[tuple[str, Callable[[], object]]] = [
                    ("t10", partial(trawl_urls, top10, text, settings, 10)),
                    ("b10", partial(bm25s_ids, retriever, ids, text, 10)),
                    ("t100", partial(trawl_urls, top100, text, settings, 100)),
                    ("b100", partial(bm25s_ids, retriever, ids, text, 100)),
                ]
                for name, action in pair if n % 2 == 0 else pair[::-1]:
                    latency[name].append(timed(action))
    t_index, b_index = statistics.median(ours), statistics.median(theirs)
    t10, b10, t100, b100 = (latency[k] for k in ("t10", "b10", "t100", "b100"))
    nq = len(t10)
    return [
        "",
        f"SciFact speed ({ndocs} docs; {len(collection.queries)} queries x {ROUNDS} rounds,"
        " one at a time, both engines interleaved):",
        "",
        "| | Trawl | bm25s | Trawl's speed against bm25s |",
        "|---|---|---|---|",
        f"| indexing docs/s (median of {BUILD_ROUNDS}) | {ndocs / t_index:.0f} |"
        f" {ndocs / b_index:.0f} | {b_index / t_index:.2f}x |",
        f"| top-10 queries/s | {nq / sum(t10):.0f} | {nq / sum(b10):.0f} |"
        f" {sum(b10) / sum(t10):.2f}x |",
        f"| top-10 p50 / p99 ms | {pct(t10, 0.5):.2f} / {pct(t10, 0.99):.2f} |"
        f" {pct(b10, 0.5):.2f} / {pct(b10, 0.99):.2f} | |",
        f"| top-100 queries/s | {nq / sum(t100):.0f} | {nq / sum(b100):.0f} |"
        f" {sum(b100) / sum(t100):.2f}x |",
    ]


def pct(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))] * 1000


def main() -> list[str]:
    settings = Settings()
    lines = [
        "| collection | Trawl nDCG@10 | bm25s nDCG@10 | Trawl R@100 | bm25s R@100 |"
        " Trawl MRR@10 | bm25s MRR@10 | bm25s nDCG@10, query stop words out |"
        f" the same at k1 {ENGINE_K1} |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    speed_lines: list[str] = []
    for collection in collections():
        ours = evaluate_collection(collection, settings)
        theirs = bm25s_run(collection)
        # Trawl does not search a query's stop words beside other words: bm25s given the
        # same queries is the stricter comparison, shown beside the one the target names.
        stopped = bm25s_run(collection, stop_words=False)
        like = bm25s_run(collection, stop_words=False, k1=ENGINE_K1)
        lines.append(
            f"| {collection.name} | {ours['ndcg@10']:.4f} | {theirs['ndcg@10']:.4f} |"
            f" {ours['recall@100']:.4f} | {theirs['recall@100']:.4f} |"
            f" {ours['mrr@10']:.4f} | {theirs['mrr@10']:.4f} | {stopped['ndcg@10']:.4f} |"
            f" {like['ndcg@10']:.4f} |"
        )
        print(lines[-1], flush=True)
        if collection.name == "scifact" and "--no-speed" not in sys.argv:
            speed_lines = speed(collection, settings)
            print("\n".join(speed_lines), flush=True)
    return lines + speed_lines


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
    if "--quick" not in sys.argv and "--no-speed" not in sys.argv:
        append(result)
