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
    explorer = widgets.diff_explorer(history.images[1], history.images[-1])
    explorer.children[0].children[0].value = 0
    plt.close("all")
