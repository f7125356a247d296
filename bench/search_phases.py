"""Where a SciFact results page's CPU goes, phase by phase (issue 16).

    .venv/bin/python bench/search_phases.py INDEX [ROUNDS]

INDEX: SciFact built by ``trawl.evaluation.runner.build_index``. Each phase of
``searcher.search`` is wrapped in a ``time.process_time`` timer (the wrappers add a
little to each), after a warm pass over the 300 test queries; a page of 10 each.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from relevance import IR
from trawl.evaluation.collections import read_beir
from trawl.index.tantivy_index import IndexHit, IndexReader
from trawl.search import searcher
from trawl.search.request import SearchRequest
from trawl.settings import Settings

PHASES = (
    "rank", "parse_query", "candidate_languages", "_corrections", "plan", "_shape",
    "rare_word_needed", "soft_and", "_cascade", "pages_needed", "rerank", "_hit",
    "best_passage", "snippet", "did_you_mean",
)  # fmt: skip
spent: dict[str, float] = {}


def timed(name: str, action: Callable[..., Any]) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        started = time.process_time()
        try:
            return action(*args, **kwargs)
        finally:
            spent[name] = spent.get(name, 0.0) + time.process_time() - started

    return run


def main() -> None:
    reader = IndexReader(Path(sys.argv[1]))
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    queries = list(read_beir(IR / "scifact").queries.values())
    settings = Settings()
    for q in queries:
        searcher.search(reader, SearchRequest(q, per_page=10), settings)
    for name in PHASES:
        setattr(searcher, name, timed(name, getattr(searcher, name)))
    for name in ("reload", "candidates", "fetch"):
        setattr(IndexReader, name, timed(name, getattr(IndexReader, name)))

    def read(hit: IndexHit, name: str) -> Any:
        if hit._doc is None:
            started = time.process_time()
            hit._doc = hit._searcher.doc(hit._address)
            spent["stored page read"] = (
                spent.get("stored page read", 0.0) + time.process_time() - started
            )
        return hit._doc.get_first(name)

    IndexHit._field = read  # type: ignore[method-assign,assignment]
    total = 0.0
    for _ in range(rounds):
        for q in queries:
            started = time.process_time()
            searcher.search(reader, SearchRequest(q, per_page=10), settings)
            total += time.process_time() - started
    pages = rounds * len(queries)
    print(f"search() {total / pages * 1000:.3f} ms CPU a page, {pages} pages")
    for name, seconds in sorted(spent.items(), key=lambda kv: -kv[1]):
        print(f"  {name:22s} {seconds / pages * 1000:.3f}")


if __name__ == "__main__":
    main()
