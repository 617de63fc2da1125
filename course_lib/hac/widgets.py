"""Interactive explorer of Unit 5: cut the tree of the fiber parcels, see the bundles."""

from __future__ import annotations

import numpy as np

from .data import fiber_bundles
from .plots import cut_distance
from .reference import adjusted_rand_index

__all__ = ["bundle_explorer", "cut_report"]


def cut_report(fiber_graph, tree, n_clusters) -> str:
    """Text for one cut: affinity of the cut, bundle sizes, agreement with the known bundles."""
    labels = tree.labels(n_clusters=n_clusters)
    fibers = fiber_bundles(fiber_graph, labels)
    sizes = np.bincount(fibers)
    heights = tree.merge_heights
    applied = tree.n_elements - n_clusters
    if applied == 0:
        cut = "no merge applied"
    elif not cut_distance(tree, n_clusters)[1]:
        # A tie at the cut (in the plot's distances c - affinity, as fcluster sees them): no threshold
        # separates the merges, the merge order does.
        cut = (f"the first {applied} merges applied; the next one ties at affinity {heights[applied - 1]:.3g}, "
               "so no threshold gives exactly this cut")
    else:
        cut = f"merges with affinity >= {heights[applied - 1]:.3g} applied"
    text = f"{n_clusters} clusters of parcels ({cut}); fibers per bundle: {sorted(sizes.tolist(), reverse=True)}"
    known = fiber_graph.fibers.bundle
    if known is not None:
        text += f"; agreement with the known bundles (adjusted Rand): {adjusted_rand_index(fibers, known):.2f}"
    return text


def bundle_explorer(fiber_graph, tree=None):
    """A slider over the number of clusters: the dendrogram with its cut, and the fibers coloured by bundle.

    Parameters
    ----------
    fiber_graph : FiberGraph
    tree : Dendrogram, optional
        Default: ``cluster(fiber_graph.graph, "cpu")``.

    Returns
    -------
    ipywidgets.VBox
    """
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    from . import plots
    from .api import cluster

    tree = cluster(fiber_graph.graph, "cpu") if tree is None else tree
    low, high = tree.n_components, tree.n_elements
    slider = widgets.IntSlider(value=min(max(3, low), high), min=low, max=high, description="clusters")
    text = widgets.HTML()
    out = widgets.Output()

    def show(n_clusters):
        text.value = "<pre>" + cut_report(fiber_graph, tree, n_clusters) + "</pre>"
        with out:
            out.clear_output(wait=True)
            fig = plt.figure(figsize=(11, 4))
            plots.plot_dendrogram(tree, fig.add_subplot(1, 2, 1), n_clusters=n_clusters)
            labels = fiber_bundles(fiber_graph, tree.labels(n_clusters=n_clusters))
            plots.plot_bundles(fiber_graph, labels, fig.add_subplot(1, 2, 2, projection="3d"))
            plt.show()

    slider.observe(lambda change: show(change["new"]), names="value")
    show(slider.value)
    return widgets.VBox([slider, text, out])
