"""Index and query speed on a synthetic corpus: Trawl against bm25s and SQLite FTS5.

    .venv/bin/python bench/synthetic.py [--docs 100000] [--memory-docs 500000] [--quick]

Documents are drawn from a Zipf-distributed vocabulary of 50,000 made-up
words (a title of 3-8 words, a body of 80-250), seeded, so every run and
every engine sees the same corpus; queries are 2-4 words of middling
frequency. bm25s (k1=1.5, b=0.75) gets Trawl's tokenizer; FTS5 its own
porter tokenizer over the same text, ranked by its bm25(). All three answer
top-10 queries one at a time in this process. With --memory-docs, a separate
Trawl index of that many documents is built and a fresh process opens it,
answers 200 queries and reports its peak resident memory.
"""

from __future__ import annotations

import argparse
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import bm25s
import numpy as np

from trawl.analysis.text import terms
from trawl.evaluation.runner import doc_record
from trawl.index.tantivy_index import IndexReader, IndexWriter
from trawl.search.searcher import rank
from trawl.settings import Settings

VOCABULARY = 50_000
QUERIES = 300


def vocabulary(rng: np.random.Generator) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lengths = rng.integers(3, 11, VOCABULARY)
    return ["".join(rng.choice(letters, n)) + "s" * (i % 5 == 0) for i, n in enumerate(lengths)]


def corpus(count: int, seed: int = 7) -> Iterator[tuple[str, str, str]]:
    rng = np.random.default_rng(seed)
    words = vocabulary(rng)
    for i in range(count):
        ranks = rng.zipf(1.15, rng.integers(83, 258)) % VOCABULARY
        title, body = ranks[: len(ranks) % 6 + 3], ranks[8:]
        yield str(i), " ".join(words[r] for r in title), " ".join(words[r] for r in body)


def queries(seed: int = 11) -> list[str]:
    rng = np.random.default_rng(seed)
    words = vocabulary(np.random.default_rng(7))
    return [
        " ".join(words[int(r)] for r in rng.integers(20, 3000, rng.integers(2, 5)))
        for _ in range(QUERIES)
    ]


def pct(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))] * 1000


def timed(run: list[float]) -> str:
    return f"{len(run) / sum(run):.0f} q/s, p50 {pct(run, 0.5):.2f} ms, p99 {pct(run, 0.99):.2f} ms"


def bench_trawl(
    docs: list[tuple[str, str, str]], qs: list[str], tmp: Path
) -> tuple[float, list[float]]:
    started = time.perf_counter()
    writer = IndexWriter(tmp / "trawl", fresh=True)
    for ident, title, text in docs:
        writer.add(doc_record(ident, title, text))
    writer.close()
    index_seconds = time.perf_counter() - started
    reader, settings = IndexReader(tmp / "trawl"), Settings()
    latencies = []
    for q in qs:
        t0 = time.perf_counter()
        rank(reader, q, settings, limit=10, reload=False)
        latencies.append(time.perf_counter() - t0)
    return index_seconds, latencies


def bench_bm25s(docs: list[tuple[str, str, str]], qs: list[str]) -> tuple[float, list[float]]:
    started = time.perf_counter()
    retriever = bm25s.BM25(k1=1.5, b=0.75)
    retriever.index([terms(f"{t}\n{x}", "en") for _, t, x in docs], show_progress=False)
    index_seconds = time.perf_counter() - started
    latencies = []
    for q in qs:
        t0 = time.perf_counter()
        tokens = [t for t in terms(q, "en") if t in retriever.vocab_dict]
        if tokens:
            retriever.retrieve([tokens], k=10, show_progress=False, n_threads=1)
        latencies.append(time.perf_counter() - t0)
    return index_seconds, latencies


def bench_fts5(
    docs: list[tuple[str, str, str]], qs: list[str], tmp: Path
) -> tuple[float, list[float]]:
    db = sqlite3.connect(tmp / "fts.sqlite")
    started = time.perf_counter()
    db.execute("CREATE VIRTUAL TABLE pages USING fts5(title, body, tokenize='porter unicode61')")
    db.executemany("INSERT INTO pages(rowid, title, body) VALUES (?, ?, ?)", docs)
    db.commit()
    index_seconds = time.perf_counter() - started
    latencies = []
    for q in qs:
        t0 = time.perf_counter()
        match = " OR ".join(f'"{w}"' for w in q.split())
        db.execute(
            "SELECT rowid FROM pages WHERE pages MATCH ? ORDER BY bm25(pages, 2.0, 1.0) LIMIT 10",
            (match,),
        ).fetchall()
        latencies.append(time.perf_counter() - t0)
    db.close()
    return index_seconds, latencies


def memory_child(path: str) -> None:
    reader, settings = IndexReader(Path(path)), Settings()
    for q in queries():
        rank(reader, q, settings, limit=10, reload=False)
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)  # KiB on Linux


def memory(count: int, tmp: Path) -> tuple[float, int]:
    started = time.perf_counter()
    writer = IndexWriter(tmp / "memory", fresh=True)
    for ident, title, text in corpus(count):
        writer.add(doc_record(ident, title, text))
    writer.close()
    seconds = time.perf_counter() - started
    child = subprocess.run(
        [sys.executable, __file__, "--memory-child", str(tmp / "memory")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return seconds, int(child.stdout.split()[-1])


def main() -> list[str]:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--memory-docs", type=int, default=0)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--memory-child")
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.memory_child)
        return []
    docs = list(corpus(args.docs))
    qs = queries()
    lines = [
        f"Synthetic corpus: {args.docs:,} documents, {QUERIES} queries of 2-4 words, top 10.",
        "",
        "| engine | indexing docs/s | queries | Trawl's speed against it (indexing, queries/s) |",
        "|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        ours = bench_trawl(docs, qs, Path(tmp))
        print("trawl done", flush=True)
        for name, (seconds, run) in (
            ("Trawl", ours),
            ("bm25s", bench_bm25s(docs, qs)),
            ("SQLite FTS5", bench_fts5(docs, qs, Path(tmp))),
        ):
            lines.append(
                f"| {name} | {len(docs) / seconds:.0f} | {timed(run)} |"
                f" Trawl {seconds / ours[0]:.2f}x, {sum(run) / sum(ours[1]):.2f}x |"
            )
            print(lines[-1], flush=True)
        if args.memory_docs:
            seconds, kib = memory(args.memory_docs, Path(tmp))
            lines += [
                "",
                f"Search process at {args.memory_docs:,} documents: peak RSS {kib / 1024:.0f} MiB"
                f" after opening the index and answering {QUERIES} queries"
                f" (index built at {args.memory_docs / seconds:.0f} docs/s).",
            ]
            print(lines[-1], flush=True)
    return lines


def append(lines: list[str]) -> None:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    head = [
        f"\n## Synthetic corpus: Trawl, bm25s, SQLite FTS5, {stamp}",
        "",
        f"- commit: {commit}",
        "",
    ]
    with (Path(__file__).parent / "RESULTS.md").open("a", encoding="utf-8") as f:
        f.write("\n".join([*head, *lines]) + "\n")


if __name__ == "__main__":
    result = main()
    if result and "--quick" not in sys.argv:
        append(result)
