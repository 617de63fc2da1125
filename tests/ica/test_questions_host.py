"""ps6.q3, the minibatch chain written on the host: the solution gets full marks; a chain that copies W back,
allocates or launches per sample is capped at half; one that never swaps W fails; the trusted chain is the
fused method's update."""

import numpy as np
import pytest
from numba import cuda

from course_lib.grading import get_question, run_tests
from course_lib.ica.kernels import activations_kernel, weight_update_kernel
from course_lib.ica.questions import chain_case, minibatch_reference


def grade(answer):
    return run_tests(get_question("ps6.q3"), answer, hidden=True, seed=7)


def failures(result):
    return " | ".join(" ".join(o.message.split()) for o in result.outcomes if not o.passed)


def _buffers(Xt, W, bias, perm, batch):
    n_channels = W.shape[0]
    return (cuda.to_device(np.ascontiguousarray(Xt)), cuda.to_device(np.asarray(perm, np.int32)),
            cuda.to_device(np.ascontiguousarray(W)), cuda.device_array_like(np.ascontiguousarray(W)),
            cuda.to_device(np.ascontiguousarray(W.T)), cuda.to_device(np.ascontiguousarray(bias)),
            cuda.device_array((batch, n_channels)), cuda.device_array((batch, n_channels)))


def chain_swapped(Xt, W, bias, perm, batch, lrate):
    """Right: two launches per minibatch, W and its spare swapped, W and the bias copied back once."""
    xt, d_perm, now, spare, wt, d_bias, U, Y = _buffers(Xt, W, bias, perm, batch)
    for m in range(len(perm) // batch):
        activations_kernel[batch, W.shape[0]](wt, xt, d_perm, m * batch, d_bias, U, Y)
        weight_update_kernel[W.shape[0], W.shape[0]](now, U, Y, lrate, spare, wt, d_bias)
        now, spare = spare, now
    return now.copy_to_host(), d_bias.copy_to_host()


def chain_checking_W(Xt, W, bias, perm, batch, lrate):
    """Right results, but W copied back after every minibatch to check that it has not blown up."""
    xt, d_perm, now, spare, wt, d_bias, U, Y = _buffers(Xt, W, bias, perm, batch)
    for m in range(len(perm) // batch):
        activations_kernel[batch, W.shape[0]](wt, xt, d_perm, m * batch, d_bias, U, Y)
        weight_update_kernel[W.shape[0], W.shape[0]](now, U, Y, lrate, spare, wt, d_bias)
        now, spare = spare, now
        assert np.all(np.isfinite(now.copy_to_host()))
    return now.copy_to_host(), d_bias.copy_to_host()


def chain_allocating(Xt, W, bias, perm, batch, lrate):
    """Right results, but a new buffer for the next W every minibatch."""
    xt, d_perm, now, _, wt, d_bias, U, Y = _buffers(Xt, W, bias, perm, batch)
    for m in range(len(perm) // batch):
        following = cuda.device_array_like(now)
        activations_kernel[batch, W.shape[0]](wt, xt, d_perm, m * batch, d_bias, U, Y)
        weight_update_kernel[W.shape[0], W.shape[0]](now, U, Y, lrate, following, wt, d_bias)
        now = following
    return now.copy_to_host(), d_bias.copy_to_host()


def chain_per_sample(Xt, W, bias, perm, batch, lrate):
    """Right results, but the activations launched one sample at a time (a block of the kernel per launch)."""
    xt, d_perm, now, spare, wt, d_bias, U, Y = _buffers(Xt, W, bias, perm, batch)
    for m in range(len(perm) // batch):
        for b in range(batch):
            activations_kernel[1, W.shape[0]](wt, xt, d_perm, m * batch + b, d_bias, U[b:b + 1], Y[b:b + 1])
        weight_update_kernel[W.shape[0], W.shape[0]](now, U, Y, lrate, spare, wt, d_bias)
        now, spare = spare, now
    return now.copy_to_host(), d_bias.copy_to_host()


def chain_not_swapped(Xt, W, bias, perm, batch, lrate):
    """Wrong: W is never swapped, so every minibatch updates the first W again (and W^T drifts from it)."""
    xt, d_perm, now, spare, wt, d_bias, U, Y = _buffers(Xt, W, bias, perm, batch)
    for m in range(len(perm) // batch):
        activations_kernel[batch, W.shape[0]](wt, xt, d_perm, m * batch, d_bias, U, Y)
        weight_update_kernel[W.shape[0], W.shape[0]](now, U, Y, lrate, spare, wt, d_bias)
    return spare.copy_to_host(), d_bias.copy_to_host()


def test_the_swapped_chain_gets_full_marks():
    result = grade(chain_swapped)
    assert result.points == 4, failures(result)


@pytest.mark.parametrize("answer, measured", [(chain_checking_W, "copies back to the host"),
                                              (chain_allocating, "device allocations"),
                                              (chain_per_sample, "launches")])
def test_a_chain_that_copies_allocates_or_launches_per_sample_is_capped_at_half(answer, measured):
    result = grade(answer)
    assert result.points <= 2 and measured in failures(result), failures(result)


def test_a_chain_that_never_swaps_passes_only_the_one_minibatch_case():
    result = grade(chain_not_swapped)
    assert result.points == 1 and "five minibatches" in " ".join(
        o.name for o in result.outcomes if not o.passed), failures(result)


def test_the_trusted_chain_is_the_natural_gradient_update_minibatch_by_minibatch():
    data = chain_case(4, 10, 5, seed=3)
    W, bias = minibatch_reference(data["Xt"], data["W"], data["bias"], data["perm"], 5, data["lrate"])
    first_W, first_bias = minibatch_reference(data["Xt"], data["W"], data["bias"], data["perm"][:5], 5,
                                              data["lrate"])
    U = data["Xt"][data["perm"][5:]] @ first_W.T + first_bias
    Y = -np.tanh(U / 2)
    np.testing.assert_allclose(W, first_W + data["lrate"] * (Y.T @ U + 5 * np.eye(4)) @ first_W, rtol=1e-13)
    np.testing.assert_allclose(bias, first_bias + data["lrate"] * Y.sum(axis=0), rtol=1e-13)
    # a partial minibatch is left out: 10 samples in minibatches of 4 make two
    two, _ = minibatch_reference(data["Xt"], data["W"], data["bias"], data["perm"], 4, data["lrate"])
    eight, _ = minibatch_reference(data["Xt"], data["W"], data["bias"], data["perm"][:8], 4, data["lrate"])
    np.testing.assert_array_equal(two, eight)
