"""The relevance gate: nDCG@10 through the whole indexing and search path, and the golden
sets' reporting halves on real crawls of two documentation mirrors.

A ranking change that loses more than noise fails here. Each floor is pinned
just under the measured figure with the default settings (SciFact 0.7080,
NFCorpus 0.3346, see bench/RESULTS.md); raise them when ranking improves.
NFCorpus is the collection where Trawl is closest to bm25s (0.3286).

The golden sets are crawled from loopback (the SUMO docs served as their live
host, as tests/test_e2e_sumo_docs.py does) and only their reporting halves are
gated: the tuning halves are for tuning (bench/golden, evaluation/golden.py).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from fixture_sites import REPO, shared_data
from test_e2e_sumo_docs import LIVE_ORIGIN, rewriting_handler
from trawl.evaluation.collections import read_beir
from trawl.evaluation.golden import evaluate_golden
from trawl.evaluation.runner import evaluate_collection
from trawl.pipeline.crawl_run import crawl
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

NDCG10_FLOORS = {"ir/scifact": 0.705, "ir/nfcorpus-test/beir-format": 0.330}
RECALL100_FLOORS = {"ir/scifact": 0.90, "ir/nfcorpus-test/beir-format": 0.25}


@pytest.mark.parametrize("collection", sorted(NDCG10_FLOORS))
@pytest.mark.slow  # indexes with worker processes
def test_ndcg_stays_above_the_floor(collection: str) -> None:
    metrics = evaluate_collection(read_beir(shared_data(collection)), Settings())
    assert metrics["ndcg@10"] >= NDCG10_FLOORS[collection], metrics
    assert metrics["recall@100"] >= RECALL100_FLOORS[collection], metrics


# (mirror, origin its pages name, start paths) -> golden set, floors on its reporting half
SITES = {
    "sumo-docs": ("site-sumo-docs", LIVE_ORIGIN, ["/docs/index.html", "/docs/TraCI.html"]),
    "postgres-manual": ("site-postgresql-15-docs", b"", ["/index.html"]),
}
FLOORS = {
    # measured on a fresh crawl at 5fd732a: SUMO MRR 0.7330, hits@10 0.8293 (34/41), with
    # typo tolerance off 0.6599 and 31/41; PostgreSQL MRR 0.8440, hits@10 1.0. Branch
    # i16-rank (soft AND, rare words, proximity in long pages): SUMO 0.7534, 35/41;
    # PostgreSQL 0.8958. Questions, the weak spot, have floors of their own (fresh crawls at
    # 4a02bd5: SUMO question MRR 0.4574, 10 of 15 in the top 10; PostgreSQL 1.0, 3 of 3):
    # without the soft AND (share 1) SUMO's questions fall to 0.4373 while its MRR (0.7469)
    # and hits@10 (34/41) stay over their floors. One question's answer sits at rank 10 or 11
    # with the same pages in the store, as the crawl's timing chose which 100 of the vehicle
    # page's 173 anchor texts were indexed; they are chosen by use since (store.anchors_to),
    # and it sits at 10 on every layout: the floor is 10 of 15 again.
    "sumo-docs": {
        "mrr": 0.74,
        "hits@10": 0.82,
        "all.typo.hits@10": 1.0,
        "all.question.mrr": 0.44,
        "all.question.hits@10": 0.66,
    },
    "postgres-manual": {"mrr": 0.88, "hits@10": 1.0, "all.question.mrr": 0.9},
}


@pytest.fixture(scope="module", params=sorted(SITES))
def crawled(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[
    tuple[str, Settings]
]:  # fmt: skip
    name = request.param
    folder, live, starts = SITES[name]
    root = shared_data(folder)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), SimpleHTTPRequestHandler)
    origin = f"http://127.0.0.1:{httpd.server_address[1]}"
    if live:
        httpd.RequestHandlerClass = rewriting_handler(root, origin.encode())
    else:
        directory = str(root)

        class Files(SimpleHTTPRequestHandler):
            def __init__(self, *args: object, **kwargs: object) -> None:
                super().__init__(*args, directory=directory, **kwargs)  # type: ignore[arg-type]

            def log_message(self, format: str, *args: object) -> None:
                pass

        httpd.RequestHandlerClass = Files
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    data = tmp_path_factory.mktemp(name)
    settings = Settings(data=data, delay=0.0, concurrency=8, host_concurrency=8)
    store = SQLiteStore(settings.sqlite_path)
    try:
        outcome = asyncio.run(crawl([origin + s for s in starts], settings, store))
    finally:
        store.close()
        httpd.shutdown()
        httpd.server_close()
    assert outcome.outcome == "complete"
    yield name, settings


# Held-out questions written in session 4 without running Trawl (bench/golden/*-questions.tsv),
# measured once on fresh crawls at 490eaad before any change was tuned on them: SUMO MRR
# 0.2771, 9 of 16 in the top 10; PostgreSQL 0.2717, 6 of 10.
QUESTION_FLOORS = {
    "sumo-docs": ("sumo-questions", {"mrr": 0.26, "hits@10": 0.5}),
    "postgres-manual": ("postgres-questions", {"mrr": 0.25, "hits@10": 0.5}),
}


def test_golden_reporting_half_stays_above_the_floor(crawled: tuple[str, Settings]) -> None:
    name, settings = crawled
    golden = REPO / "bench" / "golden" / f"{name}.tsv"
    metrics = evaluate_golden(golden, settings, "reporting")
    for key, floor in FLOORS[name].items():
        assert metrics[key] >= floor, (key, metrics)


def test_held_out_questions_stay_above_the_floor(crawled: tuple[str, Settings]) -> None:
    name, settings = crawled
    file, floors = QUESTION_FLOORS[name]
    metrics = evaluate_golden(REPO / "bench" / "golden" / f"{file}.tsv", settings, "reporting")
    for key, floor in floors.items():
        assert metrics[key] >= floor, (key, metrics)
