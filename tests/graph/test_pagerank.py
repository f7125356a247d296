"""PageRank by sparse power iteration against the exact solution of the same equations."""

from __future__ import annotations

import numpy as np
import pytest

from trawl.graph.pagerank import authority, pagerank


def exact(n: int, edges: list[tuple[int, int]], damping: float = 0.85) -> np.ndarray:
    """Solve x = d (P^T x + dangling share) + (1 - d)/n directly, with a dense matrix."""
    links = np.zeros((n, n))
    for s, t in set(edges):
        if s != t:
            links[s, t] = 1.0
    out = links.sum(axis=1)
    google = np.where(out[:, None] > 0, links / np.maximum(out, 1)[:, None], 1.0 / n)
    matrix = damping * google + (1 - damping) / n
    values, vectors = np.linalg.eig(matrix.T)
    x = np.real(vectors[:, np.argmax(np.real(values))])
    normalised: np.ndarray = x / x.sum()
    return normalised


def test_matches_the_exact_solution_with_dangling_pages_repeats_and_self_links() -> None:
    edges = [(0, 1), (0, 1), (1, 2), (2, 0), (2, 3), (3, 3), (4, 2)]  # 3 only links to itself
    scores = pagerank(5, [s for s, _ in edges], [t for _, t in edges], tol=1e-12, max_iter=1000)
    assert scores.sum() == pytest.approx(1.0)
    assert np.allclose(scores, exact(5, edges), atol=1e-9)


def test_random_graph_matches_the_exact_solution() -> None:
    rng = np.random.default_rng(7)
    n = 60
    sources, targets = rng.integers(0, n, 300), rng.integers(0, n, 300)
    scores = pagerank(n, sources, targets, tol=1e-12, max_iter=1000)
    assert np.allclose(scores, exact(n, list(zip(sources, targets, strict=True))), atol=1e-9)


def test_a_graph_without_links_is_uniform_and_has_no_authority() -> None:
    scores = pagerank(4, [], [])
    assert np.allclose(scores, 0.25)
    assert np.allclose(authority(scores), 0.0)
    assert pagerank(0, [], []).size == 0


def test_authority_is_zero_to_one_on_a_log_axis() -> None:
    values = authority(np.array([1e-6, 1e-5, 1e-4]))
    assert np.allclose(values, [0.0, 0.5, 1.0])


def test_bad_edges_are_refused() -> None:
    with pytest.raises(ValueError, match="outside"):
        pagerank(2, [0], [5])
    with pytest.raises(ValueError, match="same length"):
        pagerank(2, [0, 1], [1])
