"""The split persistent step: the CPU path's weights, its counts, a blow-up stopping the step, no race."""

import warnings

import numpy as np
import pytest

from course_lib.ica import ConvergenceWarning, amari_index, infomax, simulate_eeg
from course_lib.ica._gpu_split import PERMUTATION_SLOTS, SplitStepper
from course_lib.ica.api import GPU_METHODS, METHODS
from course_lib.ica.cpu import CpuStepper
from course_lib.ica.reference import MAX_WEIGHT, PermutationStream, center_and_sphere, run_steps
from course_lib.ica._split_step import grid_syncs_per_step, plan_split_step, split_step_kernel
from course_lib.sim import check, record


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fn(*args, **kwargs)


def test_it_is_a_gpu_method_and_not_yet_the_default():
    assert "persistent_split" in METHODS and "persistent_split" in GPU_METHODS
    assert GPU_METHODS[0] == "persistent"  # the default changes only on a GPU measurement


def test_it_follows_the_cpu_path(tiny):
    """157 samples (prime), batch 7: 22 minibatches per step, the last partial one dropped."""
    cpu = _quiet(infomax, tiny.data, "cpu", seed=7, max_steps=1)
    got = _quiet(infomax, tiny.data, "persistent_split", seed=7, max_steps=1)
    np.testing.assert_allclose(got.unmixing, cpu.unmixing, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.bias, cpu.bias, rtol=0, atol=1e-12)
    assert (got.n_steps, got.restarts, got.minibatches_run) == (cpu.n_steps, cpu.restarts, cpu.minibatches_run)
    assert got.method == "persistent_split"


def _run(X, make, **kwargs):
    return _quiet(run_steps, X, make, method="persistent_split", **kwargs)


def test_to_convergence_the_amari_index_is_the_cpus():
    """3 channels x 60 samples, minibatches of 30, tol 1e-3: 10 steps to convergence."""
    eeg = simulate_eeg(3, 60, seed=0)
    cpu = _quiet(infomax, eeg.data, "cpu", seed=0, batch=30, tol=1e-3)
    got = _run(eeg.data, lambda Xs, b: SplitStepper(Xs, b, per_block=15), seed=0, batch=30, tol=1e-3)
    assert cpu.converged and got.converged
    assert (got.n_steps, got.steps_run, got.minibatches_run) == (cpu.n_steps, cpu.steps_run, cpu.minibatches_run)
    assert abs(amari_index(got.full_unmixing, eeg.mixing) - amari_index(cpu.full_unmixing, eeg.mixing)) < 1e-6
    np.testing.assert_allclose(got.unmixing, cpu.unmixing, atol=1e-10)


@pytest.mark.parametrize("shape, batch, kwargs", [
    ((2, 21), 1, {}),  # one sample per minibatch: 21 minibatches, an odd count for the W ping-pong
    ((3, 30), 3, {"grid": 1}),  # one block owns every sample and every row
    ((3, 83), 40, {"grid": 2, "per_block": 13}),  # blocks loop over owners and rows
    ((5, 250), 250, {"per_block": 250}),  # one owner, two tiles of shared memory (204 + 46 samples at 5 channels)
])
def test_awkward_splits_give_the_same_weights(shape, batch, kwargs):
    X = simulate_eeg(*shape, seed=1).data
    cpu = _quiet(infomax, X, "cpu", seed=0, max_steps=1, batch=batch)
    got = _run(X, lambda Xs, b: SplitStepper(Xs, b, **kwargs), seed=0, max_steps=1, batch=batch)
    np.testing.assert_allclose(got.unmixing, cpu.unmixing, atol=1e-11)
    np.testing.assert_allclose(got.bias, cpu.bias, atol=1e-11)


def test_the_step_is_the_cpus_step_on_the_same_permutation_stream():
    """Stepper against stepper from weights that are not the identity (uploaded), three steps over two
    permutation chunks of two slots."""
    Xs, _, _ = center_and_sphere(simulate_eeg(4, 50, seed=5).data)
    split, cpu = SplitStepper(Xs, 9, slots=2), CpuStepper(Xs, 9)
    split.take_permutations(PermutationStream(np.random.default_rng(11), 50))
    rng = np.random.default_rng(11)
    W = np.eye(4) + 0.05 * np.random.default_rng(0).normal(size=(4, 4))
    bias = np.full(4, 0.1)
    Wc, bc = W, bias
    for _ in range(3):
        W, bias, blown = split.step(None, W, bias, 0.002, MAX_WEIGHT)
        Wc, bc, blown_c = cpu.step(rng.permutation(50), Wc, bc, 0.002, MAX_WEIGHT)
        assert blown is False and blown_c is False and split.minibatches_run == 50 // 9
        np.testing.assert_allclose(W, Wc, atol=1e-12)
        np.testing.assert_allclose(bias, bc, atol=1e-12)
    with pytest.raises(ValueError, match="draws its own permutations"):
        split.step(np.arange(50), W, bias, 0.002, MAX_WEIGHT)


def _grid_syncs(monkeypatch):
    from numba.cuda.simulator import kernelapi

    calls = []
    original = kernelapi.GridGroup.sync

    def sync(self):
        calls.append(1)
        return original(self)

    monkeypatch.setattr(kernelapi.GridGroup, "sync", sync)
    return calls


def test_a_blow_up_stops_the_step_and_the_counts(monkeypatch):
    """lrate 0.2, one step per pass: 4 restarts, each stopped inside its step where the CPU stops it.
    Per step one launch and one download; permutations up K steps at a time; 4 allocations per call;
    two grid barriers per minibatch run, plus one per step."""
    X = simulate_eeg(3, 60, seed=0).data
    cpu = _quiet(infomax, X, "cpu", seed=2, batch=10, lrate=0.2, max_steps=1)
    syncs = _grid_syncs(monkeypatch)
    with record() as log:
        got = _quiet(infomax, X, "persistent_split", seed=2, batch=10, lrate=0.2, max_steps=1)
    assert cpu.restarts == got.restarts == 4 and got.steps_run == cpu.steps_run == 5
    assert got.minibatches_run == cpu.minibatches_run == 26 < 5 * 6  # a whole-step check would run 30
    np.testing.assert_allclose(got.unmixing, cpu.unmixing, atol=1e-12)
    assert got.lrate == cpu.lrate
    launches = log.launches
    assert [e.kernel for e in launches] == ["split_step_kernel"] * got.steps_run
    plan = plan_split_step(3, 10, 10 ** 6, 32)
    assert {e.griddim for e in launches} == {(plan.grid, 1, 1)} and plan.grid == 3 + 3
    summary = log.summary()
    assert summary["HtoD_count"] == 1 + -(-got.steps_run // PERMUTATION_SLOTS)  # the data, then the permutations
    assert summary["DtoH_count"] == got.steps_run
    assert log.counts()["device_allocations"] == 4  # data, state, workspace, permutations: none per step (pinned host buffers apart)
    # Summed over the steps: sum of (1 + 2 m_s) = steps + 2 (minibatches run), every thread of the grid.
    assert len(syncs) == plan.grid * plan.threads * (got.steps_run * grid_syncs_per_step(0) + 2 * got.minibatches_run)
    assert grid_syncs_per_step(22) == 45


def _host_minibatches(Xt, perm, batch, lrate, max_weight, n_minibatches):
    """The reference's minibatches from W = I, bias = 0; stops after the one that blows up."""
    n_channels = Xt.shape[1]
    W, bias, ran = np.eye(n_channels), np.zeros(n_channels), 0
    for t in range(n_minibatches):
        x = Xt[perm[t * batch:(t + 1) * batch]]
        u = x @ W.T + bias
        y = -np.tanh(0.5 * u)
        W = W + lrate * (y.T @ u + batch * np.eye(n_channels)) @ W
        bias = bias + lrate * y.sum(axis=0)
        ran = t + 1
        if not np.all(np.abs(W) <= max_weight):
            break
    return W, bias, ran


@pytest.mark.parametrize("n_channels, n_samples, batch, grid, per_block, lrate", [
    (4, 37, 6, 3, 4, 0.01),  # owners and rows share the 3 blocks
    (4, 37, 6, 3, 4, 5.0),  # blows up: the grid leaves the step after that minibatch
    (33, 5, 4, 2, 4, 0.001),  # more channels (and bias columns) than threads
])
def test_no_race_under_the_checker(n_channels, n_samples, batch, grid, per_block, lrate):
    """Launched from W = 0 with reset = 1 (the kernel sets W = I, bias = 0), slot 1 of two permutations."""
    rng = np.random.default_rng(8)
    Xt = 3.0 * rng.normal(size=(n_samples, n_channels))
    perms = np.stack([rng.permutation(n_samples) for _ in range(2)]).astype(np.int32)
    n_minibatches, max_weight = n_samples // batch, 1e3
    W, bias, status = np.zeros((n_channels, n_channels)), np.full(n_channels, 7.0), np.zeros(2)
    partials = np.zeros((-(-batch // per_block), n_channels * n_channels + n_channels))
    args = (W, np.zeros_like(W), np.zeros_like(W), bias, status, Xt, perms, 1, n_minibatches, batch, per_block,
            lrate, max_weight, 1, partials)
    report = check(split_step_kernel, grid, 32, *args, seed=3)
    assert report.ok, report
    W_ref, b_ref, ran = _host_minibatches(Xt, perms[1], batch, lrate, max_weight, n_minibatches)
    assert status[0] == ran
    if lrate > 1:
        assert ran < n_minibatches and status[1] == 1.0
    else:
        assert ran == n_minibatches and status[1] == 0.0
        np.testing.assert_allclose(W, W_ref, atol=1e-12)
        np.testing.assert_allclose(bias, b_ref, atol=1e-12)


@pytest.mark.parametrize("kwargs, match", [
    ({"block": 64}, "block"), ({"extended": True}, "extended"),
])
def test_options_it_does_not_take_are_refused(tiny, kwargs, match):
    with pytest.raises(ValueError, match=match):
        infomax(tiny.data, "persistent_split", **kwargs)


def test_a_plan_outside_the_kernels_limits_is_refused():
    with pytest.raises(ValueError, match="n_channels"):
        plan_split_step(257, 10, 100)
    with pytest.raises(ValueError, match="threads"):
        plan_split_step(4, 10, 100, threads=48)
    with pytest.raises(ValueError, match="per_block"):
        plan_split_step(4, 10, 100, per_block=0)
    plan = plan_split_step(64, 244, 132)
    assert (plan.owners, plan.grid, plan.partial_bytes) == (61, 125, 8 * 61 * (64 * 64 + 64))
    assert plan_split_step(256, 244, 132).grid == 132  # capped: blocks loop over owners and rows
