"""Problem set 4 (``solutions/ps4_poisson.ipynb``): questions, visible and hidden tests.

- ``ps4.q1`` (6 points): the double-buffered Jacobi kernel. Answer:
  ``check("ps4.q1", jacobi_kernel)``; graded by running it for a few iterations (the
  grader swaps the buffers) and comparing the cloned image with the reference using the
  two classic tolerances.
- ``ps4.q2`` (2 points): classify the mask's pixels (NumPy). Answer: a function
  ``classify(mask)`` returning uint8 labels 0 / 1 / 2.
- ``ps4.q3`` (2 points): memory traffic and launch cost. Answer: a dict of two functions,
  ``{"bytes_per_iteration": f(pixels), "launch_bound": g(pixels, bandwidth, launch_seconds)}``.

Every test is split (see :mod:`course_lib.grading.core`): ``inputs`` and ``judge`` run in the
grader, ``produce`` runs the student's answer and returns raw outputs (plain arrays and numbers),
so nothing a submission patches reaches the judgement.
"""

from __future__ import annotations

import math

import numpy as np

from .. import device
from ..grading.core import Question, Test, TestFailure, as_student_kernel
from ..grading.ownwork import as_student_function
from ..grading.trusted import trusted_check
from .model import BYTES_PER_PIXEL_ITERATION
from .reference import compare_images
from .data import cat_in_coffee, synthetic_pair
from .reference import INTERIOR, classify_mask, compose, jacobi_reference, prepare

PROBLEM_SET = "ps4"
#: The two tolerances of ps4.q1: a pixel may differ by at most 2 levels, and at most 1% of
#: the pixels may differ at all (float32 sums in another order truncate differently).
MAX_PIXEL_DIFF = 2
MAX_FRACTION = 0.01
BLOCK = (8, 8)
#: Width of the frame of guard pixels around every array the kernel gets: the grid overshoots
#: the image by less than a block, so a write past the image lands in the frame, where it is
#: seen even on a GPU (which, unlike the simulator, does not fault on such writes).
GUARD = max(BLOCK)
#: Value of the guard pixels of the float32 planes (outside [0, 255]: reading it shows too).
SENTINEL = np.float32(-7777.0)
#: Guard value of the labels: a kernel that reads labels past the image takes the guard pixel
#: for strict interior and adds the planes' sentinel, so a missing bounds check shows on a GPU.
LABEL_SENTINEL = INTERIOR


# ----------------------------------------------------------------------------- q1
def _prepare_kernel(kernel):
    return as_student_kernel(kernel, "Jacobi kernel")


def _guarded(array, fill):
    """A copy of ``array`` (..., H, W) inside a frame of ``GUARD`` pixels of ``fill``."""
    frame = [(0, 0)] * (array.ndim - 2) + [(GUARD, GUARD)] * 2
    return np.pad(array, frame, constant_values=fill)


def _inside(padded):
    """The (..., H, W) image part of a guarded array (a view; NumPy or device array)."""
    # Explicit slices: device arrays on a GPU do not take an Ellipsis.
    return padded[(slice(None),) * (padded.ndim - 2) + (slice(GUARD, -GUARD),) * 2]


def run_jacobi_guarded(kernel, labels, rhs, guess, iterations, block=BLOCK):
    """Launch a one-iteration kernel ``iterations`` times, swapping two guarded buffers.

    Every array lives inside a frame of ``GUARD`` sentinel pixels; the kernel gets exact-size
    views, so out-of-image writes land in the frame.

    Parameters
    ----------
    kernel : @cuda.jit kernel ``(prev, rhs, labels, nxt)``
    labels : ndarray of shape (H, W), uint8
    rhs, guess : ndarray of shape (3, H, W), float32
    iterations : int

    Returns
    -------
    dict of ndarray
        ``"prev"`` (the last iterate) and ``"next"`` (the other buffer), float32 of shape
        (3, H + 2 GUARD, W + 2 GUARD); ``"rhs"`` and ``"labels"`` likewise, frames included.

    Raises
    ------
    TestFailure
        When the simulator reports an index outside an array.
    """
    from numba import cuda

    h, w = labels.shape
    grid = (math.ceil(w / block[0]), math.ceil(h / block[1]))
    d_prev = cuda.to_device(_guarded(np.asarray(guess, np.float32), SENTINEL))
    d_next = cuda.to_device(_guarded(np.asarray(guess, np.float32), SENTINEL))
    d_rhs = cuda.to_device(_guarded(np.asarray(rhs, np.float32), SENTINEL))
    d_labels = cuda.to_device(_guarded(np.asarray(labels, np.uint8), LABEL_SENTINEL))
    rhs_view, labels_view = _inside(d_rhs), _inside(d_labels)
    prev_view, next_view = _inside(d_prev), _inside(d_next)
    try:
        for _ in range(iterations):
            kernel[grid, block](prev_view, rhs_view, labels_view, next_view)
            d_prev, d_next = d_next, d_prev
            prev_view, next_view = next_view, prev_view
    except IndexError as exc:  # the simulator checks indices; a GPU does not (see the guards)
        raise TestFailure(f"the kernel accessed outside the image ({exc}); guard x < W and y < H, and every "
                          "neighbour") from None
    cuda.synchronize()
    return {"prev": d_prev.copy_to_host(), "next": d_next.copy_to_host(), "rhs": d_rhs.copy_to_host(),
            "labels": d_labels.copy_to_host()}


def _check_guards(buffers, shape):
    """Raise TestFailure when a guard pixel of the returned buffers changed."""
    h, w = shape
    for name, fill in (("prev", SENTINEL), ("next", SENTINEL), ("rhs", SENTINEL), ("labels", LABEL_SENTINEL)):
        padded = buffers[name]
        frame = np.ones(padded.shape, bool)
        _inside(frame)[...] = False
        changed = frame & (padded != fill)
        if changed.any():
            where = np.argwhere(changed)[0]
            y, x = int(where[-2]) - GUARD, int(where[-1]) - GUARD
            raise TestFailure(f"the kernel wrote outside the image: {int(changed.sum())} values beyond the "
                              f"{h} x {w} image changed (e.g. at row {y}, column {x}); guard x < W and y < H")


def _buffers(got, shape):
    """The produced buffers, checked to be float32/uint8 arrays of the guarded shape."""
    h, w = shape
    want = {"prev": ((3, h + 2 * GUARD, w + 2 * GUARD), np.float32),
            "next": ((3, h + 2 * GUARD, w + 2 * GUARD), np.float32),
            "rhs": ((3, h + 2 * GUARD, w + 2 * GUARD), np.float32),
            "labels": ((h + 2 * GUARD, w + 2 * GUARD), np.uint8)}
    if not isinstance(got, dict):
        raise TestFailure("the kernel's buffers did not come back")
    for name, (buffer_shape, dtype) in want.items():
        array = got.get(name)
        if not isinstance(array, np.ndarray) or array.shape != buffer_shape or array.dtype != dtype:
            raise TestFailure(f"the {name} buffer did not come back as a {dtype.__name__} array of shape "
                              f"{buffer_shape}")
    return got


def _judge_iterate(target, labels, iterate):
    """Check the strict-interior values of an iterate, then paste it into the target."""
    values = iterate[:, labels == INTERIOR]
    if not np.all(np.isfinite(values)):
        raise TestFailure("the iterate contains NaN or infinity at strict-interior pixels: check the division by D")
    if values.size and (values.min() < 0 or values.max() > 255):
        raise TestFailure(f"the iterate leaves [0, 255] (from {values.min():.4g} to {values.max():.4g})")
    return compose(target, labels, iterate)


def run_student_jacobi(kernel, source, target, mask, iterations, block=BLOCK):
    """Run a student's one-iteration kernel ``iterations`` times, swapping two buffers.

    Returns
    -------
    ndarray of shape (H, W, 3), uint8
        The composed result, as :func:`course_lib.poisson.jacobi_reference` returns it.

    Raises
    ------
    TestFailure
        When the kernel writes outside the image, or its iterate is not finite or leaves [0, 255].
    """
    prep = prepare(source, target, mask)
    buffers = run_jacobi_guarded(kernel, prep.labels, prep.rhs, prep.guess, iterations, block)
    _check_guards(buffers, prep.labels.shape)
    return _judge_iterate(target, prep.labels, _inside(buffers["prev"]))


def _compare(got, expected, what):
    result = compare_images(got, expected, max_pixel_diff=MAX_PIXEL_DIFF, max_fraction=MAX_FRACTION)
    if not result.passed:
        raise TestFailure(f"{what}: {result.message}")


def _clone_inputs(source, target, mask, iterations):
    prep = prepare(source, target, mask)
    return {"source": source, "target": target, "mask": mask, "iterations": int(iterations),
            "labels": prep.labels, "rhs": prep.rhs, "guess": prep.guess}


def _produce_clone(kernel, data):
    return run_jacobi_guarded(kernel, np.asarray(data["labels"]), np.asarray(data["rhs"]),
                              np.asarray(data["guess"]), int(data["iterations"]))


def _clone_test(label, make, iterations, *, hint, hidden=False):
    def inputs(rng, info):
        source, target, mask = make(rng)
        return _clone_inputs(source, target, mask, iterations(rng) if callable(iterations) else iterations)

    def judge(data, got, info):
        source, target, mask, its = data["source"], data["target"], data["mask"], data["iterations"]
        labels = classify_mask(mask)  # the grader's own, not the inputs sent to the student's process
        buffers = _buffers(got, mask.shape)
        _check_guards(buffers, mask.shape)
        h, w = mask.shape
        _compare(_judge_iterate(target, labels, _inside(buffers["prev"])),
                 jacobi_reference(source, target, mask, its),
                 "result" if hidden else f"{h} x {w} image, {its} iterations")

    return Test(label, hidden=hidden, hint=hint, inputs=inputs, produce=_produce_clone, judge=judge)


def _blob(rng):
    return synthetic_pair(13, 11, seed=3)


def _edge(rng):
    source, target, _ = synthetic_pair(10, 12, seed=8)
    mask = np.zeros((10, 12), bool)
    mask[:7, 5:] = True  # touches the top and right edges, and the top-right corner
    return source, target, mask


def _single(rng):
    source, target, _ = synthetic_pair(5, 9, seed=1)
    mask = np.zeros((5, 9), bool)
    mask[1:4, 5:8] = True
    return source, target, mask


def _bright(rng):
    """A bright source detail on a bright target: without the clamp the iterate passes 255 (and 0)."""
    source = np.zeros((9, 10, 3), np.uint8)
    source[4:6, 4:6, 0] = 255  # red: a bright spot pasted onto a near-white target overshoots 255
    source[:, :, 2] = 255
    source[4:6, 4:6, 2] = 0  # blue: a dark spot pasted onto a near-black target undershoots 0
    target = np.full((9, 10, 3), 250, np.uint8)
    target[:, :, 2] = 5
    mask = np.zeros((9, 10), bool)
    mask[1:8, 1:9] = True
    return source, target, mask


def _random(rng):
    h, w = int(rng.integers(4, 17)), int(rng.integers(4, 17))
    return synthetic_pair(h, w, seed=int(rng.integers(1 << 30)), fill=float(rng.uniform(0.3, 0.7)))


def _large(rng):
    return cat_in_coffee(device.pick(sim=(20, 30), gpu=(333, 500)))


def _race_inputs(rng, info):
    source, target, mask = synthetic_pair(9, 10, seed=int(rng.integers(1 << 30)))
    return _clone_inputs(source, target, mask, 1)


def _race_produce(kernel, data):
    """One iteration under the simulator's race checker; its report and the new iterate are the outputs."""
    labels = np.asarray(data["labels"])
    nxt = np.array(data["guess"], np.float32)
    h, w = labels.shape
    grid = (math.ceil(w / BLOCK[0]), math.ceil(h / BLOCK[1]))
    report = trusted_check(kernel, grid, BLOCK, np.array(data["guess"], np.float32), np.asarray(data["rhs"]),
                           labels, nxt)
    return {"ok": bool(report.ok), "report": str(report), "next": nxt}


def _race_judge(data, got, info):
    """No race reported, and the right iterate under the checker."""
    if not isinstance(got, dict) or got.get("ok") is not True:
        report = got.get("report") if isinstance(got, dict) else None
        raise TestFailure(report if isinstance(report, str) else "the race checker did not report success")
    iterate = got.get("next")
    if not isinstance(iterate, np.ndarray) or iterate.shape != data["guess"].shape:
        raise TestFailure("the iterate did not come back from the race checker")
    _compare(_judge_iterate(data["target"], classify_mask(data["mask"]), iterate),
             jacobi_reference(data["source"], data["target"], data["mask"], 1), "result under the race checker")


_EDGE_HINT = "D counts only the neighbours inside the image: 3 on an edge, 2 in a corner; guard every neighbour read"
_Q1_TESTS = [
    _clone_test("blob mask, 4 iterations", _blob, 4,
                hint="read I_k only from prev and write I_{k+1} only to nxt: updating in place mixes iterations"),
    _clone_test("mask touching the image edge", _edge, 6, hint=_EDGE_HINT),
    _clone_test("a single strict-interior pixel", _single, 2,
                hint="A sums only strict-interior neighbours; B + C is already in rhs"),
    _clone_test("values are clamped to [0, 255]", _bright, 5,
                hint="clamp every new value: min(max(v, 0), 255), as the classic method does"),
    _clone_test("hidden: random sizes and masks", _random, lambda rng: int(rng.integers(1, 7)), hidden=True,
                hint="guard x < W and y < H: the grid covers more pixels than the image"),
    _clone_test("hidden: the classic pair", _large, device.pick(sim=3, gpu=800), hidden=True,
                hint="compare with the lesson's reference on the cat in the coffee"),
]
if device.is_simulator():
    _Q1_TESTS.append(Test("hidden: race check", hidden=True,
                          hint="no thread may write what another thread reads in the same launch",
                          inputs=_race_inputs, produce=_race_produce, judge=_race_judge))

Q1 = Question("ps4.q1", "double-buffered Jacobi kernel", 6, tuple(_Q1_TESTS), prepare=_prepare_kernel,
              tolerance=f"at most {MAX_PIXEL_DIFF} levels per pixel and at most {MAX_FRACTION:.0%} of the pixels "
                        "differing, against a NumPy reference")


# ----------------------------------------------------------------------------- q2
def _prepare_classify(answer):
    if not callable(answer):
        raise TestFailure("answer with your function classify(mask) returning an (H, W) uint8 array of 0 / 1 / 2")
    return as_student_function(answer, "classify")


def _classify_produce(classify, data):
    mask = np.asarray(data["mask"], bool)
    return np.asarray(classify(mask.copy()))


def _classify_test(label, make_mask, hint, hidden=False):
    def inputs(rng, info):
        return {"mask": make_mask(rng)}

    def judge(data, got, info):
        mask = data["mask"]
        expected = classify_mask(mask)
        if not isinstance(got, np.ndarray):
            raise TestFailure(f"classify must return a NumPy array of integers, got {got!r}")
        if got.shape != expected.shape:
            raise TestFailure(f"classify returned shape {got.shape}, expected {expected.shape}")
        wrong = np.argwhere(got != expected)
        if len(wrong):
            y, x = (int(i) for i in wrong[0])
            names = {0: "outside", 1: "inside border", 2: "strict interior"}
            raise TestFailure(f"{len(wrong)} pixels labelled wrongly; e.g. ({y}, {x}) is "
                              f"{names.get(int(expected[y, x]))} but got {got[y, x]!r}"
                              + ("" if hidden else f" (mask shape {mask.shape})"))

    return Test(label, hidden=hidden, hint=hint, inputs=inputs, produce=_classify_produce, judge=judge)


def _rect_mask(rng):
    mask = np.zeros((6, 7), bool)
    mask[1:5, 2:6] = True
    return mask


def _edge_mask(rng):
    mask = np.zeros((5, 6), bool)
    mask[:4, :3] = True
    mask[4, 5] = True  # a lone pixel in the corner: border, since its neighbours are outside
    return mask


def _random_mask(rng):
    return rng.random((int(rng.integers(1, 12)), int(rng.integers(1, 12)))) < 0.75


Q2 = Question("ps4.q2", "strict interior and inside border", 2, (
    _classify_test("a rectangle", _rect_mask, "a mask pixel is strict interior when all 4 neighbours are in the mask"),
    _classify_test("a mask touching the image edge", _edge_mask,
                   "neighbours outside the image do not count: an edge pixel can be strict interior"),
    _classify_test("hidden: random masks", _random_mask, "check one-pixel-wide images too", hidden=True),
), prepare=_prepare_classify, tolerance="exact labels")


# ----------------------------------------------------------------------------- q3
def _prepare_traffic(answer):
    if not isinstance(answer, dict) or {"bytes_per_iteration", "launch_bound"} - set(answer):
        raise TestFailure("answer with a dict: {'bytes_per_iteration': f, 'launch_bound': g}")
    for key in ("bytes_per_iteration", "launch_bound"):
        if not callable(answer[key]):
            raise TestFailure(f"{key} must be a function, e.g. lambda pixels: ...")
        as_student_function(answer[key], key, forbidden_names=("BYTES_PER_PIXEL_ITERATION",))
    return answer


def _calls(key, unpack=False):
    """``produce`` step: call the student's function ``answer[key]`` on each input."""
    def produce(answer, data):
        return [answer[key](*arg) if unpack else answer[key](arg) for arg in data["args"]]

    return produce


def _one_per_input(got, inputs):
    if not isinstance(got, list) or len(got) != len(inputs):
        raise TestFailure(f"expected one result per input, got {got!r}")
    return zip(inputs, got)


def _bytes_inputs(rng, info):
    return {"args": [1, 1000, 56_000, int(rng.integers(1, 10**7))]}


def _bytes_judge(data, got, info):
    for pixels, value in _one_per_input(got, data["args"]):
        if type(value) not in (int, float) or value != BYTES_PER_PIXEL_ITERATION * pixels:
            raise TestFailure(f"bytes_per_iteration({pixels}) = {value!r}; count per pixel: 3 channels x (read "
                              "I_k, read B + C, write I_k+1) in float32, plus the 1-byte label")


def _launch_inputs(rng, info):
    cases = [[56_000, 3.35e12, 3e-6], [10**8, 3.35e12, 3e-6], [166_500, 2.0e12, 4e-6], [10**6, 9e11, 5e-6]]
    cases.append([int(rng.integers(10**3, 10**8)), float(rng.uniform(5e11, 5e12)), float(rng.uniform(2e-6, 1e-5))])
    return {"args": cases}


def _launch_judge(data, got, info):
    for (pixels, bandwidth, launch), value in _one_per_input(got, data["args"]):
        want = BYTES_PER_PIXEL_ITERATION * pixels / bandwidth < launch
        if type(value) not in (bool, int, float) or bool(value) != want:
            raise TestFailure(f"launch_bound({pixels}, {bandwidth:.3g}, {launch:.3g}) = {value!r}: the memory time "
                              f"of one iteration is {BYTES_PER_PIXEL_ITERATION * pixels / bandwidth:.3g} s")


Q3 = Question("ps4.q3", "memory traffic and launch cost", 2, (
    Test("bytes per iteration", hint="37 bytes per strict-interior pixel", inputs=_bytes_inputs,
         produce=_calls("bytes_per_iteration"), judge=_bytes_judge),
    Test("launch bound or bandwidth bound",
         hint="launch bound when the bytes take less time to move than one launch costs",
         inputs=_launch_inputs, produce=_calls("launch_bound", unpack=True), judge=_launch_judge),
), prepare=_prepare_traffic, tolerance="exact numbers")

QUESTIONS = (Q1, Q2, Q3)
