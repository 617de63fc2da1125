"""Counting models of Unit 3: how evenly the lanes of a warp are loaded."""

from __future__ import annotations

import numpy as np

from .._validate import check_array, check_positive_int

__all__ = ["level_warp_efficiency", "warp_efficiency"]


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
