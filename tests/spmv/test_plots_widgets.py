"""The figures and the explorer widget build without errors and show what they claim."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from course_lib import device, spmv  # noqa: E402
from course_lib.spmv import plots, widgets  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_plots_draw_every_method_and_matrix():
    matrices = {name: spmv.make_matrix(name) for name in ("laplacian_5pt", "power_law")}
    axes = plots.plot_method_comparison(matrices)
    assert len(axes[0].patches) == len(plots.MODEL_METHODS) * 2
    ax = plots.plot_k_sweep(matrices["power_law"], measured={0: 1e-5, 3: 8e-6})
    assert f"K = {spmv.bell_garland_k(matrices['power_law'])}" in " ".join(t.get_text() for t in ax.get_legend().texts)
    ax = plots.plot_warp_lanes(spmv.row_length_family(64, 2.0, seed=1))
    assert "SIMT efficiency" in ax.get_title()
    plots.plot_row_lengths(matrices["power_law"])


def test_explorer_reacts_to_its_controls():
    box = widgets.explorer(n_rows=256)
    skew, _mean = box.children[0].children
    auto_k, k_slider = box.children[1].children
    assert k_slider.disabled
    skew.value = 2.5
    auto_k.value = False
    assert not k_slider.disabled
    k_slider.value = 3
    measured = widgets.measure_methods(spmv.laplacian("3pt", 8))
    if device.is_simulator():
        assert measured == {}  # no timings in the simulator
    else:
        assert {"csr_scalar", "coo", "hyb"} <= set(measured) and all(t > 0 for t in measured.values())


def test_measure_methods_gpu_path(monkeypatch):
    """The widget's GPU timing path, with the simulator standing in and a fake clock."""
    import course_lib.bench

    monkeypatch.setattr(widgets.device, "is_gpu", lambda: True)
    monkeypatch.setattr(course_lib.bench, "gpu_time", lambda launch, **kw: (launch(), 1e-3)[1])
    measured = widgets.measure_methods(spmv.empty_rows_and_long_row(40, 30, seed=1), K=2)
    assert set(measured) == set(plots.MODEL_METHODS) and set(measured.values()) == {1e-3}
