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
