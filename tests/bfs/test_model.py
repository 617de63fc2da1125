"""Counting models: the lane efficiency of the frontier kernels, and the work traverse reports.

The kernels carry no counters: :func:`course_lib.bfs.model.edges_examined` derives the edges examined from
the depths and the graph, and :func:`course_lib.bfs.profiling.measure_search` replays each
level under the simulator's profiler and counts the lanes that ran the line reading an
edge's neighbour and the lines storing a depth.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from course_lib import bfs
from course_lib.bfs import data, model
from course_lib.bfs.profiling import STEPS, measure_level, measure_search


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


GPU_METHODS = ["edge_quadratic", "frontier_atomic", "frontier_scan", "direction_optimizing"]

#: (graph, source, directed): isolated vertices, a chain both ways, a star from its centre and a
#: leaf, a graph without edges, one vertex, a multigraph with self-loops, a power-law graph.
AWKWARD = {
    "isolated_vertices": (data.from_edges([1, 2, 2], [2, 3, 4], 7), 1, False),
    "isolated_source": (data.from_edges([1, 2], [2, 3], 5), 0, True),
    "chain": (data.chain(6), 0, False),
    "one_way_chain_from_middle": (data.chain(7, directed=True), 3, True),
    "star_centre": (data.star(9), 0, False),
    "star_leaf": (data.star(9), 4, False),
    "no_edges": (sp.csr_matrix((4, 4), dtype=np.int8), 2, False),
    "one_vertex": (sp.csr_matrix((1, 1), dtype=np.int8), 0, True),
    "loops_and_duplicates": (data.with_self_loops_and_duplicates(data.random_graph(9, 2, seed=4, directed=True)), 0,
                             True),
    "kronecker": (data.kronecker(5, 4, seed=3), 0, False),
}


@pytest.mark.parametrize("name", sorted(AWKWARD))
@pytest.mark.parametrize("method", GPU_METHODS)
def test_host_counts_equal_the_profilers(method, name):
    graph, source, directed = AWKWARD[name]
    run, measured = measure_search(graph, source, method, directed=directed)
    np.testing.assert_array_equal(run.depth, bfs.bfs_reference(graph, source, directed=directed))
    assert len(measured) == run.iterations
    assert run.edges_examined == [m.edges_examined for m in measured]
    writes = [m.depth_writes for m in measured]
    if method == "edge_quadratic":
        # Racing threads may all write a vertex: at least one write per vertex, at most one per edge.
        assert all(r <= w <= e for r, w, e in zip(run.newly_reached, writes, run.edges_examined))
    else:
        assert writes == run.newly_reached  # each vertex claimed exactly once


@pytest.mark.parametrize("name", ["chain", "one_way_chain_from_middle", "star_leaf", "loops_and_duplicates",
                                  "kronecker"])
def test_bottom_up_count_at_every_level(name):
    """The early-exit count, level by level, whether or not a search would go bottom-up there."""
    graph, source, directed = AWKWARD[name]
    g = bfs.as_graph(graph, directed=directed)
    depth = bfs.bfs_reference(g, source)
    for level in range(depth.max() + 1):
        assert model.bottom_up_edges(g, depth, level) == measure_level(g, depth, level, "bottom_up").edges_examined


def test_bottom_up_count_by_hand():
    """Chain 0-1-2-3-4 after level 1 (depths 0, 1): vertex 2 finds 1 first, 3 and 4 scan their whole lists."""
    g = bfs.as_graph(data.chain(5), directed=False)
    depth = np.array([0, 1, 2, 3, 4])
    assert model.bottom_up_edges(g, depth, 1) == 1 + 2 + 1
    assert model.bottom_up_edges(g, depth, 0) == 1 + 2 + 2 + 1  # vertex 1 finds 0 first
    assert model.frontier_edges(g, depth, 1) == 2 and model.frontier_edges(g, depth, 4) == 1


def test_measuring_rejects_what_has_no_kernel():
    graph = data.chain(4)
    with pytest.raises(ValueError, match="method must be one of the GPU methods"):
        measure_search(graph, 0, "cpu")
    depth = bfs.bfs(graph, 0, method="cpu")
    with pytest.raises(ValueError, match="step must be one of"):
        measure_level(graph, depth, 0, "top_down")
    assert set(STEPS) == {"edge_quadratic", "frontier_atomic", "frontier_scan", "bottom_up"}
