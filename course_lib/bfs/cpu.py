"""Fast CPU BFS: a compiled (Numba) queue-based traversal of the CSR structure.

One core walks a FIFO queue, so each vertex and each edge is touched once: O(V + E)
work with sequential reads of the adjacency lists. It is the CPU baseline of the
unit's "GPU vs CPU" figures, next to SciPy's
:func:`scipy.sparse.csgraph.breadth_first_order` (also compiled; the benchmark
measures both and compares against the faster one).
"""

from __future__ import annotations

import numba
import numpy as np

from .graph import as_graph, check_source

__all__ = ["bfs_cpu"]


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


def bfs_cpu(graph, source, *, directed=True, return_levels=False):
    """Breadth-first search on the CPU (compiled, one core, linear work).

    Parameters
    ----------
    graph : scipy.sparse matrix of shape (V, V) or Graph
    source : int
    directed : bool
    return_levels : bool
        Also return the frontier size and the edges examined per level.

    Returns
    -------
    depth : ndarray of shape (V,), int32
        -1 where unreachable.
    parent : ndarray of shape (V,), int32
        The source is its own parent; -1 where unreachable.
    frontier_sizes, edges_per_level : ndarray of shape (levels,), int64
        Only with ``return_levels=True``.
    """
    g = as_graph(graph, directed=directed)
    s = check_source(source, g.n_vertices)
    depth = np.full(g.n_vertices, -1, dtype=np.int32)
    parent = np.full(g.n_vertices, -1, dtype=np.int32)
    sizes = np.zeros(g.n_vertices, dtype=np.int64)
    edges = np.zeros(g.n_vertices, dtype=np.int64)
    levels = _bfs_queue(g.indptr, g.indices, np.int32(s), depth, parent, sizes, edges)
    if return_levels:
        return depth, parent, sizes[:levels], edges[:levels]
    return depth, parent
