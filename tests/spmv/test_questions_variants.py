"""Does ps2.q1 grade the sub-warp technique rather than one solution?

Kernels written from the problem statement (L lanes per row, lane l reading entries l, l + L, ...,
a row's bounds read once and handed to its lanes by shuffles, the partial sums added by shuffles; ``kernel[ceil(R L / block), block](indptr, indices, data, x, y)``):
wrong techniques with right results earn at most half, right ones written differently full marks.
"""

import pytest
from numba import cuda, float32

from course_lib.grading import get_question, run_tests

POINTS = 6
FULL = 0xFFFFFFFF


#: Grading seeds: the hidden technique test draws its L, blocks and matrices from each.
SEEDS = (5, 6)


def grade(factory, seed=5):
    return run_tests(get_question("ps2.q1"), factory, hidden=True, seed=seed)


# ----------------------------------------------------------------------------- wrong techniques
def thread_per_row(lanes):
    """Lane 0 of each group walks the whole row; the other lanes idle."""
    @cuda.jit
    def kernel(indptr, indices, data, x, y):
        g = cuda.grid(1)
        row = g // lanes
        if g % lanes == 0 and row < y.shape[0]:
            total = float32(0.0)
            for j in range(indptr[row], indptr[row + 1]):
                total += data[j] * x[indices[j]]
            y[row] = total

    return kernel


def shared_tree(lanes):
    """Interleaved reads, but the L partial sums are added by a tree in shared memory."""
    @cuda.jit
    def kernel(indptr, indices, data, x, y):
        parts = cuda.shared.array(1024, float32)
        t = cuda.threadIdx.x
        g = cuda.grid(1)
        row = g // lanes
        lane = g % lanes
        acc = float32(0.0)
        if row < y.shape[0]:
            for j in range(indptr[row] + lane, indptr[row + 1], lanes):
                acc += data[j] * x[indices[j]]
        parts[t] = acc
        cuda.syncthreads()
        half = lanes // 2
        while half > 0:
            if lane < half:
                parts[t] += parts[t + half]
            cuda.syncthreads()
            half //= 2
        if lane == 0 and row < y.shape[0]:
            y[row] = parts[t]

    return kernel


def lane0_gathers_serially(lanes):
    """Interleaved reads; then lane 0 fetches each other lane's sum with one shuffle per lane."""
    @cuda.jit
    def kernel(indptr, indices, data, x, y):
        g = cuda.grid(1)
        row = g // lanes
        lane = g % lanes
        acc = float32(0.0)
        if row < y.shape[0]:
            for j in range(indptr[row] + lane, indptr[row + 1], lanes):
                acc += data[j] * x[indices[j]]
        total = acc
        base = cuda.laneid - lane
        for k in range(1, lanes):
            other = cuda.shfl_sync(FULL, acc, base + k)
            total += other
        if lane == 0 and row < y.shape[0]:
            y[row] = total

    return kernel


def blocked_split(lanes):
    """Each lane sums a contiguous chunk of its row (blocked, not interleaved), then shuffles."""
    @cuda.jit
    def kernel(indptr, indices, data, x, y):
        g = cuda.grid(1)
        row = g // lanes
        lane = g % lanes
        acc = float32(0.0)
        if row < y.shape[0]:
            start, stop = indptr[row], indptr[row + 1]
            chunk = (stop - start + lanes - 1) // lanes
            for j in range(start + lane * chunk, min(start + (lane + 1) * chunk, stop)):
                acc += data[j] * x[indices[j]]
        off = lanes // 2
        while off > 0:
            acc += cuda.shfl_down_sync(FULL, acc, off)
            off //= 2
        if lane == 0 and row < y.shape[0]:
            y[row] = acc

    return kernel


def atomics_into_y(lanes):
    """Interleaved reads; each lane adds its part to y[row] atomically."""
    @cuda.jit
    def kernel(indptr, indices, data, x, y):
        g = cuda.grid(1)
        row = g // lanes
        lane = g % lanes
        part = float32(0.0)
        if row < y.shape[0]:
            if lane == 0:
                y[row] = 0.0
            for j in range(indptr[row] + lane, indptr[row + 1], lanes):
                part += data[j] * x[indices[j]]
        cuda.syncwarp()
        if row < y.shape[0]:
            cuda.atomic.add(y, row, part)

    return kernel


def every_lane_reads_the_bounds(lanes):
    """Lesson 2's warp-per-row pattern with L lanes: right results, but each lane reads both bounds of its row."""
    @cuda.jit
    def kernel(indptr, indices, data, x, y):
        g = cuda.grid(1)
        row = g // lanes
        lane = g % lanes
        total = float32(0.0)
        if row < y.shape[0]:
            for j in range(indptr[row] + lane, indptr[row + 1], lanes):
                total += data[j] * x[indices[j]]
        offset = lanes // 2
        while offset > 0:
            total += cuda.shfl_down_sync(FULL, total, offset)
            offset //= 2
        if lane == 0 and row < y.shape[0]:
            y[row] = total

    return kernel


# The technique only where the visible test looks (L = 8 and 16, blocks of several warps).
def _subwarp(lanes):
    @cuda.jit
    def kernel(indptr, indices, data, x, y):
        g = cuda.grid(1)
        row = g // lanes
        lane = g % lanes
        inside = row < y.shape[0]
        lo = hi = 0
        if lane == 0 and inside:
            lo = indptr[row]
            hi = indptr[row + 1]
        leader = cuda.laneid - lane
        lo = cuda.shfl_sync(FULL, lo, leader)
        hi = cuda.shfl_sync(FULL, hi, leader)
        s = float32(0.0)
        k = lo + lane
        while k < hi:
            s += x[indices[k]] * data[k]
            k += lanes
        step = lanes // 2
        while step >= 1:
            s += cuda.shfl_down_sync(FULL, s, step)
            step //= 2
        if lane == 0 and inside:
            y[row] = s

    return kernel


@cuda.jit
def _one_thread_per_row(indptr, indices, data, x, y):
    row = cuda.grid(1)
    if row < y.shape[0]:
        total = float32(0.0)
        for j in range(indptr[row], indptr[row + 1]):
            total += data[j] * x[indices[j]]
        y[row] = total


def lanes_only_from_eight(lanes):
    """The sub-warp kernel for L >= 8; for fewer lanes, lane 0 of each group walks its row."""
    if lanes >= 8:
        return _subwarp(lanes)

    @cuda.jit
    def kernel(indptr, indices, data, x, y):
        g = cuda.grid(1)
        row = g // lanes
        if g % lanes == 0 and row < y.shape[0]:
            total = float32(0.0)
            for j in range(indptr[row], indptr[row + 1]):
                total += data[j] * x[indices[j]]
            y[row] = total

    return kernel


def lanes_only_in_blocks_of_several_warps(lanes):
    """Blocks of one warp: lane 0 of each group walks its row; larger blocks: the sub-warp technique."""
    @cuda.jit
    def kernel(indptr, indices, data, x, y):
        g = cuda.grid(1)
        row = g // lanes
        lane = g % lanes
        inside = row < y.shape[0]
        if cuda.blockDim.x == 32:
            if lane == 0 and inside:
                total = float32(0.0)
                for j in range(indptr[row], indptr[row + 1]):
                    total += data[j] * x[indices[j]]
                y[row] = total
            return
        lo = hi = 0
        if lane == 0 and inside:
            lo = indptr[row]
            hi = indptr[row + 1]
        leader = cuda.laneid - lane
        lo = cuda.shfl_sync(FULL, lo, leader)
        hi = cuda.shfl_sync(FULL, hi, leader)
        s = float32(0.0)
        k = lo + lane
        while k < hi:
            s += x[indices[k]] * data[k]
            k += lanes
        step = lanes // 2
        while step >= 1:
            s += cuda.shfl_down_sync(FULL, s, step)
            step //= 2
        if lane == 0 and inside:
            y[row] = s

    return kernel


WRONG = [thread_per_row, shared_tree, lane0_gathers_serially, blocked_split, atomics_into_y,
         every_lane_reads_the_bounds, lanes_only_from_eight, lanes_only_in_blocks_of_several_warps]


# ----------------------------------------------------------------------------- right, written differently
def broadcast_bounds(lanes):
    """Lane 0 of the group reads the row's bounds and shuffles them to the others; shfl_down reduction."""
    @cuda.jit
    def kernel(indptr, indices, data, x, y):
        g = cuda.grid(1)
        row = g // lanes
        lane = g % lanes
        inside = row < y.shape[0]
        lo = hi = 0
        if lane == 0 and inside:
            lo = indptr[row]
            hi = indptr[row + 1]
        leader = cuda.laneid - lane
        lo = cuda.shfl_sync(FULL, lo, leader)
        hi = cuda.shfl_sync(FULL, hi, leader)
        s = float32(0.0)
        k = lo + lane
        while k < hi:
            s += x[indices[k]] * data[k]
            k += lanes
        step = lanes // 2
        while step >= 1:
            s += cuda.shfl_down_sync(FULL, s, step)
            step //= 2
        if lane == 0 and inside:
            y[row] = s

    return kernel


def xor_with_for_loops(lanes):
    """Thread index arithmetic by hand, the warp's bounds read by its first lanes, a for loop over the row, a
    butterfly with precomputed offsets."""
    levels = lanes.bit_length() - 1
    groups = 32 // lanes

    @cuda.jit
    def kernel(indptr, indices, data, x, y):
        tid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        r, l = divmod(tid, lanes)
        w = cuda.laneid
        base = (tid - w) // lanes
        b = indptr[base + w] if w <= groups and base + w <= y.shape[0] else 0
        lo = cuda.shfl_sync(FULL, b, w // lanes)
        hi = cuda.shfl_sync(FULL, b, w // lanes + 1)
        v = float32(0.0)
        if r < y.shape[0]:
            for e in range(lo + l, hi, lanes):
                v += data[e] * x[indices[e]]
        for level in range(levels):
            v += cuda.shfl_xor_sync(FULL, v, lanes >> (level + 1))
        if l == 0 and r < y.shape[0]:
            y[r] = v

    return kernel


def last_lane_stores(lanes):
    """The last lane of the group reads the bounds and hands them out; the butterfly leaves the sum in every
    lane, and the group's last lane stores it."""
    @cuda.jit
    def kernel(indptr, indices, data, x, y):
        g = cuda.grid(1)
        row = g // lanes
        lane = g % lanes
        total = float32(0.0)
        j = end = 0
        if lane == lanes - 1 and row < y.shape[0]:
            j = indptr[row]
            end = indptr[row + 1]
        last = cuda.laneid - lane + lanes - 1
        j = cuda.shfl_sync(FULL, j, last) + lane
        end = cuda.shfl_sync(FULL, end, last)
        while j < end:
            total += data[j] * x[indices[j]]
            j += lanes
        mask = 1
        while mask < lanes:
            total += cuda.shfl_xor_sync(FULL, total, mask)
            mask *= 2
        if lane == lanes - 1 and row < y.shape[0]:
            y[row] = total

    return kernel


RIGHT = [broadcast_bounds, xor_with_for_loops, last_lane_stores]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("factory", WRONG, ids=lambda f: f.__name__)
def test_a_wrong_technique_with_right_results_earns_at_most_half(factory, seed):
    result = grade(factory, seed)
    assert result.points <= POINTS / 2, str(result)
    assert any(o.technique and not o.passed for o in result.outcomes), str(result)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("factory", RIGHT, ids=lambda f: f.__name__)
def test_the_technique_written_differently_earns_full_marks(factory, seed):
    result = grade(factory, seed)
    assert result.points == POINTS, str(result)


# ----------------------------------------------------------------------------- ps2.q3, the traffic ratio
def test_q3_a_ratio_measured_another_way_keeps_full_marks():
    """COO's sectors over ELL's (the entries are the same, so per entry cancels), the rows of the entries found
    by a search in indptr, and K from the cumulative counts of the rows reaching each column."""
    import numpy as np

    from course_lib import spmv
    from course_lib.sim import profile

    def measure_ratio(A):
        rows_of_a, cols_of_a = A.shape
        ones = np.ones(cols_of_a, np.float32)
        split = spmv.ell_split(A)
        ell = profile(spmv.kernels.ell_kernel, (rows_of_a + 63) // 64, 64, split.ell_indices, split.ell_data, ones,
                      np.zeros(rows_of_a, np.float32)).total.global_load_sectors
        owner = (np.searchsorted(A.indptr, np.arange(A.nnz), side="right") - 1).astype(np.int32)
        coo = profile(spmv.kernels.coo_segmented_kernel(64), (A.nnz + 63) // 64, 64, owner,
                      A.indices.astype(np.int32), A.data, ones, np.zeros(rows_of_a, np.float32)).total
        return coo.global_load_sectors / ell

    def hyb_cost(lengths, K, ratio, launch):
        excess = int(np.clip(lengths - K, 0, None).sum())
        return float(len(lengths) * K + ratio * excess + (launch if excess > 0 else 0.0))

    def choose_k(lengths, ratio, launch):
        longest = int(lengths.max(initial=0))
        reaching = np.bincount(lengths, minlength=longest + 1)[::-1].cumsum()[::-1]  # rows reaching k = 0..longest
        worth = [k for k in range(1, longest + 1) if ratio * reaching[k] > len(lengths)]
        return min({max(worth, default=0), longest}, key=lambda K: hyb_cost(lengths, K, ratio, launch))

    result = run_tests(get_question("ps2.q3"), {"measure_ratio": measure_ratio, "hyb_cost": hyb_cost,
                                                "choose_k": choose_k}, hidden=True, seed=SEEDS[0])
    assert result.points == 2, str(result)
