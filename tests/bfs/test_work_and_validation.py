"""Work counters measured by the kernels, the parent-tree validator and bad inputs."""

import numpy as np
import pytest
import scipy.sparse as sp

from course_lib import bfs
from course_lib.bfs import data


def test_quadratic_bfs_scans_every_edge_every_iteration_on_a_chain():
    """Is the edge-parallel BFS O(V * E) on a chain? V iterations over all V - 1 edges."""
    n = 9
    run = bfs.traverse(data.chain(n), 0, "edge_quadratic", directed=False)
    assert run.iterations == n  # depths 0..n-1 expanded; the last iteration finds nothing
    assert run.edges_examined == [n - 1] * n
    assert run.depth_writes == [1] * (n - 1) + [0]


def test_frontier_bfs_examines_each_arc_once():
    """Is the frontier BFS linear? Each reached vertex's adjacency list is scanned once."""
    graph = data.grid_2d(4, 5)
    g = bfs.as_graph(graph, directed=False)
    for method in ("frontier_atomic", "frontier_scan", "cpu"):
        run = bfs.traverse(graph, 7, method, directed=False)
        assert run.total_edges_examined == g.n_arcs
        per_level = [int(g.degrees[run.depth == d].sum()) for d in range(run.iterations)]
        assert run.edges_examined == per_level
        assert run.frontier_sizes == [int((run.depth == d).sum()) for d in range(run.iterations)]
        assert run.iterations == run.max_depth + 1
        # Each vertex is claimed exactly once: no duplicate writes.
        assert sum(run.depth_writes) == int((run.depth > 0).sum())


def test_direction_optimizing_goes_bottom_up_and_examines_fewer_edges():
    """Does the bottom-up step pay off on a power-law graph? Most vertices find a parent at once."""
    graph = bfs.as_graph(data.kronecker(8, 8, seed=1), directed=False)
    source = int(np.argmin(np.where(graph.degrees > 0, graph.degrees, graph.n_arcs)))
    top_down = bfs.traverse(graph, source, "frontier_atomic")
    hybrid = bfs.traverse(graph, source, "direction_optimizing")
    np.testing.assert_array_equal(hybrid.depth, top_down.depth)
    assert hybrid.directions[0] == "top-down" and "bottom-up" in hybrid.directions
    assert len(hybrid.directions) == hybrid.iterations == top_down.iterations
    assert hybrid.total_edges_examined < top_down.total_edges_examined / 2
    # A bottom-up step finds the next level: its writes are the next frontier's size.
    for i, direction in enumerate(hybrid.directions[:-1]):
        assert hybrid.depth_writes[i] == hybrid.frontier_sizes[i + 1] == int((hybrid.depth == i + 1).sum())


def test_star_needs_two_iterations_chain_needs_v():
    star = bfs.traverse(data.star(12), 0, "edge_quadratic", directed=False)
    chain = bfs.traverse(data.chain(12), 0, "edge_quadratic", directed=False)
    assert (star.iterations, chain.iterations) == (2, 12)
    assert star.total_edges_examined == 2 * 11 and chain.total_edges_examined == 12 * 11


def test_benign_race_duplicate_writes_are_counted():
    """Two edges reach vertex 3 in the same iteration: one or both threads write depth 2.

    Whether the second thread still sees vertex 3 unvisited depends on timing (on a
    GPU both usually do); either way the depth is the same and the parent valid.
    """
    graph = data.from_edges([0, 0, 1, 2], [1, 2, 3, 3], 4)
    for _ in range(3):
        run = bfs.traverse(graph, 0, "edge_quadratic", directed=False)
        np.testing.assert_array_equal(run.depth, [0, 1, 1, 2])
        assert run.depth_writes[0] == 2 and run.depth_writes[1] in (1, 2) and run.depth_writes[2] == 0
        assert run.parent[3] in (1, 2)


def test_exclusive_scan_on_awkward_lengths():
    from numba import cuda

    rng = np.random.default_rng(1)
    for n in (1, 15, 16, 17, 40, 257):  # 257 > 16 * 16: three levels of block sums in the simulator
        values = rng.integers(0, 5, n).astype(np.int32)
        out, total = bfs.exclusive_scan(cuda.to_device(values), n)
        np.testing.assert_array_equal(out.copy_to_host()[:n], np.cumsum(values) - values)
        assert total == int(values.sum())


def test_validator_finds_each_kind_of_mistake():
    graph = data.from_edges([0, 0, 1, 2, 3], [1, 2, 3, 3, 4], 6)  # vertex 5 unreachable
    good = np.array([0, 0, 0, 1, 3, -1])
    assert bfs.parent_tree_problems(graph, 0, good, directed=False) == []
    assert bfs.parent_tree_problems(graph, 0, [0, 0, 0, 2, 3, -1], directed=False) == []  # other valid tree
    cases = {
        "parent[source]": [1, 0, 0, 1, 3, -1],
        "one level closer": [0, 0, 0, 1, 3, -1][:3] + [3, 3, -1],
        "no edge": [0, 0, 0, 0, 3, -1],
        "not reachable": [0, 0, 0, 1, 3, 4],
        "valid parent id": [0, 0, 0, 1, 9, -1],
    }
    for needle, parent in cases.items():
        problems = bfs.parent_tree_problems(graph, 0, np.array(parent), directed=False)
        assert any(needle in p for p in problems), (needle, problems)
    with pytest.raises(ValueError, match="not a valid BFS parent tree"):
        bfs.check_parent_tree(graph, 0, np.array(cases["no edge"]), directed=False)
    assert "shape" in bfs.parent_tree_problems(graph, 0, np.zeros(3, int))[0]


def test_validator_respects_direction():
    graph = data.chain(3, directed=True)
    assert bfs.parent_tree_problems(graph, 0, [0, 0, 1]) == []
    assert bfs.parent_tree_problems(graph, 2, [-1, -1, 2]) == []
    assert bfs.parent_tree_problems(graph, 2, [1, 2, 2]) != []


def _csr(indices, indptr, n):
    return sp.csr_matrix((np.ones(len(indices), np.int8), np.array(indices), np.array(indptr)), shape=(n, n))


@pytest.mark.parametrize("graph,source,message", [
    (sp.csr_matrix((3, 4)), 0, "square"),
    (np.eye(3), 0, "SciPy sparse adjacency matrix"),
    ([[0, 1], [1, 0]], 0, "SciPy sparse adjacency matrix"),
    (sp.csr_matrix((0, 0)), 0, "no vertices"),
    (data.chain(4), 4, "out of range"),
    (data.chain(4), -1, "negative"),
    (data.chain(4), 1.5, "integer"),
    (data.chain(4), True, "integer"),
    (_csr([1, -1], [0, 1, 2], 2), 0, "negative column index"),
    (_csr([1, 5], [0, 1, 2], 2), 0, "column index 5, out of range"),
])
def test_bad_input_is_a_clear_error(graph, source, message):
    for method in bfs.METHODS:
        with pytest.raises(ValueError, match=message):
            bfs.bfs(graph, source, method=method)


def test_unknown_method_and_direction_flag():
    with pytest.raises(ValueError, match="unknown method"):
        bfs.bfs(data.chain(3), 0, method="bottom_up")
    with pytest.raises(ValueError, match="directed must be True or False"):
        bfs.bfs(data.chain(3), 0, directed="yes")


@pytest.mark.parametrize("call,message", [
    (lambda: data.chain(0), "n_vertices must be an integer >= 1"),
    (lambda: data.kronecker(31), "at most 30"),
    (lambda: data.kronecker(4, abc=(0.6, 0.3, 0.3)), "abc"),
    (lambda: data.real_graph("facebook"), "unknown graph"),
    (lambda: data.from_edges([0], [3], 3), "0..2"),
    (lambda: data.star(3, center=3), "center"),
])
def test_generators_reject_bad_arguments(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_generators_are_seeded_and_shaped():
    a, b = data.kronecker(6, 8, seed=1), data.kronecker(6, 8, seed=1)
    assert (a != b).nnz == 0 and a.shape == (64, 64)
    assert (a != a.T).nnz == 0  # undirected graphs are symmetric
    assert data.kronecker(6, 8, seed=2).nnz != a.nnz or (data.kronecker(6, 8, seed=2) != a).nnz
    degrees = np.diff(data.kronecker(10, 16, seed=0).indptr)
    assert degrees.max() > 10 * degrees.mean()  # power-law: hubs far above the mean
    assert data.grid_2d(3, 4).nnz == 2 * (3 * 3 + 2 * 4)
    dup = data.with_self_loops_and_duplicates(data.chain(5), n_loops=2, n_duplicates=3)
    assert dup.nnz == data.chain(5).nnz + 5 and not dup.has_canonical_format
    for name in data.REAL_GRAPHS:
        adjacency, labels = data.real_graph(name)
        assert adjacency.shape == (len(labels), len(labels)) and (adjacency != adjacency.T).nnz == 0


def test_warp_efficiency():
    assert bfs.warp_efficiency([3] * 32) == 1.0
    assert bfs.warp_efficiency([32] + [0] * 31) == pytest.approx(1 / 32)
    assert bfs.warp_efficiency([1] * 33) == 1.0  # the second warp has one lane, equally busy
    assert bfs.warp_efficiency([4, 0] + [1] * 30 + [2, 2, 1]) == pytest.approx((4 + 30 + 5) / (32 * 4 + 3 * 2))
    assert bfs.warp_efficiency([]) == 1.0
    with pytest.raises(ValueError, match=">= 0"):
        bfs.warp_efficiency([-1])
    g = bfs.as_graph(data.star(40), directed=False)
    depth = bfs.bfs(g, 0, method="cpu")
    assert bfs.level_warp_efficiency(g, depth) == [1.0, 1.0]  # one centre, then 39 leaves of degree 1
    mixed = bfs.as_graph(data.from_edges([0, 0, 1, 1, 1], [1, 2, 3, 4, 5], 6), directed=False)
    # Level 1 holds vertex 1 (degree 4) and vertex 2 (degree 1) in one warp: 5 / (2 * 4).
    assert bfs.level_warp_efficiency(mixed, bfs.bfs(mixed, 0, method="cpu"))[1] == pytest.approx(5 / 8)
