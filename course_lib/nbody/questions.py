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
from .api import pack_bodies
from .data import plummer_sphere, uniform_cube
from .reference import accelerations_reference

PROBLEM_SET = "ps1"
SOFTENING = 0.05
#: Relative tolerance (of max |a|) against the float64 reference: float32 sums in any order.
RTOL = 1e-4


# ----------------------------------------------------------------------------- q1
def _prepare_kernel(kernel, tile=None):
    as_student_kernel(kernel, "tiled kernel")
    if tile is None or isinstance(tile, bool) or int(tile) != tile or not 1 <= tile <= 1024:
        raise TestFailure(f"pass the tile size your kernel uses, e.g. check('ps1.q1', tiled_kernel, tile=TILE); "
                          f"got tile={tile!r}")
    return kernel, int(tile)


def _run_kernel(answer, pos, mass):
    from numba import cuda

    kernel, tile = answer
    bodies = pack_bodies(pos, mass)
    n = len(bodies)
    d_acc = cuda.to_device(np.full((n, 3), np.nan, np.float32))  # unwritten rows show up as NaN
    kernel[(n + tile - 1) // tile, tile](cuda.to_device(bodies), np.float32(SOFTENING**2), d_acc)
    return d_acc.copy_to_host()


def _accuracy_test(n_of_tile, label, generator=plummer_sphere, hidden=False):
    def run(answer, rng):
        _kernel, tile = answer
        n = n_of_tile(tile, rng)
        pos, _, mass = generator(n, seed=int(rng.integers(1 << 30)))
        got = _run_kernel(answer, pos, mass)
        compare_arrays(got, accelerations_reference(pos, mass, SOFTENING), rtol=RTOL,
                       name=f"accelerations for N = {n}" if not hidden else "accelerations")

    hint = ("guard the loads of the last tile (j < N) and pad it with zero-mass bodies; threads past N must "
            "still help to load tiles, so do not return early")
    return Test(label, run, hidden=hidden, hint=hint)


def _race_test(answer, rng):
    """Run the kernel under the simulator's race and barrier checker (hidden)."""
    try:
        from .. import sim
    except ImportError:  # checker not available in this installation
        return
    kernel, tile = answer
    n = 2 * tile + 1
    pos, _, mass = uniform_cube(n, seed=int(rng.integers(1 << 30)))
    bodies = pack_bodies(pos, mass)
    acc = np.zeros((n, 3), np.float32)
    report = sim.check(kernel, (n + tile - 1) // tile, tile, bodies, np.float32(SOFTENING**2), acc)
    if not report.ok:
        raise TestFailure(str(report))


_Q1_TESTS = [
    _accuracy_test(lambda p, rng: 1, "one body (N = 1)"),
    _accuracy_test(lambda p, rng: max(p - 1, 1), "N = tile - 1 (one partial tile)"),
    _accuracy_test(lambda p, rng: p + 1, "N = tile + 1 (a second tile with one body)"),
    _accuracy_test(lambda p, rng: 2 * p + 3, "N = 2 tile + 3", generator=uniform_cube),
    _accuracy_test(lambda p, rng: int(rng.integers(2, 3 * p + 2)), "hidden: random N", hidden=True),
    _accuracy_test(lambda p, rng: device.pick(sim=3 * p + 1, gpu=40 * p + 7), "hidden: larger N", hidden=True),
]
if device.is_simulator():
    _Q1_TESTS.append(Test("hidden: race and barrier check", _race_test, hidden=True,
                          hint="both syncthreads are needed: after staging a tile and before overwriting it"))

Q1 = Question("ps1.q1", "tiled N-body kernel", 6, tuple(_Q1_TESTS), prepare=_prepare_kernel)


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


def _naive_fetches(answer, rng):
    for n in (2, 10, 1000, int(rng.integers(3, 10**6))):
        got = answer["naive_fetches_per_body"](n)
        if got not in (2 * n, 2 * n - 2):
            raise TestFailure(f"naive_fetches_per_body({n}) = {got}: count the fetches of one body as a "
                              "source AND as a destination")


def _tiled_fetches(answer, rng):
    for p in (1, 16, 256, int(rng.integers(2, 1025))):
        got = answer["tiled_fetches_per_tile"](p)
        if got != 2 * p:
            raise TestFailure(f"tiled_fetches_per_tile({p}) = {got}: in a P x P tile each of the P sources and "
                              "P destinations is fetched once")


Q2 = Question("ps1.q2", "fetch counting", 2, (
    Test("naive: fetches of each body", _naive_fetches),
    Test("tiled: fetches per P x P tile", _tiled_fetches),
), prepare=_prepare_fetches)


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


def _tile_choice(answer, rng):
    cases = [(1 << 20, *_DEVICES[0]), (65536, *_DEVICES[1]), (8192, *_DEVICES[2]), (30000, *_DEVICES[3]),
             (132 * 40, *_DEVICES[0])]
    n = int(rng.integers(1 << 12, 1 << 22))
    cases.append((n, *_DEVICES[int(rng.integers(len(_DEVICES)))]))
    for case in cases:
        got = answer(*case)
        want = recommended_tile(*case)
        if got != want:
            n, sms, per_block, per_sm = case
            raise TestFailure(f"choose_tile(n={n}, sm_count={sms}, max_threads_per_block={per_block}, "
                              f"max_threads_per_sm={per_sm}) returned {got}, but {want} is the largest power of "
                              "two that fits a block, gives every SM a block and lets two blocks be resident")


def _prepare_tile_choice(answer):
    if not callable(answer):
        raise TestFailure("answer with your function choose_tile(n, sm_count, max_threads_per_block, "
                          "max_threads_per_sm)")
    return answer


Q3 = Question("ps1.q3", "choosing the tile size", 2, (
    Test("tile size on several devices", _tile_choice,
         hint="loop over powers of two; keep the largest one that meets all three conditions"),
), prepare=_prepare_tile_choice)

QUESTIONS = (Q1, Q2, Q3)
