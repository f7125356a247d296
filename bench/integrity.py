"""The cost of checking that store and index agree (`trawl check`, /healthz).

    .venv/bin/python bench/integrity.py [--pages 100000] [--repeats 5]

A SQLite store of synthetic searchable pages (plus 2% that answered 500, which
the index may keep) and an index holding the same pages, each with a body of
40-120 words from a seeded vocabulary, as a crawl would leave them; then 100
documents are deleted from the index, so the full check has drift to find.
Times ``quick_check`` (counts: what /healthz and a crawl after a crash run) and
``full_check`` (URL sets), median of ``--repeats`` runs each, fresh readers.
Goals (issue 15): the quick check under 1 s, the full one under 30 s.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from trawl.index.tantivy_index import IndexReader, IndexWriter
from trawl.pipeline.integrity import Drift, full_check, quick_check
from trawl.records import PageRecord
from trawl.store.sqlite import SQLiteStore

VOCABULARY = 20_000
DRIFT = 100


def text(rng: random.Random) -> str:
    return " ".join(
        f"w{min(int(rng.paretovariate(1.1)), VOCABULARY)}" for _ in range(rng.randint(40, 120))
    )


def build(folder: Path, pages: int) -> None:
    store_path = folder / "trawl.sqlite"
    SQLiteStore(store_path).close()  # the schema, as migrations leave it
    rng = random.Random(15)
    rows = []
    writer = IndexWriter(folder / "index")
    for n in range(pages):
        url = f"https://site{n % 20}.example/section{n % 300}/page-{n}.html"
        failing = n % 50 == 0
        body = text(rng)
        rows.append((url, f"site{n % 20}.example", 500 if failing else 200, 1, 1.7e9 + n,
                     f"Page {n}", body, "en", 0 if failing else 1))  # fmt: skip
        writer.add(
            PageRecord(
                url=url,
                host=f"site{n % 20}.example",
                status=200,
                depth=1,
                fetched_at=1.7e9,
                title=f"Page {n}",
                text=body,
                lang="en",
                indexable=True,
            )
        )
    for n in range(1, pages, pages // DRIFT):  # odd: never one of the 500s
        writer.delete(rows[n][0])
    writer.close()
    db = sqlite3.connect(store_path)
    with db:
        db.executemany(
            "INSERT INTO pages (url, host, status, depth, fetched_at, title, body, lang,"
            " indexable) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    db.close()


def timed(
    check: Callable[[SQLiteStore, IndexReader], Drift], folder: Path, repeats: int
) -> tuple[float, Drift]:
    times = []
    drift = None
    for _ in range(repeats):
        store = SQLiteStore(folder / "trawl.sqlite")
        started = time.perf_counter()
        drift = check(store, IndexReader(folder / "index"))
        times.append(time.perf_counter() - started)
        store.close()
    assert drift is not None
    return statistics.median(times), drift


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="trawl-bench-") as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        build(folder, args.pages)
        built = time.perf_counter() - started
        quick, quick_drift = timed(quick_check, folder, args.repeats)
        full, full_drift = timed(full_check, folder, args.repeats)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"## Store/index drift check, {stamp}\n")
    print(
        f"{args.pages:,} pages in SQLite ({args.pages // 50:,} of them 500s the index may"
        f" keep), the index built from them less {DRIFT} documents (built in {built:.0f} s)."
        f" Median of {args.repeats} runs, a fresh store connection and index reader each.\n"
    )
    print("| check | seconds | found |")
    print("|---|---:|---|")
    print(f"| quick (counts: /healthz, a crawl after a crash) | {quick:.3f} |", end="")
    print(f" agrees={quick_drift.agrees} |")
    print(
        f"| full (URL sets: `trawl check`) | {full:.2f} |"
        f" {len(full_drift.missing)} missing, {len(full_drift.extra)} extra |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
