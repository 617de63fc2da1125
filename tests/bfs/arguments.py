"""What each argument of Unit 3's public functions is (for tests/test_bad_inputs.py)."""

import numpy as np

from tests.bad_inputs import NO_ARGUMENTS, Call


def _graph():
    from course_lib.bfs import random_graph

    return random_graph(12, 3.0, seed=1)


def _search():
    return {"graph": _graph(), "source": 0}


def _tree():
    from course_lib.bfs import bfs

    graph = _graph()
    _, parent = bfs(graph, 0, method="cpu", parents=True, directed=False)
    return {"graph": graph, "source": 0, "parent": parent, "directed": False}


ARGUMENTS = {
    "as_graph": Call(lambda: {"graph": _graph(), "directed": False}, graph="sparse+nan", directed="flag"),
    "bfs": Call(lambda: {**_search(), "method": "cpu", "parents": True, "directed": False},
                graph="sparse+nan", source="nonneg_int", method="choice", parents="flag", directed="flag"),
    "bfs_cpu": Call(lambda: {**_search(), "directed": False, "return_levels": True},
                    graph="sparse+nan", source="nonneg_int", directed="flag", return_levels="flag"),
    "bfs_cpu_parallel": Call(lambda: {**_search(), "directed": False}, graph="sparse+nan", source="nonneg_int",
                             directed="flag"),
    "bfs_reference": Call(lambda: {**_search(), "directed": False}, graph="sparse+nan", source="nonneg_int",
                          directed="flag"),
    "bfs_scipy": Call(lambda: {**_search(), "directed": False}, graph="sparse+nan", source="nonneg_int", directed="flag"),
    "chain": Call(lambda: {"n_vertices": 5, "directed": True}, n_vertices="count", directed="flag"),
    "check_parent_tree": Call(_tree, graph="sparse+nan", source="nonneg_int", parent="int_array", directed="flag"),
    "default_block": NO_ARGUMENTS,
    "disconnected": Call(lambda: {"component_sizes": (4, 3), "n_isolated": 2, "seed": 1, "directed": False},
                         n_isolated="nonneg_int", seed="seed", directed="flag"),
    "exclusive_scan": Call(lambda: {"d_values": np.arange(9, dtype=np.int32), "n": 9, "block": 16},
                           n="nonneg_int", block="block?"),
    "from_edges": Call(lambda: {"u": np.array([0, 1, 2]), "v": np.array([1, 2, 3]), "n_vertices": 5,
                                "directed": False},
                       u="index_array", v="index_array", n_vertices="count", directed="flag"),
    "grid_2d": Call(lambda: {"rows": 3, "cols": 4}, rows="count", cols="count"),
    "kronecker": Call(lambda: {"scale": 4, "edge_factor": 2, "seed": 1, "directed": False},
                      scale="count", edge_factor="count", seed="seed", directed="flag"),
    "level_warp_efficiency": Call(lambda: {"graph": _graph(), "depth": np.zeros(12, np.int32), "warp_size": 32},
                                  graph="sparse+nan", warp_size="count"),
    # A parent array of the wrong length is one of the problems it reports, not an error.
    "parent_tree_problems": Call(lambda: {**_tree(), "limit": 3}, graph="sparse+nan", source="nonneg_int",
                                 parent="int_array+empty", directed="flag", limit="count"),
    "random_graph": Call(lambda: {"n_vertices": 10, "average_degree": 2.0, "seed": 1, "directed": False},
                         n_vertices="count", average_degree="nonneg", seed="seed", directed="flag"),
    "real_graph": Call(lambda: {"name": "karate_club"}, name="choice"),
    "star": Call(lambda: {"n_vertices": 6, "center": 2, "directed": False}, n_vertices="count", center="nonneg_int",
                 directed="flag"),
    "traverse": Call(lambda: {**_search(), "method": "frontier_twc", "directed": False, "download": True},
                     graph="sparse+nan", source="nonneg_int", method="choice", directed="flag", download="flag"),
    "warp_efficiency": Call(lambda: {"loop_counts": np.array([1, 4, 0, 2]), "warp_size": 32},
                            loop_counts="index_array+empty", warp_size="count"),
    "with_self_loops_and_duplicates": Call(lambda: {"graph": _graph(), "n_loops": 2, "n_duplicates": 2, "seed": 1},
                                           graph="sparse+nan", n_loops="nonneg_int", n_duplicates="nonneg_int",
                                           seed="seed"),
}
