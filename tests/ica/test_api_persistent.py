"""Does the persistent step give the fused method's weights, in one launch per step, W staying on the device?"""

import warnings

import numpy as np
import pytest

from course_lib.ica import ConvergenceWarning, infomax, infomax_reference, simulate_eeg
from course_lib.ica.api import GPU_METHODS
from course_lib.sim import check, record


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fn(*args, **kwargs)


def test_it_is_the_first_gpu_method():
    assert GPU_METHODS[0] == "persistent"


def test_the_persistent_step_follows_the_reference(tiny):
    """157 samples (prime), batch 7: 22 minibatches per step, the last partial one dropped."""
    ref = _quiet(infomax_reference, tiny.data, seed=7, max_steps=2)
    got = _quiet(infomax, tiny.data, "persistent", seed=7, max_steps=2)
    np.testing.assert_allclose(got.unmixing, ref.unmixing, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.bias, ref.bias, rtol=0, atol=1e-12)
    assert got.method == "persistent"


def test_it_equals_the_fused_method_bit_for_bit(tiny):
    fused = _quiet(infomax, tiny.data, "fused", seed=3, max_steps=3)
    persistent = _quiet(infomax, tiny.data, "persistent", seed=3, max_steps=3)
    assert np.array_equal(fused.unmixing, persistent.unmixing)
    assert np.array_equal(fused.bias, persistent.bias)


@pytest.mark.parametrize("batch", [1, 3, 40])
def test_odd_even_and_more_samples_than_blocks(batch):
    """batch 1 and 3 give odd and even minibatch counts (the W ping-pong); 40 samples > the 32-block grid."""
    X = simulate_eeg(3, 83, seed=1).data
    ref = _quiet(infomax_reference, X, seed=0, max_steps=2, batch=batch)
    got = _quiet(infomax, X, "persistent", seed=0, max_steps=2, batch=batch)
    np.testing.assert_allclose(got.unmixing, ref.unmixing, atol=1e-12)


def test_restarts_upload_the_new_weights(tiny):
    ref = _quiet(infomax_reference, tiny.data, seed=0, lrate=0.1, max_steps=2)
    got = _quiet(infomax, tiny.data, "persistent", seed=0, lrate=0.1, max_steps=2)
    assert ref.restarts >= 1 and got.restarts == ref.restarts
    np.testing.assert_allclose(got.unmixing, ref.unmixing, atol=1e-10)


def test_one_launch_per_step_and_w_stays_on_the_device(tiny):
    """Per step: the permutation up, one launch, W and the bias down; W and the bias go up once per run."""
    with record() as log:
        got = _quiet(infomax, tiny.data, "persistent", seed=7, max_steps=3)
    assert got.restarts == 0
    steps = got.n_steps
    launches = [e.kernel for e in log.launches]
    assert launches == ["persistent_step_kernel"] * steps
    summary = log.summary()
    # The data once, W and bias once, a permutation per step.
    assert summary["HtoD_count"] == 1 + 2 + steps
    assert summary["DtoH_count"] == 2 * steps


def test_the_fused_method_launches_twice_per_minibatch(tiny):
    with record() as log:
        got = _quiet(infomax, tiny.data, "fused", seed=7, max_steps=1)
    assert len(log.launches) == 2 * (tiny.data.shape[1] // got.batch)


def test_no_race_under_the_checker():
    from course_lib.ica import kernels

    rng = np.random.default_rng(5)
    n_channels, n_samples, batch = 4, 29, 5
    W = np.eye(n_channels) + 0.1 * rng.normal(size=(n_channels, n_channels))
    Xt = rng.normal(size=(n_samples, n_channels))
    perm = rng.permutation(n_samples).astype(np.int32)
    n_minibatches = n_samples // batch
    args = (W.copy(), np.zeros_like(W), np.zeros_like(W), Xt, perm, n_minibatches, np.zeros(n_channels),
            np.zeros((batch, n_channels)), np.zeros((batch, n_channels)), 0.01)
    report = check(kernels.persistent_step_kernel, 3, n_channels, *args, seed=2)
    assert report.ok, report
    # The same minibatches on the host, in the kernel's order.
    W_ref, bias = W.copy(), np.zeros(n_channels)
    for t in range(n_minibatches):
        x = Xt[perm[t * batch:(t + 1) * batch]]
        u = x @ W_ref.T + bias
        y = -np.tanh(0.5 * u)
        W_ref = W_ref + 0.01 * (y.T @ u + batch * np.eye(n_channels)) @ W_ref
        bias = bias + 0.01 * y.sum(axis=0)
    np.testing.assert_allclose(args[0], W_ref, atol=1e-12)
    np.testing.assert_allclose(args[6], bias, atol=1e-12)
