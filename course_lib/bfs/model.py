"""Counting models of Unit 3: how evenly the lanes of a warp are loaded, and the work of a search.

The kernels of :mod:`course_lib.bfs.kernels` do only the search. What each iteration
examined and wrote follows from its result, the graph and the design of the kernel
that ran it:

- the edge-parallel "try #1" examines every edge of its edge list at every iteration
  (:attr:`~course_lib.bfs.data.Graph.edge_list`: each arc of a directed graph, each
  undirected edge once);
- a top-down frontier step (either design) examines the out-arcs of the frontier, the
  vertices of the level's depth;
- a bottom-up step examines, for each vertex still unvisited when it starts, its
  in-arcs in stored order up to and including the first one from the frontier (all of
  them if none is).

Each level writes the depth of the vertices it reaches once, except in try #1, where
threads racing to the same vertex may all write it: those duplicate writes depend on
the timing and cannot be derived; the profiler measures them
(:func:`course_lib.bfs.profiling.measure_level`). The tests check every count here
against the profiler's per-line counts on the kernels themselves.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_array, check_positive_int
from .data import Graph

__all__ = ["bottom_up_edges", "edges_examined", "frontier_edges", "level_warp_efficiency", "newly_reached",
           "warp_efficiency"]


def warp_efficiency(loop_counts, warp_size=32):
    """Fraction of lane-iterations doing useful work when each thread loops its own count.

    The lanes of a warp run in lockstep, so a warp takes as many steps as its busiest
    lane and its other lanes idle meanwhile: efficiency = sum(counts) /
    sum over warps of (lanes x max(count)). Only the lanes that have a thread count:
    the measure is about unequal loops (degrees), not about a last, partly filled warp.

    Parameters
    ----------
    loop_counts : array_like of shape (T,), integers >= 0
        Iterations of thread 0, 1, ... (threads ``w * warp_size`` to
        ``(w + 1) * warp_size - 1`` form warp ``w``).
    warp_size : int

    Returns
    -------
    float
        In [0, 1]; 1.0 when there is no work at all.
    """
    counts = check_array(loop_counts, "loop_counts", ndim=1)
    if counts.size and counts.dtype.kind not in "iu":
        raise ValueError(f"loop_counts must have an integer dtype, got dtype {counts.dtype}")
    counts = counts.astype(np.int64)
    warp_size = check_positive_int(warp_size, "warp_size")
    if counts.size and counts.min() < 0:
        raise ValueError(f"loop_counts must be >= 0, got {counts.min()}")
    if warp_size < 1:
        raise ValueError(f"warp_size must be >= 1, got {warp_size}")
    starts = np.arange(0, counts.size, warp_size)
    if not starts.size:
        return 1.0
    lanes = np.minimum(starts + warp_size, counts.size) - starts
    steps = int((np.maximum.reduceat(counts, starts) * lanes).sum())
    return float(counts.sum() / steps) if steps else 1.0


def level_warp_efficiency(graph, depth, warp_size=32):
    """Warp efficiency of the thread-per-frontier-vertex expansion, level by level.

    Thread i of level d scans the adjacency list of the i-th vertex of depth d (in
    vertex order; the atomic kernel's order differs from run to run, the spread of
    degrees within a level is what matters).

    Parameters
    ----------
    graph : Graph
    depth : ndarray of shape (V,), int
        Depths of a search of ``graph``.
    warp_size : int

    Returns
    -------
    list of float
        One value per level 0..max depth.
    """
    from .data import as_graph

    graph = as_graph(graph, directed=True)
    depth = check_array(depth, "depth", shape=(graph.n_vertices,), dtype="iu")
    warp_size = check_positive_int(warp_size, "warp_size")
    return [warp_efficiency(graph.degrees[depth == d], warp_size) for d in range(int(depth.max(initial=-1)) + 1)]


def frontier_edges(graph: Graph, depth, level: int) -> int:
    """Arcs a top-down step examines at ``level``: the out-degrees of the vertices of that depth.

    Parameters
    ----------
    graph : Graph
    depth : ndarray of shape (V,), int
        Depths of the finished search (-1 where unreachable).
    level : int
    """
    return int(graph.degrees[np.asarray(depth) == level].sum())


def bottom_up_edges(graph: Graph, depth, level: int) -> int:
    """In-arcs a bottom-up step examines at ``level``, each unvisited vertex stopping at its first parent.

    A vertex is unvisited when the step starts if its final depth is -1 or above
    ``level``; a scanned in-neighbour is a parent if its depth is ``level`` (it had that
    depth before the step: a step writes only ``level + 1``).

    Parameters
    ----------
    graph : Graph
    depth : ndarray of shape (V,), int
        Depths of the finished search.
    level : int
    """
    depth = np.asarray(depth)
    in_indptr, in_indices = graph.in_edges
    starts, stops = in_indptr[:-1].astype(np.int64), in_indptr[1:].astype(np.int64)
    unvisited = (depth < 0) | (depth > level)
    examined = np.where(unvisited, stops - starts, 0)
    # The in-arcs from the frontier, in stored order, and the vertex each belongs to.
    hits = np.flatnonzero(depth[in_indices] == level)
    heads = np.repeat(np.arange(graph.n_vertices), stops - starts)[hits]
    # The arcs are grouped by vertex, so each vertex's first hit is where its run of heads starts.
    vertices, first = np.unique(heads, return_index=True)
    found = unvisited[vertices]
    vertices, first_arc = vertices[found], hits[first[found]]
    examined[vertices] = first_arc - starts[vertices] + 1
    return int(examined.sum())


def edges_examined(graph: Graph, method: str, depth, iterations: int, directions=()) -> list:
    """Edges examined at each iteration of a search by ``method``'s kernels.

    Parameters
    ----------
    graph : Graph
        The graph searched (with its direction).
    method : {"edge_quadratic", "frontier_atomic", "frontier_scan", "direction_optimizing", "frontier_twc", \
"direction_optimizing_twc", "cpu"}
    depth : ndarray of shape (V,), int
        Depths the search produced.
    iterations : int
        Iterations (levels) the host ran.
    directions : sequence of str
        ``"top-down"`` or ``"bottom-up"`` per iteration (``"direction_optimizing"`` only).

    Returns
    -------
    list of int
        One count per iteration.
    """
    if method == "edge_quadratic":
        return [int(graph.edge_list[0].size)] * iterations
    if method in ("direction_optimizing", "direction_optimizing_twc"):
        return [bottom_up_edges(graph, depth, level) if direction == "bottom-up" else
                frontier_edges(graph, depth, level) for level, direction in enumerate(directions)]
    return [frontier_edges(graph, depth, level) for level in range(iterations)]


def newly_reached(depth, iterations: int) -> list:
    """Vertices that got their depth at each iteration: iteration ``i`` reaches the vertices of depth ``i + 1``.

    Parameters
    ----------
    depth : ndarray of shape (V,), int
    iterations : int

    Returns
    -------
    list of int
    """
    depth = np.asarray(depth)
    counts = np.bincount(depth[depth > 0], minlength=iterations + 1)
    return [int(x) for x in counts[1:iterations + 1]]
