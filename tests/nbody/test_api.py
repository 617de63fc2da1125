"""Unit 1 kernels against the float64 reference, on awkward sizes on purpose."""

import numpy as np
import pytest

from course_lib import nbody, pick
from course_lib.nbody import kernels

# Relative tolerance against the float64 reference: float32 accumulation of N terms in
# a different order than NumPy (rsqrt.approx on a GPU adds ~2 ulp per term).
RTOL = 2e-5 if pick(sim=True, gpu=False) else 1e-4
TILE = 16


def assert_matches_reference(acc, pos, mass, softening):
    ref = nbody.accelerations_reference(pos, mass, softening)
    assert acc.dtype == np.float32 and acc.shape == ref.shape
    scale = np.max(np.abs(ref)) if ref.size else 1.0
    np.testing.assert_allclose(acc, ref, rtol=0, atol=RTOL * max(scale, 1e-30))


@pytest.mark.parametrize("n", [1, 2, 7, TILE - 1, TILE, TILE + 1, 2 * TILE + 3, 37])
@pytest.mark.parametrize("method", ["blocked", "lean", "tiled", "naive", "cpu", "numpy"])
def test_matches_reference_on_awkward_sizes(method, n):
    pos, _, mass = nbody.plummer_sphere(n, seed=n)
    acc = nbody.accelerations(pos, mass, softening=0.05, method=method,
                              tile=TILE if method in nbody.api.TILED_METHODS else None)
    assert_matches_reference(acc, pos, mass, 0.05)


@pytest.mark.parametrize("n,tile", [(1, 4), (5, 4), (9, 3), (17, 8)])
def test_pxp_kernel_matches_reference(n, tile):
    pos, _, mass = nbody.uniform_cube(n, seed=3)
    acc = nbody.accelerations(pos, mass, softening=0.1, method="pxp", tile=tile)
    assert_matches_reference(acc, pos, mass, 0.1)


# B * P - 1, B * P + 1 and a prime; tiles 3 and 5 are not multiples of the unrolled trip (4 sources).
@pytest.mark.parametrize("per,tile,n", [(1, 5, 11), (2, 3, 5), (2, 8, 17), (3, 5, 14), (4, 4, 15), (4, 4, 17),
                                        (4, 8, 31), (8, 2, 3)])
def test_blocked_kernel_on_awkward_sizes(per, tile, n):
    pos, _, mass = nbody.plummer_sphere(n, seed=per * n)
    acc = nbody.accelerations(pos, mass, softening=0.05, method="blocked", tile=tile, bodies_per_thread=per)
    assert_matches_reference(acc, pos, mass, 0.05)


def test_blocked_is_the_default_method():
    assert nbody.METHODS[0] == "blocked"
    pos, _, mass = nbody.uniform_cube(9, seed=4)
    np.testing.assert_array_equal(nbody.accelerations(pos, mass, softening=0.1),
                                  nbody.accelerations(pos, mass, softening=0.1, method="blocked"))


@pytest.mark.parametrize("kwargs", [{"method": "tiled", "bodies_per_thread": 2},
                                    {"method": "blocked", "bodies_per_thread": 0},
                                    {"method": "blocked", "bodies_per_thread": 9},
                                    {"method": "numpy", "tile": 8}])
def test_blocked_arguments_are_checked(kwargs):
    with pytest.raises(ValueError):
        nbody.accelerations([[0, 0, 0]], [1.0], softening=0.1, **kwargs)


def test_n_smaller_than_tile():
    pos, _, mass = nbody.uniform_cube(5, seed=1)
    acc = nbody.accelerations(pos, mass, softening=0.1, method="tiled", tile=64)
    assert_matches_reference(acc, pos, mass, 0.1)


def test_default_tile_on_a_prime_size():
    n = pick(sim=67, gpu=100_003)
    pos, _, mass = nbody.colliding_clusters(n, seed=2)
    acc = nbody.accelerations(pos, mass, softening=0.05)
    if n <= 5000:
        assert_matches_reference(acc, pos, mass, 0.05)
    else:  # full size: compare against the CPU version instead of the O(N^2) NumPy one
        cpu = nbody.accelerations(pos, mass, softening=0.05, method="cpu")
        np.testing.assert_allclose(acc, cpu, rtol=0, atol=1e-3 * np.max(np.abs(cpu)))


def test_single_body_feels_no_force():
    acc = nbody.accelerations([[1.0, 2.0, 3.0]], [5.0], softening=0.1)
    np.testing.assert_array_equal(acc, np.zeros((1, 3), np.float32))


def test_two_bodies_attract_symmetrically():
    pos = np.array([[0, 0, 0], [1, 0, 0]], np.float32)
    acc = nbody.accelerations(pos, [1.0, 1.0], softening=1e-3, method="tiled", tile=4)
    expected = 1.0 / (1.0 + 1e-6) ** 1.5
    np.testing.assert_allclose(acc[:, 0], [expected, -expected], rtol=1e-5)
    np.testing.assert_allclose(acc[:, 1:], 0, atol=1e-7)


def test_extreme_but_finite_values():
    pos = np.array([[0, 0, 0], [1e4, 0, 0], [0, 1e-4, 0]], np.float32)
    mass = np.array([1e6, 1e-6, 1.0], np.float32)
    acc = nbody.accelerations(pos, mass, softening=1e-2, method="tiled", tile=2)
    assert np.all(np.isfinite(acc))
    assert_matches_reference(acc, pos, mass, 1e-2)


def test_integer_input_is_converted():
    acc = nbody.accelerations([[0, 0, 0], [1, 0, 0]], [1, 1], softening=0.5, method="naive")
    assert acc.dtype == np.float32 and acc[0, 0] > 0


@pytest.mark.parametrize(
    "pos,mass,softening,message",
    [
        (np.zeros((0, 3)), np.zeros(0), 0.1, "pos must not be empty"),
        (np.zeros((4, 2)), np.ones(4), 0.1, r"pos must have shape \(any, 3\)"),
        (np.zeros((4, 3)), np.ones((4, 1)), 0.1, r"mass must have shape \(any,\)"),
        (np.zeros((4, 3)), np.ones(3), 0.1, r"mass must hold one value per body of pos \(4\), got 3"),
        (np.array([[0, 0, np.nan]] * 2), np.ones(2), 0.1, "pos must hold finite values"),
        (np.zeros((2, 3)), np.array([1.0, np.inf]), 0.1, "mass must hold finite values"),
        (np.zeros((2, 3)), np.ones(2), 0.0, "softening must be a finite positive number"),
        (np.zeros((2, 3)), np.ones(2), -1.0, "softening must be a finite positive number"),
        (np.zeros((2, 3)), np.ones(2), "soft", "softening must be a finite positive number"),
        (np.array([["a", "b", "c"]]), np.ones(1), 0.1, "pos must be a numeric array"),
        (np.zeros((2, 3), complex), np.ones(2), 0.1, r"pos must have a real \(integer or floating\) dtype"),
    ],
)
def test_bad_input_is_a_clear_error(pos, mass, softening, message):
    with pytest.raises(ValueError, match=message):
        nbody.accelerations(pos, mass, softening=softening)


@pytest.mark.parametrize("method,tile,message", [
    ("tiled", 0, "between 1 and 1024"),
    ("tiled", 2048, "between 1 and 1024"),
    ("tiled", 2.5, "between 1 and 1024"),
    ("pxp", 64, "between 1 and 32"),
    ("naive", 16, "tile only applies"),
    ("gpu", None, "method must be one of .blocked., .lean., .tiled., .naive."),
])
def test_bad_method_or_tile(method, tile, message):
    pos, _, mass = nbody.uniform_cube(4)
    with pytest.raises(ValueError, match=message):
        nbody.accelerations(pos, mass, softening=0.1, method=method, tile=tile)


def test_kernel_factories_reject_impossible_tiles():
    with pytest.raises(ValueError, match="between 1 and 1024"):
        kernels.nbody_tiled_kernel(0)
    with pytest.raises(ValueError, match="P <= 32"):
        kernels.nbody_pxp_kernel(33)
    with pytest.raises(ValueError, match="between 1 and 1024"):
        kernels.nbody_blocked_kernel(1025, 2)
    with pytest.raises(ValueError, match="bodies_per_thread must be between 1 and 8"):
        kernels.nbody_blocked_kernel(64, 9)


def test_values_beyond_float32_are_named():
    with pytest.raises(ValueError, match="pos has values too large for float32"):
        nbody.accelerations(np.array([[1e39, 0, 0], [0, 0, 0]]), [1.0, 1.0], softening=0.1)


# ---- from test_simulation.py

import numpy as np


import pytest


from course_lib import nbody


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


@pytest.mark.parametrize("kwargs,message", [
    ({"dt": 0.0}, "dt must be a finite positive number"),
    ({"dt": "big"}, "dt must be a finite positive number"),
    ({"steps": 2.5}, "steps must be a non-negative integer"),
    ({"steps": -1}, "steps must be a non-negative integer"),
    ({"every": 0}, "every must be a positive integer"),
    ({"vel": np.zeros((3, 3))}, r"vel must have shape \(4, 3\)"),
    ({"vel": np.full((4, 3), np.nan)}, "vel must hold finite values"),
])
def test_leapfrog_bad_input(kwargs, message):
    pos, vel, mass = nbody.uniform_cube(4, seed=1)
    args = {"pos": pos, "vel": vel, "mass": mass, "dt": 0.01, "steps": 2, "softening": 0.1, "method": "cpu"}
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        nbody.leapfrog(**args)
