"""Do ps8.q1 and ps8.q2 grade warp-aggregated atomics rather than one solution?

Kernels written from the problem statement (``feature_count_kernel(features, feature_count)``, one
thread per instance, ``kernel[ceil(N / B), B]``, B a multiple of 32, F <= 32): other techniques with right
results (one atomic per instance, counts privatised per block in shared memory as in lesson 7) earn at most
half of the question, warp aggregation written differently full marks. For q2, a
``measure`` that does not run the kernel it is given fails its part.
"""

import math

import numpy as np
import pytest
from numba import cuda, int32, int64

from course_lib.colocation import profiling as co_profiling
from course_lib.colocation import questions
from course_lib.grading import get_question, run_tests
from course_lib.sim import profile

MAX_FEATURES = 32


def grade(answer, question="ps8.q1"):
    return run_tests(get_question(question), answer, hidden=True, seed=11)


# ----------------------------------------------------------------------------- q1: wrong techniques
@cuda.jit
def global_atomic_per_instance(features, feature_count):
    """The lesson's starting point: one global atomic per instance, no shared memory."""
    i = cuda.grid(1)
    if i < features.shape[0]:
        cuda.atomic.add(feature_count, features[i], 1)


@cuda.jit
def one_thread_counts(features, feature_count):
    """Thread 0 of each block counts the block's instances while the others wait at the barrier."""
    counts = cuda.shared.array(MAX_FEATURES, int32)
    t = cuda.threadIdx.x
    if t < feature_count.shape[0]:
        counts[t] = 0
    cuda.syncthreads()
    if t == 0:
        first = cuda.blockIdx.x * cuda.blockDim.x
        for i in range(first, min(first + cuda.blockDim.x, features.shape[0])):
            counts[features[i]] += 1
    cuda.syncthreads()
    if t < feature_count.shape[0] and counts[t] > 0:
        cuda.atomic.add(feature_count, t, counts[t])


@cuda.jit
def private_copy_per_thread(features, feature_count):
    """Every thread its own row of counts in shared memory (B x MAX_FEATURES), summed by column."""
    counts = cuda.shared.array((160, MAX_FEATURES), int32)
    t = cuda.threadIdx.x
    for f in range(feature_count.shape[0]):
        counts[t, f] = 0
    i = cuda.grid(1)
    if i < features.shape[0]:
        counts[t, features[i]] += 1
    cuda.syncthreads()
    if t < feature_count.shape[0]:
        total = 0
        for s in range(cuda.blockDim.x):
            total += counts[s, t]
        if total > 0:
            cuda.atomic.add(feature_count, t, total)


@cuda.jit
def warp_barrier(features, feature_count):
    """syncwarp where the block barrier is needed: warp 1 may merge before warp 0 has counted."""
    counts = cuda.shared.array(MAX_FEATURES, int32)
    t = cuda.threadIdx.x
    if t < feature_count.shape[0]:
        counts[t] = 0
    cuda.syncwarp()
    i = cuda.grid(1)
    if i < features.shape[0]:
        cuda.atomic.add(counts, features[i], 1)
    cuda.syncwarp()
    if t < feature_count.shape[0] and counts[t] > 0:
        cuda.atomic.add(feature_count, t, counts[t])


@cuda.jit
def shared_and_global_per_instance(features, feature_count):
    """Counts in shared memory, but every instance also goes to the global count (the shared copy unused)."""
    counts = cuda.shared.array(MAX_FEATURES, int32)
    t = cuda.threadIdx.x
    if t < feature_count.shape[0]:
        counts[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < features.shape[0]:
        cuda.atomic.add(counts, features[i], 1)
        cuda.atomic.add(feature_count, features[i], 1)
    cuda.syncthreads()


@cuda.jit
def whole_input_per_block(features, feature_count):
    """Block 0 alone counts every instance (strided over its threads); the other blocks do nothing."""
    counts = cuda.shared.array(MAX_FEATURES, int32)
    t = cuda.threadIdx.x
    if t < feature_count.shape[0]:
        counts[t] = 0
    cuda.syncthreads()
    if cuda.blockIdx.x == 0:
        for i in range(t, features.shape[0], cuda.blockDim.x):
            cuda.atomic.add(counts, features[i], 1)
    cuda.syncthreads()
    if cuda.blockIdx.x == 0 and t < feature_count.shape[0]:
        feature_count[t] = counts[t]


# ----------------------------------------------------------------------------- q1: counts privatised per block
# Lesson 7's technique, right counts: not this question's (the course prints it), so capped at half.


@cuda.jit
def merges_every_count(features, feature_count):
    """Merges all F counts, zeros included (at most F global atomics per block)."""
    hist = cuda.shared.array(MAX_FEATURES, int32)
    lane = cuda.threadIdx.x
    if lane < feature_count.shape[0]:
        hist[lane] = 0
    cuda.syncthreads()
    k = cuda.blockIdx.x * cuda.blockDim.x + lane
    if k < features.shape[0]:
        cuda.atomic.add(hist, features[k], 1)
    cuda.syncthreads()
    if lane < feature_count.shape[0]:
        cuda.atomic.add(feature_count, lane, hist[lane])


@cuda.jit
def last_threads_merge_early_return(features, feature_count):
    """Strided zeroing, the last F threads merge (in reverse), threads with nothing left return early."""
    local = cuda.shared.array(32, int32)
    t = cuda.threadIdx.x
    b = cuda.blockDim.x
    f_count = feature_count.shape[0]
    for f in range(t, f_count, b):
        local[f] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < features.shape[0]:
        cuda.atomic.add(local, features[i], 1)
    cuda.syncthreads()
    f = b - 1 - t
    if f >= f_count:
        return
    value = local[f]
    if value != 0:
        cuda.atomic.add(feature_count, f, value)


@cuda.jit
def int64_counts_two_dimensional(features, feature_count):
    """8-byte counts in a (1, 32) array; the instance index from the block's first one."""
    hist = cuda.shared.array((1, 32), int64)
    tid = cuda.threadIdx.x
    nf = feature_count.shape[0]
    if tid < nf:
        hist[0, tid] = 0
    cuda.syncthreads()
    first = cuda.blockIdx.x * cuda.blockDim.x
    if first + tid < features.shape[0]:
        cuda.atomic.add(hist, (0, features[first + tid]), 1)
    cuda.syncthreads()
    if tid < nf:
        c = hist[0, tid]
        if c:
            cuda.atomic.add(feature_count, tid, int32(c))


WRONG = [global_atomic_per_instance, one_thread_counts, private_copy_per_thread, warp_barrier,
         shared_and_global_per_instance, whole_input_per_block, merges_every_count, last_threads_merge_early_return,
         int64_counts_two_dimensional]


# ----------------------------------------------------------------------------- q1: the technique only in part
# The technique only where the grader's visible configurations look (blocks of two warps or more, small inputs),
# instances read a grid apart (uncoalesced), one warp doing its block's work: at most half, on every grading seed.
ALL_LANES = 0xFFFFFFFF

@cuda.jit
def global_atomics_when_one_warp(features, feature_count):
    i = cuda.grid(1)
    value = features[i] if i < features.shape[0] else -1
    if cuda.blockDim.x == 32:
        if i < features.shape[0]:
            cuda.atomic.add(feature_count, value, 1)
        return
    same = cuda.match_any_sync(ALL_LANES, value)
    if i < features.shape[0] and (same & cuda.lanemask_lt()) == 0:
        cuda.atomic.add(feature_count, value, cuda.popc(same))


@cuda.jit
def instances_grid_apart(features, feature_count):
    """Thread t of block b takes instance t * gridDim + b: every instance once, lanes gridDim apart."""
    i = cuda.threadIdx.x * cuda.gridDim.x + cuda.blockIdx.x
    value = features[i] if i < features.shape[0] else -1
    same = cuda.match_any_sync(ALL_LANES, value)
    if i < features.shape[0] and (same & cuda.lanemask_lt()) == 0:
        cuda.atomic.add(feature_count, value, cuda.popc(same))


@cuda.jit
def first_warp_does_the_block(features, feature_count):
    """Warp 0 walks the block's instances 32 at a time with match_any; the other warps wait at the barrier."""
    lane = cuda.threadIdx.x % 32
    if cuda.threadIdx.x < 32:
        first = cuda.blockIdx.x * cuda.blockDim.x
        for base in range(first, first + cuda.blockDim.x, 32):
            i = base + lane
            value = features[i] if i < features.shape[0] else -1
            same = cuda.match_any_sync(ALL_LANES, value)
            if i < features.shape[0] and (same & cuda.lanemask_lt()) == 0:
                cuda.atomic.add(feature_count, value, cuda.popc(same))
    cuda.syncthreads()


@cuda.jit
def aggregated_only_on_small_inputs(features, feature_count):
    """The technique for N <= 400 (every size the visible tests use), one atomic per instance above."""
    i = cuda.grid(1)
    value = features[i] if i < features.shape[0] else -1
    if features.shape[0] > 400:
        if i < features.shape[0]:
            cuda.atomic.add(feature_count, value, 1)
        return
    same = cuda.match_any_sync(ALL_LANES, value)
    if i < features.shape[0] and (same & cuda.lanemask_lt()) == 0:
        cuda.atomic.add(feature_count, value, cuda.popc(same))


PARTIAL = [global_atomics_when_one_warp, instances_grid_apart, first_warp_does_the_block,
           aggregated_only_on_small_inputs]


# ----------------------------------------------------------------------------- q1: right, written differently
@cuda.jit
def match_then_lowest_adds_early_return(features, feature_count):
    idx = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    value = features[idx] if idx < features.shape[0] else -1
    same = cuda.match_any_sync(ALL_LANES, value)
    if idx >= features.shape[0] or (same & cuda.lanemask_lt()) != 0:
        return
    cuda.atomic.add(feature_count, value, cuda.popc(same))


@cuda.jit
def ballot_per_feature_lane_zero_adds(features, feature_count):
    i = cuda.grid(1)
    f_of_lane = features[i] if i < features.shape[0] else -1
    for f in range(feature_count.shape[0]):
        mask = cuda.ballot_sync(ALL_LANES, f_of_lane == f)
        if cuda.laneid == 0 and mask != 0:
            cuda.atomic.add(feature_count, f, cuda.popc(mask))


@cuda.jit
def ballot_per_feature_lane_f_adds(features, feature_count):
    i = cuda.grid(1)
    mine = features[i] if i < features.shape[0] else -1
    for f in range(feature_count.shape[0]):
        holders = cuda.ballot_sync(ALL_LANES, mine == f)
        if cuda.laneid == f and holders != 0:  # F <= 32: the atomics spread over the lanes
            cuda.atomic.add(feature_count, f, cuda.popc(holders))


RIGHT = [match_then_lowest_adds_early_return, ballot_per_feature_lane_zero_adds, ballot_per_feature_lane_f_adds]


@pytest.mark.parametrize("kernel", WRONG, ids=lambda k: k.__name__ if hasattr(k, "__name__") else k.py_func.__name__)
def test_q1_a_wrong_technique_earns_at_most_half(kernel):
    result = grade(kernel)
    assert result.points <= 3, [(o.name, o.message) for o in result.outcomes]


@pytest.mark.parametrize("seed", [3, 4])
@pytest.mark.parametrize("kernel", PARTIAL, ids=lambda k: k.py_func.__name__)
def test_q1_the_technique_only_in_part_earns_at_most_half_on_every_seed(kernel, seed):
    result = run_tests(get_question("ps8.q1"), kernel, hidden=True, seed=seed)
    assert result.points <= 3 and result.capped, [(o.name, o.message) for o in result.outcomes]


@pytest.mark.parametrize("seed", [11, 12])
@pytest.mark.parametrize("kernel", RIGHT, ids=lambda k: k.__name__ if hasattr(k, "__name__") else k.py_func.__name__)
def test_q1_the_technique_written_differently_earns_full_marks(kernel, seed):
    result = run_tests(get_question("ps8.q1"), kernel, hidden=True, seed=seed)
    assert result.points == 6, [(o.name, o.message) for o in result.outcomes if not o.passed]


# ----------------------------------------------------------------------------- q2
def predicted_by_warps(n, block, n_features):
    """Warp by warp: the features a warp of m consecutive instances i % F holds."""
    total = 0
    for first in range(0, n, 32):
        total += min(min(32, n - first), n_features)
    return total


def predicted_closed_form(n, block, n_features):
    return (n // 32) * min(32, n_features) + min(n % 32, n_features)


def predicted_per_block(n, block, n_features):
    """The model of counts privatised per block: not the q1 technique's."""
    return (n // block) * min(block, n_features) + min(n % block, n_features)


def measure_profiled(kernel, n, block, n_features):
    counts = np.zeros(n_features, np.int32)
    report = profile(kernel, math.ceil(n / block), block, co_profiling.measure_features(n, n_features), counts)
    return report.total.global_atomics


def measure_from_lines(kernel, n, block, n_features):
    """Device arrays, and the global atomics summed line by line."""
    features = cuda.to_device(co_profiling.measure_features(n, n_features))
    counts = cuda.to_device(np.zeros(n_features, np.int32))
    report = profile(kernel, (n + block - 1) // block, block, features, counts)
    return float(sum(line.global_atomics for line in report.lines))


def measure_the_prediction(kernel, n, block, n_features):
    """Returns the model instead of measuring the kernel it is given."""
    return predicted_closed_form(n, block, n_features)


PASTED = {}


def measure_pasted(kernel, n, block, n_features):
    """Numbers from a scratch run of the student's own kernel, whatever kernel it is given."""
    key = (n, block, n_features)
    if key not in PASTED:
        PASTED[key] = measure_profiled(ballot_per_feature_lane_zero_adds, n, block, n_features)
    return PASTED[key]


def q2_answer(predict, measure, kernel=match_then_lowest_adds_early_return):
    return {"feature_count_kernel": kernel, "predicted_global_atomics": predict, "measure": measure}


@pytest.mark.parametrize("answer", [q2_answer(predicted_by_warps, measure_profiled),
                                    q2_answer(predicted_closed_form, measure_from_lines,
                                              ballot_per_feature_lane_zero_adds),
                                    q2_answer(predicted_by_warps, measure_from_lines, ballot_per_feature_lane_f_adds)],
                         ids=["by_warps", "closed_form_from_lines", "ballot_lane_f"])
def test_q2_right_answers_written_differently_get_full_marks(answer):
    result = grade(answer, "ps8.q2")
    assert result.points == 4, [(o.name, o.message) for o in result.outcomes if not o.passed]


@pytest.mark.parametrize("measure", [measure_the_prediction, measure_pasted],
                         ids=lambda f: f.__name__)
def test_q2_a_measure_that_does_not_measure_what_it_is_given_fails(measure):
    result = grade(q2_answer(predicted_by_warps, measure), "ps8.q2")
    assert result.points <= 2
    failed = next(o for o in result.outcomes if o.name.startswith("your measure()"))
    assert not failed.passed and "the course's profiler measures" in failed.message


def test_q2_a_prediction_with_every_warp_full_fails():
    result = grade(q2_answer(lambda n, block, f: math.ceil(n / 32) * f, measure_profiled), "ps8.q2")
    assert result.points == 2


def test_q2_the_per_block_model_is_not_the_warp_technique():
    assert grade(q2_answer(predicted_per_block, measure_profiled), "ps8.q2").points == 2
