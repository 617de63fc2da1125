"""Profiling one level of a search in the simulator: SIMT efficiency and atomics of the frontier kernels.

The state before a level is rebuilt from the depths of a finished search, so any level
can be replayed under :func:`course_lib.sim.profile` with the kernel of either
top-down design.
"""

from __future__ import annotations

import numpy as np

from .data import as_graph

__all__ = ["LEVEL_KERNELS", "level_launch", "profile_level"]

#: The expansion kernel each top-down method runs at every level.
LEVEL_KERNELS = {"frontier_atomic": "bfs_frontier_atomic_kernel", "frontier_scan": "expand_frontier_kernel"}


def level_launch(graph, depth, level, method="frontier_atomic", block=32):
    """The launch that expands ``level`` with ``method``'s expansion kernel, from the state before it.

    Parameters
    ----------
    graph : scipy.sparse matrix of shape (V, V) or Graph
    depth : ndarray of shape (V,), int
        Depths of a finished search of ``graph``.
    level : int
        0 <= level <= max depth.
    method : {"frontier_atomic", "frontier_scan"}
        ``"frontier_atomic"``: one thread per frontier vertex (``bfs_frontier_atomic_kernel``);
        ``"frontier_scan"``: one thread per frontier edge (``expand_frontier_kernel``).
    block : int
        Threads per block.

    Returns
    -------
    kernel, griddim, blockdim, args
        Ready for ``kernel[griddim, blockdim](*args)``, :func:`course_lib.sim.profile`
        or :func:`course_lib.sim.check`; ``args`` are NumPy arrays and scalars.
    """
    from . import kernels

    if method not in LEVEL_KERNELS:
        raise ValueError(f"method must be one of {sorted(LEVEL_KERNELS)}, got {method!r}")
    g = as_graph(graph)
    depth = np.asarray(depth, dtype=np.int32)
    if depth.shape != (g.n_vertices,):
        raise ValueError(f"depth must have shape ({g.n_vertices},), got {depth.shape}")
    if not 0 <= level <= depth.max():
        raise ValueError(f"level must be between 0 and the maximum depth {depth.max()}, got {level}")
    frontier = np.flatnonzero(depth == level).astype(np.int32)
    before = np.where(depth <= level, depth, -1).astype(np.int32)
    parent = np.full(g.n_vertices, -1, np.int32)  # the kernels only write parents
    work = np.zeros(2, np.int64)
    size = np.int32(frontier.size)
    if method == "frontier_atomic":
        args = (g.indptr, g.indices, frontier, size, np.int32(level), before, parent,
                np.zeros(g.n_vertices, np.int32), np.zeros(1, np.int32), work)
        return getattr(kernels, LEVEL_KERNELS[method]), -(-frontier.size // block), block, args
    degrees = g.degrees[frontier]
    offsets = (np.cumsum(degrees) - degrees).astype(np.int32)
    n_candidates = int(degrees.sum())
    args = (g.indptr, g.indices, frontier, size, offsets, np.int32(n_candidates), before,
            np.full(g.n_vertices, -1, np.int32), np.zeros(max(n_candidates, 1), np.int32),
            np.zeros(max(n_candidates, 1), np.int32), work)
    return getattr(kernels, LEVEL_KERNELS[method]), max(1, -(-n_candidates // block)), block, args


def profile_level(graph, depth, level, method="frontier_atomic", block=32):
    """Profile one level's expansion in the simulator (:func:`course_lib.sim.profile`).

    Parameters as in :func:`level_launch`.

    Returns
    -------
    course_lib.sim.profile.ProfileReport
        ``.total.simt_efficiency``, ``.total.atomics``, per-line counts.
    """
    from ..sim import profile

    kernel, grid, threads, args = level_launch(graph, depth, level, method, block)
    return profile(kernel, grid, threads, *args)
