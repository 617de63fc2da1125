"""The BFS benchmark runs (its CPU part without a GPU); the figures and the explorer draw."""


import matplotlib
import numpy as np
from course_lib import bfs
from course_lib.bfs import data, plots

matplotlib.use("Agg")


def test_figures_draw():
    import matplotlib.pyplot as plt

    graph = data.grid_2d(3, 3)
    runs = [bfs.traverse(graph, 4, m, directed=False) for m in ("cpu", "edge_quadratic")]
    fig, axes = plt.subplots(1, 3)
    plots.draw_levels(axes[0], graph, runs[0].depth, level=1)
    plots.draw_levels(axes[0], data.chain(3, directed=True), np.array([0, 1, 2]), directed=True)
    plots.plot_work_per_level(axes[1], runs)
    plots.plot_work_vs_size(axes[2], [4, 8], {"quadratic": [12, 56]})
    assert len(axes[1].patches) == sum(r.iterations for r in runs)
    plt.close(fig)
