"""Does ps5.q1 grade the warp-scan technique rather than one solution?

Kernels written from the problem statement (``fusion_warp[1, 32 * w](keys, weights, src, dst)``: a block of whole
warps walks the sorted keys, 32 per warp at a time; each run of equal neighbours ends with its sum in its first entry,
the other entries tombstones; the sums come from segmented scans in registers by shuffles, the carry between warps
through shared memory): wrong techniques with right results earn at most half, right ones written differently full
marks.
"""

import numpy as np
import pytest
from numba import cuda, float32, int32, int64

from course_lib.grading import get_question, run_tests

POINTS = 6
FULL = 0xFFFFFFFF


def grade(kernel):
    return run_tests(get_question("ps5.q1"), kernel, hidden=True, seed=9)


# ----------------------------------------------------------------------------- wrong techniques
@cuda.jit
def lane0_scans_serially(keys, weights, src, dst):
    """Every lane loads its key and weight; lane 0 of each warp fetches all 32 by shuffles, scans them alone and
    hands each lane its run's head and sum back by shuffles; the warps take the carry in turn."""
    t = cuda.threadIdx.x
    lane = t % 32
    warp = t // 32
    n = keys.shape[0]
    heads = cuda.local.array(32, int64)
    sums = cuda.local.array(32, float32)
    carry = cuda.shared.array(2, int64)
    carry_sum = cuda.shared.array(1, float32)
    if t == 0:
        carry[0] = -1
    cuda.syncthreads()
    for base in range(0, n, cuda.blockDim.x):
        p = base + t
        key = int64(-1)
        w = float32(0.0)
        if p < n:
            key = keys[p]
            w = weights[key & 0xFFFFFFFF]
        for turn in range(cuda.blockDim.x // 32):
            if warp == turn:
                run_key, run_sum, run_head = carry[0], carry_sum[0], carry[1]
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
                cuda.syncwarp()
                if lane == 0:
                    carry[0] = run_key
                    carry[1] = run_head
                    carry_sum[0] = run_sum
            cuda.syncthreads()
        my_head = int64(-1)
        my_sum = float32(0.0)
        for k in range(32):
            h = cuda.shfl_sync(FULL, heads[k] if lane == 0 else int64(0), 0)
            s = cuda.shfl_sync(FULL, sums[k] if lane == 0 else float32(0.0), 0)
            if lane == k:
                my_head, my_sum = h, s
        if p < n:
            entry = key & 0xFFFFFFFF
            if entry != my_head:
                weights[entry] = -np.inf
                src[entry] = -1
                dst[entry] = -1
            if p == n - 1 or (keys[p + 1] >> 32) != (key >> 32):
                weights[my_head] = my_sum


@cuda.jit
def each_run_summed_by_its_first_thread(keys, weights, src, dst):
    """Right sums, no scan: the thread holding a run's first key walks the whole run alone."""
    n = keys.shape[0]
    for p in range(cuda.threadIdx.x, n, cuda.blockDim.x):
        neighbour = keys[p] >> 32
        if p == 0 or (keys[p - 1] >> 32) != neighbour:
            head = keys[p] & 0xFFFFFFFF
            total = weights[head]
            q = p + 1
            while q < n and (keys[q] >> 32) == neighbour:
                e = keys[q] & 0xFFFFFFFF
                total += weights[e]
                weights[e] = -np.inf
                src[e] = -1
                dst[e] = -1
                q += 1
            weights[head] = total


@cuda.jit
def warp_scan_in_shared_memory(keys, weights, src, dst):
    """Each warp scans its chunk in shared memory with a syncwarp after every step (no shuffles); the carry is handed
    on in turns as in the statement."""
    t = cuda.threadIdx.x
    lane = t % 32
    warp = t // 32
    n = keys.shape[0]
    run_key = cuda.shared.array((4, 32), int64)  # the grader's blocks have at most four warps
    run_sum = cuda.shared.array((4, 32), float32)
    run_head = cuda.shared.array((4, 32), int64)
    carry = cuda.shared.array(2, int64)
    carry_sum = cuda.shared.array(1, float32)
    if t == 0:
        carry[0] = -1
    cuda.syncthreads()
    for base in range(0, n, cuda.blockDim.x):
        p = base + t
        neighbour = int64(-2 - t)
        entry = int64(-1)
        total = float32(0.0)
        if p < n:
            neighbour = keys[p] >> 32
            entry = keys[p] & 0xFFFFFFFF
            total = weights[entry]
        head = entry
        run_key[warp, lane] = neighbour
        run_sum[warp, lane] = total
        run_head[warp, lane] = head
        cuda.syncwarp()
        for step in range(5):
            offset = 1 << step
            add = float32(0.0)
            first = head
            if lane >= offset and run_key[warp, lane - offset] == neighbour:
                add = run_sum[warp, lane - offset]
                first = min(head, run_head[warp, lane - offset])
            cuda.syncwarp()
            total += add
            head = first
            run_sum[warp, lane] = total
            run_head[warp, lane] = head
            cuda.syncwarp()
        first_neighbour = run_key[warp, 0]
        for turn in range(cuda.blockDim.x // 32):
            if warp == turn:
                if neighbour == first_neighbour and neighbour == carry[0]:
                    total += carry_sum[0]
                    head = carry[1]
                cuda.syncwarp()
                if lane == 31:
                    carry[0] = neighbour
                    carry[1] = head
                    carry_sum[0] = total
            cuda.syncthreads()
        if p < n:
            if entry != head:
                weights[entry] = -np.inf
                src[entry] = -1
                dst[entry] = -1
            if p == n - 1 or (keys[p + 1] >> 32) != neighbour:
                weights[head] = total


WRONG = [lane0_scans_serially, each_run_summed_by_its_first_thread, warp_scan_in_shared_memory]


# ----------------------------------------------------------------------------- right, written differently
@cuda.jit
def whole_key_shifted_and_warps_folded(keys, weights, src, dst):
    """The scan shifts the whole key (neighbour and entry together); every warp publishes its last run at once and
    folds those of the warps below it (two barriers per pass); the end of a run is found with shfl_down."""
    t = cuda.threadIdx.x
    me = t % 32
    w = t // 32
    last_key = cuda.shared.array(32, int64)  # per warp: the neighbour, sum and first entry of its last run
    last_acc = cuda.shared.array(32, float32)
    last_first = cuda.shared.array(32, int64)
    whole = cuda.shared.array(32, int32)  # 1 when that run began at the warp's lane 0
    c_key = cuda.shared.array(2, int64)  # the block's carry: neighbour and first entry, then its sum
    c_sum = cuda.shared.array(1, float32)
    if t == 0:
        c_key[0] = -1
    cuda.syncthreads()
    count = keys.shape[0]
    for start in range(0, count, cuda.blockDim.x):
        i = start + t
        key = int64(-1 - t)
        acc = float32(0.0)
        first = int64(-1)
        if i < count:
            key = keys[i]
            acc = weights[key & 0xFFFFFFFF]
            first = key & 0xFFFFFFFF
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
        lane0 = cuda.shfl_sync(FULL, key, 0)
        from_lane0 = i < count and start + 32 * w < count and (lane0 >> 32) == (key >> 32)
        if me == 31:
            last_key[w] = key >> 32 if i < count else int64(-2)
            last_acc[w] = acc
            last_first[w] = first
            whole[w] = 1 if from_lane0 else 0
        cuda.syncthreads()
        in_key = c_key[0]  # the run reaching this warp from below: fold the block's carry and the warps below
        in_acc = c_sum[0]
        in_first = c_key[1]
        for j in range(w):
            if whole[j] == 1 and last_key[j] == in_key:
                in_acc += last_acc[j]
            else:
                in_key = last_key[j]
                in_acc = last_acc[j]
                in_first = last_first[j]
        if from_lane0 and in_key == (key >> 32):
            acc += in_acc
            first = in_first
        cuda.syncthreads()
        if t == cuda.blockDim.x - 1:
            c_key[0] = key >> 32 if i < count else int64(-2)
            c_key[1] = first
            c_sum[0] = acc
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


@cuda.jit
def runs_matched_and_only_sums_shifted(keys, weights, src, dst):
    """The lanes of a run find each other with match_any_sync; the run's first lane gives the first entry by one
    shuffle and only the sums are shifted in the scan; the carry is handed on in turns."""
    t = cuda.threadIdx.x
    lane = t % 32
    warp = t // 32
    n = keys.shape[0]
    state = cuda.shared.array(2, int64)  # neighbour and first entry of the last run so far, then its sum
    state_sum = cuda.shared.array(1, float32)
    if t == 0:
        state[0] = -1
    cuda.syncthreads()
    for base in range(0, n, cuda.blockDim.x):
        p = base + t
        neighbour = int64(-2 - t)
        entry = int64(-1)
        total = float32(0.0)
        if p < n:
            neighbour = keys[p] >> 32
            entry = keys[p] & 0xFFFFFFFF
            total = weights[entry]
        same = cuda.match_any_sync(FULL, neighbour)
        start = cuda.ffs(same) - 1  # the run's first lane in this chunk
        head = cuda.shfl_sync(FULL, entry, start)
        offset = 1
        while offset < 32:
            below = cuda.shfl_up_sync(FULL, total, offset)
            if lane - offset >= start:
                total += below
            offset *= 2
        turn = 0
        while turn < cuda.blockDim.x // 32:
            if warp == turn:
                if start == 0 and neighbour == state[0]:
                    total += state_sum[0]
                    head = state[1]
                cuda.syncwarp()
                if lane == 31:
                    state[0] = neighbour
                    state[1] = head
                    state_sum[0] = total
            cuda.syncthreads()
            turn += 1
        if p < n:
            if entry != head:
                weights[entry] = -np.inf
                src[entry] = -1
                dst[entry] = -1
            if p == n - 1 or (keys[p + 1] >> 32) != neighbour:
                weights[head] = total


RIGHT = [whole_key_shifted_and_warps_folded, runs_matched_and_only_sums_shifted]


@pytest.mark.parametrize("seed", [9, 10])
@pytest.mark.parametrize("kernel", RIGHT, ids=lambda k: k.__name__)
def test_the_technique_written_differently_earns_full_marks(kernel, seed):
    """With the fixture right_but_different (tests/grading), three right variants besides the solution, on two
    grading seeds (the hidden technique test draws its configurations from the seed)."""
    result = run_tests(get_question("ps5.q1"), kernel, hidden=True, seed=seed)
    assert result.points == POINTS, str(result)


@pytest.mark.parametrize("kernel", WRONG, ids=lambda k: k.__name__)
def test_a_wrong_technique_with_right_results_earns_at_most_half(kernel):
    """With the fixtures atomics_only and shared_scan (tests/grading) and the serial loops of test_questions.py, seven
    wrong techniques."""
    result = grade(kernel)
    assert result.points <= POINTS / 2, str(result)
    assert any(o.technique and not o.passed for o in result.outcomes), str(result)


# ----------------------------------------------------------------------------- the technique only in part
# Written from the problem statement by a student who keeps the technique where the visible tests look: thread 0
# walking the keys when the block is one warp, or on inputs larger than the visible ones; or one warp scanning every
# chunk of the block while the others wait. At most half, on every grading seed.
@cuda.jit(device=True)
def _serial_walk(keys, weights, src, dst):
    """Thread 0 alone: each run's sum into its first entry, the others tombstones."""
    n = keys.shape[0]
    start = 0
    while start < n:
        neighbour = keys[start] >> 32
        head = keys[start] & 0xFFFFFFFF
        total = weights[head]
        p = start + 1
        while p < n and (keys[p] >> 32) == neighbour:
            e = keys[p] & 0xFFFFFFFF
            total += weights[e]
            weights[e] = -np.inf
            src[e] = -1
            dst[e] = -1
            p += 1
        weights[head] = total
        start = p


@cuda.jit(device=True)
def _warp_scan_pass(keys, weights, src, dst, carry_key, carry_sum, carry_head):
    """The solution's technique, every warp of the block on its chunk of each pass."""
    t = cuda.threadIdx.x
    lane = t % 32
    warp = t // 32
    n = keys.shape[0]
    if t == 0:
        carry_key[0] = -1
    cuda.syncthreads()
    for base in range(0, n, cuda.blockDim.x):
        p = base + t
        neighbour = int64(-2 - t)
        entry = int64(-1)
        total = float32(0.0)
        if p < n:
            neighbour = keys[p] >> 32
            entry = keys[p] & 0xFFFFFFFF
            total = weights[entry]
        head = entry
        for step in range(5):
            offset = 1 << step
            below_key = cuda.shfl_up_sync(FULL, neighbour, offset)
            below_total = cuda.shfl_up_sync(FULL, total, offset)
            below_head = cuda.shfl_up_sync(FULL, head, offset)
            if lane >= offset and below_key == neighbour:
                total += below_total
                head = min(head, below_head)
        first_neighbour = cuda.shfl_sync(FULL, neighbour, 0)
        for turn in range(cuda.blockDim.x // 32):
            if warp == turn:
                if neighbour == first_neighbour and neighbour == carry_key[0]:
                    total += carry_sum[0]
                    head = carry_head[0]
                cuda.syncwarp()
                if lane == 31:
                    carry_key[0] = neighbour
                    carry_sum[0] = total
                    carry_head[0] = head
            cuda.syncthreads()
        if p < n:
            if entry != head:
                weights[entry] = -np.inf
                src[entry] = -1
                dst[entry] = -1
            if p == n - 1 or (keys[p + 1] >> 32) != neighbour:
                weights[head] = total


@cuda.jit
def thread_zero_walks_when_one_warp(keys, weights, src, dst):
    """The warp scan on blocks of two warps or more; thread 0 walks the keys when the block is one warp."""
    carry_key = cuda.shared.array(1, int64)
    carry_sum = cuda.shared.array(1, float32)
    carry_head = cuda.shared.array(1, int64)
    if cuda.blockDim.x == 32:
        if cuda.threadIdx.x == 0:
            _serial_walk(keys, weights, src, dst)
        return
    _warp_scan_pass(keys, weights, src, dst, carry_key, carry_sum, carry_head)


@cuda.jit
def thread_zero_walks_large_inputs(keys, weights, src, dst):
    """The warp scan up to 600 keys (more than the visible tests use); thread 0 walks the keys above."""
    carry_key = cuda.shared.array(1, int64)
    carry_sum = cuda.shared.array(1, float32)
    carry_head = cuda.shared.array(1, int64)
    if keys.shape[0] > 600:
        if cuda.threadIdx.x == 0:
            _serial_walk(keys, weights, src, dst)
        return
    _warp_scan_pass(keys, weights, src, dst, carry_key, carry_sum, carry_head)


@cuda.jit
def first_warp_scans_every_chunk(keys, weights, src, dst):
    """Warp 0 scans the keys 32 at a time by shuffles, carrying the last run in registers; the other warps wait."""
    t = cuda.threadIdx.x
    n = keys.shape[0]
    if t < 32:
        run_key = int64(-1)
        run_sum = float32(0.0)
        run_head = int64(-1)
        for base in range(0, n, 32):
            p = base + t
            neighbour = int64(-2 - t)
            entry = int64(-1)
            total = float32(0.0)
            if p < n:
                neighbour = keys[p] >> 32
                entry = keys[p] & 0xFFFFFFFF
                total = weights[entry]
            head = entry
            for step in range(5):
                offset = 1 << step
                below_key = cuda.shfl_up_sync(FULL, neighbour, offset)
                below_total = cuda.shfl_up_sync(FULL, total, offset)
                below_head = cuda.shfl_up_sync(FULL, head, offset)
                if t >= offset and below_key == neighbour:
                    total += below_total
                    head = min(head, below_head)
            first_neighbour = cuda.shfl_sync(FULL, neighbour, 0)
            if neighbour == first_neighbour and neighbour == run_key:
                total += run_sum
                head = run_head
            run_key = cuda.shfl_sync(FULL, neighbour, 31)
            run_sum = cuda.shfl_sync(FULL, total, 31)
            run_head = cuda.shfl_sync(FULL, head, 31)
            if p < n:
                if entry != head:
                    weights[entry] = -np.inf
                    src[entry] = -1
                    dst[entry] = -1
                if p == n - 1 or (keys[p + 1] >> 32) != neighbour:
                    weights[head] = total
    cuda.syncthreads()


PARTIAL = [thread_zero_walks_when_one_warp, thread_zero_walks_large_inputs, first_warp_scans_every_chunk]


@pytest.mark.parametrize("seed", [3, 4])
@pytest.mark.parametrize("kernel", PARTIAL, ids=lambda k: k.__name__)
def test_the_technique_only_in_part_earns_at_most_half_on_every_seed(kernel, seed):
    result = run_tests(get_question("ps5.q1"), kernel, hidden=True, seed=seed)
    assert result.points <= POINTS / 2 and result.capped, str(result)
