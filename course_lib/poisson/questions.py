"""Problem set 4 (``solutions/ps4_poisson.ipynb``): questions, visible and hidden tests.

- ``ps4.q1`` (6 points): the double-buffered Jacobi kernel. Answer:
  ``check("ps4.q1", jacobi_kernel)``; graded by running it for a few iterations (the
  grader swaps the buffers) and comparing the cloned image with the reference using the
  two classic tolerances.
- ``ps4.q2`` (2 points): classify the mask's pixels (NumPy). Answer: a function
  ``classify(mask)`` returning uint8 labels 0 / 1 / 2.
- ``ps4.q3`` (2 points): memory traffic and launch cost. Answer: a dict of two functions,
  ``{"bytes_per_iteration": f(pixels), "launch_bound": g(pixels, bandwidth, launch_seconds)}``.
"""

from __future__ import annotations

import math

import numpy as np

from .. import device
from ..grading.core import Question, Test, TestFailure, as_student_kernel
from .bench import BYTES_PER_PIXEL_ITERATION
from .compare import compare_images
from .data import cat_in_coffee, synthetic_pair
from .reference import INTERIOR, classify_mask, compose, jacobi_reference, prepare

PROBLEM_SET = "ps4"
#: The two tolerances of ps4.q1: a pixel may differ by at most 2 levels, and at most 1% of
#: the pixels may differ at all (float32 sums in another order truncate differently).
MAX_PIXEL_DIFF = 2
MAX_FRACTION = 0.01
BLOCK = (8, 8)


# ----------------------------------------------------------------------------- q1
def _prepare_kernel(kernel):
    return as_student_kernel(kernel, "Jacobi kernel")


def run_student_jacobi(kernel, source, target, mask, iterations, block=BLOCK):
    """Run a student's one-iteration kernel ``iterations`` times, swapping two buffers.

    Returns
    -------
    ndarray of shape (H, W, 3), uint8
        The composed result, as :func:`course_lib.poisson.jacobi_reference` returns it.
    """
    from numba import cuda

    prep = prepare(source, target, mask)
    h, w = prep.labels.shape
    grid = (math.ceil(w / block[0]), math.ceil(h / block[1]))
    d_prev = cuda.to_device(prep.guess)
    d_next = cuda.to_device(prep.guess)
    d_rhs = cuda.to_device(prep.rhs)
    d_labels = cuda.to_device(prep.labels)
    for _ in range(iterations):
        kernel[grid, block](d_prev, d_rhs, d_labels, d_next)
        d_prev, d_next = d_next, d_prev
    values = d_prev.copy_to_host()[:, prep.labels == INTERIOR]
    if not np.all(np.isfinite(values)):
        raise TestFailure("the iterate contains NaN or infinity at strict-interior pixels: check the division by D")
    if values.size and (values.min() < 0 or values.max() > 255):
        raise TestFailure(f"the iterate leaves [0, 255] (from {values.min():.4g} to {values.max():.4g})")
    return compose(target, prep.labels, d_prev.copy_to_host())


def _compare(got, expected, what):
    result = compare_images(got, expected, max_pixel_diff=MAX_PIXEL_DIFF, max_fraction=MAX_FRACTION)
    if not result.passed:
        raise TestFailure(f"{what}: {result.message}")


def _clone_test(label, make, iterations, *, hint, hidden=False):
    def run(kernel, rng):
        source, target, mask = make(rng)
        its = iterations(rng) if callable(iterations) else iterations
        got = run_student_jacobi(kernel, source, target, mask, its)
        expected = jacobi_reference(source, target, mask, its)
        h, w = mask.shape
        _compare(got, expected, "result" if hidden else f"{h} x {w} image, {its} iterations")

    return Test(label, run, hidden=hidden, hint=hint)


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


def _race_test(kernel, rng):
    """Run one iteration under the simulator's race checker (hidden)."""
    try:
        from .. import sim
    except ImportError:  # checker not available in this installation
        return
    source, target, mask = synthetic_pair(9, 10, seed=int(rng.integers(1 << 30)))
    prep = prepare(source, target, mask)
    h, w = mask.shape
    grid = (math.ceil(w / BLOCK[0]), math.ceil(h / BLOCK[1]))
    report = sim.check(kernel, grid, BLOCK, prep.guess.copy(), prep.rhs, prep.labels, prep.guess.copy())
    if not report.ok:
        raise TestFailure(str(report))


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
    _Q1_TESTS.append(Test("hidden: race check", _race_test, hidden=True,
                          hint="no thread may write what another thread reads in the same launch"))

Q1 = Question("ps4.q1", "double-buffered Jacobi kernel", 6, tuple(_Q1_TESTS), prepare=_prepare_kernel)


# ----------------------------------------------------------------------------- q2
def _prepare_classify(answer):
    if not callable(answer):
        raise TestFailure("answer with your function classify(mask) returning an (H, W) uint8 array of 0 / 1 / 2")
    return answer


def _classify_test(label, make_mask, hint, hidden=False):
    def run(classify, rng):
        mask = make_mask(rng)
        got = np.asarray(classify(mask.copy()))
        expected = classify_mask(mask)
        if got.shape != expected.shape:
            raise TestFailure(f"classify returned shape {got.shape}, expected {expected.shape}")
        wrong = np.argwhere(got != expected)
        if len(wrong):
            y, x = (int(i) for i in wrong[0])
            names = {0: "outside", 1: "inside border", 2: "strict interior"}
            raise TestFailure(f"{len(wrong)} pixels labelled wrongly; e.g. ({y}, {x}) is "
                              f"{names.get(int(expected[y, x]))} but got {got[y, x]!r}"
                              + ("" if hidden else f" (mask shape {mask.shape})"))

    return Test(label, run, hidden=hidden, hint=hint)


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
), prepare=_prepare_classify)


# ----------------------------------------------------------------------------- q3
def _prepare_traffic(answer):
    if not isinstance(answer, dict) or {"bytes_per_iteration", "launch_bound"} - set(answer):
        raise TestFailure("answer with a dict: {'bytes_per_iteration': f, 'launch_bound': g}")
    for key in ("bytes_per_iteration", "launch_bound"):
        if not callable(answer[key]):
            raise TestFailure(f"{key} must be a function, e.g. lambda pixels: ...")
    return answer


def _bytes_test(answer, rng):
    for pixels in (1, 1000, 56_000, int(rng.integers(1, 10**7))):
        got = answer["bytes_per_iteration"](pixels)
        if got != BYTES_PER_PIXEL_ITERATION * pixels:
            raise TestFailure(f"bytes_per_iteration({pixels}) = {got}; count per pixel: 3 channels x (read I_k, "
                              "read B + C, write I_k+1) in float32, plus the 1-byte label")


def _launch_test(answer, rng):
    cases = [(56_000, 3.35e12, 3e-6), (10**8, 3.35e12, 3e-6), (166_500, 2.0e12, 4e-6), (10**6, 9e11, 5e-6)]
    cases.append((int(rng.integers(10**3, 10**8)), float(rng.uniform(5e11, 5e12)), float(rng.uniform(2e-6, 1e-5))))
    for pixels, bandwidth, launch in cases:
        want = BYTES_PER_PIXEL_ITERATION * pixels / bandwidth < launch
        got = answer["launch_bound"](pixels, bandwidth, launch)
        if bool(got) != want:
            raise TestFailure(f"launch_bound({pixels}, {bandwidth:.3g}, {launch:.3g}) = {got}: the memory time of "
                              f"one iteration is {BYTES_PER_PIXEL_ITERATION * pixels / bandwidth:.3g} s")


Q3 = Question("ps4.q3", "memory traffic and launch cost", 2, (
    Test("bytes per iteration", _bytes_test, hint="37 bytes per strict-interior pixel"),
    Test("launch bound or bandwidth bound", _launch_test,
         hint="launch bound when the bytes take less time to move than one launch costs"),
), prepare=_prepare_traffic)

QUESTIONS = (Q1, Q2, Q3)
