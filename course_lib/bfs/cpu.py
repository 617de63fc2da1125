"""Fast CPU BFS, compiled with Numba: a queue BFS on one core, and a direction-optimising BFS on all cores.

:func:`bfs_cpu` walks a FIFO queue, so each vertex and each edge is touched once:
O(V + E) work with sequential reads of the adjacency lists. :func:`bfs_cpu_parallel`
is Beamer's direction-optimising BFS (the CPU algorithm that bottom-up search comes
from): serial top-down levels while the frontier is small, bottom-up levels over all
cores (``prange``) while it is large. They are the CPU side of the unit's "GPU vs CPU"
figures, next to SciPy's :func:`scipy.sparse.csgraph.breadth_first_order` (also
compiled); the benchmark measures all three and compares against the fastest.
"""

from __future__ import annotations

import numba
import numpy as np

from .._docs import fill_doc
from .._validate import check_flag

from .data import DEPTH_PARENT_RETURNS, SEARCH_PARAMETERS, as_graph, check_source

__all__ = ["bfs_cpu", "bfs_cpu_parallel"]

#: Beamer's switches, as in the GPU version (:data:`course_lib.bfs.api.ALPHA` / ``BETA``).
ALPHA = 14
BETA = 24


@numba.njit(cache=True)
def _bfs_queue(indptr, indices, source, depth, parent, level_sizes, level_edges):
    """Queue BFS; returns the number of levels (iterations) it expanded."""
    queue = np.empty(depth.shape[0], dtype=np.int32)
    depth[source] = 0
    parent[source] = source
    queue[0] = source
    head = 0
    tail = 1
    levels = 0
    while head < tail:
        # Everything between head and the current tail is one level.
        level_end = tail
        edges = 0
        level_sizes[levels] = level_end - head
        while head < level_end:
            u = queue[head]
            head += 1
            next_depth = depth[u] + 1
            for k in range(indptr[u], indptr[u + 1]):
                v = indices[k]
                if depth[v] < 0:
                    depth[v] = next_depth
                    parent[v] = u
                    queue[tail] = v
                    tail += 1
            edges += indptr[u + 1] - indptr[u]
        level_edges[levels] = edges
        levels += 1
    return levels


@fill_doc(parameters=SEARCH_PARAMETERS, returns=DEPTH_PARENT_RETURNS)
def bfs_cpu(graph, source, *, directed=True, return_levels=False):
    """Breadth-first search on the CPU (compiled, one core, linear work).

    {parameters}
    return_levels : bool
        Also return the frontier size and the edges examined per level.

    {returns}
    frontier_sizes, edges_per_level : ndarray of shape (levels,), int64
        Only with ``return_levels=True``.
    """
    g = as_graph(graph, directed=directed)
    return _bfs_checked(g, check_source(source, g.n_vertices), check_flag(return_levels, "return_levels"))


def _bfs_checked(g, s, return_levels=False):
    """:func:`bfs_cpu` of a :class:`~course_lib.bfs.data.Graph` and a checked source (for
    :func:`course_lib.bfs.traverse`, which checks them once)."""
    depth = np.full(g.n_vertices, -1, dtype=np.int32)
    parent = np.full(g.n_vertices, -1, dtype=np.int32)
    sizes = np.zeros(g.n_vertices, dtype=np.int64)
    edges = np.zeros(g.n_vertices, dtype=np.int64)
    levels = _bfs_queue(g.indptr, g.indices, np.int32(s), depth, parent, sizes, edges)
    if return_levels:
        return depth, parent, sizes[:levels], edges[:levels]
    return depth, parent


@numba.njit(parallel=True, cache=True)
def _bottom_up_level(in_indptr, in_indices, level, depth, parent):
    """Every unvisited vertex looks for an in-neighbour of depth ``level``; returns how many found one.

    A vertex's own thread is the only writer of its depth and parent; another thread
    reading that depth sees -1 or ``level + 1``, never ``level``.
    """
    found = 0
    for v in numba.prange(depth.shape[0]):
        if depth[v] < 0:
            for k in range(in_indptr[v], in_indptr[v + 1]):
                u = in_indices[k]
                if depth[u] == level:
                    depth[v] = level + 1
                    parent[v] = u
                    found += 1
                    break
    return found


@numba.njit(cache=True)
def _top_down_level(indptr, indices, frontier, level, depth, parent, next_frontier):
    """Serial expansion of one level; returns the size of the next frontier."""
    size = 0
    for i in range(frontier.shape[0]):
        u = frontier[i]
        for k in range(indptr[u], indptr[u + 1]):
            v = indices[k]
            if depth[v] < 0:
                depth[v] = level + 1
                parent[v] = u
                next_frontier[size] = v
                size += 1
    return size


@fill_doc(parameters=SEARCH_PARAMETERS, returns=DEPTH_PARENT_RETURNS)
def bfs_cpu_parallel(graph, source, *, directed=True):
    """Direction-optimising BFS on all CPU cores (Beamer, Asanovic & Patterson, SC 2012).

    Top-down (serial, linear work) while the frontier's arcs are at most the unexplored
    arcs / 14; bottom-up (parallel over vertices) while the frontier holds at least
    V / 24 vertices.

    {parameters}

    {returns}
    """
    g = as_graph(graph, directed=directed)
    s = check_source(source, g.n_vertices)
    in_indptr, in_indices = g.in_edges
    n = g.n_vertices
    depth = np.full(n, -1, dtype=np.int32)
    parent = np.full(n, -1, dtype=np.int32)
    depth[s] = 0
    parent[s] = s
    frontier = np.array([s], dtype=np.int32)
    next_frontier = np.empty(n, dtype=np.int32)
    degrees = g.degrees
    unexplored_arcs = g.n_arcs
    size, level, bottom_up = 1, 0, False
    while size > 0:
        if bottom_up and size < n / BETA:
            bottom_up = False
            frontier = np.flatnonzero(depth == level).astype(np.int32)
        if not bottom_up:
            frontier_arcs = int(degrees[frontier].sum())
            unexplored_arcs -= frontier_arcs
            bottom_up = frontier_arcs > max(unexplored_arcs, 0) / ALPHA and frontier_arcs > 0
        if bottom_up:
            size = _bottom_up_level(in_indptr, in_indices, np.int32(level), depth, parent)
        else:
            size = _top_down_level(g.indptr, g.indices, frontier, np.int32(level), depth, parent, next_frontier)
            frontier = next_frontier[:size].copy()
        level += 1
    return depth, parent
