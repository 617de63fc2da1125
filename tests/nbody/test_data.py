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
    with pytest.raises(ValueError, match="kind must be one of .collision., .plummer., .uniform., got .spiral."):
        nbody.initial_conditions("spiral", 10)
    with pytest.raises(ValueError, match="positive integer"):
        nbody.plummer_sphere(0)
