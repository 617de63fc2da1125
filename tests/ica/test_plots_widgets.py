"""Plots and the explorer build without errors and show what they claim."""

import sys

import matplotlib
import pytest

matplotlib.use("Agg")


def test_importing_the_unit_does_not_import_plots():
    import subprocess

    code = ("import course_lib.ica, sys; assert 'matplotlib' not in sys.modules and 'ipywidgets' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.fixture(scope="module")
def run():
    from course_lib.ica import widgets

    return widgets.explore(8, 3000, max_steps=200)


def test_explore(run):
    assert run["converged"] and run["amari"] < 0.05 and run["seconds_per_step"] > 0
    assert run["launches_per_step"]["blas"] > run["launches_per_step"]["fused"]


def test_plots(run):
    import matplotlib.pyplot as plt

    from course_lib.ica import plots

    axes = plots.plot_sources(run["eeg"], run["result"])
    assert axes.shape == (8, 2)
    assert len(plots.plot_topomaps(run["eeg"], run["result"].mixing, columns=[0, 1])) == 2
    ax = plots.plot_convergence(run["result"], run["eeg"].mixing)
    amari = plots.amari_per_step(run["result"], run["eeg"].mixing)
    assert len(amari) == run["n_steps"] and amari[-1] < amari[0]
    assert len(ax.lines) >= 2
    plt.close("all")


def test_amari_needs_history(run):
    from course_lib.ica import infomax, plots

    r = infomax(run["eeg"].data, seed=0)
    with pytest.raises(ValueError, match="history"):
        plots.amari_per_step(r, run["eeg"].mixing)


def test_explorer_widget():
    from course_lib.ica import widgets

    box = widgets.convergence_explorer(1500)
    assert "steps" in box.children[1].value
    box.children[0].children[0].value = 12  # moving a slider reruns it
    assert "Amari" in box.children[1].value
