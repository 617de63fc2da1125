"""infomax(): every method gives the reference's result; validation; peers; convergence reporting."""

import warnings

import numpy as np
import pytest

from course_lib import device
from course_lib.ica import (ConvergenceWarning, amari_index, ica_peer, infomax, infomax_reference, match_sources,
                            simulate_eeg)

from .test_reference import AMARI_MAX, CORRELATION_MIN


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fn(*args, **kwargs)


def test_cpu_equals_reference_to_convergence(eeg8):
    ref = infomax_reference(eeg8.data, seed=1)
    cpu = infomax(eeg8.data, "cpu", seed=1)
    assert cpu.n_steps == ref.n_steps and cpu.converged
    np.testing.assert_allclose(cpu.unmixing, ref.unmixing, rtol=0, atol=1e-10)
    np.testing.assert_allclose(cpu.changes, ref.changes, rtol=1e-6)
    assert cpu.lrates == pytest.approx(ref.lrates)


def test_cpu_extended_equals_reference():
    eeg = simulate_eeg(5, 3000, n_subgaussian=2, seed=4)
    ref = _quiet(infomax_reference, eeg.data, seed=2, extended=True, max_steps=20)
    cpu = _quiet(infomax, eeg.data, "cpu", seed=2, extended=True, max_steps=20)
    np.testing.assert_allclose(cpu.unmixing, ref.unmixing, atol=1e-9)
    np.testing.assert_array_equal(cpu.signs, ref.signs)


@pytest.mark.parametrize("method", ["fused", "custom", "blas"])
def test_kernel_methods_follow_the_reference(tiny, method):
    """Same permutations, same float64 arithmetic: the kernels' W after 2 steps equals the reference's."""
    ref = _quiet(infomax_reference, tiny.data, seed=7, max_steps=2)
    got = _quiet(infomax, tiny.data, method, seed=7, max_steps=2)
    np.testing.assert_allclose(got.unmixing, ref.unmixing, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.bias, ref.bias, rtol=0, atol=1e-12)
    assert got.method == method and got.batch == ref.batch == 7


def test_fused_with_an_odd_number_of_minibatches_and_batch_one():
    """batch=1 (a minibatch per sample) and odd counts exercise the ping-pong of W."""
    X = simulate_eeg(3, 31, seed=1).data
    for batch in (1, 3):
        ref = _quiet(infomax_reference, X, seed=0, max_steps=2, batch=batch)
        got = _quiet(infomax, X, "fused", seed=0, max_steps=2, batch=batch)
        np.testing.assert_allclose(got.unmixing, ref.unmixing, atol=1e-12)


def test_kernel_method_restarts_like_the_reference(tiny):
    ref = _quiet(infomax_reference, tiny.data, seed=0, lrate=0.1, max_steps=2)
    got = _quiet(infomax, tiny.data, "fused", seed=0, lrate=0.1, max_steps=2)
    assert ref.restarts >= 1 and got.restarts == ref.restarts
    np.testing.assert_allclose(got.unmixing, ref.unmixing, atol=1e-10)


def test_cupy_needs_a_gpu(tiny):
    if device.is_gpu():
        pytest.skip("on a GPU the CuPy method may run")
    with pytest.raises(RuntimeError, match="GPU and CuPy"):
        infomax(tiny.data, "cupy")


@pytest.mark.skipif(not device.is_gpu(), reason="CuPy runs on a GPU only")
def test_cupy_follows_the_reference(tiny):
    pytest.importorskip("cupy")
    ref = _quiet(infomax_reference, tiny.data, seed=7, max_steps=3)
    got = _quiet(infomax, tiny.data, "cupy", seed=7, max_steps=3)
    np.testing.assert_allclose(got.unmixing, ref.unmixing, atol=1e-10)


def test_convergence_failure_is_reported(eeg8):
    with pytest.warns(ConvergenceWarning, match="3 steps"):
        r = infomax(eeg8.data, "cpu", seed=1, max_steps=3)
    assert r.converged is False


def test_callback_sees_every_step(eeg8):
    seen = []
    _quiet(infomax, eeg8.data, "cpu", seed=1, max_steps=4, callback=lambda step, W: seen.append((step, W.shape)))
    assert seen == [(1, (8, 8)), (2, (8, 8)), (3, (8, 8)), (4, (8, 8))]


def test_accepts_float32_and_integers(eeg8):
    a = _quiet(infomax, eeg8.data.astype(np.float32), seed=1, max_steps=2)
    b = _quiet(infomax, np.round(eeg8.data * 1e3).astype(np.int64), seed=1, max_steps=2)
    assert a.unmixing.dtype == b.unmixing.dtype == np.float64


@pytest.mark.parametrize("X, match", [
    (np.zeros((4, 30)), "too few samples"),
    (np.ones((3, 5000)).T, "too few samples.*transposed"),
    (np.full((1, 100), 1.0), "at least 2 channels"),
    (np.zeros(100), "2 dimensions|ndim|2-D"),
    (np.zeros((3, 0)), "empty|too few"),
    (None, "X"),
    (np.array([["a", "b"], ["c", "d"]]), "X"),
])
def test_bad_shapes(X, match):
    with pytest.raises(ValueError, match=match):
        infomax(X)


def test_nan_and_inf_are_rejected(eeg8):
    X = eeg8.data.copy()
    X[2, 17] = np.nan
    with pytest.raises(ValueError, match="finite"):
        infomax(X)
    X[2, 17] = np.inf
    with pytest.raises(ValueError, match="finite"):
        infomax(X)


@pytest.mark.parametrize("make", [
    lambda X: np.vstack([X, X[:1]]),                    # a copied channel
    lambda X: X - X.mean(axis=0, keepdims=True),        # average reference
    lambda X: np.vstack([X[:-1], np.zeros((1, X.shape[1]))]),  # a flat channel
])
def test_rank_deficiency_is_rejected(eeg8, make):
    with pytest.raises(ValueError, match="rank deficient"):
        infomax(make(eeg8.data))


@pytest.mark.parametrize("kwargs, match", [
    ({"method": "gpu"}, "method"), ({"batch": 0}, "batch"), ({"batch": 2.5}, "batch"), ({"batch": 10**9}, "batch"),
    ({"lrate": 0.0}, "lrate"), ({"lrate": float("nan")}, "lrate"), ({"tol": -1.0}, "tol"),
    ({"max_steps": 0}, "max_steps"), ({"max_steps": True}, "max_steps"), ({"seed": -1}, "seed"),
    ({"extended": "yes"}, "extended"), ({"method": "fused", "extended": True}, "extended"),
    ({"block": 64}, "block"), ({"method": "fused", "block": 0}, "block"),
    ({"method": "reference", "callback": print}, "callback"),
])
def test_bad_options(eeg8, kwargs, match):
    with pytest.raises(ValueError, match=match):
        infomax(eeg8.data, **kwargs)


def test_kernels_refuse_more_than_256_channels():
    X = np.random.default_rng(0).normal(size=(257, 2570 * 2))
    with pytest.raises(ValueError, match="at most 256"):
        infomax(X, "fused")


def test_mne_infomax_peer_gives_the_same_quality(eeg8):
    ours = infomax(eeg8.data, "cpu", seed=1)
    mne = ica_peer(eeg8.data, "mne", seed=1)
    a_ours = amari_index(ours.full_unmixing, eeg8.mixing)
    a_mne = amari_index(mne.full_unmixing, eeg8.mixing)
    assert a_ours < AMARI_MAX and a_mne < AMARI_MAX
    assert abs(a_ours - a_mne) < 0.01
    assert match_sources(mne.sources, eeg8.sources)[1].min() > CORRELATION_MIN


@pytest.mark.parametrize("peer", ["picard", "fastica"])
def test_other_peers_separate_too(eeg8, peer):
    r = ica_peer(eeg8.data, peer, seed=0)
    assert amari_index(r.full_unmixing, eeg8.mixing) < AMARI_MAX
    assert r.method == peer and r.n_steps > 0


def test_peer_validation(eeg8):
    with pytest.raises(ValueError, match="peer"):
        ica_peer(eeg8.data, "jade")
    with pytest.raises(ValueError, match="max_iter"):
        ica_peer(eeg8.data, "mne", max_iter=0)
