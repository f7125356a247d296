"""Two checkouts' ``search()`` in one process, query by query: an A/B the load moves alike.

    .venv/bin/python bench/search_ab.py BASE_SRC BRANCH_SRC SCIFACT_INDEX [ROUNDS]

On a machine shared with other work, runs of each side one after the other differ by
10-30% (CPU time too: caches and clock are shared); here each SciFact test query runs on
both sides in turn (which goes first alternates), each side with its own fresh reader a
round. Each ``src`` tree is copied into a temporary folder as its own package
(``trawl`` renamed ``trawl_a`` / ``trawl_b`` in its imports), so both load side by side.
Prints process CPU and wall per results page of 10, all rounds and each query's least,
and the base's slowest queries beside the branch's time for them.
"""

from __future__ import annotations

import importlib
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

IR = Path(__file__).resolve().parents[2] / "shared" / "data" / "ir"


def renamed(src: Path, name: str, into: Path) -> None:
    """``src``/trawl as package ``name`` under ``into``, its imports of itself renamed."""
    shutil.copytree(src / "trawl", into / name, ignore=shutil.ignore_patterns("__pycache__"))
    for path in (into / name).rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        text = re.sub(r"\btrawl\.", f"{name}.", text)
        text = re.sub(r"\bfrom trawl import\b", f"from {name} import", text)
        text = re.sub(r"^import trawl$", f"import {name}", text, flags=re.M)
        path.write_text(text, encoding="utf-8")


def side(name: str) -> tuple[Any, Any, Any, Any]:
    searcher = importlib.import_module(f"{name}.search.searcher")
    index = importlib.import_module(f"{name}.index.tantivy_index")
    request = importlib.import_module(f"{name}.search.request")
    settings = importlib.import_module(f"{name}.settings").Settings()
    return searcher.search, index.IndexReader, request.SearchRequest, settings


def queries() -> list[str]:
    folder = IR / "scifact"
    lines = (folder / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]
    wanted = {line.split("\t")[0] for line in lines}
    found = [json.loads(line) for line in (folder / "queries.jsonl").open(encoding="utf-8")]
    return [q["text"] for q in found if q["_id"] in wanted]


def show(values: list[float]) -> str:
    values = sorted(values)
    n = len(values)
    mean = sum(values) / n * 1000
    p50, p95, p99 = (values[int(n * q)] * 1000 for q in (0.5, 0.95, 0.99))
    return f"mean {mean:.2f} p50 {p50:.2f} p95 {p95:.2f} p99 {p99:.2f}"


def main(base: Path, branch: Path, index: Path, rounds: int) -> None:
    texts = queries()
    with tempfile.TemporaryDirectory(prefix="trawl-ab-") as tmp:
        renamed(base, "trawl_a", Path(tmp))
        renamed(branch, "trawl_b", Path(tmp))
        sys.path.insert(0, tmp)
        sides = {"base": side("trawl_a"), "branch": side("trawl_b")}
        cpu: dict[str, list[float]] = {k: [] for k in sides}
        wall: dict[str, list[float]] = {k: [] for k in sides}
        least = {k: [float("inf")] * len(texts) for k in sides}
        for _ in range(rounds):
            readers = {k: s[1](index) for k, s in sides.items()}  # fresh: caches cold
            for n, text in enumerate(texts):
                for k in ("base", "branch") if n % 2 == 0 else ("branch", "base"):
                    search, _, request, settings = sides[k]
                    asked = request(text, per_page=10)
                    started, clock = time.process_time(), time.perf_counter()
                    search(readers[k], asked, settings)
                    spent = time.process_time() - started
                    wall[k].append(time.perf_counter() - clock)
                    cpu[k].append(spent)
                    least[k][n] = min(least[k][n], spent)
    load = Path("/proc/loadavg").read_text().split()[0]
    print(f"{len(texts)} queries x {rounds} rounds, load {load}; ms a page")
    for k in sides:
        print(f"{k:7s} CPU {show(cpu[k])} | least of {rounds} {show(least[k])}")
        print(f"{'':7s} wall {show(wall[k])}")
    print("the base's slowest queries (each one's least CPU): base -> branch ms")
    for n in sorted(range(len(texts)), key=lambda n: -least["base"][n])[:12]:
        print(
            f"  {least['base'][n] * 1000:.2f} -> {least['branch'][n] * 1000:.2f}  {texts[n][:72]}"
        )


if __name__ == "__main__":
    main(
        Path(sys.argv[1]),
        Path(sys.argv[2]),
        Path(sys.argv[3]),
        int(sys.argv[4]) if len(sys.argv) > 4 else 3,
    )
