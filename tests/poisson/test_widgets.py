"""Plots, widgets and the benchmark run without a display and without a GPU."""


import matplotlib
from course_lib import poisson
from course_lib.poisson import widgets

matplotlib.use("Agg")


def test_widgets_build_and_respond():
    import matplotlib.pyplot as plt

    source, target, mask = poisson.cat_in_coffee((24, 36))
    history = poisson.clone_history(source, target, mask, (0, 3, 30), method="cpu")
    scrubber = widgets.iteration_scrubber(history, reference=history.images[-1])
    slider = scrubber.children[0]
    slider.value = 3  # redraws
    explorer = widgets.diff_explorer(history.images[1], history.images[-1], titles=("3 iterations", "30 iterations"))
    max_diff, fraction = explorer.children[0], explorer.children[1]
    max_diff.value = 0
    # Any comparison can be made to pass: the sliders reach every difference and every fraction.
    assert max_diff.max == 255 and 10 ** fraction.max == 1
    max_diff.value, fraction.value = 255, 1.0
    plt.close("all")
