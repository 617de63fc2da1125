"""Do the figures build from a clustering and show what they claim?"""

import matplotlib
import numpy as np
import pytest

from course_lib import hac

matplotlib.use("Agg")


def test_plots(fibers):
    import matplotlib.pyplot as plt

    fg, tree = fibers
    open_before = set(plt.get_fignums())
    out = hac.plots.plot_dendrogram(tree, n_clusters=4)
    assert len(out["leaves"]) == 20
    hac.plots.plot_bundles(fg, hac.fiber_bundles(fg, tree.labels(n_clusters=3)))
    hac.plots.plot_stage_times({"reference": hac.average_link_reference(fg.graph).stage_seconds})
    study = hac.precision_study(hac.random_graph(30, seed=2))
    hac.plots.plot_precision(study)
    hac.plots.plot_amdahl(0.776)
    big = hac.cluster(hac.random_graph(90, 0.1, seed=1), "cpu")
    assert len(hac.plots.plot_dendrogram(big, max_leaves=30)["leaves"]) == 30
    with pytest.raises(ValueError, match="fiber_labels"):
        hac.plots.plot_bundles(fg, np.zeros(3))
    for number in set(plt.get_fignums()) - open_before:  # only this test's figures
        plt.close(number)
