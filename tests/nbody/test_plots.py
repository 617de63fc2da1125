"""Plots and the explorer widget build and show the right numbers."""


import matplotlib

matplotlib.use("Agg")

from course_lib import nbody  # noqa: E402

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
