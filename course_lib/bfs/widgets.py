"""Interactive explorer of Unit 3: step through the levels of a BFS on a small graph."""

from __future__ import annotations

from .api import traverse
from .data import as_graph
from .plots import draw_levels, layout

__all__ = ["level_explorer", "level_report"]


def level_report(runs, level):
    """Text of the work of each run at one level, one line per run.

    Parameters
    ----------
    runs : sequence of BFSRun
        Searches of the same graph from the same source.
    level : int

    Returns
    -------
    str
    """
    first = runs[0]
    reached = int(((first.depth >= 0) & (first.depth <= level)).sum())
    lines = [f"level {level}: frontier of {int((first.depth == level).sum())} vertices, "
             f"{reached} of {first.depth.size} reached so far"]
    for run in runs:
        if level < run.iterations:
            so_far = sum(run.edges_examined[:level + 1])
            lines.append(f"  {run.method:<16} edges examined at this level: {run.edges_examined[level]:>6}, "
                         f"so far: {so_far:>7}, vertices reached: {run.newly_reached[level]}")
    return "\n".join(lines)


def level_explorer(graph, source=0, *, methods=("frontier_atomic", "edge_quadratic"), directed=False,
                   labels=None):
    """A slider over the levels of a BFS: the graph with its frontier, and the work of each method.

    The searches run once (on the active backend) when the explorer is built; the
    slider then redraws level ``k``: vertices of depth < k coloured by depth, the
    frontier (depth k) in red, unreached vertices white, and for each method the edges
    its kernels examined at that level and in total so far.

    Parameters
    ----------
    graph : scipy.sparse matrix of shape (V, V)
        A small graph (it is drawn vertex by vertex).
    source : int
    methods : sequence of str
        Methods of :func:`course_lib.bfs.traverse` to compare.
    directed : bool
    labels : sequence of str, optional

    Returns
    -------
    ipywidgets.VBox
    """
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    g = as_graph(graph, directed=directed)
    if g.n_vertices > 400:
        raise ValueError(f"the explorer draws every vertex: use a graph of at most 400 vertices, not {g.n_vertices}")
    runs = [traverse(g, source, m) for m in methods]
    positions = layout(g)
    max_level = max(int(runs[0].depth.max()), 0)
    slider = widgets.IntSlider(value=0, min=0, max=max_level, description="level")
    out = widgets.Output()
    counters = widgets.HTML()

    def show(level):
        counters.value = "<pre>" + level_report(runs, level) + "</pre>"
        with out:
            out.clear_output(wait=True)
            fig, ax = plt.subplots(figsize=(5.5, 4.5))
            draw_levels(ax, g, runs[0].depth, level=level, positions=positions, labels=labels, directed=directed)
            ax.set_title(f"BFS from vertex {source}: frontier at level {level} in red")
            plt.show()

    slider.observe(lambda change: show(change["new"]), names="value")
    show(0)
    return widgets.VBox([slider, counters, out])
