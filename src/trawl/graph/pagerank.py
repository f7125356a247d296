"""PageRank over the link graph by power iteration. Pure: edges in, scores out.

    x' = d * (P^T x + dangling(x) / n) + (1 - d) / n

P is the row-stochastic link matrix (each page's followed links share its
vote equally; repeated links between two pages count once, self-links not at
all). Pages without outgoing links would leak their mass; it is spread over
every page, as networkx and the original paper do. Iteration stops when the
L1 change of the whole vector is under ``tol``. networkx stops at ``n * tol``,
which at a million nodes is a change of 1 (out of a total of 1): one iteration,
scores close to raw in-degree. The bench compares the two at equal precision
(networkx given ``tol / n``) and at networkx's own default.

The product P^T x is a gather and a sum per target over its inlinks, sources in
ascending order. Up to ``PYTHON_EDGES`` edges it runs in plain Python (each
target's gather an ``itemgetter``, so the inner loop is C): a crawl's end then
never imports numpy, 15-18 MB resident for this one product (bench/RESULTS.md,
"numpy off the crawl path"). Larger graphs, where Python's per-edge cost would
be seconds, use numpy, imported then: a gather and ``np.add.reduceat`` over the
edges sorted by target, not a scipy sparse matrix (scipy is 140 MB installed for
this one product; bench/RESULTS.md, "PageRank without scipy"). Both sum in the
same order and give the same scores to rounding (tests/graph/test_pagerank.py).

``authority`` turns the scores into [0, 1]. PageRank is a power law: scaled
linearly almost every page sits near 0 and a threshold such as eviction's 0.7
would name only a handful of hubs. So it is scaled on a log axis between the
smallest and the largest score: a page nobody links to is 0, the top page 1.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from itertools import repeat
from operator import call, itemgetter, sub
from typing import Any

DAMPING = 0.85
# Above this many edges numpy is faster by more than its import costs: measured
# in bench/RESULTS.md, "numpy off the crawl path".
PYTHON_EDGES = 100_000


def pagerank(
    n: int,
    sources: Sequence[int] | Any,
    targets: Sequence[int] | Any,
    *,
    damping: float = DAMPING,
    tol: float = 1e-6,
    max_iter: int = 200,
) -> list[float]:
    """PageRank of nodes 0..n-1 given edges ``sources[k] -> targets[k]``; sums to 1."""
    if len(sources) != len(targets):
        raise ValueError("sources and targets must have the same length")
    if n == 0:
        return []
    if len(sources) > PYTHON_EDGES:
        return _numpy_pagerank(n, sources, targets, damping=damping, tol=tol, max_iter=max_iter)
    sources = [int(s) for s in sources]
    targets = [int(t) for t in targets]
    edges = list(zip(sources, targets, strict=True))
    # A self-link is dropped unread, even one outside the nodes.
    nodes = sources + targets
    if nodes and not (min(nodes) >= 0 and max(nodes) < n):
        outside = (s != t and not (0 <= s < n and 0 <= t < n) for s, t in edges)
        if any(outside):
            raise ValueError("an edge names a node outside 0..n-1")
    # One key per (target, source) pair: sorting groups each target's inlinks
    # together, sources ascending, and the set lets repeated links count once.
    keys = sorted({t * n + s for s, t in edges if s != t})
    out_degree = [0] * n
    inlinks: dict[int, list[int]] = {}
    for key in keys:
        target, source = divmod(key, n)
        out_degree[source] += 1
        inlinks.setdefault(target, []).append(source)
    inverse = [1.0 / d if d else 0.0 for d in out_degree]
    dangling = [i for i, d in enumerate(out_degree) if not d]
    # One gather a node, of its inlinks' weighted scores. Each also reads slot n, a
    # 0.0: a gather then always returns a tuple (an itemgetter of one index returns
    # the item itself), and a node without inlinks sums to 0.0, as with numpy.
    gathers = [itemgetter(*inlinks.get(node, (n,)), n) for node in range(n)]
    x = [1.0 / n] * n
    teleport = (1.0 - damping) / n
    for _ in range(max_iter):
        spread = damping * sum(map(x.__getitem__, dangling)) / n
        base = spread + teleport
        weighted = [*map(float.__mul__, x, inverse), 0.0]
        inflow = map(sum, map(call, gathers, repeat(weighted)))
        new = [damping * value + base for value in inflow]
        change = sum(map(abs, map(sub, new, x)))
        x = new
        if change < tol:
            break
    total = sum(x)
    return [value / total for value in x] if total > 0 else x


def _numpy_pagerank(
    n: int,
    sources: Sequence[int] | Any,
    targets: Sequence[int] | Any,
    *,
    damping: float,
    tol: float,
    max_iter: int,
) -> list[float]:
    import numpy as np  # noqa: PLC0415 (only for graphs too large for Python)

    src = np.asarray(sources, dtype=np.int64)
    dst = np.asarray(targets, dtype=np.int64)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    if src.size and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= n):
        raise ValueError("an edge names a node outside 0..n-1")
    # One key per (target, source) pair: sorting groups each target's inlinks
    # together and lets repeated links count once. (np.unique does the same, but
    # measured 50x slower than sort and compare on 800k keys with numpy 2.4.)
    keys = np.sort(dst * n + src)
    if keys.size:
        keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]
    dst, src = np.divmod(keys, n)
    out_degree = np.bincount(src, minlength=n).astype(np.float64)
    dangling = out_degree == 0
    inverse = np.divide(1.0, out_degree, out=np.zeros(n), where=~dangling)
    # Where each target's run of inlinks starts in the sorted edges.
    starts = np.flatnonzero(np.concatenate(([True], dst[1:] != dst[:-1]))) if dst.size else dst
    linked = dst[starts]
    x = np.full(n, 1.0 / n)
    teleport = (1.0 - damping) / n
    inflow = np.zeros(n)
    for _ in range(max_iter):
        spread = damping * x[dangling].sum() / n
        if starts.size:
            inflow[linked] = np.add.reduceat(np.take(x * inverse, src), starts)
        new = damping * inflow + (spread + teleport)
        change = float(np.abs(new - x).sum())
        x = new
        if change < tol:
            break
    total = x.sum()
    scores: list[float] = (x / total if total > 0 else x).tolist()
    return scores


def authority(scores: Sequence[float]) -> list[float]:
    """Scores scaled to [0, 1] on a log axis: the least-linked page 0, the most 1."""
    if not scores:
        return []
    logs = [math.log(max(score, sys.float_info.min)) for score in scores]
    low, high = min(logs), max(logs)
    if high - low < 1e-12:  # all alike: nothing to tell pages apart by
        return [0.0] * len(scores)
    span = high - low
    return [min(max((value - low) / span, 0.0), 1.0) for value in logs]
