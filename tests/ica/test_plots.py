"""The figures build from a run and show what they claim."""

import matplotlib
import pytest

matplotlib.use("Agg")


def test_plots(explored):
    import matplotlib.pyplot as plt

    from course_lib.ica import plots

    open_before = set(plt.get_fignums())
    axes = plots.plot_sources(explored["eeg"], explored["result"])
    assert axes.shape == (8, 2)
    assert len(plots.plot_topomaps(explored["eeg"], explored["result"].mixing, columns=[0, 1])) == 2
    ax = plots.plot_convergence(explored["result"], explored["eeg"].mixing)
    amari = plots.amari_per_step(explored["result"], explored["eeg"].mixing)
    assert len(amari) == explored["n_steps"] and amari[-1] < amari[0]
    assert len(ax.lines) >= 2
    for number in set(plt.get_fignums()) - open_before:  # only this test's figures
        plt.close(number)


def test_amari_needs_history(explored):
    from course_lib.ica import infomax, plots

    r = infomax(explored["eeg"].data, seed=0)
    with pytest.raises(ValueError, match="history"):
        plots.amari_per_step(r, explored["eeg"].mixing)
