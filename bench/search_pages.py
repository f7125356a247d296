"""Every results page of fixed query sets as JSON, to compare two checkouts byte for byte,
and the CPU a page costs with a fresh reader each round (as search_latency.py's rounds).

    PYTHONPATH=<checkout>/src .venv/bin/python bench/search_pages.py pages OUT.json \
        SCIFACT_INDEX SUMO_DATA POSTGRES_DATA
    PYTHONPATH=<checkout>/src .venv/bin/python bench/search_pages.py cpu SCIFACT_INDEX ROUNDS

``pages``: SciFact's 300 test queries (page 1) and both golden sets' queries (pages 1 and
2), each set twice with one reader (its per-commit caches cold, then warm): URL, title,
snippet, score, section, dates, "Did you mean", total. Speed work must leave it unchanged
(`cmp` the files). ``cpu``: process CPU per SciFact page, all rounds and each query's
least over the rounds (other work on the machine only adds to it).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from trawl.evaluation.collections import read_beir
from trawl.index.tantivy_index import IndexReader
from trawl.search.request import SearchRequest
from trawl.search.searcher import search
from trawl.settings import Settings

GOLDEN = Path(__file__).resolve().parent / "golden"
IR = Path(__file__).resolve().parents[2] / "shared" / "data" / "ir"  # relevance.py's, without bm25s


def golden_queries(name: str) -> list[str]:
    lines = (GOLDEN / name).read_text(encoding="utf-8").splitlines()
    return [line.split("\t")[0] for line in lines if line.strip() and not line.startswith("#")]


def pages(out: Path, scifact: Path, sumo: Path, postgres: Path) -> None:
    sets = {
        "scifact": (scifact, list(read_beir(IR / "scifact").queries.values()), (1,)),
        "sumo": (sumo / "index", golden_queries("sumo-docs.tsv"), (1, 2)),
        "postgres": (postgres / "index", golden_queries("postgres-manual.tsv"), (1, 2)),
    }
    settings = Settings()
    found: dict[str, object] = {}
    for name, (path, queries, numbers) in sets.items():
        reader = IndexReader(path)
        for warm in (0, 1):
            for query in queries:
                for number in numbers:
                    page = search(reader, SearchRequest(query, page=number, per_page=10), settings)
                    hits = [
                        [h.url, h.title, h.snippet, h.score, h.lang, repr(h.section),
                         str(h.modified), str(h.published), h.modified_source,
                         [repr(d) for d in h.discussed_on]]
                        for h in page.hits
                    ]  # fmt: skip
                    found[f"{name}|{warm}|{number}|{query}"] = [page.total, page.did_you_mean, hits]
    out.write_text(json.dumps(found, indent=0, sort_keys=True), encoding="utf-8")
    print(f"{len(found)} pages -> {out}")


def cpu(scifact: Path, rounds: int) -> None:
    queries = list(read_beir(IR / "scifact").queries.values())
    settings = Settings()
    every: list[float] = []
    least = [float("inf")] * len(queries)
    for _ in range(rounds):
        reader = IndexReader(scifact)  # fresh: nothing cached by a round before
        for n, query in enumerate(queries):
            started = time.process_time()
            search(reader, SearchRequest(query, per_page=10), settings)
            spent = time.process_time() - started
            every.append(spent)
            least[n] = min(least[n], spent)

    def show(values: list[float]) -> str:
        values = sorted(values)
        count = len(values)
        mean, p50, p95 = sum(values) / count, values[count // 2], values[int(count * 0.95)]
        return f"mean {mean * 1000:.2f} p50 {p50 * 1000:.2f} p95 {p95 * 1000:.2f}"

    print(f"ms CPU a page, all rounds: {show(every)} | least of {rounds}: {show(least)}")


if __name__ == "__main__":
    if sys.argv[1] == "pages":
        pages(Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]), Path(sys.argv[5]))
    else:
        cpu(Path(sys.argv[2]), int(sys.argv[3]))
