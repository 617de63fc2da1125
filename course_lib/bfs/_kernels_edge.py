"""The edge-parallel BFS of the lesson ("try #1"): the initialisation and one thread per edge every iteration.

Conventions in :mod:`course_lib.bfs.kernels`.
"""

from __future__ import annotations

from numba import cuda

from ..registry import course_kernel
from ._kernels_common import I32 as _I32
from ._kernels_common import LESSON, UNVISITED

__all__ = ["bfs_edge_quadratic_kernel", "bfs_init_kernel"]


@course_kernel(f"void(int32, {_I32}, {_I32})", lesson=LESSON)
def bfs_init_kernel(source, depth, parent):
    """Map over the vertices: depth 0 at the source, ``UNVISITED`` elsewhere.

    Parameters
    ----------
    source : int32
        The start vertex, 0 <= source < V.
    depth, parent : int32 arrays of shape (V,)
        Outputs. The source becomes its own parent, every other parent -1.

    Launch with any 1-D grid covering V threads.
    """
    v = cuda.grid(1)
    if v < depth.shape[0]:
        if v == source:
            depth[v] = 0
            parent[v] = source
        else:
            depth[v] = UNVISITED
            parent[v] = -1


@course_kernel(f"void({_I32}, {_I32}, int32, int32, {_I32}, {_I32}, {_I32})", lesson=LESSON)
def bfs_edge_quadratic_kernel(edge_u, edge_v, both_directions, current, depth, parent, done):
    """One iteration of "BFS try #1": one thread per edge, every edge every iteration.

    If one end of the edge has depth ``current`` and the other end is unvisited, the
    unvisited end gets depth ``current + 1`` and ``done[0]`` is cleared so that the
    host runs another iteration.

    Two threads may reach the same vertex in one iteration: both write the same depth
    (``current + 1``) and a valid parent, so the race is benign. A thread that reads a
    depth another thread is writing sees either ``UNVISITED`` or ``current + 1``,
    neither of which equals ``current``, so a vertex is never expanded in the
    iteration that discovers it.

    Parameters
    ----------
    edge_u, edge_v : int32 arrays of shape (E,)
        The edges, ``edge_u[e] -> edge_v[e]``.
    both_directions : int32
        1 for an undirected graph: the edge is also followed from ``edge_v[e]`` to
        ``edge_u[e]`` (the source's "converse case"); 0 for a directed graph.
    current : int32
        The depth being expanded in this iteration (0, 1, 2, ...).
    depth, parent : int32 arrays of shape (V,)
        Updated in place.
    done : int32 array of shape (1,)
        Set to 1 by the host before the launch; any thread that writes a depth sets it to 0.

    Launch with a 1-D grid covering E threads (at least one block: a launch cannot be empty).
    """
    e = cuda.grid(1)
    if e < edge_u.shape[0]:
        u = edge_u[e]
        v = edge_v[e]
        depth_u = depth[u]
        depth_v = depth[v]
        if depth_u == current and depth_v == UNVISITED:
            depth[v] = current + 1
            parent[v] = u
            done[0] = 0
        elif both_directions != 0 and depth_v == current and depth_u == UNVISITED:
            depth[u] = current + 1
            parent[u] = v
            done[0] = 0
