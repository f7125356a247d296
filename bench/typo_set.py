"""What does typo tolerance lose? The golden keyword and navigational queries, misspelt.

The golden sets hold only a handful of hand-written misspellings (4 on the Cargo
reporting half), too few to tune on or to report. This makes many from queries whose
answers are already known: each KEYWORD or NAVIGATIONAL query of a golden file's half
(``golden.half_of`` of the query as written, so a variant stays in its source's half)
gets misspelt variants, same expected pages:

- three with one error in one word of 5+ letters (fewer when two come out the same);
- two errors: one in each of two such words, or both in one word of 9+ letters (the
  issue's edit distance 2); a query with neither gets no second variant.

An error is what people type (Damerau's four kinds, chosen evenly): a letter left
out, a letter in too (a key next to the one meant), a letter replaced by a
neighbouring key on a QWERTY keyboard, or two adjacent letters swapped. It falls
anywhere in the word, the first letter included, and never leaves the word as it was.
Every random choice comes from a generator seeded by ``--seed`` and the query, so the
set is the same on every run and a query's variants do not move when others are added.

The gap between the clean queries' MRR and the misspelt ones' is what typo tolerance
loses; ``typo_tolerance = false`` shows what it wins.

    .venv/bin/python bench/golden_sites.py sumo /tmp/sumo-data   # and postgres, cargo
    .venv/bin/python bench/typo_set.py --half tuning --site sumo=/tmp/sumo-data \\
        --site postgres=/tmp/pg-data --site cargo=/tmp/cargo-data [--per-query] [--off]
    .venv/bin/python bench/typo_set.py --half tuning --write /tmp/typos   # the set as TSV

Read the reporting half once, at the end: tune on the tuning half alone.
"""

from __future__ import annotations

import argparse
import random
import statistics
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from trawl.evaluation.golden import GoldenQuery, Half, golden_per_query, read_golden_set
from trawl.search import typos
from trawl.settings import Settings

GOLDEN = Path(__file__).resolve().parent / "golden"
FILES = {
    "sumo": GOLDEN / "sumo-docs.tsv",
    "postgres": GOLDEN / "postgres-manual.tsv",
    "cargo": GOLDEN / "cargo-book.tsv",
}
SOURCES = ("keyword", "navigational")
MIN_LETTERS = 5
ONE_ERROR = 3  # variants with one error a query
TWO_IN_ONE = 9  # letters from which both errors may fall in one word
KINDS = ("deletion", "insertion", "substitution", "transposition")
_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _keyboard() -> dict[str, str]:
    """Each letter's neighbouring keys: beside it, and the two above and below it (rows
    are staggered by about half a key)."""
    at = {c: (r, i) for r, row in enumerate(_ROWS) for i, c in enumerate(row)}
    near: dict[str, str] = {}
    for c, (r, i) in at.items():
        keys = [(r, i - 1), (r, i + 1), (r - 1, i), (r - 1, i + 1), (r + 1, i - 1), (r + 1, i)]
        near[c] = "".join(
            _ROWS[rr][ii] for rr, ii in keys if 0 <= rr < len(_ROWS) and 0 <= ii < len(_ROWS[rr])
        )
    return near


NEAR = _keyboard()


def misspell(word: str, rng: random.Random) -> tuple[str, str]:
    """One error in ``word``: (the new word, its kind)."""
    lower = word.lower()
    while True:
        kind = rng.choice(KINDS)
        i = rng.randrange(len(word))
        if kind == "deletion":
            new = word[:i] + word[i + 1 :]
        elif kind == "insertion":
            new = word[: i + 1] + rng.choice(NEAR.get(lower[i], lower[i])) + word[i + 1 :]
        elif kind == "substitution":
            keys = NEAR.get(lower[i], "")
            if not keys:
                continue
            new = word[:i] + rng.choice(keys) + word[i + 1 :]
        else:
            if i + 1 >= len(word):
                continue
            new = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        if new.lower() != lower:
            return new, kind


def variants(query: GoldenQuery, seed: int) -> list[GoldenQuery]:
    """The query with one error (``ONE_ERROR`` draws), then with two, when its words allow."""
    rng = random.Random(f"{seed}:{query.text}")
    words = query.text.split()
    long = [i for i, w in enumerate(words) if w.isalpha() and len(w) >= MIN_LETTERS]
    if not long:
        return []
    found: list[GoldenQuery] = []
    for n in range(ONE_ERROR):
        one = list(words)
        at = rng.choice(long)
        one[at], kind = misspell(words[at], rng)
        if all(v.text != " ".join(one) for v in found):
            found.append(_variant(query, one, f"1{'abc'[n]}", kind))
    two = list(words)
    if len(long) >= 2:
        for at in rng.sample(long, 2):
            two[at], kind = misspell(words[at], rng)
    else:
        at = long[0]
        if len(words[at]) < TWO_IN_ONE:
            return found
        first, _ = misspell(words[at], rng)
        two[at], kind = misspell(first, rng)
        if two[at].lower() == words[at].lower():  # the second error undid the first
            return found
    found.append(_variant(query, two, "2", kind))
    return found


def _variant(query: GoldenQuery, words: list[str], errors: str, kind: str) -> GoldenQuery:
    # The source's half, not half_of the new text: a variant is judged with its source.
    return replace(query, qid=f"{query.qid}.{errors}.{kind}", text=" ".join(words))


def _errors(variant: GoldenQuery) -> int:
    return int(variant.qid.split(".")[1][0])


def typo_set(
    path: Path, half: Half | None, seed: int
) -> list[tuple[GoldenQuery, list[GoldenQuery]]]:
    chosen = [
        q
        for q in read_golden_set(path)
        if q.category in SOURCES and (half is None or q.half == half)
    ]
    return [(q, variants(q, seed)) for q in chosen]


def _mean(values: Sequence[float]) -> str:
    return f"{statistics.fmean(values):.4f}" if values else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--site", action="append", default=[], help="NAME=DATA (sumo, postgres, cargo)"
    )
    parser.add_argument("--half", choices=["tuning", "reporting"], required=True)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--per-query", action="store_true", help="each variant's rank, worst first")
    parser.add_argument("--off", action="store_true", help="also with typo_tolerance = false")
    parser.add_argument("--write", type=Path, help="write each site's set as TSV in this folder")
    parser.add_argument(
        "--wider", action="store_true", help="also look for errors in the first two letters"
    )
    args = parser.parse_args()
    if args.wider:
        typos.WIDER = True
    sites = dict(s.split("=", 1) for s in args.site)
    if args.write:
        args.write.mkdir(parents=True, exist_ok=True)
        for name, path in FILES.items():
            rows = [
                f"{v.text}\t{' '.join(v.expected)}\ttypo\t# {q.text}"
                for q, found in typo_set(path, args.half, args.seed)
                for v in found
            ]
            (args.write / f"{name}-{args.half}.tsv").write_text("\n".join(rows) + "\n")
    modes = [("on", True), *([("off", False)] if args.off else [])]
    totals: dict[str, list[float]] = {}
    for name, data in sites.items():
        pairs = typo_set(FILES[name], args.half, args.seed)
        clean = [q for q, _ in pairs]
        misspelt = [v for _, found in pairs for v in found]
        for mode, tolerant in modes:
            settings = Settings(data=Path(data), typo_tolerance=tolerant)
            scores = golden_per_query([*clean, *misspelt], settings)
            rr = {k: s["mrr"] for k, s in scores.items()}
            top = {k: s["hits@10"] for k, s in scores.items()}
            groups = {
                "clean": [q.qid for q in clean],
                "1 error": [v.qid for v in misspelt if _errors(v) == 1],
                "2 errors": [v.qid for v in misspelt if _errors(v) == 2],
            }
            for kind in KINDS:
                groups[f"1 error, {kind}"] = [
                    v.qid for v in misspelt if _errors(v) == 1 and v.qid.endswith(kind)
                ]
            for group, ids in groups.items():
                totals.setdefault(f"{mode} {group}", []).extend(rr[i] for i in ids)
                totals.setdefault(f"{mode} {group} hits@10", []).extend(top[i] for i in ids)
            line = "  ".join(
                f"{g} {_mean([rr[i] for i in ids])} {int(sum(top[i] for i in ids))}/{len(ids)}"
                for g, ids in groups.items()
                if ids
            )
            print(f"{name} {args.half} tolerance {mode}: {line}")
            if args.per_query and mode == "on":
                source = {v.qid: q for q, found in pairs for v in found}
                worst = sorted(misspelt, key=lambda v: rr[v.qid] - rr[source[v.qid].qid])
                for v in worst:
                    q = source[v.qid]
                    print(f"  {rr[v.qid]:.3f} (clean {rr[q.qid]:.3f})  {v.text!r}  <- {q.text!r}")
    for group, values in totals.items():
        print(f"all sites, {args.half}, tolerance {group}: {_mean(values)} (n={len(values)})")


if __name__ == "__main__":
    main()
