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


@pytest.mark.parametrize("n_parcels", [24, 60])
def test_the_cut_leaves_the_asked_number_of_clusters_at_every_slider_position(n_parcels):
    """At every position of the explorer's slider (nC .. N), is the drawn cut the asked one?"""
    from scipy.cluster.hierarchy import fcluster

    from course_lib.hac.plots import cut_distance

    fg = hac.fiber_graph(hac.load_fibers("bundles", subject=1), n_parcels=n_parcels, seed=0)
    tree = hac.cluster(fg.graph, "reference")
    z = tree.linkage()
    ties = 0
    for k in range(tree.n_components, tree.n_elements + 1):
        cut, exact = cut_distance(tree, k)
        applied = tree.n_elements - k
        tie = 0 < applied < z.shape[0] and z[applied - 1, 2] == z[applied, 2]
        assert exact == (not tie), k
        ties += tie
        if exact:
            flat = fcluster(z, cut, "distance")
            assert np.unique(flat).size == k, k
            # the same partition as the tree's own labels
            assert hac.adjusted_rand_index(flat, tree.labels(n_clusters=k)) == pytest.approx(1.0), k
    assert ties < (tree.n_elements - tree.n_components) / 2
    with pytest.raises(ValueError, match="n_clusters"):
        cut_distance(tree, tree.n_components - 1)


def test_plotted_colours_name_exactly_the_asked_clusters():
    import matplotlib.pyplot as plt

    tree = hac.cluster(hac.fiber_graph(hac.load_fibers("bundles", subject=1), n_parcels=24, seed=0).graph, "reference")
    for k in (tree.n_components, 3, 4, 7, tree.n_elements):
        fig = plt.figure()
        out = hac.plots.plot_dendrogram(tree, fig.add_subplot(111), n_clusters=k)
        plt.close(fig)
        labels = tree.labels(n_clusters=k)
        # every leaf of one coloured link belongs to one cluster; links above the cut are grey
        coloured = [c for c in out["color_list"] if c != "0.6"]
        assert len(coloured) == tree.n_elements - k
        assert out["cut"] is not None
        assert np.unique(labels).size == k


def test_plot_scaling_fits_each_variant_and_leaves_out_estimates():
    import matplotlib.pyplot as plt

    def row(variant, n, seconds, dtype="float64", estimated=False):
        return {"variant": variant, "dtype": dtype, "n_elements": n, "seconds": seconds, "estimated": estimated,
                "seconds_min": 0.9 * seconds, "seconds_max": 1.2 * seconds}

    sizes = [1_000, 2_000, 4_000, 8_000]
    rows = ([row("cpu", n, 1e-5 * n) for n in sizes] + [row("fastcluster_average", n, 1e-9 * n ** 2.4) for n in sizes]
            + [row("python_original", n, 1e-3 * n, estimated=True) for n in sizes]
            + [row("cpu_scan", 1_000, 0.1)])  # one size: no exponent
    results = {"rows": rows, "cpu": "some CPU", "date": "2026-11-26T00:00:00+00:00"}
    ax, series = hac.plots.plot_scaling(results)
    assert set(series) == {"cpu float64", "fastcluster_average"}
    assert series["cpu float64"]["exponent"] == pytest.approx(1.0)
    assert series["fastcluster_average"]["exponent"] == pytest.approx(2.4)
    assert series["cpu float64"]["n"] == sizes and ax.get_xscale() == ax.get_yscale() == "log"
    assert len(ax.get_legend().get_texts()) == 2
    plt.close(ax.figure)
