"""Figures of Unit 5 (matplotlib, imported on first use): dendrograms, bundles in 3-D, stage times."""

from __future__ import annotations

import numpy as np

from ._dendrogram import Dendrogram
from .model import amdahl_speedup

__all__ = ["plot_amdahl", "plot_bundles", "plot_dendrogram", "plot_precision", "plot_stage_times"]


def _axes(ax, projection=None, figsize=(6, 4)):
    import matplotlib.pyplot as plt

    if ax is not None:
        return ax
    fig = plt.figure(figsize=figsize)
    return fig.add_subplot(111, projection=projection)


def plot_dendrogram(tree: Dendrogram, ax=None, *, n_clusters=None, max_leaves=60, labels=None):
    """Draw the tree with SciPy's ``dendrogram`` (distance = c - affinity, c the largest merge affinity).

    Parameters
    ----------
    tree : Dendrogram
    ax : matplotlib Axes, optional
    n_clusters : int, optional
        Colour the branches of this many clusters and draw the cut.
    max_leaves : int
        Trees with more leaves are truncated to their top ``max_leaves`` clusters.
    labels : sequence of str, optional

    Returns
    -------
    dict
        SciPy's dendrogram output (``ivl``, ``leaves``, ...).
    """
    from scipy.cluster.hierarchy import dendrogram

    ax = _axes(ax, figsize=(8, 4))
    z = tree.linkage()
    threshold = None
    if n_clusters is not None and 1 <= n_clusters < tree.n_elements and z.size:
        threshold = float(np.sort(z[:, 2])[-n_clusters] + np.sort(z[:, 2])[-n_clusters - 1]) / 2 \
            if n_clusters < z.shape[0] else float(z[0, 2]) / 2
        ax.axhline(threshold, color="k", ls="--", lw=1)
    truncate = {"truncate_mode": "lastp", "p": max_leaves} if tree.n_elements > max_leaves else {}
    out = dendrogram(z, ax=ax, color_threshold=threshold, labels=labels, no_labels=tree.n_elements > max_leaves,
                     **truncate)
    ax.set_ylabel("distance = c - affinity")
    ax.set_title(f"{tree.method}: {tree.n_elements} elements, {tree.n_merges} merges")
    return out


def plot_bundles(fiber_graph, fiber_labels, ax=None, *, title=None, max_fibers=600):
    """Fibers in 3-D, coloured by bundle.

    Parameters
    ----------
    fiber_graph : FiberGraph or Fibers
    fiber_labels : ndarray of shape (F,)
        Bundle of each fiber (e.g. :func:`~course_lib.hac.fiber_bundles`).
    ax : 3-D matplotlib Axes, optional
    """
    import matplotlib.pyplot as plt

    fibers = getattr(fiber_graph, "fibers", fiber_graph)
    labels = np.asarray(fiber_labels)
    if labels.shape != (fibers.n_fibers,):
        raise ValueError(f"fiber_labels must have shape ({fibers.n_fibers},), got {labels.shape}")
    ax = _axes(ax, projection="3d", figsize=(6, 5))
    colours = plt.get_cmap("tab10" if labels.max(initial=0) < 10 else "tab20")
    for f in range(min(fibers.n_fibers, max_fibers)):
        s = fibers.streamlines[f]
        ax.plot(s[:, 0], s[:, 1], s[:, 2], color=colours(int(labels[f]) % colours.N), lw=0.8)
    ax.set(xlabel="x (mm)", ylabel="y (mm)", zlabel="z (mm)")
    ax.set_title(title or f"{fibers.name}: {len(np.unique(labels))} bundles")
    return ax


def plot_stage_times(times: dict, ax=None, *, title="time per stage", unit="s"):
    """Grouped bars: seconds per stage for each version.

    Parameters
    ----------
    times : dict
        ``{version label: {stage: seconds}}``.
    """
    from .reference import STAGES

    ax = _axes(ax, figsize=(7, 3.5))
    labels = list(times)
    width = 0.8 / max(len(labels), 1)
    x = np.arange(len(STAGES))
    for n, label in enumerate(labels):
        ax.bar(x + n * width, [times[label].get(s, 0.0) for s in STAGES], width, label=label)
    ax.set_xticks(x + width * (len(labels) - 1) / 2, STAGES, rotation=20)
    ax.set_ylabel(unit)
    ax.set_title(title)
    ax.legend(fontsize=8)
    return ax


def plot_precision(study: dict, ax=None):
    """Relative height error of float32 against float64, merge by merge (the thesis's Figure 6)."""
    ax = _axes(ax, figsize=(7, 3.5))
    rel = np.asarray(study["relative_error"])
    merges = np.arange(rel.size)
    shown = rel > 0
    ax.semilogy(merges[shown], rel[shown], ".", ms=3)
    ax.set(xlabel="merge (the top of the tree on the right)", ylabel="relative height error",
           title=f"float32 vs float64: max {study['max_relative_height_error']:.1e}, "
                 f"{study['parents_differing']:.1%} of parents differ")
    return ax


def plot_amdahl(fraction, ax=None, *, max_speedup=1000, label=None):
    """Overall speedup against the speedup of the accelerated part, with the limit 1 / (1 - f)."""
    ax = _axes(ax, figsize=(6, 3.5))
    s = np.logspace(0, np.log10(max_speedup), 200)
    ax.semilogx(s, amdahl_speedup(fraction, s), label=label or f"f = {fraction:.3f}")
    if fraction < 1:
        ax.axhline(1 / (1 - fraction), color="k", ls="--", lw=1)
    ax.set(xlabel="speedup of the accelerated part", ylabel="overall speedup", title="Amdahl's law")
    ax.legend()
    return ax
