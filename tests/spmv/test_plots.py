"""The figures and the explorer widget build without errors and show what they claim."""


import matplotlib

matplotlib.use("Agg")

from course_lib import spmv
from course_lib.spmv import plots

def test_plots_draw_every_method_and_matrix():
    matrices = {name: spmv.make_matrix(name) for name in ("laplacian_5pt", "power_law")}
    axes = plots.plot_method_comparison(matrices)
    assert len(axes[0].patches) == len(plots.MODEL_METHODS) * 2
    ax = plots.plot_k_sweep(matrices["power_law"], measured={0: 1e-5, 3: 8e-6})
    assert f"K = {spmv.bell_garland_k(matrices['power_law'])}" in " ".join(t.get_text() for t in ax.get_legend().texts)
    ax = plots.plot_warp_lanes(spmv.row_length_family(64, 2.0, seed=1))
    assert "SIMT efficiency" in ax.get_title()
    plots.plot_row_lengths(matrices["power_law"])
