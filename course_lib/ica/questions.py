"""Problem set 6 (``solutions/ps6_ica.ipynb``), on the shared harness (:mod:`course_lib.grading.harness`).

- ``ps6.q1`` (6 points): the custom GEMV with **two permuted samples per block**. Answer:
  ``check("ps6.q1", two_sample_gemv)``, a kernel launched as
  ``kernel[ceil(B / 2), C](Wt, Xt, perm, start, U)`` computing ``U[b, :] = W @ Xt[perm[start + b]]``.
  Graded on results (guarded buffers, awkward C and B), the race and barrier checker, and the
  profiler: each element of ``Wt`` must be loaded once per two samples.
- ``ps6.q2`` (4 points): measure and explain launches, occupancy and SIMT efficiency. Answer:
  ``{"launches_per_step": f(method, n_samples, batch), "occupancy": g(threads_per_block,
  registers_per_thread, shared_bytes_per_block, limits), "simt": {channels: measured}}``.
"""

from __future__ import annotations

import numpy as np

from ..grading.harness import (Launch, calls_test, close, function, kernel, measured_test, number_map, question,
                               race_test, result_test, technique_test)
from . import kernels as _kernels
from .model import Arch, launches_per_minibatch, occupancy

PROBLEM_SET = "ps6"
#: float64 sums in any order.
RTOL = 1e-12
#: Channel counts of the SIMT measurement (q2).
SIMT_CHANNELS = (20, 32, 40)
#: The limits q2 gives per generation (the fields of course_lib.ica.model.Arch, less its name).
LIMITS = {
    "fermi": {"max_warps": 48, "max_blocks": 8, "registers": 32768, "register_unit": 64, "shared_bytes": 48 * 1024,
              "shared_unit": 128, "shared_reserved": 0},
    "hopper": {"max_warps": 64, "max_blocks": 32, "registers": 65536, "register_unit": 256,
               "shared_bytes": 228 * 1024, "shared_unit": 128, "shared_reserved": 1024},
}


# ----------------------------------------------------------------------------- q1
def gemv_case(n_channels, batch, start, seed):
    """``inputs`` data: W^T, the data sample-major, a permutation and the minibatch's start."""
    rng = np.random.default_rng(seed)
    n_samples = start + batch + int(rng.integers(0, 4))
    W = np.eye(n_channels) + 0.3 * rng.normal(size=(n_channels, n_channels))
    return {"Wt": np.ascontiguousarray(W.T), "Xt": rng.normal(size=(n_samples, n_channels)),
            "perm": rng.permutation(n_samples).astype(np.int32), "start": int(start), "batch": int(batch)}


def case(n_channels, batch, start=0):
    return lambda rng, info: gemv_case(n_channels, batch, start, int(rng.integers(1 << 30)))


def _random_case(rng, info):
    return gemv_case(int(rng.integers(2, 41)), int(rng.integers(1, 10)), int(rng.integers(0, 5)),
                     int(rng.integers(1 << 30)))


def launch_two_sample(answer, data):
    """ceil(B / 2) blocks of C threads; U starts as NaN so that unwritten rows show."""
    Wt = np.asarray(data["Wt"], np.float64)
    n_channels, batch = Wt.shape[0], int(data["batch"])
    U = np.full((batch, n_channels), np.nan)
    return Launch(answer.kernel(), max(1, -(-batch // 2)), n_channels,
                  {"Wt": Wt, "Xt": np.asarray(data["Xt"], np.float64), "perm": np.asarray(data["perm"], np.int32),
                   "start": np.int64(data["start"]), "U": U}, outputs=("U",))


def expected_u(data):
    Wt, Xt = np.asarray(data["Wt"]), np.asarray(data["Xt"])
    idx = np.asarray(data["perm"])[data["start"]:data["start"] + data["batch"]]
    return {"U": Xt[idx] @ Wt}


def w_loads_per_sample(metrics, data):
    """Global bytes loaded / 8 / (C^2 B): about 1 when every sample reads all of W, 1/2 when two share it."""
    n_channels = len(data["Wt"])
    return metrics["global_load_bytes"] / 8 / (n_channels ** 2 * data["batch"])


def _label(data):
    return f"for C = {len(data['Wt'])} channels, B = {data['batch']} samples, start = {data['start']}"


_Q1 = dict(launch=launch_two_sample, expect=expected_u, compare=close(RTOL), label=_label)

Q1 = question(
    "ps6.q1", "the custom GEMV with two permuted samples per block", 6,
    answer=kernel("two-sample GEMV kernel"),
    tolerance=f"|error| <= {RTOL:g} x max|U| against NumPy in float64",
    hints={"bounds": "the last block of an odd B has one sample: guard the second sample (2 b + 1 < B) in the "
                     "load, the sum and the store, and guard c < C",
           "unwritten": "block b computes rows 2 b and 2 b + 1 of U: every row needs a block",
           "barrier": "stage both samples in shared memory, then one syncthreads before any thread reads them; "
                      "every thread must reach it",
           "value": "row b of U is W @ Xt[perm[start + b]]: the permutation is indexed from start, and "
                    "Wt[k, c] = W[c, k]",
           "technique": "read each Wt[k, c] once into a register and multiply it with both staged samples"},
    tests=[
        result_test("one channel, one sample (no points: a sanity check)", 0,
                    inputs=case(1, 1), **_Q1),
        result_test("C = 5, B = 3 (the last block has one sample), start = 2", 1, inputs=case(5, 3, 2), **_Q1),
        result_test("C = 33 (a warp and one thread), B = 4", 1, inputs=case(33, 4), **_Q1),
        result_test("C = 8, B = 7, start = 5", 1, inputs=case(8, 7, 5), **_Q1),
        result_test("hidden: random C, B and start", 0.5, hidden=True, inputs=_random_case, **_Q1),
        race_test("race and barrier check (C = 6, B = 5)", 1, technique=True, inputs=case(6, 5, 1),
                  launch=launch_two_sample, expect=expected_u, compare=close(RTOL)),
        technique_test("W read once per two samples (profiler)", 1.5, inputs=case(32, 6), launch=launch_two_sample,
                       expect=expected_u, compare=close(RTOL), measure=w_loads_per_sample, limit=lambda d: (0.0, 0.75),
                       unit="doubles loaded per element of W per sample",
                       technique="each element of Wt loaded once per block and used for both samples"),
    ])


# ----------------------------------------------------------------------------- q2
def _arch(limits):
    return Arch("given", **{k: int(v) for k, v in limits.items()})


def expected_occupancy(threads_per_block, registers_per_thread, shared_bytes_per_block, limits):
    return occupancy(threads_per_block, registers_per_thread, shared_bytes_per_block, _arch(limits))["occupancy"]


def _occupancy_cases(rng, info):
    cases = [(32, 29, 2048, LIMITS["fermi"]), (128, 29, 2048, LIMITS["fermi"]), (32, 29, 2048, LIMITS["hopper"]),
             (40, 30, 2048, LIMITS["hopper"]), (256, 128, 0, LIMITS["hopper"]), (64, 16, 40 * 1024, LIMITS["hopper"])]
    return cases + [(int(rng.integers(1, 9)) * 32 - int(rng.integers(0, 8)), int(rng.integers(16, 64)), 2048,
                     LIMITS["fermi" if rng.integers(2) else "hopper"])]


def _launch_cases(rng, info):
    return [("blas", 157, 7), ("custom", 157, 7), ("fused", 157, 7), ("blas", 180_000, 244), ("fused", 30, 31),
            ("custom", int(rng.integers(1000, 9000)), int(rng.integers(5, 50)))]


def expected_launches(method, n_samples, batch):
    if batch > n_samples:
        return 0
    return (n_samples // batch) * launches_per_minibatch(method, batch)


def _simt_inputs(rng, info):
    return {"params": list(SIMT_CHANNELS)}


def _simt_launch(answer, data, channels):
    """The lesson's custom GEMV with one thread per channel, two samples (what the student profiles)."""
    d = gemv_case(int(channels), 2, 0, seed=1)
    return Launch(_kernels.permuted_gemv_kernel, 2, int(channels),
                  {"Wt": d["Wt"], "Xt": d["Xt"], "perm": d["perm"], "start": np.int64(0),
                   "U": np.zeros((2, int(channels)))}, outputs=("U",))


def _simt(metrics, data, channels):
    return metrics["active_lanes"] / (32 * metrics["warp_instructions"])


Q2 = question(
    "ps6.q2", "measure and explain: launches, occupancy, SIMT efficiency", 4,
    answer={"launches_per_step": function("launches_per_step"), "occupancy": function("occupancy"),
            "simt": number_map("simt", keys=SIMT_CHANNELS)},
    tolerance="launches and occupancy exact (occupancy to 1e-9); SIMT efficiency within 1% of the profiler",
    tests=[
        calls_test("launches per step, for each method", 1, key="launches_per_step", args=_launch_cases,
                   expect=expected_launches,
                   explain=lambda a, want: "floor(N / B) minibatches per step; the drop-in method launches one GEMV "
                                           "per sample plus 5 kernels, the custom one 6, the fused one 2"),
        calls_test("occupancy from the compile check's registers and shared memory", 2, key="occupancy",
                   args=_occupancy_cases, expect=expected_occupancy, rtol=1e-9,
                   explain=lambda a, want: "resident blocks = the fewest allowed by the block limit, the warp limit, "
                                           "the registers (per warp, rounded up to register_unit) and the shared "
                                           "memory (per block plus shared_reserved, rounded up to shared_unit); "
                                           "occupancy = resident warps / max_warps"),
        measured_test("your SIMT efficiency measurements", 1, key="simt", inputs=_simt_inputs, launch=_simt_launch,
                      measure=_simt, rtol=0.01,
                      hint="profile(ica.kernels.permuted_gemv_kernel, 2, C, ...).total.simt_efficiency for each C"),
    ])

QUESTIONS = (Q1, Q2)
