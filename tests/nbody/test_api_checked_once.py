"""accelerations and leapfrog check the bodies once, at their door: the paths below take them checked."""

import numpy as np
import pytest

from course_lib import nbody
from course_lib.nbody import api, cpu, reference
from tests.checked_once import counted_checks


@pytest.fixture
def checks(monkeypatch):
    return counted_checks(monkeypatch, api.check_array, (api, cpu, reference))


@pytest.mark.parametrize("method", ["numpy", "cpu", "naive"])
def test_accelerations_check_the_bodies_once(checks, method):
    pos, _, mass = nbody.plummer_sphere(9, seed=1)
    acc = nbody.accelerations(pos, mass, softening=0.05, method=method)
    assert checks == ["pos", "mass"]
    np.testing.assert_allclose(acc, nbody.accelerations_reference(pos, mass, 0.05), rtol=1e-4, atol=1e-4)


def test_leapfrog_checks_once_whatever_the_steps(checks):
    pos, vel, mass = nbody.plummer_sphere(6, seed=2)
    nbody.leapfrog(pos, vel, mass, dt=0.01, steps=3, softening=0.05, method="cpu")
    assert sorted(checks) == ["mass", "pos", "vel"]


def test_leapfrog_steps_as_accelerations_does():
    pos, vel, mass = nbody.plummer_sphere(6, seed=3)
    p, v = nbody.leapfrog(pos, vel, mass, dt=0.01, steps=2, softening=0.05, method="numpy")
    x, u = pos.astype(np.float32), vel.astype(np.float32)
    acc = nbody.accelerations(x, mass, softening=0.05, method="numpy")
    for _ in range(2):
        u = u + np.float32(0.005) * acc
        x = x + np.float32(0.01) * u
        acc = nbody.accelerations(x, mass, softening=0.05, method="numpy")
        u = u + np.float32(0.005) * acc
    np.testing.assert_array_equal(p[-1], x)
    np.testing.assert_array_equal(v[-1], u)


def test_the_inner_functions_still_check_what_students_pass():
    with pytest.raises(ValueError, match="softening_sq"):
        nbody.accelerations_cpu(np.ones((2, 4), np.float32), 0.0)
    with pytest.raises(ValueError, match="mass"):
        nbody.accelerations_reference(np.ones((2, 3)), np.ones(3), 0.1)
    with pytest.raises(ValueError, match="tile"):
        nbody.leapfrog(np.ones((2, 3)), np.zeros((2, 3)), np.ones(2), dt=0.1, steps=1, softening=0.1, method="numpy",
                       tile=32)


def test_leapfrog_refuses_a_blow_up_with_the_step_it_happened_at():
    pos, vel, mass = nbody.plummer_sphere(4, seed=4)
    vel = vel.astype(np.float32)
    vel[0, 0] = np.float32(3e38)  # finite, but the first drift overflows
    with np.errstate(over="ignore"), pytest.raises(ValueError, match="no longer finite after step 1"):
        nbody.leapfrog(pos, vel, mass, dt=10.0, steps=3, softening=0.05, method="numpy")
