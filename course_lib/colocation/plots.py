"""Figures of Unit 8: the points and their grid, and what each GPU version moves and launches."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

__all__ = ["plot_points", "plot_versions"]


def plot_points(points, features, *, r=None, patterns=(), ax=None, max_points=20000):
    """Scatter the instances coloured by feature; optionally the grid of side ``r``.

    Parameters
    ----------
    points : ndarray of shape (N, 2)
    features : ndarray of shape (N,), int
    r : float, optional
        Draw the grid cells (when there are at most 60 x 60 of them).
    patterns : iterable of tuple of int
        Named in the legend title (e.g. the prevalent patterns found).
    max_points : int
        Draw a seeded sample of at most this many points.
    """
    points, features = np.asarray(points), np.asarray(features)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 6))
    if len(points) > max_points:
        keep = np.random.default_rng(0).choice(len(points), max_points, replace=False)
        points, features = points[keep], features[keep]
    cmap = plt.get_cmap("tab10" if features.max(initial=0) < 10 else "tab20")
    for f in np.unique(features):
        sel = features == f
        ax.scatter(points[sel, 0], points[sel, 1], s=8, color=cmap(int(f) % cmap.N), label=f"feature {f}")
    if r is not None and len(points):
        from .model import grid_for

        g = grid_for(points, r)
        if g.n_cols <= 60 and g.n_rows <= 60:
            for i in range(g.n_cols + 1):
                ax.axvline(g.x0 + i * g.cell, color="0.85", lw=0.5, zorder=0)
            for j in range(g.n_rows + 1):
                ax.axhline(g.y0 + j * g.cell, color="0.85", lw=0.5, zorder=0)
    title = "prevalent: " + ", ".join(str(p) for p in patterns) if patterns else None
    ax.legend(loc="upper right", fontsize=7, title=title, title_fontsize=7)
    ax.set_aspect("equal")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    return ax


def plot_versions(rows, *, axes=None):
    """Launches, copies and bytes of each version (rows from ``profiling.measure_versions``)."""
    if axes is None:
        _, axes = plt.subplots(1, 3, figsize=(12, 3.2))
    names = [row["version"].split(":")[0] for row in rows]
    axes[0].bar(names, [row["launches"] for row in rows], color="tab:blue")
    axes[0].set_title("kernel launches")
    axes[1].bar(names, [row["HtoD_count"] for row in rows], label="host to device", color="tab:orange")
    axes[1].bar(names, [row["DtoH_count"] for row in rows], bottom=[row["HtoD_count"] for row in rows],
                label="device to host", color="tab:green")
    axes[1].set_title("copies")
    axes[1].legend(fontsize=7)
    axes[2].bar(names, [(row["HtoD_bytes"] + row["DtoH_bytes"]) / 1024 for row in rows], color="tab:purple")
    axes[2].set_title("bytes copied (KiB)")
    for ax in axes:
        ax.tick_params(axis="x", labelsize=8)
    return axes

