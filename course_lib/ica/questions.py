"""Problem set 6 (``solutions/ps6_ica.ipynb``), on the shared harness (:mod:`course_lib.grading.harness`).

- ``ps6.q1`` (6 points): the **register-blocked minibatch product** ``U = X_b W^T`` (the thesis's custom
  GEMM, tiled). Answer: ``check("ps6.q1", minibatch_gemm_kernel)``, a kernel launched as
  ``kernel[(ceil(C / 16), ceil(B / 16)), (8, 8)](Wt, Xt, perm, start, U)`` computing
  ``U[b, :] = W @ Xt[perm[start + b]]``: each block a 16 x 16 tile of U, each of its 64 threads a block of
  four outputs held in registers, the operands staged tile by tile in shared memory. Graded on results
  (guarded buffers, awkward C and B), the race and barrier checker, and the technique
  (:func:`technique_signature_test`, two launches with partial tiles: C = 40, B = 37 and C = 20, B = 21).
- ``ps6.q2`` (4 points): predict and explain launches and occupancy, then **predict, then measure** the
  global loads of the student's own q1 kernel. Answer: ``{"launches_per_step": f(method, n_samples, batch),
  "occupancy": g(threads_per_block, registers_per_thread, shared_bytes_per_block, limits),
  "minibatch_gemm_kernel": kernel, "predicted_load_bytes": h(n_channels, batch), "measure_load_bytes":
  m(n_channels)}``: the prediction is checked against the tiled model :func:`tiled_load_bytes`, the
  measurement against the grader's own profile of the same kernel on :func:`measure_case` (B = 37) for two
  channel counts it draws at grading time.
"""

from __future__ import annotations

import math

import numpy as np

from ..grading.core import Test, compare_arrays
from ..grading.harness import (Launch, calls_test, close, fail, function, kernel, measured_test, measurement,
                               question, race_test, result_test)
from ..grading.harness import profile_launch as _profile_launch
from .model import Arch, launches_per_minibatch, occupancy

PROBLEM_SET = "ps6"
#: float64 sums in any order.
RTOL = 1e-12
#: The limits q2 gives per generation (the fields of course_lib.ica.model.Arch, less its name).
LIMITS = {
    "fermi": {"max_warps": 48, "max_blocks": 8, "registers": 32768, "register_unit": 64, "shared_bytes": 48 * 1024,
              "shared_unit": 128, "shared_reserved": 0},
    "hopper": {"max_warps": 64, "max_blocks": 32, "registers": 65536, "register_unit": 256,
               "shared_bytes": 228 * 1024, "shared_unit": 128, "shared_reserved": 1024},
}


# ----------------------------------------------------------------------------- q1
#: Outputs per side of a block's tile of U, and threads per side of a block (each thread: four outputs).
TILE, THREADS = 16, 8
#: The launches whose technique is measured (channels C, samples B): both leave partial tiles.
TECHNIQUE_CASES = ((40, 37), (20, 21))
#: Most shared-memory loads per multiply-add (see :func:`technique_signature_test`).
MAX_SHARED_PER_FMA = 1.5


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
    return gemv_case(int(rng.integers(2, 41)), int(rng.integers(1, 41)), int(rng.integers(0, 5)),
                     int(rng.integers(1 << 30)))


def tiles(n):
    return max(1, -(-int(n) // TILE))


def launch_gemm(answer, data):
    """(ceil(C / 16), ceil(B / 16)) blocks of 8 x 8 threads; U starts as NaN so that unwritten outputs show."""
    Wt = np.asarray(data["Wt"], np.float64)
    n_channels, batch = Wt.shape[0], int(data["batch"])
    U = np.full((batch, n_channels), np.nan)
    return Launch(answer.kernel(), (tiles(n_channels), tiles(batch)), (THREADS, THREADS),
                  {"Wt": Wt, "Xt": np.asarray(data["Xt"], np.float64), "perm": np.asarray(data["perm"], np.int32),
                   "start": np.int64(data["start"]), "U": U}, outputs=("U",))


def expected_u(data):
    Wt, Xt = np.asarray(data["Wt"]), np.asarray(data["Xt"])
    idx = np.asarray(data["perm"])[data["start"]:data["start"] + data["batch"]]
    return {"U": Xt[idx] @ Wt}


def tiled_load_bytes(data):
    """The cost model's global loads: every block row of U reads W^T once (8 C^2 bytes per ceil(B / 16)), every
    block column reads the minibatch once (8 B C bytes) and its permutation entries (4 B C bytes)."""
    n_channels, batch = len(data["Wt"]), int(data["batch"])
    return 8 * n_channels ** 2 * tiles(batch) + 12 * batch * n_channels * tiles(n_channels)


def load_ratio(metrics, data):
    return metrics["global_load_bytes"] / tiled_load_bytes(data)


def shared_per_fma(metrics, data):
    """Shared-memory loads and stores (a request counted as its warp's 32 lanes) per multiply-add of the
    padded tiles: ceil(B / 16) ceil(C / 16) blocks, 256 outputs each, 16 ceil(C / 16) products each."""
    n_channels, batch = len(data["Wt"]), int(data["batch"])
    fmas = tiles(batch) * tiles(n_channels) * TILE * TILE * TILE * tiles(n_channels)
    return 32 * metrics["shared_requests"] / fmas


#: The technique's features: (name, unit, measure(metrics, data), bound(data) -> (low, high), what it asks for).
FEATURES = (
    ("operands staged in shared memory", "global bytes loaded / the tiled model", load_ratio,
     lambda data: (0.0, 1.25),
     "each block reads its 16 samples and its 16 columns of W^T once, tile by tile, into shared memory"),
    ("register blocking", "shared-memory accesses per multiply-add", shared_per_fma,
     lambda data: (0.0, MAX_SHARED_PER_FMA),
     "each value read from shared memory is used for two (or more) of the thread's outputs, kept in registers"),
)


def technique_signature_test(name, points, *, cases, features=FEATURES) -> Test:
    """The technique of q1, measured by the course's profiler on several launches.

    Cost model of the expected technique, per launch of ceil(C / 16) x ceil(B / 16) blocks of 8 x 8 threads:

    - **global loads**: block (i, j) reads the 16 samples of row block j (C doubles each, plus their
      permutation entry per element staged) and the 16 columns of W^T of block column i (C doubles each),
      each once: 8 C^2 ceil(B / 16) + 12 B C ceil(C / 16) bytes (:func:`tiled_load_bytes`). Bound: 1.25 times
      that. Operands read from global memory for every output cost about C / 2 times more (8x measured for a
      2 x 2 register block, 10-13x for one output at a time, at C = 20 and 40).
    - **shared-memory accesses per multiply-add**: a thread with an r x s block of outputs reads r + s values
      per step of k for r s multiply-adds: (r + s) / (r s) = 1 for 2 x 2, 1.25 for 4 x 1; staging adds 2 / 16.
      Without register blocking every multiply-add reads both operands: 2 + 2 / 16. Bound:
      :data:`MAX_SHARED_PER_FMA`.

    ``cases`` are ``inputs`` functions; every launch must give the right result under the profiler and keep
    every feature within its bound. The failure names the first feature missed, with the value measured and
    the bound; ``technique=True`` caps the question at half its points.
    """
    def inputs(rng, info):
        return {"cases": [make(rng, info) for make in cases]}

    def produce(answer, data):
        return [_profile_launch(launch_gemm(answer, d)) for d in data["cases"]]

    def judge(data, got, info):
        if type(got) is not list or len(got) != len(data["cases"]):
            raise fail("the profiler's counts did not come back")
        first = None
        for d, report in zip(data["cases"], got):
            if not isinstance(report, dict) or not isinstance(report.get("metrics"), dict) \
                    or not isinstance(report.get("outputs"), dict) or "U" not in report["outputs"]:
                raise fail("the profiler's counts did not come back")
            U = np.asarray(report["outputs"]["U"])
            compare_arrays(U, expected_u(d)["U"], rtol=RTOL, name=f"U under the profiler {_label(d)}")
            metrics = {k: v for k, v in report["metrics"].items() if type(v) in (int, float)}
            for feature, unit, measure, bound, technique in features:
                value, (low, high) = measure(metrics, d), bound(d)
                first = first or {"measured": value, "low": low, "high": high, "unit": unit}
                if not (math.isfinite(value) and low <= value <= high):
                    failure = fail(f"missed feature: {feature} ({technique}). Measured {value:.3g} {unit} "
                                   f"{_label(d)}; the expected technique gives [{low:.3g}, {high:.3g}] "
                                   f"(course_lib.sim.profile)", "technique", public=True)
                    failure.measurement = {"measured": value, "low": low, "high": high, "unit": unit}
                    raise failure
        return first

    return Test(name, hidden=False, hint="", inputs=inputs, produce=produce, judge=judge, points=points,
                technique=True, hints=())


def _label(data):
    return f"for C = {len(data['Wt'])} channels, B = {data['batch']} samples, start = {data['start']}"


_Q1 = dict(launch=launch_gemm, expect=expected_u, compare=close(RTOL), label=_label)

Q1 = question(
    "ps6.q1", "the register-blocked minibatch product U = X_b W^T", 6,
    answer=kernel("minibatch GEMM kernel"),
    tolerance=f"|error| <= {RTOL:g} x max|U| against NumPy in float64",
    hints={"bounds": "the last tiles are partial: stage a 0 for a sample b >= B or a channel >= C, and store only "
                     "the outputs with b < B and c < C",
           "unwritten": "block (i, j) writes the 16 x 16 outputs U[16 j:16 j + 16, 16 i:16 i + 16], four per "
                        "thread: every output needs a thread",
           "barrier": "one barrier after staging a tile (before any thread reads it) and one after the products "
                      "(before any thread overwrites it); every thread must reach both",
           "value": "row b of U is W @ Xt[perm[start + b]]: the permutation is indexed from start, and "
                    "Wt[k, c] = W[c, k]",
           "technique": "stage a 16 x 16 tile of the samples and one of W^T in shared memory, then, for each k, "
                        "read two samples' values and two channels' weights into registers and make the four "
                        "products"},
    tests=[
        result_test("one channel, one sample (no points: a sanity check)", 0, inputs=case(1, 1), **_Q1),
        result_test("C = 5, B = 3, start = 2 (one partial tile)", 1, inputs=case(5, 3, 2), **_Q1),
        result_test("C = 17, B = 33 (a tile and one more channel; two tiles and one more sample)", 1,
                    inputs=case(17, 33), **_Q1),
        result_test("C = 32, B = 16, start = 5 (whole tiles)", 1, inputs=case(32, 16, 5), **_Q1),
        result_test("hidden: random C, B and start", 0.5, hidden=True, inputs=_random_case, **_Q1),
        race_test("race and barrier check (C = 20, B = 21)", 1, inputs=case(20, 21, 1), launch=launch_gemm,
                  expect=expected_u, compare=close(RTOL)),
        technique_signature_test("the technique (profiler, two launches)", 1.5,
                                 cases=[case(c, b, 3) for c, b in TECHNIQUE_CASES]),
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


#: Samples of the q2 measurement's minibatch (three tiles, the last partial).
MEASURE_BATCH = 37


def measure_case(n_channels):
    """The minibatch the q2 measurement profiles: C channels, B = 37 samples from position 3, seeded by C."""
    return gemv_case(int(n_channels), MEASURE_BATCH, 3, seed=int(n_channels))


def _measure_inputs(rng, info):
    """Two channel counts drawn at grading time, neither a multiple of 16 (partial tiles)."""
    sizes = [int(rng.integers(17, 33)), int(rng.integers(33, 64))]
    return {"params": [n + 1 if n % TILE == 0 else n for n in sizes]}


def _measure_launch(answer, data, n_channels):
    return launch_gemm(answer["minibatch_gemm_kernel"], measure_case(n_channels))


def _load_bytes(metrics, data, n_channels):
    return metrics["global_load_bytes"]


def predicted_load_bytes(n_channels, batch):
    """The tiled model of q1's loads for C channels and B samples (:func:`tiled_load_bytes`)."""
    return tiled_load_bytes({"Wt": np.empty((n_channels, 0)), "batch": batch})


Q2 = question(
    "ps6.q2", "predict and measure: launches, occupancy, and the loads of your q1 kernel", 4,
    answer={"launches_per_step": function("launches_per_step"), "occupancy": function("occupancy"),
            "minibatch_gemm_kernel": kernel("minibatch GEMM kernel"),
            "predicted_load_bytes": function("predicted_load_bytes"),
            "measure_load_bytes": measurement("measure_load_bytes")},
    tolerance="launches, occupancy (to 1e-9) and the load prediction exact; measurements within 1% of the profiler",
    tests=[
        calls_test("launches per step, for each method", 1, key="launches_per_step", args=_launch_cases,
                   expect=expected_launches,
                   explain=lambda a, want: "floor(N / B) minibatches per step; the drop-in method launches one GEMV "
                                           "per sample plus 5 kernels, the custom one 6, the fused one 2"),
        calls_test("occupancy from the compile check's registers and shared memory", 1.5, key="occupancy",
                   args=_occupancy_cases, expect=expected_occupancy, rtol=1e-9,
                   explain=lambda a, want: "resident blocks = the fewest allowed by the block limit, the warp limit, "
                                           "the registers (per warp, rounded up to register_unit) and the shared "
                                           "memory (per block plus shared_reserved, rounded up to shared_unit); "
                                           "occupancy = resident warps / max_warps"),
        calls_test("the prediction: global bytes your q1 kernel loads for C channels, B samples", 0.75,
                   key="predicted_load_bytes", expect=predicted_load_bytes,
                   args=lambda rng, info: [(1, 1), (16, 16), (17, 33), (40, 37), (int(rng.integers(2, 300)),
                                                                               int(rng.integers(1, 300)))],
                   explain=lambda a, want: "each block row of U (16 samples) reads all of W^T once; each block "
                                           "column (16 channels) reads its samples' C values and their permutation "
                                           "entries once"),
        measured_test("your measurements of your q1 kernel, at channel counts drawn by the grader", 0.75,
                      key="measure_load_bytes", inputs=_measure_inputs, launch=_measure_launch, measure=_load_bytes,
                      rtol=0.01,
                      hint="profile(minibatch_gemm_kernel, (ceil(C / 16), ceil(B / 16)), (8, 8), Wt, Xt, perm, "
                           "start, U).total.global_load_bytes on the minibatch of measure_case(C)"),
    ])

QUESTIONS = (Q1, Q2)
