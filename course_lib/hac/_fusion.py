"""Fusion kernels of Unit 5: after a merge, the duplicate entries of cluster k are summed.

k has up to two entries per neighbour l on each side ("left": (k, l), "right": (l, k)); the
lowest index of each run keeps the sum, the others become tombstones. Two ways here (see
:mod:`course_lib.hac.kernels` for the third, and for the whole iteration): with atomics
(scatter, apply, reset), or by collecting keys, sorting them and reducing each run (on the
GPU in one block, or on the host and then one thread per run).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numba import cuda

from ..registry import course_kernel
from ._kernel_base import INDEX_SENTINEL, KEY_SENTINEL, LESSON, _check_power_of_two, jit_for_block, register_factory


# --------------------------------------------------------------------------------------
# Fusion with atomics
# --------------------------------------------------------------------------------------

def _example_fusion_arrays():
    """A graph right after weighting: cluster 9 has duplicate entries towards 2 and 4."""
    src = np.array([9, 9, 9, 2, 4, 2, 4, 9, 5, 7], np.int32)
    dst = np.array([2, 4, 2, 9, 9, 9, 9, 4, 7, 5], np.int32)
    w = np.array([0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.4, 0.4, 0.5, 0.5], np.float32)
    state = np.array([0, 1, 9, 2], np.int32)
    return src, dst, w, state


def _example_scatter():
    src, dst, w, state = _example_fusion_arrays()
    return 1, 32, (src, dst, w, state, np.zeros((2, 17), np.float32), np.full((2, 17), INDEX_SENTINEL, np.int32))


@course_kernel("void(int32[::1], int32[::1], float32[::1], int32[::1], float32[:, ::1], int32[:, ::1])",
               lesson=LESSON, example=_example_scatter)
def fusion_scatter_kernel(src, dst, weights, state, acc, first):
    """Fusion with atomics, step 1: add every entry of k into its neighbour's accumulator.

    Parameters
    ----------
    src, dst, weights, state
        As in :func:`weight_relabel_kernel`.
    acc : array of shape (2, 2N - nC), weight dtype
        Zero on entry: ``acc[0, l]`` sums the entries (k, l), ``acc[1, l]`` the entries (l, k).
    first : int32 array of shape (2, 2N - nC)
        ``INDEX_SENTINEL`` on entry: the lowest entry index of each run, the survivor.

    Several threads add into the same ``acc[side, l]`` (a scatter-add race without the
    atomics). A run has at most two entries (one from i, one from j), so the float sum
    does not depend on their order.
    """
    e = cuda.grid(1)
    if e >= weights.shape[0]:
        return
    k = state[2]
    if src[e] == k:
        cuda.atomic.add(acc, (0, dst[e]), weights[e])
        cuda.atomic.min(first, (0, dst[e]), e)
    elif dst[e] == k:
        cuda.atomic.add(acc, (1, src[e]), weights[e])
        cuda.atomic.min(first, (1, src[e]), e)


def _example_apply():
    src, dst, w, state = _example_fusion_arrays()
    acc = np.zeros((2, 17), np.float32)
    first = np.full((2, 17), INDEX_SENTINEL, np.int32)
    for e in range(src.size):  # the state after the scatter
        side, other = (0, dst[e]) if src[e] == 9 else (1, src[e]) if dst[e] == 9 else (None, None)
        if side is not None:
            acc[side, other] += w[e]
            first[side, other] = min(first[side, other], e)
    return 1, 32, (src, dst, w, state, acc, first)


@course_kernel("void(int32[::1], int32[::1], float32[::1], int32[::1], float32[:, ::1], int32[:, ::1])",
               lesson=LESSON, example=_example_apply)
def fusion_apply_kernel(src, dst, weights, state, acc, first):
    """Fusion with atomics, step 2: the survivor of each run takes the sum, the others become tombstones."""
    e = cuda.grid(1)
    if e >= weights.shape[0]:
        return
    k = state[2]
    side = -1
    other = 0
    if src[e] == k:
        side = 0
        other = dst[e]
    elif dst[e] == k:
        side = 1
        other = src[e]
    if side >= 0:
        if first[side, other] == e:
            weights[e] = acc[side, other]
        else:
            weights[e] = -math.inf
            src[e] = -1
            dst[e] = -1


def _example_reset():
    src, dst, _, state = _example_fusion_arrays()
    src[[2, 5, 6, 7]] = -1  # the duplicates are tombstones by now
    dst[[2, 5, 6, 7]] = -1
    return 1, 32, (src, dst, state, np.ones((2, 17), np.float32), np.zeros((2, 17), np.int32))


@course_kernel("void(int32[::1], int32[::1], int32[::1], float32[:, ::1], int32[:, ::1])", lesson=LESSON,
               example=_example_reset)
def fusion_reset_kernel(src, dst, state, acc, first):
    """Fusion with atomics, step 3: clear the accumulators the survivors used (one survivor per slot)."""
    e = cuda.grid(1)
    if e >= src.shape[0]:
        return
    k = state[2]
    if src[e] == k:
        acc[0, dst[e]] = 0
        first[0, dst[e]] = INDEX_SENTINEL
    elif dst[e] == k:
        acc[1, src[e]] = 0
        first[1, src[e]] = INDEX_SENTINEL


# --------------------------------------------------------------------------------------
# Fusion by sorting: collection, sort, segmented reduction; the host's updates
# --------------------------------------------------------------------------------------

def _example_collect():
    src, dst, _, state = _example_fusion_arrays()
    return 1, 32, (src, dst, state, np.zeros((2, 16), np.int64), np.zeros(2, np.int32))


@course_kernel("void(int32[::1], int32[::1], int32[::1], int64[:, ::1], int32[::1])", lesson=LESSON,
               example=_example_collect)
def collect_kernel(src, dst, state, keys, counts):
    """Collection and integration: append a sort key ``(l << 32) | e`` for every entry of k.

    ``keys[0]`` receives the entries (k, l), ``keys[1]`` the entries (l, k); ``counts``
    (zero on entry) ends with how many of each. The atomic counter hands out the slots,
    so their order varies from run to run: the keys are sorted next, which makes the
    result deterministic (by neighbour l, then by entry index e).
    """
    e = cuda.grid(1)
    if e >= src.shape[0]:
        return
    k = state[2]
    if src[e] == k:
        slot = cuda.atomic.add(counts, 0, 1)
        keys[0, slot] = (np.int64(dst[e]) << 32) | np.int64(e)
    elif dst[e] == k:
        slot = cuda.atomic.add(counts, 1, 1)
        keys[1, slot] = (np.int64(src[e]) << 32) | np.int64(e)


def _example_sort():
    rng = np.random.default_rng(3)
    keys = np.zeros((2, 32), np.int64)
    keys[0, :13] = rng.integers(0, 2**40, 13)
    keys[1, :7] = rng.integers(0, 2**40, 7)
    return 1, 8, (keys, np.array([13, 7], np.int32))


@course_kernel("void(int64[:, ::1], int32[::1])", lesson=LESSON, example=_example_sort)
def sort_keys_kernel(keys, counts):
    """Sort ``keys[side, :counts[side]]`` ascending for both sides: a bitonic sort in one block.

    Launch with ONE block (any power-of-two size). The row length of ``keys`` must be a
    power of two at least ``counts[side]``: the slots past the count are filled with
    ``KEY_SENTINEL`` and sorted with the rest. Each of the log2(P) * (log2(P) + 1) / 2
    compare-exchange steps is followed by a barrier; a thread handles the pairs
    ``t, t + blockDim, ...`` of a step.
    """
    t = cuda.threadIdx.x
    width = cuda.blockDim.x
    for side in range(2):
        n = counts[side]
        padded = 1
        while padded < n:
            padded *= 2
        for p in range(n + t, padded, width):
            keys[side, p] = KEY_SENTINEL
        cuda.syncthreads()
        size = 2
        while size <= padded:
            stride = size // 2
            while stride > 0:
                for pair in range(t, padded // 2, width):
                    lo = 2 * stride * (pair // stride) + pair % stride  # first slot of the pair
                    hi = lo + stride
                    ascending = (lo & size) == 0
                    a = keys[side, lo]
                    b = keys[side, hi]
                    if (a > b) == ascending:
                        keys[side, lo] = b
                        keys[side, hi] = a
                cuda.syncthreads()
                stride //= 2
            size *= 2


@lru_cache(maxsize=None)
def fusion_segmented_kernel(block: int):
    """Fusion as a segmented reduction of the sorted keys, in one block.

    Parameters
    ----------
    block : int
        Threads per block, a power of two.

    Returns
    -------
    numba.cuda kernel
        ``kernel[1, block](keys, counts, src, dst, weights)`` after :func:`sort_keys_kernel`.
        The block walks each side's sorted keys ``block`` at a time. In a chunk, an
        inclusive segmented scan (Hillis-Steele, log2(block) steps: a thread adds the
        partial sum ``offset`` places to its left when it belongs to the same
        neighbour) gives every element the sum of its run so far; a run that began in
        an earlier chunk adds that chunk's carry. The last element of a run writes
        the sum into the run's first entry (the lowest index, the survivor); every
        other entry of the run becomes a tombstone. It sets ``counts`` to 0 at the end,
        ready for the next collection.
    """
    block = _check_power_of_two(block)

    def fusion_segmented(keys, counts, src, dst, weights):
        run_key = cuda.shared.array(block, np.int64)
        run_sum = cuda.shared.array(block, weights.dtype)
        carry_sum = cuda.shared.array(1, weights.dtype)
        carry_key = cuda.shared.array(1, np.int64)
        carry_head = cuda.shared.array(1, np.int64)
        t = cuda.threadIdx.x
        for side in range(2):
            n = counts[side]
            if t == 0:
                carry_key[0] = -1
                carry_sum[0] = 0
                carry_head[0] = -1
            for base in range(0, n, block):
                p = base + t
                neighbour = np.int64(-2) - t  # padding past n: a run of its own
                entry = np.int64(0)
                value = weights.dtype.type(0)
                if p < n:
                    neighbour = keys[side, p] >> 32
                    entry = keys[side, p] & 0xFFFFFFFF
                    value = weights[entry]
                run_key[t] = neighbour
                run_sum[t] = value
                cuda.syncthreads()
                offset = 1
                while offset < block:
                    add = weights.dtype.type(0)
                    if t >= offset and run_key[t - offset] == neighbour:
                        add = run_sum[t - offset]
                    cuda.syncthreads()  # every read of this step before any write
                    run_sum[t] += add
                    cuda.syncthreads()
                    offset *= 2
                total = run_sum[t]
                continues = neighbour == carry_key[0]  # the run began in an earlier chunk
                if continues:
                    total += carry_sum[0]
                # The run's first entry: the previous chunk's head, or the first element of this run here.
                first = t
                while first > 0 and run_key[first - 1] == neighbour:
                    first -= 1
                head = carry_head[0] if continues and first == 0 else np.int64(-1)
                if p < n and head < 0:
                    head = keys[side, base + first] & 0xFFFFFFFF
                last = p == n - 1 or (p < n - 1 and (keys[side, p + 1] >> 32) != neighbour)
                cuda.syncthreads()  # everyone has read the carry of the previous chunk
                if p < n:
                    if entry != head:
                        weights[entry] = -math.inf
                        src[entry] = -1
                        dst[entry] = -1
                    if last:
                        weights[head] = total
                if t == block - 1 or p == n - 1:
                    if p < n:
                        carry_key[0] = neighbour
                        carry_sum[0] = total
                        carry_head[0] = head
                cuda.syncthreads()
        cuda.syncthreads()
        if t == 0:
            counts[0] = 0
            counts[1] = 0

    return jit_for_block(fusion_segmented, block)


def _example_merge_runs():
    src, dst, w, _ = _example_fusion_arrays()
    # k = 9: left runs (l=2: entries 0, 2), (l=4: 1, 7); right runs (l=2: 3, 5), (l=4: 4, 6).
    entries = np.array([0, 2, 1, 7, 3, 5, 4, 6], np.int32)
    return 1, 32, (entries, np.array([0, 2, 4, 6, 8], np.int32), src, dst, w)


@course_kernel("void(int32[::1], int32[::1], int32[::1], int32[::1], float32[::1])", lesson=LESSON,
               example=_example_merge_runs)
def merge_runs_kernel(entries, run_starts, src, dst, weights):
    """The thesis's fusion after its CPU sort: one thread per run adds the run up, in order.

    Parameters
    ----------
    entries : int32 array of shape (R,)
        Entry indices of k, sorted by neighbour then index (by the host).
    run_starts : int32 array of shape (n_runs + 1,)
        Run r is ``entries[run_starts[r]:run_starts[r + 1]]``.
    src, dst, weights : arrays of shape (M,)

    The first entry of each run keeps the sum; the others become tombstones.
    """
    r = cuda.grid(1)
    if r >= run_starts.shape[0] - 1:
        return
    head = entries[run_starts[r]]
    total = weights[head]
    for p in range(run_starts[r] + 1, run_starts[r + 1]):
        e = entries[p]
        total += weights[e]
        weights[e] = -math.inf
        src[e] = -1
        dst[e] = -1
    weights[head] = total


def _example_segmented():
    src, dst, w, _ = _example_fusion_arrays()
    keys = np.zeros((2, 16), np.int64)
    left = sorted((int(dst[e]) << 32) | e for e in range(src.size) if src[e] == 9)
    right = sorted((int(src[e]) << 32) | e for e in range(src.size) if dst[e] == 9)
    keys[0, :len(left)] = left
    keys[1, :len(right)] = right
    return 1, 4, (keys, np.array([len(left), len(right)], np.int32), src, dst, w)


register_factory("fusion_segmented_kernel", fusion_segmented_kernel,
                 "void(int64[:, ::1], int32[::1], int32[::1], int32[::1], float32[::1])", 4, _example_segmented)
