"""Which ranking settings does k-fold cross-validation over the golden tuning halves support?

A setting chosen on one small split is fitted to it as much as it is learned: 62
tuning queries (SUMO 39, PostgreSQL 23) move by one or two queries between two
values. This reruns the tuning halves of both golden sets (never the reporting
halves) for each value of a grid, one setting changed at a time from the
defaults, and keeps every query's reciprocal rank. Then, over ``--repeats``
random partitions into ``--folds`` folds, it chooses the best grid point on the
other folds (the defaults win ties) and scores that choice on the held-out
fold. When the chosen points score less on held-out folds than the defaults do,
the grid's gains on the whole tuning half are noise a next site would not see.

    .venv/bin/python bench/golden_sites.py sumo /tmp/sumo-data
    .venv/bin/python bench/golden_sites.py postgres /tmp/pg-data
    .venv/bin/python bench/kfold.py --sumo /tmp/sumo-data --postgres /tmp/pg-data
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trawl.evaluation.golden import golden_per_query, read_golden_set
from trawl.settings import Settings

GOLDEN = Path(__file__).resolve().parent / "golden"
SETS = {"sumo": GOLDEN / "sumo-docs.tsv", "postgres": GOLDEN / "postgres-manual.tsv"}
# Around each default: the field weights of BM25F and the rerank's factors.
GRID: dict[str, list[Any]] = {
    "title_boost": [0.25, 0.5, 1.0],
    "headings_boost": [1.0, 1.5, 2.0, 3.0],
    "anchor_boost": [0.75, 1.5, 2.5],
    "url_boost": [0.75, 1.5, 2.5],
    "aside_boost": [0.0, 0.2, 0.5],
    "proximity_long_boost": [0.7, 1.4, 2.0],
    "soft_and_share": [0.6, 0.7, 0.8, 1.0],
    "coverage_power": [1.0, 2.0, 3.0],
    "rerank_depth": [10, 15, 25],
    "exact_bonus": [0.25, 0.5, 1.0],
    "quality_weight": [0.0, 0.3, 0.6],
}
DEFAULTS = "{}"

Table = dict[str, dict[str, float]]  # grid point (JSON) -> query -> reciprocal rank


def points() -> list[dict[str, Any]]:
    defaults = Settings()
    changed = [{k: v} for k, values in GRID.items() for v in values if v != getattr(defaults, k)]
    return [{}, *changed]


def reciprocal_ranks(data: dict[str, Path], changes: dict[str, Any]) -> dict[str, float]:
    found: dict[str, float] = {}
    for site, folder in data.items():
        tuning = [q for q in read_golden_set(SETS[site]) if q.half == "tuning"]
        scores = golden_per_query(tuning, Settings(data=folder, **changes))
        found |= {f"{site}: {q.text}": scores[q.qid]["mrr"] for q in tuning}
    return found


def cross_validate(
    table: Table, folds: int, repeats: int, seed: int = 16
) -> tuple[float, float, dict[str, int]]:
    """Mean held-out MRR of the point chosen on the other folds, of the defaults, and how
    often each point was chosen."""
    queries = sorted(table[DEFAULTS])
    rng = random.Random(seed)
    chosen_scores: list[float] = []
    default_scores: list[float] = []
    picks: dict[str, int] = {}

    def mean(point: str, subset: Sequence[str]) -> float:
        return statistics.fmean(table[point][q] for q in subset)

    for _ in range(repeats):
        order = queries[:]
        rng.shuffle(order)
        for fold in (order[i::folds] for i in range(folds)):
            held = set(fold)
            train = [q for q in queries if q not in held]
            best = max(table, key=lambda point: (mean(point, train), point == DEFAULTS))
            picks[best] = picks.get(best, 0) + 1
            chosen_scores.append(mean(best, fold))
            default_scores.append(mean(DEFAULTS, fold))
    return statistics.fmean(chosen_scores), statistics.fmean(default_scores), picks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sumo", type=Path, required=True, help="data folder of the SUMO crawl")
    parser.add_argument("--postgres", type=Path, required=True, help="of the manual's crawl")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--save", type=Path, help="write the per-query table here (JSON)")
    args = parser.parse_args()
    data = {"sumo": args.sumo, "postgres": args.postgres}
    table: Table = {}
    for changes in points():
        key = json.dumps(changes, sort_keys=True)
        table[key] = reciprocal_ranks(data, changes)
        print(f"{key:40} tuning MRR {statistics.fmean(table[key].values()):.4f}", flush=True)
    if args.save:
        args.save.write_text(json.dumps(table, indent=1))
    chosen, defaults, picks = cross_validate(table, args.folds, args.repeats)
    print(
        f"{args.folds}-fold, {args.repeats} partitions: held-out MRR of the chosen point"
        f" {chosen:.4f}, of the defaults {defaults:.4f}"
    )
    for point, count in sorted(picks.items(), key=lambda t: -t[1]):
        print(f"  chosen {count:3} times: {point}")


if __name__ == "__main__":
    main()
