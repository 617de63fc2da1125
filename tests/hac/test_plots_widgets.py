"""Do the figures and the explorer build, and does importing the unit stay light?"""

import subprocess
import sys

import matplotlib
import numpy as np
import pytest

from course_lib import hac

matplotlib.use("Agg")


def test_import_does_not_load_matplotlib_or_ipywidgets():
    code = ("import sys, course_lib.hac; print('matplotlib' in sys.modules, 'ipywidgets' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


@pytest.fixture(scope="module")
def fibers():
    fg = hac.fiber_graph(n_parcels=20)
    return fg, hac.cluster(fg.graph, "cpu")


def test_plots(fibers):
    import matplotlib.pyplot as plt

    fg, tree = fibers
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
    plt.close("all")


def test_explorer(fibers):
    import matplotlib.pyplot as plt

    fg, tree = fibers
    box = hac.widgets.bundle_explorer(fg, tree)
    slider = box.children[0]
    slider.value = 5
    assert "5 clusters" in box.children[1].value and "adjusted Rand" in box.children[1].value
    plt.close("all")
