"""Plots and the explorer widget build and show the right numbers."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from course_lib import nbody  # noqa: E402
from course_lib.nbody.widgets import tile_explorer, tile_explorer_text  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_force_matrix_has_an_empty_diagonal():
    pos, _, mass = nbody.plummer_sphere(10, seed=1)
    ax = nbody.plots.plot_force_matrix(pos, mass, 0.05, tile=4)
    image = ax.get_images()[0].get_array()
    assert image.shape == (10, 10) and image.mask.diagonal().all()


def test_tile_tradeoff_plot_uses_the_model():
    axes = nbody.plots.plot_tile_tradeoffs(4096, [32, 64, 128], sm_count=132)
    blocks = axes[1].get_lines()[0].get_ydata()
    assert list(blocks) == [128, 64, 32]


def test_energy_and_snapshot_plots():
    pos, vel, mass = nbody.plummer_sphere(16, seed=2)
    ps, vs = nbody.leapfrog(pos, vel, mass, dt=0.01, steps=4, softening=0.1, method="cpu")
    _, energies = nbody.plots.plot_energy(ps, vs, mass, 0.1, dt=0.01)
    assert len(energies) == 5
    assert len(nbody.plots.plot_snapshots(ps, count=3)) == 3


def test_explorer_text_reports_idle_sms_and_savings():
    text = tile_explorer_text(4096, 1024, sm_count=132)
    assert "4 blocks of 1024 threads for 132 SMs (4 busy, some SMs idle)" in text
    assert "needs a GPU" in tile_explorer_text(4096, 64, sm_count=132, measure=True) or "measured:" in \
        tile_explorer_text(4096, 64, sm_count=132, measure=True)


def test_explorer_widget_updates_on_slider_change():
    box = tile_explorer(sm_count=100)
    n_slider, tile_slider = box.children[0].children
    out = box.children[1]
    tile_slider.value = 64
    assert "P = 64" in out.value
    n_slider.value = 12
    assert "N = 4,096" in out.value


def test_quiz_answers():
    quiz = nbody.QUIZ["bigger_tile"]
    assert quiz.answer("less").startswith("Right.")
    assert quiz.answer(0).startswith("Not quite")
    with pytest.raises(ValueError):
        quiz.answer(7)
