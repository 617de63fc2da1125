"""The float64 reference: preprocessing, the Infomax rules of the fact sheet, the measures of separation."""

import math
import warnings

import numpy as np
import pytest

from course_lib.ica import (ConvergenceError, ConvergenceWarning, amari_index, center_and_sphere, default_batch_size,
                            default_lrate, infomax_reference, match_sources, simulate_eeg)

#: Separation thresholds on the 8-channel recording (measured ~0.005 and > 0.99).
AMARI_MAX = 0.02
CORRELATION_MIN = 0.95


def test_sphering_gives_covariance_4_identity(eeg8):
    Xs, sphere, mean = center_and_sphere(eeg8.data)
    np.testing.assert_allclose(Xs.mean(axis=1), 0, atol=1e-10)
    np.testing.assert_allclose(Xs @ Xs.T / (Xs.shape[1] - 1), 4 * np.eye(8), atol=1e-9)
    np.testing.assert_allclose(sphere, sphere.T, atol=1e-12)
    np.testing.assert_allclose(mean, eeg8.data.mean(axis=1))


def test_defaults_of_the_fact_sheet():
    assert default_batch_size(180_000) == math.floor(math.sqrt(60_000)) == 244
    assert default_batch_size(2) == 1
    assert default_lrate(64) == pytest.approx(0.015 / math.log(64))


def test_separates_the_simulated_sources(eeg8):
    r = infomax_reference(eeg8.data, seed=1)
    assert r.converged and r.restarts == 0 and 2 < r.n_steps < 512
    assert r.changes[-1] < 1e-6 <= min(r.changes[:-1])
    assert amari_index(r.full_unmixing, eeg8.mixing) < AMARI_MAX
    order, corr, _ = match_sources(r.sources, eeg8.sources)
    assert sorted(order) == list(range(8)) and corr.min() > CORRELATION_MIN
    np.testing.assert_allclose(r.mixing @ r.full_unmixing, np.eye(8), atol=1e-9)
    np.testing.assert_allclose(r.sources, r.full_unmixing @ (eeg8.data - r.mean[:, None]), atol=1e-8)


def test_same_seed_same_result_other_seed_other_path(eeg8):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = infomax_reference(eeg8.data, seed=3, max_steps=5)
        b = infomax_reference(eeg8.data, seed=3, max_steps=5)
        c = infomax_reference(eeg8.data, seed=4, max_steps=5)
    np.testing.assert_array_equal(a.unmixing, b.unmixing)
    assert not np.allclose(a.unmixing, c.unmixing)


def test_one_minibatch_by_hand():
    """One step with B = N: a single minibatch, computed here from the formulas."""
    rng = np.random.default_rng(0)
    X = rng.laplace(size=(3, 40))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        r = infomax_reference(X, batch=40, max_steps=1, seed=0, lrate=0.01)
    Xs, _, _ = center_and_sphere(X)
    perm = np.random.default_rng(0).permutation(40)
    U = Xs[:, perm]
    Y = -np.tanh(U / 2)
    W = np.eye(3) + 0.01 * (Y @ U.T + 40 * np.eye(3))
    np.testing.assert_allclose(r.unmixing, W, rtol=1e-12)
    np.testing.assert_allclose(r.bias, 0.01 * Y.sum(axis=1), rtol=1e-12)


def test_annealing_on_large_angles(eeg8):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        r = infomax_reference(eeg8.data, seed=1, lrate=0.05, max_steps=30)
    assert r.angles[0] == r.angles[1] == 0.0
    for before, angle, after in zip(r.lrates, r.angles, r.lrates[1:]):
        assert after == pytest.approx(before * (0.9 if angle > 60 else 1.0))
    assert any(a > 60 for a in r.angles), "a large learning rate makes successive changes turn"


def test_blow_up_restarts_with_a_smaller_rate(eeg8):
    r = infomax_reference(eeg8.data, seed=1, lrate=5.0, max_steps=200)
    assert r.restarts >= 1
    # every restart multiplies the rate by 0.9 (and annealing in a run that later blew up may have too)
    factors = math.log(r.lrates[0] / 5.0) / math.log(0.9)
    assert factors >= r.restarts - 1e-9 and factors == pytest.approx(round(factors), abs=1e-6)
    assert np.all(np.isfinite(r.unmixing))


def test_hopeless_blow_up_is_an_error(monkeypatch):
    """Restarts stop with an error once the learning rate is below the floor (raised here to keep it short)."""
    from course_lib.ica import reference

    monkeypatch.setattr(reference, "MIN_LRATE", 1e3)
    X = simulate_eeg(4, 400, seed=0).data
    with pytest.raises(ConvergenceError, match="blew up"):
        infomax_reference(X, lrate=1e6, seed=0)


def test_step_cap_warns_and_reports(eeg8):
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        r = infomax_reference(eeg8.data, seed=1, max_steps=3)
    assert not r.converged and r.n_steps == 3 and len(r.changes) == 3


def test_history_keeps_every_step(eeg8):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        r = infomax_reference(eeg8.data, seed=1, max_steps=4, history=True)
    assert len(r.history) == 4
    np.testing.assert_array_equal(r.history[-1], r.unmixing)


def test_extended_separates_several_subgaussian_sources():
    eeg = simulate_eeg(6, 6000, n_subgaussian=3, seed=5)
    assert sum(k == "line" for k in eeg.kinds) == 3
    ext = infomax_reference(eeg.data, seed=1, extended=True)
    assert amari_index(ext.full_unmixing, eeg.mixing) < AMARI_MAX
    assert sorted(ext.signs[match_sources(ext.sources, eeg.sources)[0]][[j for j, k in enumerate(eeg.kinds)
                                                                          if k == "line"]]) == [-1, -1, -1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain = infomax_reference(eeg.data, seed=1)
    assert amari_index(plain.full_unmixing, eeg.mixing) > 2 * amari_index(ext.full_unmixing, eeg.mixing)


def test_amari_index_bounds():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(5, 5))
    P = np.eye(5)[[2, 0, 4, 1, 3]] * np.array([1, -2, 3, 0.5, -1])[:, None]
    assert amari_index(P @ np.linalg.inv(A), A) == pytest.approx(0, abs=1e-12)
    assert amari_index(np.ones((5, 5)), np.eye(5)) == pytest.approx(1.0)
    assert 0 < amari_index(rng.normal(size=(5, 5)), A) < 1
    assert amari_index(np.eye(1), np.eye(1)) == 0.0


def test_match_sources_undoes_permutation_sign_and_scale():
    rng = np.random.default_rng(1)
    S = rng.laplace(size=(4, 500))
    est = -3 * S[[3, 1, 0, 2]]
    order, corr, signs = match_sources(est, S)
    assert order.tolist() == [2, 1, 3, 0]
    np.testing.assert_allclose(corr, 1.0)
    np.testing.assert_array_equal(signs, -1)
