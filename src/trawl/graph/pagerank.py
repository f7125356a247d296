"""PageRank over the link graph by power iteration with numpy. Pure: arrays in, arrays out.

    x' = d * (P^T x + dangling(x) / n) + (1 - d) / n

P is the row-stochastic link matrix (each page's followed links share its
vote equally; repeated links between two pages count once, self-links not at
all). Pages without outgoing links would leak their mass; it is spread over
every page, as networkx and the original paper do. Iteration stops when the
L1 change of the whole vector is under ``tol``. networkx stops at ``n * tol``,
which at a million nodes is a change of 1 (out of a total of 1): one iteration,
scores close to raw in-degree. The bench compares the two at equal precision
(networkx given ``tol / n``) and at networkx's own default.

The product P^T x is a gather and a segmented sum over the edges sorted by
target (``np.add.reduceat``), not a scipy sparse matrix: scipy is 140 MB
installed for this one product, and measured on a 100k-edge graph the matrix
saves a few hundredths of a second per crawl (bench/RESULTS.md, "PageRank
without scipy").

``authority`` turns the scores into [0, 1]. PageRank is a power law: scaled
linearly almost every page sits near 0 and a threshold such as eviction's 0.7
would name only a handful of hubs. So it is scaled on a log axis between the
smallest and the largest score: a page nobody links to is 0, the top page 1.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

DAMPING = 0.85


def pagerank(
    n: int,
    sources: npt.ArrayLike,
    targets: npt.ArrayLike,
    *,
    damping: float = DAMPING,
    tol: float = 1e-6,
    max_iter: int = 200,
) -> npt.NDArray[np.float64]:
    """PageRank of nodes 0..n-1 given edges ``sources[k] -> targets[k]``; sums to 1."""
    if n == 0:
        return np.zeros(0)
    src = np.asarray(sources, dtype=np.int64)
    dst = np.asarray(targets, dtype=np.int64)
    if src.shape != dst.shape:
        raise ValueError("sources and targets must have the same length")
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
    return x / total if total > 0 else x


def authority(scores: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Scores scaled to [0, 1] on a log axis: the least-linked page 0, the most 1."""
    if scores.size == 0:
        return scores
    logs = np.log(np.maximum(scores, np.finfo(np.float64).tiny))
    low, high = logs.min(), logs.max()
    if high - low < 1e-12:  # all alike: nothing to tell pages apart by
        return np.zeros_like(scores)
    scaled: npt.NDArray[np.float64] = np.clip((logs - low) / (high - low), 0.0, 1.0)
    return scaled
