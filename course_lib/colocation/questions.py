"""Problem set 8 (``solutions/ps8_colocation.ipynb``), on the shared harness
(:mod:`course_lib.grading.authoring.harness`).

- ``ps8.q1`` (6 points): the instances per feature that every participation ratio divides by, counted with
  **warp-aggregated atomics**: the lanes of a warp that hold the same feature agree on it with warp intrinsics
  (``match_any_sync`` or ``ballot_sync``) and one of them adds their number, so a warp makes at most one global
  atomic per feature it holds, with no shared memory and no block barrier. The course prints no such kernel
  (lesson 7's histogram and lesson 0's buggy one privatise counts per block in shared memory, another technique).
  Answer: ``check("ps8.q1", feature_count_kernel)``, a kernel ``(features, feature_count)`` launched as
  ``kernel[ceil(N / B), B]`` for B a multiple of 32 (the grader picks it; F <= MAX_FEATURES = 32): ``features``
  int32 (N,) in [0, F), ``feature_count`` int32 (F,), zeroed, the output. Graded on results against NumPy's
  ``bincount`` (N = 0, 1, B - 1, B + 1, a prime N, features with no instance, every instance of one feature,
  random hidden sizes), under the race checker, and by the technique's signature (``COUNT_SIGNATURE``), measured
  by the profiler on three fixed configurations: blocks of 64 threads (N = 320, F = 6), blocks of 96 threads with a
  partial last block (N = 293, a prime; F = 7, one feature without instances) and blocks of one warp (N = 203,
  F = 5); and, in a hidden test, on two configurations drawn from the grading seed: N in [4000, 60000), F in
  [1, 32], blocks of one warp and blocks of 2 to 16 warps, of whose grid 3 blocks (any, the partial last one
  included) are drawn too and profiled (:func:`course_lib.grading.authoring.signature.sample_blocks`), each
  feature counted over the blocks that ran. A kernel whose technique depends on the configuration (on the block
  size, on N) fails there. Its features and bounds come from the cost model of the technique (per warp: one
  agreement among the lanes, one global atomic per distinct feature):

  * global atomics: between the sum over the warps of the features each holds and warps x F; one global atomic
    per instance costs N, counts privatised per block fewer than the warps hold (the technique is not that);
  * atomics of any kind: at most warps x F (no shared atomic per instance);
  * thread span (busiest thread's statements over the mean): at most 2.5: every lane takes part in its warp's
    agreement; one thread counting for the others runs about 32 times more;
  * SIMT efficiency: at least 0.6 (only the adding lanes and the partial last warp diverge);
  * global load sectors per request: at most :data:`MAX_SECTORS_PER_REQUEST` (a warp's 32 consecutive int32
    instances are 4 sectors; instances read a grid apart put every lane in its own sector, up to 32);
  * warp share (busiest warp's instructions over its block's mean): at most :data:`MAX_WARP_SHARE` (about 1 when
    every warp counts its own instances; the warps per block when one warp counts the block's while the others
    wait).
- ``ps8.q2`` (4 points): **predict, then measure** the global atomics. Answer: ``{"feature_count_kernel": kernel,
  "predicted_global_atomics": f(n, block, n_features), "measure": g(kernel, n, block, n_features)}``. The
  prediction is checked against the cost model for the features ``i % F``: the sum over the warps of
  min(instances in the warp, F), whatever the block size (a multiple of 32); the grader counts the distinct
  features of each warp directly. The grader calls ``g`` on the student's kernel and
  on decoys of its own (one global atomic per instance; one thread per block totalling every feature, zeros merged
  too), on sizes, blocks
  and feature counts it draws at grading time (:func:`measure_features` gives the instances), and profiles each
  launch itself: a ``g`` that returns pasted numbers or the model's prediction fails on the decoys, scores 0 for the
  measurement and caps the question at half.
- ``ps8.q3`` (4 points): the batched filter's host program, its survivors (the candidates whose bound reaches a
  threshold) gathered on the device by a kernel of the student's and only they copied back
  (:mod:`course_lib.colocation._questions_q3`, which says how it is graded); its case makers ``filter_case`` and
  ``filter_grid`` are re-exported here, where the problem set imports them.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from numba import cuda, int32

from ..grading.authoring.harness import (STORED, Launch, calls_test, function, kernel, measurement, question, race_test,
                                         result_test)
from ..grading.authoring.measuring import kernel_measurement_test
from ..grading.authoring.signature import (Feature, at_least, at_most, between, load_sectors_per_request,
                                           sample_blocks, signature_test, warp_share)
from .profiling import measure_features
from ..grading.resources import answer_key

# The answer keys are the grader's (grading_resources/keys/ps8_colocation.py), read when a value is judged.
_expected_global_atomics = answer_key("ps8", "_expected_global_atomics")

PROBLEM_SET = "ps8"
#: Most features q1's kernel counts: its per-block counts are a shared array of a constant size.
MAX_FEATURES = 32
__all__ = ["COUNT_SIGNATURE", "MAX_FEATURES", "MEASURE_DECOYS", "QUESTIONS", "WARP", "count_case", "launch_counts",
           "measure_features"]
#: Lanes per warp: the grader's blocks are whole warps.
WARP = 32
#: Most global load sectors per request: 4 when a warp's lanes read consecutive int32 instances, slack for a
#: partial warp's and stray loads; instances read a grid (or any stride of 8 or more) apart give up to 32.
MAX_SECTORS_PER_REQUEST = 6
#: Most ``warp_share`` (busiest warp's instructions over the block's mean): 1 when the warps share the work, the
#: warps per block when one of them does it.
MAX_WARP_SHARE = 1.5
#: Largest block the grader draws (a multiple of 32) and the range of N of its drawn configurations.
MAX_DRAWN_BLOCK = 512
DRAWN_N = (4_000, 60_000)


def measured(test):
    """A measurement test whose failure caps the question at half: a number that is not measured (pasted, the
    model's prediction, another kernel's or another problem's) is not the student's work."""
    return dataclasses.replace(test, technique=True)


# ----------------------------------------------------------------------------- q1
def count_case(features, n_features, block):
    """``inputs`` data: the features (int32), F and the threads per block of the launch."""
    features = np.asarray(features, np.int32).reshape(-1)
    if int(block) % WARP or not 1 <= n_features <= MAX_FEATURES or (features.size and (
            features.min() < 0 or features.max() >= n_features)):
        raise ValueError("blocks of whole warps; features must lie in [0, F), F <= MAX_FEATURES")
    return {"features": features, "n_features": int(n_features), "block": int(block)}


def _random(n, n_features, block, seed, used=None):
    """n features drawn in [0, used) (default F): the features from ``used`` on have no instance."""
    rng = np.random.default_rng(seed)
    return count_case(rng.integers(0, used or n_features, n), n_features, block)


def launch_counts(answer, d):
    """ceil(N / B) blocks of B threads (one block when N = 0); the counts start at 0."""
    n, block = len(d["features"]), d["block"]
    args = {"features": np.asarray(d["features"], np.int32), "feature_count": np.zeros(d["n_features"], np.int32)}
    return Launch(answer.kernel(), max(1, -(-n // block)), block, args, outputs=("feature_count",),
                  blocks=d.get("blocks"))


def expect_counts(d):
    """The trusted counts: NumPy's ``bincount``."""
    return {"feature_count": np.bincount(np.asarray(d["features"], np.int64),
                                         minlength=d["n_features"]).astype(np.int32)}


def _ran_blocks(d):
    """The blocks the profiler runs: the grader's sample (``d["blocks"]``) or the whole grid."""
    grid = max(1, -(-len(d["features"]) // d["block"]))
    return range(grid) if d.get("blocks") is None else d["blocks"]


def _ran_warps(d):
    """The instances of each warp of the blocks that run (warps past N hold none and are left out)."""
    features = np.asarray(d["features"], np.int64)
    warps = []
    for block in _ran_blocks(d):
        for start in range(block * d["block"], min((block + 1) * d["block"], features.size), WARP):
            warps.append(features[start:start + WARP])
    return warps


def _warps(d):
    """Warps holding at least one instance, among the blocks that run."""
    return len(_ran_warps(d))


def _merges(d):
    """The cost model's most global atomics: one per feature and warp."""
    return _warps(d) * d["n_features"]


def _distinct_per_warp(d):
    """The fewest global atomics of the technique: each warp adds every feature it holds once."""
    return sum(len(np.unique(warp)) for warp in _ran_warps(d))


def _label(d):
    sampled = "" if d.get("blocks") is None else f", {len(d['blocks'])} blocks drawn"
    return f"for N = {len(d['features'])}, F = {d['n_features']}, blocks of {d['block']}{sampled}"


COUNT_SIGNATURE = (
    Feature("global atomics", lambda m, d: m["global_atomics"], between(_distinct_per_warp, _merges),
            "the lanes of a warp holding the same feature agree (match_any_sync or ballot_sync) and one of them adds "
            "their number: one global atomic per feature and warp (not one per instance; counts privatised per "
            "block are another technique, not this question's)",
            "from the features each warp holds to warps x F"),
    Feature("atomics (shared and global)", lambda m, d: m["atomics"], at_most(_merges),
            "no atomic per instance at all, on shared memory either: the warp's lanes agree through warp intrinsics",
            "warps x F"),
    Feature("thread span (busiest thread's statements / mean)", lambda m, d: m["thread_span"], at_most(2.5),
            "every lane takes part in its warp's agreement; no thread counts the others' instances while they wait",
            "one instance per thread, the same steps for every lane"),
    Feature("SIMT efficiency", lambda m, d: m["simt_efficiency"], at_least(0.6),
            "the lanes of a warp run the same steps: only the adding lanes and the partial last warp diverge",
            "at least 0.6"),
    load_sectors_per_request(at_most(MAX_SECTORS_PER_REQUEST),
                             "the 32 lanes of a warp read 32 consecutive instances (instance i by thread i of the "
                             "grid), so a load request touches the 4 sectors of 128 bytes; instances read a grid "
                             "apart put each lane in its own sector",
                             "4 sectors per request of 32 int32; 32 when every lane's word lies in its own sector"),
    warp_share(at_most(MAX_WARP_SHARE),
               "every warp of the block agrees on and adds its own 32 instances; no warp counts for the others "
               "while they wait", "the same steps per warp: about 1; one warp doing the block's work: the warps "
                                  "per block"),
)


def _case(n, n_features, block, used=None, seed=None):
    return lambda rng, info: _random(n, n_features, block, int(rng.integers(1 << 30)) if seed is None else seed,
                                     used)


def _hidden(rng, info):
    block = int(rng.choice([32, 64, 96, 128, 160]))
    n = int(rng.integers(0, 3 * block + 7))
    f = int(rng.integers(1, MAX_FEATURES + 1))
    return _random(n, f, block, int(rng.integers(1 << 30)), used=int(rng.integers(1, f + 1)))


def _drawn(one_warp):
    """A configuration drawn at grading time: N in DRAWN_N, F in [1, 32], blocks of one warp or of 2 to
    MAX_DRAWN_BLOCK / 32 warps, and 3 blocks of the grid drawn for the profiler (:func:`sample_blocks`)."""
    def inputs(rng, info):
        block = WARP if one_warp else WARP * int(rng.integers(2, MAX_DRAWN_BLOCK // WARP + 1))
        n, f = int(rng.integers(*DRAWN_N)), int(rng.integers(1, MAX_FEATURES + 1))
        data = _random(n, f, block, int(rng.integers(1 << 30)))
        return {**data, "blocks": sample_blocks(rng, max(1, -(-n // block)))}

    return inputs


def _one_feature(rng, info):
    return count_case(np.full(131, 2, np.int32), 4, 64)


_Q1 = dict(launch=launch_counts, expect=expect_counts)

Q1 = question(
    "ps8.q1", "instances per feature, with warp-aggregated atomics", 6, answer=kernel("feature_count_kernel"),
    tolerance="exact integers against NumPy's bincount",
    tests=[
        result_test("no instance (N = 0)", 0.5, inputs=lambda rng, info: count_case([], 3, 64), label=_label, **_Q1),
        result_test("one instance", 0.5, inputs=_case(1, 2, 64, seed=1), label=_label, **_Q1),
        result_test("N = B - 1 and features without instances", 0.5, inputs=_case(63, 9, 64, used=5, seed=2),
                    label=_label, **_Q1),
        result_test("N = B + 1, blocks of 96", 0.5, inputs=_case(97, 5, 96, seed=3), label=_label, **_Q1),
        result_test("a prime N (211), blocks of 32, 32 features", 0.5, inputs=_case(211, 32, 32, seed=4),
                    label=_label, **_Q1),
        result_test("every instance of one feature", 0.5, inputs=_one_feature, label=_label, **_Q1),
        result_test("hidden: random sizes, blocks and features", 0.5, inputs=_hidden, hidden=True, **_Q1),
        race_test("race check, blocks of 64 (two warps)", 0.5, technique=True,
                  inputs=_case(150, 6, 64, seed=5), **_Q1),
        signature_test("warp-aggregated atomics, measured (profiler; blocks of 64, of 96 and of one warp)", 1.5,
                       configs=[_case(320, 6, 64), _case(293, 7, 96, used=6), _case(203, 5, WARP)], label=_label,
                       features=COUNT_SIGNATURE, **_Q1),
        signature_test("hidden: warp-aggregated atomics on sizes, features and blocks drawn at grading time "
                       "(profiler, a sample of the blocks)", 0.5, hidden=True,
                       configs=[_drawn(one_warp=True), _drawn(one_warp=False)], features=COUNT_SIGNATURE, **_Q1),
    ])


# ----------------------------------------------------------------------------- q2
def _prediction_args(rng, info):
    drawn = int(rng.integers(100, 10**5))
    return [(0, 64, 3), (1, 32, 5), (64, 64, 6), (65, 64, 6), (97, 96, 7), (70, 32, 32), (300, 128, 20),
            (drawn, int(rng.choice([32, 64, 96, 256])), int(rng.integers(1, 33)))]


@cuda.jit
def _global_per_instance(features, feature_count):
    i = cuda.grid(1)
    if i < features.shape[0]:
        cuda.atomic.add(feature_count, features[i], 1)


@cuda.jit
def _first_thread_totals_every_feature(features, feature_count):
    """Not the technique: thread 0 of each block adds up its block's instances of every feature, one by one, and
    adds every total to the global counts, zero included (blocks x F global atomics)."""
    if cuda.threadIdx.x == 0:
        first = cuda.blockIdx.x * cuda.blockDim.x
        last = min(first + cuda.blockDim.x, features.shape[0])
        for f in range(feature_count.shape[0]):
            total = 0
            for i in range(first, last):
                if features[i] == f:
                    total += 1
            cuda.atomic.add(feature_count, f, total)


#: The grader's own kernels that ``measure`` must measure as well (their global atomics differ).
MEASURE_DECOYS = {"one global atomic per instance": _global_per_instance,
                  "one thread per block totals every feature, zero totals merged too": _first_thread_totals_every_feature}


def _measure_configs(rng, info):
    """(n, block, F) drawn now: a partial last block, and few features (some blocks miss some)."""
    out = []
    for _ in range(2):
        block = int(rng.choice([32, 64, 96, 128]))
        n = int(rng.integers(block + 1, 4 * block))
        out.append((n + (n % block == 0), block, int(rng.integers(2, min(block, 24) + 1))))
    return out


def _measure_launch(make, config):
    n, block, f = config
    return Launch(make, max(1, -(-n // block)), block,
                  {"features": measure_features(n, f), "feature_count": np.zeros(f, np.int32)},
                  outputs=("feature_count",))


Q2 = question(
    "ps8.q2", "predict, then measure the global atomics", 4,
    answer={"feature_count_kernel": kernel("feature_count_kernel"),
            "predicted_global_atomics": function("predicted_global_atomics"), "measure": measurement()},
    tolerance="the prediction exact; measurements within 1% of the course's profiler",
    tests=[
        calls_test("the prediction: global atomics for features i % F", 2, key="predicted_global_atomics",
                   args=_prediction_args, expect=_expected_global_atomics,
                   explain=STORED),
        measured(kernel_measurement_test(
            "your measure(), on your kernel and on the grader's, at drawn sizes", 2, key="measure",
            kernel_key="feature_count_kernel", decoys=MEASURE_DECOYS, configs=_measure_configs,
            launch=_measure_launch, measure=lambda metrics, config: metrics["global_atomics"], rtol=0.01)),
    ])

QUESTIONS = (Q1, Q2)


from ._questions_q3 import (Q3, Q3_DTOH_SPARE_BYTES, Q3_MAX_DTOH, Q3_SELECT_LAUNCHES,  # noqa: E402,F401
                            bounds_reference, filter_case, filter_grid, q3_upload_bytes, survivors_reference)

QUESTIONS = QUESTIONS + (Q3,)
