"""Initial conditions, the leapfrog integrator, the counting model."""

import numpy as np
import pytest

from course_lib import nbody


@pytest.mark.parametrize("kind", ["uniform", "plummer", "collision"])
@pytest.mark.parametrize("n", [1, 2, 33])
def test_initial_conditions_shapes_and_mass(kind, n):
    pos, vel, mass = nbody.initial_conditions(kind, n, seed=4)
    assert pos.shape == vel.shape == (n, 3) and mass.shape == (n,)
    assert pos.dtype == vel.dtype == mass.dtype == np.float32
    assert mass.sum() == pytest.approx(1.0, rel=1e-6)
    assert np.all(np.isfinite(pos)) and np.all(np.isfinite(vel))


def test_initial_conditions_are_seeded():
    a = nbody.plummer_sphere(50, seed=7)
    b = nbody.plummer_sphere(50, seed=7)
    c = nbody.plummer_sphere(50, seed=8)
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.array_equal(a[0], c[0])


def test_plummer_sphere_is_near_virial_equilibrium():
    pos, vel, mass = nbody.plummer_sphere(2000, seed=1)
    kinetic = 0.5 * np.sum(mass * np.sum(vel.astype(float) ** 2, axis=1))
    potential = nbody.total_energy(pos, np.zeros_like(vel), mass, 1e-3)
    assert 2 * kinetic / -potential == pytest.approx(1.0, abs=0.15)


def test_unknown_initial_conditions():
    with pytest.raises(ValueError, match="unknown initial conditions"):
        nbody.initial_conditions("spiral", 10)
    with pytest.raises(ValueError, match="positive integer"):
        nbody.plummer_sphere(0)


def test_leapfrog_conserves_energy():
    pos, vel, mass = nbody.plummer_sphere(64, seed=5)
    ps, vs = nbody.leapfrog(pos, vel, mass, dt=0.01, steps=20, softening=0.1, method="cpu", every=5)
    assert ps.shape == (5, 64, 3)
    e = [nbody.total_energy(p, v, mass, 0.1) for p, v in zip(ps, vs)]
    assert abs(e[-1] - e[0]) / abs(e[0]) < 1e-3


def test_leapfrog_same_on_kernel_and_cpu():
    pos, vel, mass = nbody.plummer_sphere(20, seed=6)
    a, _ = nbody.leapfrog(pos, vel, mass, dt=0.01, steps=2, softening=0.1, method="tiled", tile=8)
    b, _ = nbody.leapfrog(pos, vel, mass, dt=0.01, steps=2, softening=0.1, method="numpy")
    np.testing.assert_allclose(a, b, atol=1e-5)


def test_fetch_model_matches_the_lesson():
    n, p = 1024, 128
    assert nbody.global_fetches(n, "matrix") == 2 * n * n      # 2N per body
    assert nbody.global_fetches(n, "pxp", p) == (n // p) ** 2 * 2 * p   # 2P per tile
    assert nbody.global_fetches(n, "tiled", p) == n + n * n // p
    with pytest.raises(ValueError):
        nbody.global_fetches(n, "tiled")


def test_tile_report_tradeoffs():
    small = nbody.tile_report(16384, 64, sm_count=132)
    large = nbody.tile_report(16384, 1024, sm_count=132)
    assert large["fetches"] < small["fetches"]              # larger P: less traffic
    assert large["busy_sms"] < 132 <= small["blocks"]        # ...but too few blocks for the SMs
    assert large["blocks_per_sm"] == 2 and nbody.tile_report(4096, 2048, sm_count=132)["fits_block"] is False


def test_tile_report_counts_registers_and_the_shared_memory_reserved_per_block():
    # 64 registers x 1024 threads fill the 64 K register file: one resident block, not two.
    heavy = nbody.tile_report(1 << 20, 1024, sm_count=132, registers_per_thread=64)
    assert heavy["limits"]["registers"] == 1 and heavy["blocks_per_sm"] == 1 and heavy["limited_by"] == ["registers"]
    # Registers round up per warp to units of 256: 33 registers cost as much as 40.
    assert (nbody.tile_report(1 << 20, 256, sm_count=132, registers_per_thread=33)["limits"]["registers"]
            == nbody.tile_report(1 << 20, 256, sm_count=132, registers_per_thread=40)["limits"]["registers"] == 6)
    # 16 KiB of tile + 1 KiB reserved per block: two blocks need 34 KiB, more than 32 KiB.
    small_smem = nbody.tile_report(1 << 20, 1024, sm_count=132, shared_per_sm=32 * 1024)
    assert small_smem["limits"]["shared memory"] == 1 and small_smem["blocks_per_sm"] == 1
    assert nbody.tile_report(1 << 20, 1024, sm_count=132, shared_per_sm=32 * 1024,
                             reserved_shared_per_block=0)["limits"]["shared memory"] == 2
    assert "registers" not in nbody.tile_report(1 << 20, 256, sm_count=132)["limits"]
    with pytest.raises(ValueError, match="registers_per_thread"):
        nbody.tile_report(1024, 256, sm_count=132, registers_per_thread=0)


@pytest.mark.parametrize("kwargs,message", [
    ({"dt": 0.0}, "dt must be positive"),
    ({"dt": "big"}, "dt must be a positive number"),
    ({"steps": 2.5}, "steps must be an integer >= 0"),
    ({"steps": -1}, "steps must be an integer >= 0"),
    ({"every": 0}, "every must be an integer >= 1"),
    ({"vel": np.zeros((3, 3))}, r"vel must have the shape of pos \(4, 3\)"),
    ({"vel": np.full((4, 3), np.nan)}, "vel contains NaN"),
])
def test_leapfrog_bad_input(kwargs, message):
    pos, vel, mass = nbody.uniform_cube(4, seed=1)
    args = {"pos": pos, "vel": vel, "mass": mass, "dt": 0.01, "steps": 2, "softening": 0.1, "method": "cpu"}
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        nbody.leapfrog(**args)
