"""Problem set 6, question 3 (``ps6.q3``): the Infomax step loop with W kept on the device, its reference, its
cases and its grading. Part of problem set 6 (:mod:`course_lib.ica.questions`, which lists it in ``QUESTIONS``).

ps6.q3 (4 points): **the step loop, decided from a few numbers**. Every stepper of the library copies W and the bias
back after every step, because the step loop (:func:`course_lib.ica.reference.run_steps`) decides on the host, from
W, whether the step blew up, how much W changed, whether to anneal the learning rate and whether to stop. Here the
student writes that loop with W on the device from the first step to the last: the fused method's two kernels are
given (:func:`~course_lib.ica.kernels.activations_kernel`, :func:`~course_lib.ica.kernels.weight_update_kernel`), and
``run_steps(Xt, W, bias, perms, batch, lrate, max_weight, tol)`` runs up to ``S = len(perms)`` steps under the rules of
:func:`steps_reference` and returns ``(W, bias, lrate, steps, blown_up)``. What the student decides: which reductions
of W, the W the step started from and the remembered change to compute on the device (a kernel of their own), what
to keep there between steps, and which few numbers to copy back per step. Graded on results (the trusted NumPy loop
:func:`steps_reference`, with annealing, a stop on the tolerance and a blow-up, hidden sizes) and on counts measured
in the student's process (:func:`course_lib.grading.authoring.hostcosts.counted_call`) at two step counts (and, per
run, in the hidden test: a cost paid only at sizes or step counts the two runs do not reach): per
added step, no upload and no allocation, at most :data:`Q3_STEP_DTOH` copies and :data:`Q3_STEP_DTOH_BYTES` bytes
back, at most two launches per minibatch plus :data:`Q3_STEP_LAUNCHES`; per run, W and the bias copied back once.
A loop that copies W back every step (to check or measure it, from any step on, in a thread or element by element),
or uploads each step's permutation, is capped at half.
"""

from __future__ import annotations

import math

import numpy as np

from ..grading.authoring.buffers import fail
from ..grading.authoring.coverage import host_coverage_test
from ..grading.authoring.harness import function, question, result_test
from ..grading.authoring.hostcosts import counted_call, growth_test, judge_bounded
from .kernels import activations_kernel, weight_update_kernel
from .reference import ANNEAL_DEG, ANNEAL_STEP

#: Launches a step may add beyond two per minibatch (the student's own kernels: statistics, a reset, a save).
Q3_STEP_LAUNCHES = 4
#: Copies back to the host a step may add, and their bytes: a few numbers (eight doubles), whatever C.
Q3_STEP_DTOH, Q3_STEP_DTOH_BYTES = 2, 64
#: Device-to-device copies a step may add (W or the bias saved, say): they do not cross the bus.
Q3_STEP_DTOD = 4
#: Copies to the device a run may make, whatever its steps: the samples, the permutations, W, W^T, the bias, a
#: zeroed array of statistics, two spares.
Q3_MAX_HTOD = 8
#: Device allocations a run may make, whatever its steps.
Q3_MAX_ALLOCATIONS = 16
#: Relative tolerance of W and the bias against the NumPy loop (float64 sums in another order, compounded).
Q3_RTOL = 1e-9


def steps_reference(Xt, W, bias, perms, batch, lrate, max_weight, tol, trace=None):
    """The trusted step loop, in NumPy: the library's rules (:func:`course_lib.ica.reference.run_steps`) without the
    restart.

    Step ``k`` (1, 2, ...) runs every whole minibatch of ``perms[k - 1]`` in order (the fused method's update:
    ``U = X_b W^T + bias``, ``Y = -tanh(U / 2)``, ``W += lrate (Y^T U + batch I) W``, ``bias += lrate sum_b Y[b]``;
    a last partial minibatch is left out). After it:

    1. **blow-up**: if some ``|W_ij| > max_weight`` (or is not finite), stop: the step is thrown away;
    2. ``delta = W - W_before``, ``change = sum(delta ** 2)``; from step 3 on, the angle between ``delta`` and the
       remembered change; if it exceeds 60 degrees, ``lrate *= 0.9`` and ``delta`` is remembered; at step 1
       ``delta`` is remembered (at step 2 nothing is);
    3. stop if ``k > 2`` and ``change < tol``, or once the ``S`` permutations are used.

    Parameters
    ----------
    Xt : float64 ndarray (N, C)
    W : float64 ndarray (C, C)
    bias : float64 ndarray (C,)
    perms : int ndarray (S, N)
        One permutation of the samples per step.
    batch : int
    lrate, max_weight, tol : float
    trace : dict, optional
        Filled with ``changes``, ``cosines`` (None for steps 1 and 2) and ``peaks`` (max |W| after each minibatch,
        one list per step run): what the cases are chosen from.

    Returns
    -------
    W : float64 ndarray (C, C)
        After the last step kept (the blown-up step is thrown away).
    bias : float64 ndarray (C,)
    lrate : float
        After annealing.
    steps : int
        Steps kept.
    blown_up : bool
    """
    Xt = np.asarray(Xt, np.float64)
    W, bias, lrate = np.array(W, np.float64), np.array(bias, np.float64), float(lrate)
    eye = np.eye(W.shape[0])
    remembered = None
    trace = {} if trace is None else trace
    trace.update(changes=[], cosines=[], peaks=[])
    for step, perm in enumerate(np.asarray(perms), start=1):
        new_W, new_bias, peaks = W, bias, []
        for m in range(len(perm) // batch):
            U = Xt[perm[m * batch:(m + 1) * batch]] @ new_W.T + new_bias
            Y = -np.tanh(0.5 * U)
            new_W = new_W + lrate * (Y.T @ U + batch * eye) @ new_W
            new_bias = new_bias + lrate * Y.sum(axis=0)
            peaks.append(float(np.max(np.abs(new_W))))
        trace["peaks"].append(peaks)
        if not np.all(np.abs(new_W) <= max_weight):
            return W, bias, lrate, step - 1, True
        delta = (new_W - W).ravel()
        W, bias = new_W, new_bias
        change = float(delta @ delta)
        trace["changes"].append(change)
        cosine = None
        if step > 2:
            cosine = float(delta @ remembered) / math.sqrt(change * float(remembered @ remembered))
        trace["cosines"].append(cosine)
        if step == 1:
            remembered = delta
        elif cosine is not None and math.degrees(math.acos(min(1.0, max(-1.0, cosine)))) > ANNEAL_DEG:
            lrate *= ANNEAL_STEP
            remembered = delta
        if step > 2 and change < tol:
            return W, bias, lrate, step, False
    return W, bias, lrate, len(perms), False


#: Kinds of case: every step run (``tol = 0``), a stop on the tolerance, a blow-up.
CASE_KINDS = ("run", "converge", "blow_up")
#: Margin of every decision of a case: a cosine at least this far from cos 60 degrees, a change or a weight at least
#: this factor from the tolerance or the limit (so that sums in another order decide the same).
_COSINE_MARGIN, _FACTOR = 1e-6, 1.05


#: The cases' rate: this over C (noisy enough for successive changes to turn by more than 60 degrees).
LRATE_SCALE = 0.2


def _draw(n_channels, n_samples, n_steps, rng, scale):
    return {"Xt": rng.laplace(size=(n_samples, n_channels)) / np.sqrt(2.0),
            "W": np.eye(n_channels) + 0.05 * rng.standard_normal((n_channels, n_channels)),
            "bias": np.zeros(n_channels),
            "perms": np.stack([rng.permutation(n_samples) for _ in range(n_steps)]).astype(np.int32),
            "lrate": scale / n_channels}


def _pick(kind, data, trace):
    """``(max_weight, tol)`` that make the case's kind happen with a margin, or None."""
    changes, cosines, peaks = trace["changes"], trace["cosines"], trace["peaks"]
    if any(c is not None and abs(c - 0.5) < _COSINE_MARGIN for c in cosines):
        return None
    if kind == "plain":
        return 1e8, 0.0
    if kind == "run":  # annealed at some step, not at another (both of the loop's ways taken)
        turns = [c < 0.5 for c in cosines if c is not None]
        return (1e8, 0.0) if any(turns) and not all(turns) else None
    if kind == "converge":  # the first step k >= 4 whose change is below every change since step 3
        for k in range(4, len(changes) + 1):
            before = min(changes[2:k - 1])
            if changes[k - 1] * _FACTOR ** 2 < before:
                return 1e8, math.sqrt(changes[k - 1] * before)
        return None
    for k in list(range(3, len(peaks) + 1)) + [2]:  # step k blows up: its end above every weight seen before it
        before = max(p for step in peaks[:k - 1] for p in step)
        if peaks[k - 1][-1] > before * _FACTOR ** 2:
            return math.sqrt(peaks[k - 1][-1] * before), 0.0
    return None


def steps_case(n_channels, n_samples, batch, n_steps, seed, kind="run"):
    """``inputs`` data: C channels of N Laplace samples, W near the identity, a zero bias, ``n_steps`` permutations,
    and a rate, a weight limit and a tolerance such that the loop runs every step (``kind="run"``), stops on the
    tolerance (``"converge"``) or blows up at a step past the first (``"blow_up"``), every decision with a margin. A
    run case anneals at some step and not at another when one of 200 draws does (else it may not); the other kinds
    raise ValueError when none does.
    The limit of a blow-up is small (a few units): the rate is large enough for W to grow and the directions of
    its changes to turn, so that the rate is annealed."""
    if kind not in CASE_KINDS:
        raise ValueError(f"kind must be one of {CASE_KINDS}, got {kind!r}")
    rng = np.random.default_rng(seed)
    plain = None  # the first draw with every cosine clear of cos 60 degrees: a run case that may not anneal
    for _ in range(200):
        data = {**_draw(n_channels, n_samples, n_steps, rng, LRATE_SCALE), "batch": int(batch)}
        trace = {}
        steps_reference(data["Xt"], data["W"], data["bias"], data["perms"], batch, data["lrate"], np.inf, 0.0, trace)
        picked = _pick(kind, data, trace)
        if picked is not None:
            return {**data, "max_weight": float(picked[0]), "tol": float(picked[1])}
        if plain is None and _pick("plain", data, trace) is not None:
            plain = data
    if kind == "run" and plain is not None:
        return {**plain, "max_weight": 1e8, "tol": 0.0}
    raise ValueError(f"no {kind} case found for C = {n_channels}, N = {n_samples}, B = {batch}, {n_steps} steps")


def _inputs(n_channels, n_samples, batch, n_steps, kind):
    return lambda rng, info: steps_case(n_channels, n_samples, batch, n_steps, int(rng.integers(1 << 30)), kind)


def _hidden_case(rng, info):
    """Random sizes and outcome; a size where the outcome drawn does not happen runs every step instead."""
    batch = int(rng.integers(3, 9))
    kind = CASE_KINDS[int(rng.integers(len(CASE_KINDS)))]
    sizes = (int(rng.integers(2, 11)), batch * int(rng.integers(2, 5)) + int(rng.integers(0, batch)), batch,
             int(rng.integers(5, 7)), int(rng.integers(1 << 30)))
    try:
        return steps_case(*sizes, kind)
    except ValueError:
        return steps_case(*sizes, "run")


def _run_steps(answer, data):
    """Runs the student's loop on copies of the inputs, measuring its launches, copies and allocations (and the
    bytes of mapped or managed memory, which the host reads without a copy)."""
    from ..sim import record

    with record() as log:
        out, counts = counted_call(answer.value, np.array(data["Xt"]), np.array(data["W"]), np.array(data["bias"]),
                                   np.array(data["perms"]), data["batch"], data["lrate"], data["max_weight"],
                                   data["tol"])
    if not isinstance(out, tuple) or len(out) != 5:
        raise fail("run_steps must return a tuple (W, bias, lrate, steps, blown_up)")
    mapped = sum(size for size, kind in zip(log.allocations, log.allocation_kinds) if kind in ("mapped", "managed"))
    return {"W": np.asarray(out[0]), "bias": np.asarray(out[1]), "lrate": out[2], "steps": out[3],
            "blown_up": out[4], "DtoD_count": log.summary().get("DtoD_count", 0), "mapped_bytes": int(mapped),
            **counts}


def _label(data):
    n_minibatches = data["perms"].shape[1] // data["batch"]
    return (f"for C = {len(data['W'])}, {len(data['perms'])} permutations of {n_minibatches} minibatches of "
            f"{data['batch']}")


def _expected(data):
    return steps_reference(data["Xt"], data["W"], data["bias"], data["perms"], data["batch"], data["lrate"],
                           data["max_weight"], data["tol"])


def judge_steps(data, got):
    """W, the bias and the rate equal the NumPy loop's to :data:`Q3_RTOL`; the steps and the blow-up flag exactly."""
    want_W, want_bias, want_lrate, want_steps, want_blown = _expected(data)
    label = _label(data)
    if isinstance(got["blown_up"], (bool, np.bool_)) is False or bool(got["blown_up"]) != want_blown:
        raise fail(f"blown_up {label}: {got['blown_up']!r}, expected {want_blown}", "blow_up")
    if not isinstance(got["steps"], (int, np.integer)) or int(got["steps"]) != want_steps:
        raise fail(f"steps {label}: {got['steps']!r}, expected {want_steps}" + (" (the steps kept, before the one "
                   "that blew up)" if want_blown else ""), "stop")
    for name, value, want in (("W", got["W"], want_W), ("bias", got["bias"], want_bias)):
        value = np.asarray(value, np.float64)
        if value.shape != want.shape or not np.allclose(value, want, rtol=Q3_RTOL, atol=1e-12):
            error = float(np.max(np.abs(value - want))) if value.shape == want.shape else "a shape"
            raise fail(f"{name} {label}: differs from the NumPy loop by {error} (shape {value.shape}, expected "
                       f"{want.shape})" + (" (after a blow-up: the W and bias of the last step kept)" if want_blown
                                           else ""), "blow_up" if want_blown else "steps")
    if not isinstance(got["lrate"], (float, np.floating)) or not math.isclose(got["lrate"], want_lrate,
                                                                               rel_tol=1e-12):
        raise fail(f"lrate {label}: {got['lrate']!r}, expected {want_lrate!r}", "anneal")


def _minibatches(data):
    return data["perms"].shape[1] // data["batch"]


def judge_step_counts(data, got):
    """Right results, and a run's costs: uploads and allocations bounded whatever its steps, W and the bias copied
    back once plus a few numbers per step run, launches two per minibatch plus a few per step."""
    judge_steps(data, got)
    run = int(got["steps"]) + int(bool(got["blown_up"]))  # the blown-up step ran too
    n_channels = len(data["W"])
    judge_bounded((("launches", got["launches"], run * (2 * _minibatches(data) + Q3_STEP_LAUNCHES),
                    f"two per minibatch and at most {Q3_STEP_LAUNCHES} per step"),
                   ("copies to the device", got["HtoD_count"], Q3_MAX_HTOD, "the inputs and the permutations, once"),
                   ("bytes copied back to the host", got["DtoH_bytes"],
                    8 * (n_channels * n_channels + n_channels) + Q3_STEP_DTOH_BYTES * run,
                    f"W and the bias once, and at most {Q3_STEP_DTOH_BYTES} bytes per step"),
                   ("bytes of mapped or managed memory", got["mapped_bytes"], Q3_STEP_DTOH_BYTES * max(run, 1),
                    "the host reads it without a copy: a few numbers per step, never W"),
                   ("device allocations", got["allocations"], Q3_MAX_ALLOCATIONS, "none inside the loop")),
                  _label(data))


def _per_step(n_minibatches):
    """What one more step of ``n_minibatches`` may add (:func:`~course_lib.grading.authoring.hostcosts.growth_test`)."""
    return (("launches", "launches", 2 * n_minibatches + Q3_STEP_LAUNCHES,
             f"two per minibatch, at most {Q3_STEP_LAUNCHES} more"),
            ("HtoD_count", "copies to the device", 0, "the permutations go up once, with the inputs"),
            ("DtoH_count", "copies back to the host", Q3_STEP_DTOH, "a few numbers, in one or two copies"),
            ("DtoH_bytes", "bytes copied back to the host", Q3_STEP_DTOH_BYTES, "a few numbers, never W"),
            ("DtoD_count", "device-to-device copies", Q3_STEP_DTOD, "a few saves on the device"),
            ("allocations", "device allocations", 0, "none inside the loop"))


#: The growth test's runs: C = 6 (W is 288 bytes), three minibatches of 6, every step run, three and five steps.
GROWTH = dict(n_channels=6, n_samples=19, batch=6)


def _growth_inputs(n_steps):
    def make(rng, info):
        data = steps_case(GROWTH["n_channels"], GROWTH["n_samples"], GROWTH["batch"], 6, int(rng.integers(1 << 30)))
        return {**data, "perms": data["perms"][:n_steps]}
    return make


Q3 = question(
    "ps6.q3", "the step loop with W on the device: a few numbers back per step", 4,
    answer=function("run_steps", allowed=(activations_kernel, weight_update_kernel)),
    tolerance="W and the bias to 1e-9 (relative) of the NumPy loop, the rate to 1e-12, the steps and the blow-up "
              "flag exactly",
    tests=[
        result_test("every step run, C = 3, annealing", 1, inputs=_inputs(3, 13, 4, 5, "run"), run=_run_steps,
                    judge=judge_steps),
        result_test("a stop on the tolerance, C = 5", 0.5, inputs=_inputs(5, 20, 5, 7, "converge"), run=_run_steps,
                    judge=judge_steps),
        result_test("a step blows up, C = 4: the steps before it are kept", 1, inputs=_inputs(4, 15, 5, 5, "blow_up"),
                    run=_run_steps, judge=judge_steps),
        result_test("hidden: random channels, samples, minibatch size, steps and outcome, and the run's costs", 0.5,
                    hidden=True, inputs=_hidden_case, run=_run_steps, judge=judge_step_counts),
        growth_test("uploads, copies back, launches and allocations per step (record(); C = 6, five steps and "
                    "three: a few numbers back per step, nothing up)", 1,
                    inputs=(_growth_inputs(5), _growth_inputs(3)), run=_run_steps, judge=judge_step_counts,
                    steps=lambda data: len(data["perms"]),
                    per_step=_per_step(GROWTH["n_samples"] // GROWTH["batch"])),
        host_coverage_test("hidden: every statement of your host program ran in the grader's runs"),
    ])
