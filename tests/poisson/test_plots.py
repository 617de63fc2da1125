"""Plots, widgets and the benchmark run without a display and without a GPU."""


import matplotlib
from course_lib import poisson
from course_lib.poisson import plots

matplotlib.use("Agg")


def test_plots_draw():
    import matplotlib.pyplot as plt

    source, target, mask = poisson.cat_in_coffee((24, 36))
    history = poisson.clone_history(source, target, mask, (0, 3, 30), method="cpu")
    plots.show_images({"source": source, "target": target, "mask": mask})
    plots.show_regions(mask, target)
    plots.plot_convergence(history.iterations, history.residuals)
    fig, result = plots.diff_viewer(history.images[-1], history.images[1])
    assert "largest difference" in fig._suptitle.get_text() and result.max_diff > 0
    plt.close("all")
