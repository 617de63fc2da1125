"""ps6.q3, the step loop with W on the device: right loops (a flag or an atomic max, one or two reads a step, W
rotated or saved) get full marks; loops that copy W back every step (from any step on, above a size, element by
element, in a thread, from mapped memory), upload each step's permutation or read their numbers one element at a
time are capped at half; a loop that returns the blown-up W fails the blow-up case; the trusted loop follows the
library's rules."""

import dataclasses
import math
import threading

import numpy as np
import pytest
from numba import cuda

from course_lib.grading import get_question, run_tests
from course_lib.ica.kernels import activations_kernel, weight_update_kernel
from course_lib.ica.questions import steps_case, steps_reference
from course_lib.ica.reference import ReferenceStepper


def grade(answer, hidden=True, only=None):
    """The question's grade, or (``only``: the start of a test's name) that test's alone (its failure caps the
    whole question when it is a technique test: the harness's rule, tested with the harness)."""
    question = get_question("ps6.q3")
    if only is not None:
        tests = tuple(t for t in question.tests if t.name.startswith(only))
        question = dataclasses.replace(question, tests=tests, points=sum(t.points for t in tests))
        assert len(question.tests) == 1
    return run_tests(question, answer, hidden=hidden, seed=7)


def failures(result):
    return " | ".join(" ".join(o.message.split()) for o in result.outcomes if not o.passed)


@cuda.jit
def flag_kernel(W, W_before, remembered, delta, max_weight, stats):
    """stats += (sum d^2, sum d r); stats[2] = 1 for a weight past the limit (or NaN)."""
    i, j = cuda.grid(2)
    if i < W.shape[0] and j < W.shape[1]:
        d = W[i, j] - W_before[i, j]
        delta[i, j] = d
        cuda.atomic.add(stats, 0, d * d)
        cuda.atomic.add(stats, 1, d * remembered[i, j])
        if not abs(W[i, j]) <= max_weight:
            stats[2] = 1.0


@cuda.jit
def peak_kernel(W, W_before, remembered, delta, stats):
    """stats += (sum d^2, sum d r); stats[2] = max |W| (inf for NaN), by an atomic max."""
    i, j = cuda.grid(2)
    if i < W.shape[0] and j < W.shape[1]:
        d = W[i, j] - W_before[i, j]
        delta[i, j] = d
        cuda.atomic.add(stats, 0, d * d)
        cuda.atomic.add(stats, 1, d * remembered[i, j])
        w = abs(W[i, j])
        cuda.atomic.max(stats, 2, w if w == w else math.inf)


@cuda.jit
def zero_kernel(stats):
    if cuda.grid(1) < stats.shape[0]:
        stats[cuda.grid(1)] = 0.0


class Loop:
    """The device state of a run: the data, every permutation, three W buffers, W^T, the bias and its copy from
    before the step, the changes, U and Y."""

    def __init__(self, Xt, W, bias, perms, batch, upload_perms=True):
        n = W.shape[0]
        self.n, self.batch, self.n_minibatches = n, batch, perms.shape[1] // batch
        self.xt = cuda.to_device(np.ascontiguousarray(Xt))
        self.perms = cuda.to_device(np.asarray(perms, np.int32)) if upload_perms else None
        self.buffers = [cuda.to_device(np.array(W)), cuda.device_array((n, n)), cuda.device_array((n, n))]
        self.before = self.buffers[0]
        self.wt = cuda.to_device(np.ascontiguousarray(W.T))
        self.bias = cuda.to_device(np.array(bias))
        self.bias_before = cuda.device_array(n)
        self.remembered = cuda.to_device(np.zeros((n, n)))
        self.delta = cuda.device_array((n, n))
        self.U, self.Y = cuda.device_array((batch, n)), cuda.device_array((batch, n))
        self.grid = (-(-n // 8), -(-n // 8))
        self.lrate, self.remembered_change = 0.0, 0.0

    def chain(self, perm, lrate):
        """Every minibatch of a step from ``before``, through the two other buffers; returns the last W."""
        self.bias_before.copy_to_device(self.bias)
        now, spare = [b for b in self.buffers if b is not self.before]
        current = self.before
        for m in range(self.n_minibatches):
            activations_kernel[self.batch, self.n](self.wt, self.xt, perm, m * self.batch, self.bias, self.U, self.Y)
            weight_update_kernel[self.n, self.n](current, self.U, self.Y, lrate, now, self.wt, self.bias)
            current, now, spare = now, spare, now
        return current

    def decide(self, step, change, dot, lrate, current):
        """The host's rules once the step is kept; returns the rate."""
        self.before = current
        cosine = dot / math.sqrt(change * self.remembered_change) if step > 2 else 1.0
        annealed = math.degrees(math.acos(min(1.0, max(-1.0, cosine)))) > 60.0
        if step == 1 or annealed:
            self.remembered, self.delta, self.remembered_change = self.delta, self.remembered, change
        return lrate * 0.9 if annealed else lrate

    def blown(self, lrate, step):
        return self.before.copy_to_host(), self.bias_before.copy_to_host(), lrate, step - 1, True

    def done(self, lrate, step):
        return self.before.copy_to_host(), self.bias.copy_to_host(), lrate, step, False


# ----------------------------------------------------------------------------- right, in different ways
def loop_flag_slots(Xt, W, bias, perms, batch, lrate, max_weight, tol):
    """Right: a flag and the two sums in row s of a (S, 3) array zeroed once, read in one 24-byte copy per step."""
    state = Loop(Xt, W, bias, perms, batch)
    stats = cuda.to_device(np.zeros((len(perms), 3)))
    for step in range(1, len(perms) + 1):
        current = state.chain(state.perms[step - 1], lrate)
        flag_kernel[state.grid, (8, 8)](current, state.before, state.remembered, state.delta, max_weight,
                                        stats[step - 1])
        change, dot, flag = stats[step - 1].copy_to_host()
        if flag:
            return state.blown(lrate, step)
        lrate = state.decide(step, change, dot, lrate, current)
        if step > 2 and change < tol:
            return state.done(lrate, step)
    return state.done(lrate, len(perms))


def loop_peak_saved(Xt, W, bias, perms, batch, lrate, max_weight, tol):
    """Right: an atomic max of |W| compared on the host, one array of three zeroed by a kernel every step, and the
    step's W saved by a device-to-device copy (no rotation of buffers)."""
    state = Loop(Xt, W, bias, perms, batch)
    stats = cuda.device_array(3)
    saved = cuda.device_array_like(state.before)
    for step in range(1, len(perms) + 1):
        zero_kernel[1, 32](stats)
        saved.copy_to_device(state.before)
        current = state.chain(state.perms[step - 1], lrate)
        peak_kernel[state.grid, (8, 8)](current, saved, state.remembered, state.delta, stats)
        change, dot, peak = stats.copy_to_host()
        if not peak <= max_weight:
            return state.blown(lrate, step)
        lrate = state.decide(step, change, dot, lrate, current)
        if step > 2 and change < tol:
            return state.done(lrate, step)
    return state.done(lrate, len(perms))


def loop_flag_then_sums(Xt, W, bias, perms, batch, lrate, max_weight, tol):
    """Right: two reads a step, the flag alone (one element, 8 bytes) and then the two sums (one 16-byte copy)."""
    state = Loop(Xt, W, bias, perms, batch)
    stats = cuda.to_device(np.zeros((len(perms), 3)))
    for step in range(1, len(perms) + 1):
        current = state.chain(state.perms[step - 1], lrate)
        flag_kernel[state.grid, (8, 8)](current, state.before, state.remembered, state.delta, max_weight,
                                        stats[step - 1])
        if stats[step - 1, 2]:
            return state.blown(lrate, step)
        change, dot = stats[step - 1, :2].copy_to_host()
        lrate = state.decide(step, change, dot, lrate, current)
        if step > 2 and change < tol:
            return state.done(lrate, step)
    return state.done(lrate, len(perms))


@pytest.mark.parametrize("answer, hidden", [(loop_peak_saved, True), (loop_flag_then_sums, False)])
def test_loops_that_decide_from_a_few_numbers_get_full_marks(answer, hidden):
    """(The solution's loop, loop_flag_slots's, is graded with the problem set's fixtures.)"""
    result = grade(answer, hidden=hidden)
    assert result.points == 4 and result.outcomes and all(o.passed for o in result.outcomes), \
        failures(result)


# ----------------------------------------------------------------------------- W back on the host
def _host_stats(state, current, before_host, max_weight):
    """The library's way: W copied back, the change and the blow-up computed on the host."""
    W_host = current.copy_to_host()
    delta = W_host - before_host
    dot = float((delta * state.remembered_host).sum())
    return W_host, float((delta ** 2).sum()), dot, not np.all(np.abs(W_host) <= max_weight), delta


def loop_copies_W(Xt, W, bias, perms, batch, lrate, max_weight, tol):
    """W copied back after every step, the decisions taken from it on the host (as the library's steppers do)."""
    state = Loop(Xt, W, bias, perms, batch)
    before_host, state.remembered_host = np.array(W), np.zeros_like(W)
    for step in range(1, len(perms) + 1):
        current = state.chain(state.perms[step - 1], lrate)
        W_host, change, dot, blown_up, delta = _host_stats(state, current, before_host, max_weight)
        if blown_up:
            return state.blown(lrate, step)
        annealed = step > 2 and dot / math.sqrt(change * state.remembered_change) < 0.5
        if step == 1 or annealed:
            state.remembered_host, state.remembered_change = delta, change
        lrate = lrate * 0.9 if annealed else lrate
        state.before, before_host = current, W_host
        if step > 2 and change < tol:
            return state.done(lrate, step)
    return state.done(lrate, len(perms))


def _device_loop(Xt, W, bias, perms, batch, lrate, max_weight, tol, extra, upload_perms=True):
    """The right loop with ``extra(state, step, current, perms)`` run after each chain (what the variant adds)."""
    state = Loop(Xt, W, bias, perms, batch, upload_perms=upload_perms)
    stats = cuda.to_device(np.zeros((len(perms), 3)))
    for step in range(1, len(perms) + 1):
        perm = extra(state, step, None, perms)
        current = state.chain(perm, lrate)
        flag_kernel[state.grid, (8, 8)](current, state.before, state.remembered, state.delta, max_weight,
                                        stats[step - 1])
        change, dot, flag = stats[step - 1].copy_to_host()
        if flag:
            return state.blown(lrate, step)
        lrate = state.decide(step, change, dot, lrate, current)
        if step > 2 and change < tol:
            return state.done(lrate, step)
    return state.done(lrate, len(perms))


def loop_uploads_permutations(*args):
    """Each step's permutation uploaded at the start of the step."""
    return _device_loop(*args, lambda state, step, current, perms: cuda.to_device(perms[step - 1]),
                        upload_perms=False)


def loop_checks_W_from_step_3(*args):
    """The numbers from the device, but W copied back to look at it, from step 3 on."""
    def extra(state, step, current, perms):
        if step >= 3:
            assert not np.any(np.isnan(state.before.copy_to_host()))
        return state.perms[step - 1]
    return _device_loop(*args, extra)


def loop_checks_W_above_5_channels(*args):
    """W copied back every step, but only at more than five channels."""
    def extra(state, step, current, perms):
        if state.n > 5:
            assert not np.any(np.isnan(state.before.copy_to_host()))
        return state.perms[step - 1]
    return _device_loop(*args, extra)


def loop_reads_W_by_element(*args):
    """max |W| read element by element: d[i, j] is a copy each."""
    def extra(state, step, current, perms):
        assert max(abs(state.before[i, j]) for i in range(state.n) for j in range(state.n)) < 1e300
        return state.perms[step - 1]
    return _device_loop(*args, extra)


def loop_copies_W_in_a_thread(*args):
    """W copied back every step by a worker thread."""
    def extra(state, step, current, perms):
        worker = threading.Thread(target=state.before.copy_to_host)
        worker.start()
        worker.join()
        return state.perms[step - 1]
    return _device_loop(*args, extra)


def loop_reads_three_elements(Xt, W, bias, perms, batch, lrate, max_weight, tol):
    """The three numbers read as three elements d[s, k]: three copies (and waits) a step."""
    state = Loop(Xt, W, bias, perms, batch)
    stats = cuda.to_device(np.zeros((len(perms), 3)))
    for step in range(1, len(perms) + 1):
        current = state.chain(state.perms[step - 1], lrate)
        flag_kernel[state.grid, (8, 8)](current, state.before, state.remembered, state.delta, max_weight,
                                        stats[step - 1])
        change, dot, flag = stats[step - 1, 0], stats[step - 1, 1], stats[step - 1, 2]
        if flag:
            return state.blown(lrate, step)
        lrate = state.decide(step, change, dot, lrate, current)
        if step > 2 and change < tol:
            return state.done(lrate, step)
    return state.done(lrate, len(perms))


def loop_mapped_W(Xt, W, bias, perms, batch, lrate, max_weight, tol):
    """W's three buffers in mapped memory: the host reads W every step, with no copy recorded."""
    state = Loop(Xt, W, bias, perms, batch)
    state.buffers = [cuda.mapped_array(W.shape, np.float64) for _ in range(3)]
    state.buffers[0][:] = W
    state.before = state.buffers[0]
    stats = cuda.to_device(np.zeros((len(perms), 3)))
    for step in range(1, len(perms) + 1):
        current = state.chain(state.perms[step - 1], lrate)
        cuda.synchronize()
        blown_up = not np.all(np.abs(np.asarray(current)) <= max_weight)
        flag_kernel[state.grid, (8, 8)](current, state.before, state.remembered, state.delta, max_weight,
                                        stats[step - 1])
        change, dot, _ = stats[step - 1].copy_to_host()
        if blown_up:
            return state.blown(lrate, step)
        lrate = state.decide(step, change, dot, lrate, current)
        if step > 2 and change < tol:
            return state.done(lrate, step)
    return state.done(lrate, len(perms))


@pytest.mark.parametrize("answer, measured", [
    (loop_copies_W, "bytes copied back"), (loop_uploads_permutations, "copies to the device"),
    (loop_checks_W_from_step_3, "bytes copied back"), (loop_checks_W_above_5_channels, "bytes copied back"),
    (loop_reads_W_by_element, "back to the host"), (loop_copies_W_in_a_thread, "bytes copied back"),
    (loop_reads_three_elements, "copies back"), (loop_mapped_W, "mapped or managed memory")])
def test_loops_that_copy_W_or_upload_per_step_fail_the_technique_test(answer, measured):
    result = grade(answer, only="uploads, copies back")
    (outcome,) = result.outcomes
    assert not outcome.passed and outcome.technique and measured in outcome.message, failures(result)


def test_a_loop_that_copies_W_back_every_step_is_capped_at_half():
    result = grade(loop_copies_W, hidden=False)
    assert result.points == 2 and "bytes copied back" in failures(result), failures(result)


def loop_returns_blown_W(Xt, W, bias, perms, batch, lrate, max_weight, tol):
    """Wrong: on a blow-up, the blown-up W and bias come back, not the last ones kept."""
    W_out, bias_out, lrate_out, steps, blown_up = loop_flag_slots(Xt, W, bias, perms, batch, lrate, max_weight, tol)
    if blown_up:
        return W_out * 10.0, bias_out, lrate_out, steps, blown_up
    return W_out, bias_out, lrate_out, steps, blown_up


def test_a_loop_that_keeps_the_blown_up_step_fails_the_blow_up_case():
    result = grade(loop_returns_blown_W, only="a step blows up")
    assert result.points == 0 and "the last step kept" in failures(result), failures(result)


# ----------------------------------------------------------------------------- the trusted loop
def test_the_trusted_loop_is_the_reference_steps_and_the_library_rules():
    data = steps_case(3, 13, 4, 5, seed=11)
    trace = {}
    W, bias, lrate, steps, blown_up = steps_reference(data["Xt"], data["W"], data["bias"], data["perms"], 4,
                                                      data["lrate"], data["max_weight"], data["tol"], trace)
    assert (steps, blown_up) == (5, False) and lrate < data["lrate"]  # a run case anneals at some step
    # one step is the reference stepper's (the library's minibatches; its W is C x C, its data channels-major)
    stepper = ReferenceStepper(np.ascontiguousarray(data["Xt"].T), 4)
    one_W, one_bias, _ = stepper.step(data["perms"][0], data["W"], data["bias"], data["lrate"], np.inf)
    first = steps_reference(data["Xt"], data["W"], data["bias"], data["perms"][:1], 4, data["lrate"], np.inf, 0.0)
    np.testing.assert_allclose(first[0], one_W, rtol=1e-12)
    np.testing.assert_allclose(first[1], one_bias, rtol=1e-12, atol=1e-15)
    # a blow-up keeps the steps before it; a stop on the tolerance keeps the step that fell below it
    blow = steps_case(4, 15, 5, 5, seed=2, kind="blow_up")
    kept = steps_reference(blow["Xt"], blow["W"], blow["bias"], blow["perms"], 5, blow["lrate"], blow["max_weight"],
                           0.0)
    assert kept[4] and 1 <= kept[3] < 5
    before = steps_reference(blow["Xt"], blow["W"], blow["bias"], blow["perms"][:kept[3]], 5, blow["lrate"], np.inf,
                             0.0)
    np.testing.assert_array_equal(kept[0], before[0])
    converge = steps_case(5, 20, 5, 7, seed=3, kind="converge")
    stopped = steps_reference(converge["Xt"], converge["W"], converge["bias"], converge["perms"], 5,
                              converge["lrate"], converge["max_weight"], converge["tol"], trace)
    assert not stopped[4] and 3 <= stopped[3] < 7 and trace["changes"][-1] < converge["tol"]
