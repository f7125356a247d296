"""PageRank over the link graph by sparse power iteration (scipy). Pure: arrays in, arrays out.

    x' = d * (P^T x + dangling(x) / n) + (1 - d) / n

P is the row-stochastic link matrix (each page's followed links share its
vote equally; repeated links between two pages count once, self-links not at
all). Pages without outgoing links would leak their mass; it is spread over
every page, as networkx and the original paper do. Iteration stops when the
L1 change of the whole vector is under ``tol``. networkx stops at ``n * tol``,
which at a million nodes is a change of 1 (out of a total of 1): one iteration,
scores close to raw in-degree. The bench compares the two at equal precision
(networkx given ``tol / n``) and at networkx's own default.

``authority`` turns the scores into [0, 1]. PageRank is a power law: scaled
linearly almost every page sits near 0 and a threshold such as eviction's 0.7
would name only a handful of hubs. So it is scaled on a log axis between the
smallest and the largest score: a page nobody links to is 0, the top page 1.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy import sparse

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
    # The transpose is built directly (rows are targets), duplicates summed, then set to 1.
    links = sparse.csr_array(
        (np.ones(src.size, dtype=np.float64), (dst, src)), shape=(n, n), dtype=np.float64
    )
    links.sum_duplicates()
    links.data[:] = 1.0
    out_degree = np.bincount(links.indices, minlength=n).astype(np.float64)
    dangling = out_degree == 0
    inverse = np.divide(1.0, out_degree, out=np.zeros(n), where=~dangling)
    # Column j of P^T divided by j's out-degree: scale every stored value by its column.
    links.data *= inverse[links.indices]
    x = np.full(n, 1.0 / n)
    teleport = (1.0 - damping) / n
    for _ in range(max_iter):
        spread = damping * x[dangling].sum() / n
        new = damping * (links @ x) + (spread + teleport)
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
