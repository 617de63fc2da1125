"""Figures of Unit 3: a graph coloured by BFS level, and the measured work of the variants."""

from __future__ import annotations

import numpy as np

from .data import as_graph

__all__ = ["draw_levels", "layout", "plot_work_per_level", "plot_work_vs_size"]

FRONTIER_COLOR = "#d62728"
UNVISITED_COLOR = "#ffffff"


def layout(graph, *, seed=0):
    """2-D vertex positions for drawing a small graph (NetworkX's spring layout, seeded).

    Parameters
    ----------
    graph : scipy.sparse matrix of shape (V, V) or Graph

    Returns
    -------
    ndarray of shape (V, 2), float64
    """
    import networkx as nx

    g = as_graph(graph, directed=False)
    nxg = nx.from_scipy_sparse_array(g.structure())
    pos = nx.spring_layout(nxg, seed=seed)
    return np.array([pos[v] for v in range(g.n_vertices)], dtype=np.float64)


def draw_levels(ax, graph, depth, *, level=None, positions=None, labels=None, directed=False):
    """Draw a small graph with vertices coloured by depth, up to ``level``.

    Vertices of depth < ``level`` are coloured by their depth, the frontier (depth ==
    ``level``) is red with a thick outline, the rest is white (not reached yet).

    Parameters
    ----------
    ax : matplotlib Axes
    graph : scipy.sparse matrix of shape (V, V) or Graph
    depth : ndarray of shape (V,), int
        Final BFS depths (-1 = unreachable).
    level : int, optional
        The level being expanded; default: the whole search.
    positions : ndarray of shape (V, 2), optional
        Default :func:`layout`.
    labels : sequence of str, optional
        Vertex labels (default: ids for graphs of up to 60 vertices).
    directed : bool
        Draw arrows.
    """
    import matplotlib.pyplot as plt

    g = as_graph(graph, directed=directed)
    depth = np.asarray(depth)
    if positions is None:
        positions = layout(g)
    level = int(depth.max()) if level is None else level
    rows = np.repeat(np.arange(g.n_vertices), np.diff(g.indptr))
    for u, v in zip(rows, g.indices):
        if u == v or (not directed and u > v):
            continue
        (x0, y0), (x1, y1) = positions[u], positions[v]
        if directed:
            ax.annotate("", xy=(x1, y1), xytext=(x0, y0),
                        arrowprops=dict(arrowstyle="-|>", color="0.6", lw=0.8, shrinkA=6, shrinkB=6))
        else:
            ax.plot([x0, x1], [y0, y1], color="0.7", lw=0.8, zorder=1)
    cmap = plt.get_cmap("viridis")
    top = max(int(depth.max()), 1)
    colors, edgecolors, widths = [], [], []
    for d in depth:
        if 0 <= d < level:
            colors.append(cmap(d / top))
            edgecolors.append("k")
            widths.append(0.8)
        elif d == level:
            colors.append(FRONTIER_COLOR)
            edgecolors.append("k")
            widths.append(2.0)
        else:
            colors.append(UNVISITED_COLOR)
            edgecolors.append("0.3")
            widths.append(0.8)
    ax.scatter(positions[:, 0], positions[:, 1], s=160, c=colors, edgecolors=edgecolors, linewidths=widths,
               zorder=2)
    if labels is None and g.n_vertices <= 60:
        labels = [str(v) for v in range(g.n_vertices)]
    if labels is not None:
        for (x, y), text in zip(positions, labels):
            ax.text(x, y, text, ha="center", va="center", fontsize=6, zorder=3)
    ax.set_axis_off()
    ax.set_aspect("equal")


def plot_work_per_level(ax, runs):
    """Edges examined at each iteration, one group of bars per BFS run.

    Parameters
    ----------
    ax : matplotlib Axes
    runs : sequence of BFSRun
    """
    width = 0.8 / max(len(runs), 1)
    for i, run in enumerate(runs):
        levels = np.arange(run.iterations)
        ax.bar(levels + i * width, run.edges_examined, width=width,
               label=f"{run.method} (total {run.total_edges_examined})")
    ax.set(xlabel="iteration (depth being expanded)", ylabel="edges examined")
    ax.legend(fontsize=8)


def plot_work_vs_size(ax, sizes, work_by_label):
    """Total edges examined against V on log-log axes, with V and V^2 guides.

    Parameters
    ----------
    ax : matplotlib Axes
    sizes : sequence of int
        Numbers of vertices.
    work_by_label : dict of str -> sequence of int
        Measured totals, one sequence (aligned with ``sizes``) per curve.
    """
    sizes = np.asarray(sizes, dtype=float)
    # Curves often coincide (a frontier BFS does the same work on a star and a chain): vary the markers.
    for i, (label, work) in enumerate(work_by_label.items()):
        ax.plot(sizes, work, marker="osD^vx"[i % 6], markersize=9 - 1.5 * (i % 4), fillstyle="none" if i % 2 else "full",
                label=label)
    ax.plot(sizes, sizes, color="0.5", ls=":", label="V")
    ax.plot(sizes, sizes**2, color="0.5", ls="--", label="V$^2$")
    ax.set(xscale="log", yscale="log", xlabel="vertices V", ylabel="edges examined in total")
    ax.legend(fontsize=8)
