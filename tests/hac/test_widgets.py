"""Does the bundle explorer recut the tree when its slider moves?"""

import matplotlib

from course_lib import hac

matplotlib.use("Agg")


def test_explorer(fibers):
    import matplotlib.pyplot as plt

    fg, tree = fibers
    open_before = set(plt.get_fignums())
    box = hac.widgets.bundle_explorer(fg, tree)
    slider = box.children[0]
    slider.value = 5
    assert "5 clusters" in box.children[1].value and "adjusted Rand" in box.children[1].value
    for number in set(plt.get_fignums()) - open_before:  # only the explorer's figures
        plt.close(number)


def test_the_caption_names_the_cut_the_plot_draws():
    """Does the explorer's text say a threshold only where one gives exactly the asked clusters?"""
    import numpy as np

    from course_lib import hac
    from course_lib.hac.plots import cut_distance

    fg = hac.fiber_graph(hac.load_fibers("bundles", subject=1), n_parcels=24, seed=0)
    tree = hac.cluster(fg.graph, "reference")
    heights = tree.merge_heights
    for k in range(tree.n_components, tree.n_elements + 1):
        text = hac.widgets.cut_report(fg, tree, k)
        applied = tree.n_elements - k
        if applied and "affinity >=" in text:
            # the threshold printed applies exactly the first `applied` merges (heights within rounding)
            assert np.count_nonzero(heights >= heights[applied - 1] - 1e-9) == applied, k
        assert ("ties" in text) == (not cut_distance(tree, k)[1]), k
