"""CPU time per results page, and the pages themselves, for A/B runs on a loaded machine.

    PYTHONPATH=<checkout>/src .venv/bin/python bench/search_cpu.py scifact INDEX OUT.json
    PYTHONPATH=<checkout>/src .venv/bin/python bench/search_cpu.py manual DATA OUT.json

Process CPU time (``time.process_time``), not wall time: with other work on the
machine, CPU per query still compares two checkouts run in the same minutes.
OUT.json holds every results page (URLs, titles, snippets, scores, sections): two
checkouts that should answer alike must write the same bytes (``cmp``).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from relevance import IR
from service import QUERIES
from trawl.evaluation.collections import read_beir
from trawl.index.tantivy_index import IndexReader
from trawl.search.request import SearchRequest
from trawl.search.searcher import search
from trawl.settings import Settings


def main() -> None:
    which, where, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    per_page: int | None = None
    if which == "scifact":
        queries = list(read_beir(IR / "scifact").queries.values())
        reader, settings, per_page = IndexReader(where), Settings(), 10
    else:
        queries = list(QUERIES)
        reader, settings = IndexReader(where / "index"), Settings(data=where)
    pages = []
    for q in queries:  # warms the reader, as a server is warm
        p = search(reader, SearchRequest(q, per_page=per_page), settings)
        shown = [
            (h.url, h.title, h.snippet, h.score, h.section and (h.section.path, h.section.url))
            for h in p.hits
        ]
        pages.append([q, p.total, p.did_you_mean, shown])
    each: list[list[float]] = [[] for _ in queries]
    for _ in range(rounds):
        for q, spent in zip(queries, each, strict=True):
            request = SearchRequest(q, per_page=per_page)
            started = time.process_time()
            search(reader, request, settings)
            spent.append(time.process_time() - started)
    out.write_text(json.dumps(pages, ensure_ascii=False, indent=0))
    print(
        f"{which}: {len(queries) * rounds} pages, CPU ms {_figures([t for s in each for t in s])}"
    )
    if rounds > 1:
        # Other work on the machine only adds to a query's CPU time (caches, a shared
        # core): each query's least over the rounds compares two checkouts more steadily.
        print(f"{which}: each query's least of {rounds} rounds, {_figures([min(s) for s in each])}")


def _figures(times: list[float]) -> str:
    times = sorted(times)
    mean = sum(times) / len(times) * 1000
    p50, p95 = (times[min(len(times) - 1, int(q * len(times)))] * 1000 for q in (0.5, 0.95))
    return f"mean {mean:.2f} p50 {p50:.2f} p95 {p95:.2f}"


if __name__ == "__main__":
    main()
