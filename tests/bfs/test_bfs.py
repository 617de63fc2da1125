"""Unit 3: every BFS variant gives SciPy's depths and a valid parent tree, on every graph family."""

import numpy as np
import pytest
import scipy.sparse as sp

from course_lib import bfs, pick
from course_lib.bfs import data

GPU_METHODS = ["frontier_atomic", "frontier_scan", "edge_quadratic", "direction_optimizing"]


def _families():
    """Small graphs of every family (the simulator runs ~100 us per thread)."""
    side = pick(sim=4, gpu=40)
    return {
        "star": data.star(pick(sim=9, gpu=1000)),
        "chain": data.chain(pick(sim=7, gpu=300)),
        "grid": data.grid_2d(side, side + 1),
        "kronecker": data.kronecker(pick(sim=5, gpu=14), 4, seed=3),
        "disconnected": data.disconnected((6, 4), 2, seed=1),
        "loops_and_duplicates": data.with_self_loops_and_duplicates(data.random_graph(13, 3, seed=4, directed=True)),
        "karate_club": data.real_graph("karate_club")[0],
    }


FAMILIES = _families()


def assert_valid_search(graph, source, depth, parent, directed):
    expected = bfs.bfs_reference(graph, source, directed=directed)
    assert depth.dtype == np.int32 and depth.shape == expected.shape
    np.testing.assert_array_equal(depth, expected)
    assert parent.dtype == np.int32
    assert bfs.parent_tree_problems(graph, source, parent, directed=directed) == []


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("method", GPU_METHODS + ["cpu"])
def test_undirected_depths_equal_scipy(method, family):
    graph = FAMILIES[family]
    depth, parent = bfs.bfs(graph, 0, method=method, parents=True, directed=False)
    assert_valid_search(graph, 0, depth, parent, directed=False)


#: Directed graphs: a one-way power-law graph, components joined one way only, and a multigraph with loops.
DIRECTED = {
    "kronecker": data.kronecker(4, 3, seed=2, directed=True),
    "disconnected": data.disconnected((7, 5), 2, seed=5, directed=True),
    "loops_and_duplicates": FAMILIES["loops_and_duplicates"],
}


@pytest.mark.parametrize("family", sorted(DIRECTED))
@pytest.mark.parametrize("method", GPU_METHODS + ["cpu"])
def test_directed_depths_equal_scipy(method, family):
    graph = DIRECTED[family]
    source = int(np.argmax(np.diff(graph.indptr)))  # a source with out-edges
    depth, parent = bfs.bfs(graph, source, method=method, parents=True, directed=True)
    assert_valid_search(graph, source, depth, parent, directed=True)
    if family != "kronecker":
        assert (depth == -1).any()  # some vertices are reachable only against the edges' direction


@pytest.mark.parametrize("method", bfs.METHODS)
def test_directed_chain_is_one_way(method):
    depth = bfs.bfs(data.chain(5, directed=True), 2, method=method)
    np.testing.assert_array_equal(depth, [-1, -1, 0, 1, 2])


@pytest.mark.parametrize("method", bfs.METHODS)
def test_isolated_source_reaches_nothing(method):
    graph = data.from_edges([1, 2], [2, 3], 5)  # vertex 0 has no edge
    depth, parent = bfs.bfs(graph, 0, method=method, parents=True)
    np.testing.assert_array_equal(depth, [0, -1, -1, -1, -1])
    np.testing.assert_array_equal(parent, [0, -1, -1, -1, -1])


@pytest.mark.parametrize("method", bfs.METHODS)
def test_single_vertex_and_no_edges(method):
    depth, parent = bfs.bfs(sp.csr_matrix((1, 1), dtype=np.int8), 0, method=method, parents=True)
    np.testing.assert_array_equal(depth, [0])
    np.testing.assert_array_equal(parent, [0])
    depth = bfs.bfs(sp.csr_matrix((4, 4), dtype=np.int8), 3, method=method)
    np.testing.assert_array_equal(depth, [-1, -1, -1, 0])


@pytest.mark.parametrize("method", GPU_METHODS)
def test_sizes_around_the_block(method):
    """Frontiers and edge lists of 31, 32 and 33 elements against blocks of 32 threads."""
    for n in (pick(sim=32, gpu=256), pick(sim=33, gpu=257)):
        graph = data.star(n)  # n - 1 leaves: frontier n - 1, edge list n - 1
        run = bfs.traverse(graph, 0, method, directed=False)
        np.testing.assert_array_equal(run.depth, bfs.bfs_reference(graph, 0, directed=False))


def test_explicit_zeros_are_edges_like_in_scipy():
    graph = sp.csr_matrix((np.array([0, 5], np.int8), np.array([1, 2]), np.array([0, 1, 2, 2])), shape=(3, 3))
    assert graph.nnz == 2
    np.testing.assert_array_equal(bfs.bfs(graph, 0, method="frontier_atomic"), [0, 1, 2])


def test_other_sparse_formats_are_accepted():
    graph = data.grid_2d(2, 3)
    expected = bfs.bfs_reference(graph, 0)
    for converted in (graph.tocoo(), graph.tocsc(), sp.csr_array(graph), graph.astype(np.float64)):
        np.testing.assert_array_equal(bfs.bfs(converted, 0, method="cpu"), expected)


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("directed", [True, False])
def test_parallel_cpu_bfs_equals_scipy(family, directed):
    graph = FAMILIES[family]
    source = int(np.argmax(np.diff(graph.indptr)))
    depth, parent = bfs.bfs_cpu_parallel(graph, source, directed=directed)
    assert_valid_search(graph, source, depth, parent, directed=directed)


def test_parallel_cpu_bfs_goes_bottom_up_on_a_power_law_graph():
    """Same depths whichever direction each level takes: the hub's level is large enough to switch."""
    graph = data.kronecker(9, 16, seed=4)
    hub = int(np.argmax(np.diff(graph.indptr)))
    depth, parent = bfs.bfs_cpu_parallel(graph, hub, directed=False)
    assert_valid_search(graph, hub, depth, parent, directed=False)


def test_scipy_peer_gives_the_same_depths_and_a_valid_tree():
    graph = data.kronecker(7, 8, seed=9)
    depth, parent = bfs.bfs_scipy(graph, 5, directed=False)
    assert_valid_search(graph, 5, depth, parent, directed=False)
