"""Counting models of Unit 3: how evenly the lanes of a warp are loaded."""

from __future__ import annotations

import numpy as np

__all__ = ["level_warp_efficiency", "warp_efficiency"]


def warp_efficiency(loop_counts, warp_size=32):
    """Fraction of lane-iterations doing useful work when each thread loops its own count.

    The lanes of a warp run in lockstep, so a warp takes as many steps as its busiest
    lane: efficiency = sum(counts) / (warp_size * sum over warps of max(count)).

    Parameters
    ----------
    loop_counts : array_like of shape (T,), integers >= 0
        Iterations of thread 0, 1, ... (threads ``w * warp_size`` to ``(w + 1) * warp_size - 1``
        form warp ``w``; the last warp is padded with idle lanes).
    warp_size : int

    Returns
    -------
    float
        In [0, 1]; 1.0 when there is no work at all.
    """
    counts = np.asarray(loop_counts, dtype=np.int64).ravel()
    if counts.size and counts.min() < 0:
        raise ValueError("loop counts must be >= 0")
    if warp_size < 1:
        raise ValueError(f"warp_size must be >= 1, got {warp_size}")
    padded = np.zeros(-(-counts.size // warp_size) * warp_size, dtype=np.int64)
    padded[:counts.size] = counts
    steps = padded.reshape(-1, warp_size).max(axis=1).sum() * warp_size
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
    depth = np.asarray(depth)
    return [warp_efficiency(graph.degrees[depth == d], warp_size) for d in range(int(depth.max()) + 1)]
