"""The fast CPU version's own pieces (its agreement with the reference is in test_api)."""

import numpy as np
from numba import njit

from course_lib.ica import cpu


@njit(cache=False, error_model="numpy")
def _apply(x, out):
    for i in range(x.size):
        out[i] = cpu._neg_tanh_half(x[i])


def test_neg_tanh_half_is_numpys_to_rounding():
    x = np.concatenate([np.linspace(-60.0, 60.0, 240_001), np.random.default_rng(0).standard_normal(50_000) * 4,
                        [0.0, -0.0, 1e-300, -1e-300, 39.999, 40.0, 40.001, np.inf, -np.inf, 700.0]])
    out = np.empty_like(x)
    _apply(x, out)
    np.testing.assert_allclose(out, -np.tanh(x / 2.0), rtol=0, atol=4e-16)
    assert np.all(np.abs(out) <= 1.0)
    clear = np.abs(x) > 1e-12  # below, -tanh(x / 2) is within the absolute error of 0
    assert np.all(np.sign(out[clear]) == -np.sign(x[clear]))


def test_a_blown_up_step_is_reported():
    rng = np.random.default_rng(1)
    Xs = rng.standard_normal((4, 400))
    stepper = cpu.CpuStepper(Xs, 20)
    W, bias, blown_up = stepper.step(rng.permutation(400), np.eye(4), np.zeros(4), 1e6, 1e8)
    assert blown_up
    W, bias, blown_up = stepper.step(rng.permutation(400), np.eye(4), np.zeros(4), 1e-3, 1e8)
    assert not blown_up and np.all(np.isfinite(W))
