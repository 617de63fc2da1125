"""Problem set 1 (``solutions/ps1_nbody.ipynb``): questions, visible and hidden tests.

- ``ps1.q1`` (6 points): the tiled kernel, P threads per tile, sources staged in shared
  memory. Answer: ``check("ps1.q1", tiled_kernel, tile=TILE)``.
- ``ps1.q2`` (2 points): fetch counting. Answer: a dict of two functions,
  ``{"naive_fetches_per_body": f(n), "tiled_fetches_per_tile": g(p)}``.
- ``ps1.q3`` (2 points): choosing the tile size. Answer: a function
  ``choose_tile(n, sm_count, max_threads_per_block, max_threads_per_sm)``.
"""

from __future__ import annotations

import math

import numpy as np

from .. import device
from ..grading.core import Question, Test, TestFailure, as_student_kernel, compare_arrays
from ..grading.ownwork import as_student_function
from ..grading.trusted import trusted_check
from .api import pack_bodies
from .data import plummer_sphere, uniform_cube
from .reference import accelerations_reference

PROBLEM_SET = "ps1"
SOFTENING = 0.05
#: Relative tolerance (of max |a|) against the float64 reference: float32 sums in any order.
RTOL = 1e-4


# ----------------------------------------------------------------------------- q1
# Every test is split (see course_lib.grading.core): ``inputs`` and ``judge`` run in the grader,
# ``produce`` runs the student's kernel and returns the raw accelerations.
def _prepare_kernel(kernel, tile=None):
    as_student_kernel(kernel, "tiled kernel")
    return kernel, _valid_tile(tile)


def _valid_tile(tile):
    if tile is None or type(tile) is bool or not isinstance(tile, (int, np.integer)) or not 1 <= tile <= 1024:
        raise TestFailure(f"pass the tile size your kernel uses, e.g. check('ps1.q1', tiled_kernel, tile=TILE); "
                          f"got tile={tile!r}")
    return int(tile)


def _describe_kernel(answer):
    return {"tile": answer[1]}


#: Extra rows around the student's arrays: on a GPU, reading or writing one row past the end
#: rarely faults, so the grader pads both arrays and checks that the padding is untouched.
GUARD_ROWS = 32
#: What the guard rows of the output hold (not NaN: a kernel reading the NaN guard rows of
#: the input and storing past the end would write NaN and go unnoticed).
GUARD_VALUE = np.float32(-3.0e38)


def _run_kernel(answer, data):
    """Launch the student's kernel on exact-size views of padded buffers.

    Returns the whole padded output, float32 of shape (N + GUARD_ROWS, 3): rows past N must
    still hold GUARD_VALUE; rows the kernel forgot to write stay NaN.
    """
    from numba import cuda

    kernel, tile = answer
    bodies = pack_bodies(np.asarray(data["pos"]), np.asarray(data["mass"]))
    n = len(bodies)
    padded_bodies = np.full((n + GUARD_ROWS, 4), np.nan, np.float32)
    padded_bodies[:n] = bodies
    d_bodies = cuda.to_device(padded_bodies)
    acc = np.full((n + GUARD_ROWS, 3), GUARD_VALUE, np.float32)
    acc[:n] = np.nan  # rows the kernel forgets to write show up as NaN
    d_acc = cuda.to_device(acc)
    kernel[(n + tile - 1) // tile, tile](d_bodies[:n], np.float32(SOFTENING**2), d_acc[:n])
    return d_acc.copy_to_host()


def _exact_rows(got, n):
    """The first N rows of a padded output, after checking that nothing was written past them."""
    got = np.asarray(got)
    if got.ndim != 2 or got.shape[0] != n + GUARD_ROWS:
        raise TestFailure(f"the kernel's output has shape {got.shape}, expected {(n + GUARD_ROWS, 3)}")
    touched = np.any(got[n:] != GUARD_VALUE, axis=1)
    if touched.any():
        raise TestFailure(f"the kernel wrote past the end of acc (row {n + int(np.argmax(touched))} of an array "
                          f"of {n} rows): guard the stores with `if i < n`")
    return got[:n]


def _accuracy_test(n_of_tile, label, generator=plummer_sphere, hidden=False):
    def inputs(rng, info):
        n = n_of_tile(_valid_tile(info.get("tile")), rng)
        pos, _, mass = generator(n, seed=int(rng.integers(1 << 30)))
        return {"pos": pos, "mass": mass}

    def judge(data, got, info):
        n = len(data["mass"])
        compare_arrays(_exact_rows(got, n), accelerations_reference(data["pos"], data["mass"], SOFTENING),
                       rtol=RTOL, name=f"accelerations for N = {n}" if not hidden else "accelerations")

    hint = ("guard the loads of the last tile (j < N) and pad it with zero-mass bodies; threads past N must "
            "still help to load tiles, so do not return early")
    return Test(label, hidden=hidden, hint=hint, inputs=inputs, produce=_run_kernel, judge=judge)


def _race_inputs(rng, info):
    tile = _valid_tile(info.get("tile"))
    pos, _, mass = uniform_cube(2 * tile + 1, seed=int(rng.integers(1 << 30)))
    return {"pos": pos, "mass": mass}


def _race_produce(answer, data):
    """Run the kernel under the simulator's race and barrier checker; its report is the output."""
    kernel, tile = answer
    bodies = pack_bodies(np.asarray(data["pos"]), np.asarray(data["mass"]))
    n = len(bodies)
    acc = np.zeros((n, 3), np.float32)
    report = trusted_check(kernel, (n + tile - 1) // tile, tile, bodies, np.float32(SOFTENING**2), acc)
    return {"ok": bool(report.ok), "report": str(report), "acc": acc}


def _race_judge(data, got, info):
    """No race or barrier problem reported, and the right accelerations under the checker."""
    if not isinstance(got, dict) or got.get("ok") is not True:
        report = got.get("report") if isinstance(got, dict) else None
        # The report names source lines and threads, not the test's inputs: shown as is.
        raise TestFailure(report[:4000] if isinstance(report, str) else "the race checker did not report success",
                          public=True)
    compare_arrays(got.get("acc"), accelerations_reference(data["pos"], data["mass"], SOFTENING), rtol=RTOL,
                   name="accelerations under the race checker")


_Q1_TESTS = [
    _accuracy_test(lambda p, rng: 1, "one body (N = 1)"),
    _accuracy_test(lambda p, rng: max(p - 1, 1), "N = tile - 1 (one partial tile)"),
    _accuracy_test(lambda p, rng: p + 1, "N = tile + 1 (a second tile with one body)"),
    _accuracy_test(lambda p, rng: 2 * p + 3, "N = 2 tile + 3", generator=uniform_cube),
    _accuracy_test(lambda p, rng: int(rng.integers(2, 3 * p + 2)), "hidden: random N", hidden=True),
    _accuracy_test(lambda p, rng: device.pick(sim=3 * p + 1, gpu=40 * p + 7), "hidden: larger N", hidden=True),
]
if device.is_simulator():
    _Q1_TESTS.append(Test("hidden: race and barrier check", hidden=True,
                          hint="both syncthreads are needed: after staging a tile and before overwriting it",
                          inputs=_race_inputs, produce=_race_produce, judge=_race_judge))

Q1 = Question("ps1.q1", "tiled N-body kernel", 6, tuple(_Q1_TESTS), prepare=_prepare_kernel,
              describe=_describe_kernel,
              tolerance=f"|error| <= {RTOL:g} x max|a| against a float64 NumPy reference")


# ----------------------------------------------------------------------------- q2
def _prepare_fetches(answer):
    if not isinstance(answer, dict):
        raise TestFailure("answer with a dict: {'naive_fetches_per_body': f, 'tiled_fetches_per_tile': g}")
    missing = {"naive_fetches_per_body", "tiled_fetches_per_tile"} - set(answer)
    if missing:
        raise TestFailure(f"the answer dict lacks {sorted(missing)}")
    for key in ("naive_fetches_per_body", "tiled_fetches_per_tile"):
        if not callable(answer[key]):
            raise TestFailure(f"{key} must be a function of N (or P), e.g. lambda n: ...")
    return answer


def _calls(key):
    """``produce`` step: call the student's function ``answer[key]`` on each argument."""
    def produce(answer, data):
        return [answer[key](arg) for arg in data["args"]]

    return produce


def _naive_inputs(rng, info):
    return {"args": [2, 10, 1000, int(rng.integers(3, 10**6))]}


def _one_per_input(got, inputs):
    if not isinstance(got, list) or len(got) != len(inputs):
        raise TestFailure(f"expected one result per input, got {got!r}")
    return zip(inputs, got)


def _naive_judge(data, got, info):
    for n, value in _one_per_input(got, data["args"]):
        if type(value) not in (int, float) or value not in (2 * n, 2 * n - 2):
            raise TestFailure(f"naive_fetches_per_body({n}) = {value}: count the fetches of one body as a "
                              "source AND as a destination")


def _tiled_inputs(rng, info):
    return {"args": [1, 16, 256, int(rng.integers(2, 1025))]}


def _tiled_judge(data, got, info):
    for p, value in _one_per_input(got, data["args"]):
        if type(value) not in (int, float) or value != 2 * p:
            raise TestFailure(f"tiled_fetches_per_tile({p}) = {value}: in a P x P tile each of the P sources and "
                              "P destinations is fetched once")


Q2 = Question("ps1.q2", "fetch counting", 2, (
    Test("naive: fetches of each body", inputs=_naive_inputs, produce=_calls("naive_fetches_per_body"),
         judge=_naive_judge),
    Test("tiled: fetches per P x P tile", inputs=_tiled_inputs, produce=_calls("tiled_fetches_per_tile"),
         judge=_tiled_judge),
), prepare=_prepare_fetches, tolerance="exact integers (2N or 2N - 2 both accepted for the naive count)")


# ----------------------------------------------------------------------------- q3
def recommended_tile(n, sm_count, max_threads_per_block, max_threads_per_sm):
    """The lesson's rule: the largest power-of-two P that fits a block, leaves at least one
    block per SM, and lets two blocks be resident on an SM."""
    best = None
    p = 1
    while p <= max_threads_per_block:
        if math.ceil(n / p) >= sm_count and 2 * p <= max_threads_per_sm:
            best = p
        p *= 2
    return best


_DEVICES = [  # (SMs, max threads per block, max threads per SM): H100, A100, RTX 3080, small
    (132, 1024, 2048), (108, 1024, 2048), (68, 1024, 1536), (16, 512, 1024),
]


def _tile_cases(rng, info):
    cases = [(1 << 20, *_DEVICES[0]), (65536, *_DEVICES[1]), (8192, *_DEVICES[2]), (30000, *_DEVICES[3]),
             (132 * 40, *_DEVICES[0])]
    n = int(rng.integers(1 << 12, 1 << 22))
    cases.append((n, *_DEVICES[int(rng.integers(len(_DEVICES)))]))
    return {"cases": cases}


def _tile_choices(answer, data):
    return [answer(*case) for case in data["cases"]]


def _tile_judge(data, got, info):
    for case, value in _one_per_input(got, data["cases"]):
        want = recommended_tile(*case)
        if type(value) not in (int, float) or value != want:
            n, sms, per_block, per_sm = case
            raise TestFailure(f"choose_tile(n={n}, sm_count={sms}, max_threads_per_block={per_block}, "
                              f"max_threads_per_sm={per_sm}) returned {value}, but {want} is the largest power of "
                              "two that fits a block, gives every SM a block and lets two blocks be resident")


def _prepare_tile_choice(answer):
    if not callable(answer):
        raise TestFailure("answer with your function choose_tile(n, sm_count, max_threads_per_block, "
                          "max_threads_per_sm)")
    # The grader's own rule computes the answer: calling it earns nothing.
    return as_student_function(answer, "choose_tile")


Q3 = Question("ps1.q3", "choosing the tile size", 2, (
    Test("tile size on several devices", inputs=_tile_cases, produce=_tile_choices, judge=_tile_judge,
         hint="loop over powers of two; keep the largest one that meets all three conditions"),
), prepare=_prepare_tile_choice, tolerance="exact integers")

QUESTIONS = (Q1, Q2, Q3)
