"""Profiling one level: SIMT efficiency and atomics of the two top-down designs."""

import numpy as np
import pytest

from course_lib import bfs
from course_lib.bfs import data
from course_lib.bfs.profiling import level_launch, measure_level, profile_level


def test_a_hub_serialises_the_atomic_design_but_not_the_scan_design():
    """Does one thread per vertex leave lanes idle on a hub? And one thread per edge not?"""
    star = bfs.as_graph(data.star(40), directed=False)
    depth = bfs.bfs(star, 0, method="cpu")
    atomic = profile_level(star, depth, 0, "frontier_atomic")
    assert atomic.line("cuda.atomic.cas").atomics == 39  # one claim per leaf, all by the hub's thread
    assert atomic.line("next_frontier[slot] = v").global_store_requests == 39  # one lane: one request per leaf
    assert atomic.line("v = indices[k]").simt_efficiency == pytest.approx(1 / 32)
    scan = profile_level(star, depth, 0, "frontier_scan")
    assert scan.total.atomics == 0  # the scan design needs none
    assert scan.line("candidates[k] = v").simt_efficiency == pytest.approx(39 / 64)


@pytest.mark.parametrize("method", ["frontier_atomic", "frontier_scan"])
def test_replayed_level_discovers_the_next_level(method):
    graph = bfs.as_graph(data.kronecker(5, 4, seed=1), directed=False)
    depth = bfs.bfs(graph, 0, method="cpu")
    kernel, grid, block, args = level_launch(graph, depth, 1, method)
    kernel[grid, block](*args)
    if method == "frontier_atomic":
        before, next_frontier, next_size = args[5], args[7], args[8]
        assert sorted(next_frontier[:next_size[0]]) == list(np.flatnonzero(depth == 2))
        np.testing.assert_array_equal(before, np.where(depth <= 2, depth, -1))


def test_measured_level_counts_the_frontiers_edges():
    graph = bfs.as_graph(data.kronecker(5, 4, seed=1), directed=False)
    depth = bfs.bfs(graph, 0, method="cpu")
    for method in ("frontier_atomic", "frontier_scan"):
        measured = measure_level(graph, depth, 1, method)
        assert measured.edges_examined == int(graph.degrees[depth == 1].sum())
        assert measured.depth_writes == int((depth == 2).sum())
        assert [r.kernel for r in measured.reports] == (
            ["bfs_frontier_atomic_kernel"] if method == "frontier_atomic"
            else ["expand_frontier_kernel", "claim_candidates_kernel"])


def test_level_launch_rejects_bad_arguments():
    graph = data.chain(4)
    depth = bfs.bfs(graph, 0, method="cpu", directed=True)
    with pytest.raises(ValueError, match="method must be one of"):
        level_launch(graph, depth, 0, "edge_quadratic")
    with pytest.raises(ValueError, match="level must be between 0 and the maximum depth 3"):
        level_launch(graph, depth, 4)
    with pytest.raises(ValueError, match="depth must have shape"):
        level_launch(graph, depth[:2], 0)
