"""/api/suggest and misspelt-query speed at 100,000 pages (issue 16: p95 under 20 ms).

    .venv/bin/python bench/suggest.py [--docs 100000]

The synthetic corpus of bench/synthetic.py (Zipf words, titles of 3-8 words) is
indexed by Trawl's own path; a real uvicorn serves it on loopback and 300
typed texts (a title's first word and a prefix of its second, or a prefix of
3-6 letters alone) are asked of /api/suggest one at a time. In the same
process, 300 queries of 2-3 words with one word misspelt (a letter swapped)
go through rank(), typo tolerance on and off.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
import uvicorn

from synthetic import corpus, pct
from trawl.evaluation.runner import build_index
from trawl.index.tantivy_index import IndexReader
from trawl.search.searcher import rank
from trawl.search.suggest import suggest
from trawl.server.app import create_app
from trawl.settings import Settings

TEXTS = 300


def typed_texts(titles: list[str], rng: np.random.Generator) -> list[str]:
    texts: list[str] = []
    for n in range(TEXTS):
        words = titles[int(rng.integers(len(titles)))].split()
        if n % 2 and len(words) > 1 and len(words[1]) > 3:
            texts.append(f"{words[0]} {words[1][: int(rng.integers(2, len(words[1])))]}")
        else:
            texts.append(words[0][: int(rng.integers(3, 7))])
    return texts


def misspelt(titles: list[str], rng: np.random.Generator) -> list[str]:
    found: list[str] = []
    while len(found) < TEXTS:
        words = [w for w in titles[int(rng.integers(len(titles)))].split() if len(w) >= 5][:3]
        if len(words) < 2:
            continue
        w = words[0]
        i = int(rng.integers(1, len(w) - 1))
        words[0] = w[:i] + w[i + 1] + w[i] + w[i + 2 :]  # two letters swapped
        found.append(" ".join(words))
    return found


def serve(settings: Settings) -> tuple[uvicorn.Server, str]:
    config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=0, log_level="error")
    server = uvicorn.Server(config)
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return server, f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--data", type=Path, help="Keep the index here; reuse it if there.")
    args = parser.parse_args()
    docs = list(corpus(args.docs))
    titles = [title for _, title, _ in docs]
    rng = np.random.default_rng(5)
    with tempfile.TemporaryDirectory() as tmp:
        data = args.data or Path(tmp)
        settings = Settings(data=data, search_rate_limit="100000/minute")
        if not (settings.index_path / "meta.json").exists():
            started = time.perf_counter()
            build_index(settings.index_path, docs)
            print(f"indexed {len(docs)} pages in {time.perf_counter() - started:.0f} s")
        server, base = serve(settings)
        texts = typed_texts(titles, rng)
        for text in texts[:20]:  # warm: the first requests open the index
            urllib.request.urlopen(f"{base}/api/suggest?q={urllib.parse.quote(text)}").read()
        latency = []
        for text in texts:
            t0 = time.perf_counter()
            urllib.request.urlopen(f"{base}/api/suggest?q={urllib.parse.quote(text)}").read()
            latency.append(time.perf_counter() - t0)
        floor = []  # the served path's own cost on this machine now: /healthz, same loop
        for _ in texts:
            t0 = time.perf_counter()
            urllib.request.urlopen(f"{base}/healthz").read()
            floor.append(time.perf_counter() - t0)
        server.should_exit = True
        print(
            f"/healthz, the same way: p50 {pct(floor, 0.5):.2f} ms, p95 {pct(floor, 0.95):.2f} ms",
            flush=True,
        )
        print(
            f"/api/suggest at {len(docs)} pages, {len(texts)} texts one at a time:"
            f" p50 {pct(latency, 0.5):.2f} ms, p95 {pct(latency, 0.95):.2f} ms,"
            f" p99 {pct(latency, 0.99):.2f} ms",
            flush=True,
        )
        reader = IndexReader(settings.index_path)
        inside = []
        for text in texts:
            t0 = time.perf_counter()
            suggest(reader, text)
            inside.append(time.perf_counter() - t0)
        print(
            f"suggest() in this process: p50 {pct(inside, 0.5):.2f} ms,"
            f" p95 {pct(inside, 0.95):.2f} ms",
            flush=True,
        )
        queries = misspelt(titles, rng)
        for on in (True, False):
            chosen = settings.replace(typo_tolerance=on)
            times = []
            for q in queries:
                t0 = time.perf_counter()
                rank(reader, q, chosen, limit=10, reload=False)
                times.append(time.perf_counter() - t0)
            print(
                f"rank() top 10, one word misspelt, typo_tolerance={on}:"
                f" p50 {pct(times, 0.5):.2f} ms, p95 {pct(times, 0.95):.2f} ms",
                flush=True,
            )


if __name__ == "__main__":
    main()
