"""PageRank by sparse power iteration against the exact solution of the same equations,
and the plain-Python iteration against the numpy one it hands large graphs to."""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pytest

from trawl.graph import pagerank as module
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
    assert sum(scores) == pytest.approx(1.0)
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
    assert pagerank(0, [], []) == []
    assert authority([]) == []


def test_authority_is_zero_to_one_on_a_log_axis() -> None:
    values = authority([1e-6, 1e-5, 1e-4])
    assert np.allclose(values, [0.0, 0.5, 1.0])


def test_bad_edges_are_refused() -> None:
    with pytest.raises(ValueError, match="outside"):
        pagerank(2, [0], [5])
    with pytest.raises(ValueError, match="same length"):
        pagerank(2, [0, 1], [1])


def crawl_like_graph(n: int, seed: int) -> tuple[list[int], list[int]]:
    """Links as a site's pages have them: a few hubs most pages link to, some random
    links, repeats, self-links, and a seventh of the pages without links out."""
    rng = random.Random(seed)
    sources: list[int] = []
    targets: list[int] = []
    for page in range(n):
        if page % 7 == 3:
            continue
        for _ in range(rng.randrange(1, 16)):
            sources.append(page)
            hub = min(int(rng.paretovariate(1.2)) - 1, n - 1)
            targets.append(hub if rng.random() < 0.5 else rng.randrange(n))
    return sources, targets


@pytest.mark.parametrize("n", [1, 2, 50, 2000, 6000])
def test_python_iteration_gives_the_numpy_scores(n: int) -> None:
    sources, targets = crawl_like_graph(n, n)
    ours = pagerank(n, sources, targets)
    theirs = module._numpy_pagerank(n, sources, targets, damping=0.85, tol=1e-6, max_iter=200)
    assert len(ours) == n
    assert np.allclose(ours, theirs, rtol=0, atol=1e-12)
    assert authority(ours) == pytest.approx(authority(theirs), abs=1e-9)
    tight = pagerank(n, sources, targets, tol=1e-13, max_iter=500)
    assert np.allclose(
        tight,
        module._numpy_pagerank(n, sources, targets, damping=0.85, tol=1e-13, max_iter=500),
        rtol=0,
        atol=1e-12,
    )


def test_a_graph_past_the_python_limit_goes_to_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    sources, targets = crawl_like_graph(300, 1)
    expected = pagerank(300, sources, targets)
    monkeypatch.setattr(module, "PYTHON_EDGES", 10)
    assert np.allclose(pagerank(300, sources, targets), expected, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="outside"):
        pagerank(2, [0] * 20, [5] * 20)


def test_a_self_link_outside_the_nodes_is_dropped_as_numpy_drops_it() -> None:
    assert pagerank(2, [7, 0], [7, 1]) == pytest.approx(pagerank(2, [0], [1]))


def test_pagerank_on_a_crawl_sized_graph_loads_no_numpy() -> None:
    code = (
        "import sys\n"
        "from trawl.graph.pagerank import authority, pagerank\n"
        "edges = list(range(3000)) * 5, [i % 40 for i in range(15000)]\n"
        "scores = authority(pagerank(3000, *edges))\n"
        "print(len(scores), 'numpy' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.split() == ["3000", "False"]
