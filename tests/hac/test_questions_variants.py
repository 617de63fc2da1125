"""Does ps5.q1 grade the warp-scan technique rather than one solution?

Kernels written from the problem statement (``fusion_warp[1, 32](keys, weights, src, dst)``: one warp walks
the sorted keys 32 at a time; each run of equal neighbours ends with its sum in its first entry, the other
entries tombstones; the sums come from a segmented scan in registers by shuffles): wrong techniques with
right results earn at most half, right ones written differently full marks.
"""

import numpy as np
import pytest
from numba import cuda, float32, int64

from course_lib.grading import get_question, run_tests

POINTS = 6
FULL = 0xFFFFFFFF


def grade(kernel):
    return run_tests(get_question("ps5.q1"), kernel, hidden=True, seed=9)


# ----------------------------------------------------------------------------- wrong techniques
@cuda.jit
def lane0_scans_serially(keys, weights, src, dst):
    """Every lane loads its key and weight; lane 0 fetches all 32 by shuffles, scans them alone and hands each
    lane its run's head and sum back by shuffles."""
    lane = cuda.threadIdx.x
    n = keys.shape[0]
    heads = cuda.local.array(32, int64)
    sums = cuda.local.array(32, float32)
    carry_key = int64(-1)
    carry_sum = float32(0.0)
    carry_head = int64(-1)
    for base in range(0, n, 32):
        p = base + lane
        key = int64(-1)
        w = float32(0.0)
        if p < n:
            key = keys[p]
            w = weights[key & 0xFFFFFFFF]
        run_key, run_sum, run_head = carry_key, carry_sum, carry_head
        for k in range(32):
            kk = cuda.shfl_sync(FULL, key, k)
            wk = cuda.shfl_sync(FULL, w, k)
            if lane == 0:
                if kk >= 0 and (kk >> 32) == run_key:
                    run_sum += wk
                else:
                    run_key, run_sum, run_head = kk >> 32, wk, kk & 0xFFFFFFFF
                heads[k] = run_head
                sums[k] = run_sum
        carry_key = cuda.shfl_sync(FULL, run_key, 0)
        carry_sum = cuda.shfl_sync(FULL, run_sum, 0)
        carry_head = cuda.shfl_sync(FULL, run_head, 0)
        my_head = int64(-1)
        my_sum = float32(0.0)
        for k in range(32):
            h = cuda.shfl_sync(FULL, heads[k] if lane == 0 else int64(0), 0)
            s = cuda.shfl_sync(FULL, sums[k] if lane == 0 else float32(0.0), 0)
            if lane == k:
                my_head, my_sum = h, s
        cuda.syncwarp()
        if p < n:
            entry = key & 0xFFFFFFFF
            if entry != my_head:
                weights[entry] = -np.inf
                src[entry] = -1
                dst[entry] = -1
            if p == n - 1 or (keys[p + 1] >> 32) != (key >> 32):
                weights[my_head] = my_sum


WRONG = [lane0_scans_serially]


# ----------------------------------------------------------------------------- right, written differently
@cuda.jit
def whole_key_shifted_and_run_end_by_shuffle(keys, weights, src, dst):
    """The scan shifts the whole key (neighbour and entry together); the end of a run is found with shfl_down."""
    me = cuda.threadIdx.x
    count = keys.shape[0]
    c_key = int64(-1)
    c_sum = float32(0.0)
    c_first = int64(-1)
    for start in range(0, count, 32):
        i = start + me
        key = int64(-1 - me)
        acc = float32(0.0)
        if i < count:
            key = keys[i]
            acc = weights[key & 0xFFFFFFFF]
        first = key & 0xFFFFFFFF if i < count else int64(-1)
        if me == 0 and i < count and (key >> 32) == c_key:
            acc += c_sum
            first = c_first
        d = 1
        while d < 32:
            other = cuda.shfl_up_sync(FULL, key, d)
            other_acc = cuda.shfl_up_sync(FULL, acc, d)
            other_first = cuda.shfl_up_sync(FULL, first, d)
            if me >= d and i < count and (other >> 32) == (key >> 32):
                acc += other_acc
                if other_first < first:
                    first = other_first
            d *= 2
        next_key = cuda.shfl_down_sync(FULL, key, 1)
        c_key = cuda.shfl_sync(FULL, key, 31) >> 32
        c_sum = cuda.shfl_sync(FULL, acc, 31)
        c_first = cuda.shfl_sync(FULL, first, 31)
        cuda.syncwarp()
        if i < count:
            mine = key & 0xFFFFFFFF
            if mine != first:
                weights[mine] = -np.inf
                src[mine] = -1
                dst[mine] = -1
            last_of_chunk = me == 31 and i + 1 < count
            if i == count - 1 or (last_of_chunk and (keys[i + 1] >> 32) != (key >> 32)) or \
                    (not last_of_chunk and (next_key >> 32) != (key >> 32)):
                weights[first] = acc


RIGHT = [whole_key_shifted_and_run_end_by_shuffle]


@pytest.mark.parametrize("kernel", RIGHT, ids=lambda k: k.__name__)
def test_the_technique_written_differently_earns_full_marks(kernel):
    """With the solution and the fixture right_but_different (tests/grading), three right variants."""
    result = grade(kernel)
    assert result.points == POINTS, str(result)


@pytest.mark.parametrize("kernel", WRONG, ids=lambda k: k.__name__)
def test_a_wrong_technique_with_right_results_earns_at_most_half(kernel):
    result = grade(kernel)
    assert result.points <= POINTS / 2, str(result)
    assert any(o.technique and not o.passed for o in result.outcomes), str(result)
