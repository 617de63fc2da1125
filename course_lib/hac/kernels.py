"""Reference CUDA kernels of Unit 5 (average-linkage clustering), taught in ``lessons/05_hac.ipynb``.

One iteration of the thesis's algorithm merges the pair of clusters with the largest
affinity. The graph lives on the device as three arrays of M entries, both directions
of every pair stored: ``src``, ``dst`` (int32 cluster ids) and ``weights`` (float32 or
float64). A deleted entry is a *tombstone*: weight -inf, both endpoints -1.

Small arrays carry the iteration's state from kernel to kernel, so the host only
launches (the device-resident loop): ``state`` (int32, 4) holds i, j, k and the
iteration q; ``factors`` (weight dtype, 2) holds pop[i] / pop[k] and pop[j] / pop[k].

Stages and kernels:

1. Matching: :func:`argmax_soa_kernel` (weights in their own array, the index implicit)
   or :func:`argmax_aos_kernel` (an array of {value, index} structs, as in the thesis),
   each a block reduction to one partial per block, then :func:`argmax_pairs_kernel`
   (or the AoS kernel again) reduces the partials in one block. Ties go to the lowest
   index, like ``numpy.argmax``.
2. :func:`merge_step_kernel` (one thread): parent, height, population, the two factors.
3. Suppression: :func:`suppress_kernel` tombstones the pair (i, j) and its reverse.
4. Weighting: :func:`weight_relabel_kernel` multiplies the entries of i by pop[i]/pop[k]
   and those of j by pop[j]/pop[k], and relabels both endpoints to k.
5. Collection, integration, fusion: k now has up to two entries per neighbour l on each
   side ("left": (k, l), "right": (l, k)). The lowest index of each run keeps the sum;
   the others become tombstones. Three ways:

   - atomics: :func:`fusion_scatter_kernel` adds every entry into an accumulator per
     (side, l) and keeps the lowest index with ``atomic.min``;
     :func:`fusion_apply_kernel` writes the sums; :func:`fusion_reset_kernel` clears the
     accumulators for the next iteration;
   - sort, then a segmented reduction on the GPU: :func:`collect_kernel` appends
     ``(l << 32) | e`` keys of k's entries, :func:`sort_keys_kernel` sorts them (one
     block, bitonic), :func:`fusion_segmented_kernel` sums each run of equal l;
   - sort on the CPU, then sum (the thesis): :func:`collect_kernel`, a copy of the keys
     to the host, which sorts them, and :func:`merge_runs_kernel` (one thread per run).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numba import cuda

from ..registry import course_kernel, register_kernel

__all__ = [
    "INDEX_SENTINEL",
    "KEY_SENTINEL",
    "argmax_aos_kernel",
    "argmax_pairs_kernel",
    "argmax_soa_kernel",
    "collect_kernel",
    "fusion_apply_kernel",
    "fusion_reset_kernel",
    "fusion_scatter_kernel",
    "fusion_segmented_kernel",
    "merge_runs_kernel",
    "merge_step_kernel",
    "sort_keys_kernel",
    "suppress_kernel",
    "weight_relabel_kernel",
]

LESSON = "lessons/05_hac.ipynb"
#: Index that loses every tie: the starting "best" of a reduction, the empty slot of ``first``.
INDEX_SENTINEL = 2**31 - 1
#: Key above every real key (they are (l << 32) | e with l, e < 2**31): padding of the sort.
KEY_SENTINEL = 2**63 - 1
#: Block size registered for the compile check of the kernels made by factories.
REGISTERED_BLOCK = 256


@cuda.jit(device=True, inline=True)
def better(value, index, best_value, best_index):
    """True if (value, index) beats (best_value, best_index): a larger value, or the same and a lower index."""
    return value > best_value or (value == best_value and index < best_index)


# --------------------------------------------------------------------------------------
# Matching: argmax reductions
# --------------------------------------------------------------------------------------

def _reduce_in_shared(shared_value, shared_index, value, index, t, block):
    """Tree reduction of one (value, index) per thread; the winner ends in slot 0."""
    shared_value[t] = value
    shared_index[t] = index
    cuda.syncthreads()
    half = block // 2
    while half > 0:  # every thread runs every step: the barriers are uniform
        if t < half and better(shared_value[t + half], shared_index[t + half], shared_value[t], shared_index[t]):
            shared_value[t] = shared_value[t + half]
            shared_index[t] = shared_index[t + half]
        cuda.syncthreads()
        half //= 2


_reduce_in_shared = cuda.jit(device=True, inline=True)(_reduce_in_shared)


def _check_power_of_two(block):
    if isinstance(block, bool) or int(block) != block or not 1 <= block <= 1024 or block & (block - 1):
        raise ValueError(f"block must be a power of two between 1 and 1024 (threads per block), got {block!r}")
    return int(block)


@lru_cache(maxsize=None)
def argmax_soa_kernel(block: int):
    """Matching, struct-of-arrays: the largest weight and its index, one partial per block.

    Parameters
    ----------
    block : int
        Threads per block, a power of two (the shared scratch holds ``block`` pairs).

    Returns
    -------
    numba.cuda kernel
        ``kernel[grid, block](weights, part_value, part_index)``: ``weights`` of shape
        (M,); ``part_value`` (weight dtype) and ``part_index`` (int32) of shape (grid,).
        Each thread walks the entries with a grid-sized stride (consecutive threads
        read consecutive floats: coalesced) keeping its best (value, index), then the
        block reduces the ``block`` candidates in shared memory. Finish with
        :func:`argmax_pairs_kernel` on the partials, in one block.
    """
    block = _check_power_of_two(block)

    def argmax_soa(weights, part_value, part_index):
        shared_value = cuda.shared.array(block, weights.dtype)
        shared_index = cuda.shared.array(block, np.int32)
        t = cuda.threadIdx.x
        best_value = weights.dtype.type(-math.inf)
        best_index = INDEX_SENTINEL
        for e in range(cuda.grid(1), weights.shape[0], cuda.gridsize(1)):
            value = weights[e]
            if better(value, e, best_value, best_index):
                best_value = value
                best_index = e
        _reduce_in_shared(shared_value, shared_index, best_value, best_index, t, block)
        if t == 0:
            part_value[cuda.blockIdx.x] = shared_value[0]
            part_index[cuda.blockIdx.x] = shared_index[0]

    argmax_soa.__name__ = f"argmax_soa_{block}"
    return cuda.jit(argmax_soa)


@lru_cache(maxsize=None)
def argmax_pairs_kernel(block: int):
    """The best of (value, index) pairs held in two arrays: the second pass of the argmax.

    Returns
    -------
    numba.cuda kernel
        ``kernel[grid, block](values, indices, out_value, out_index)``: launched with one
        block over the partials of :func:`argmax_soa_kernel`, it leaves the winner in
        ``out_value[0]``, ``out_index[0]``.
    """
    block = _check_power_of_two(block)

    def argmax_pairs(values, indices, out_value, out_index):
        shared_value = cuda.shared.array(block, values.dtype)
        shared_index = cuda.shared.array(block, np.int32)
        t = cuda.threadIdx.x
        best_value = values.dtype.type(-math.inf)
        best_index = INDEX_SENTINEL
        for p in range(cuda.grid(1), values.shape[0], cuda.gridsize(1)):
            value = values[p]
            index = indices[p]
            if better(value, index, best_value, best_index):
                best_value = value
                best_index = index
        _reduce_in_shared(shared_value, shared_index, best_value, best_index, t, block)
        if t == 0:
            out_value[cuda.blockIdx.x] = shared_value[0]
            out_index[cuda.blockIdx.x] = shared_index[0]

    argmax_pairs.__name__ = f"argmax_pairs_{block}"
    return cuda.jit(argmax_pairs)


@lru_cache(maxsize=None)
def argmax_aos_kernel(block: int):
    """Matching, array-of-structs (the thesis's layout): each entry is a {value, index} struct.

    Returns
    -------
    numba.cuda kernel
        ``kernel[grid, block](pair_values, pair_indices, out_values, out_indices)``.
        ``pair_values`` (weight dtype) and ``pair_indices`` (int32 for float32 weights,
        int64 for float64) are two views, shape (M, 2), of the same interleaved memory:
        struct e is ``pair_values[e, 0]`` (its value) followed by ``pair_indices[e, 1]``
        (its index). A warp reading the values of 32 consecutive structs touches twice
        the bytes it uses, and then reads the indices from the same sectors again.
        The outputs are structs too, shape (grid, 2): run the kernel once over the M
        entries, then again in one block over the partials.
    """
    block = _check_power_of_two(block)

    def argmax_aos(pair_values, pair_indices, out_values, out_indices):
        shared_value = cuda.shared.array(block, pair_values.dtype)
        shared_index = cuda.shared.array(block, np.int32)
        t = cuda.threadIdx.x
        best_value = pair_values.dtype.type(-math.inf)
        best_index = INDEX_SENTINEL
        for e in range(cuda.grid(1), pair_values.shape[0], cuda.gridsize(1)):
            value = pair_values[e, 0]
            index = pair_indices[e, 1]
            if better(value, index, best_value, best_index):
                best_value = value
                best_index = index
        _reduce_in_shared(shared_value, shared_index, best_value, best_index, t, block)
        if t == 0:
            out_values[cuda.blockIdx.x, 0] = shared_value[0]
            out_indices[cuda.blockIdx.x, 1] = shared_index[0]

    argmax_aos.__name__ = f"argmax_aos_{block}"
    return cuda.jit(argmax_aos)


# --------------------------------------------------------------------------------------
# Merge step, suppression, weighting
# --------------------------------------------------------------------------------------

def _example_graph(seed=5, n=9):
    """A small symmetric graph on the device's terms: src, dst, weights (float32), M = 2 * pairs."""
    rng = np.random.default_rng(seed)
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n) if rng.random() < 0.5]
    src = np.array([a for a, b in pairs] + [b for a, b in pairs], np.int32)
    dst = np.array([b for a, b in pairs] + [a for a, b in pairs], np.int32)
    w = rng.random(len(pairs)).astype(np.float32)
    return src, dst, np.concatenate([w, w])


def _example_state(src, dst, n):
    """state and factors of a merge of entry 0's endpoints into cluster n."""
    return np.array([src[0], dst[0], n, 1], np.int32), np.array([0.5, 0.5], np.float32)


def _example_merge_step():
    src, dst, w = _example_graph()
    n = 9
    return 1, 1, (np.array([3], np.int32), src, dst, w, np.ones(2 * n - 1, np.float32),
                  np.arange(2 * n - 1, dtype=np.int32), np.full(2 * n - 1, np.inf, np.float32),
                  np.zeros(4, np.int32), np.zeros(2, np.float32), np.int32(n))


@course_kernel("void(int32[::1], int32[::1], int32[::1], float32[::1], float32[::1], int32[::1], float32[::1], "
               "int32[::1], float32[::1], int32)", lesson=LESSON, example=_example_merge_step)
def merge_step_kernel(best_index, src, dst, weights, pop, parent, height, state, factors, n_elements):
    """Record the merge of the winning entry (one thread).

    Parameters
    ----------
    best_index : int array of shape (1,) (or a view)
        The argmax: entry m.
    src, dst, weights : arrays of shape (M,)
    pop : array of shape (2N - nC,), weight dtype
        Elements in each cluster (whole numbers: float so the factors divide exactly as
        the CPU versions do).
    parent : int32 array of shape (2N - nC,)
    height : array of shape (2N - nC,)
    state : int32 array of shape (4,)
        In: state[3] = q, the iteration. Out: i, j, k = N + q, and q + 1.
    factors : array of shape (2,)
        Out: pop[i] / pop[k], pop[j] / pop[k].
    n_elements : int32
        N.
    """
    if cuda.grid(1) != 0:
        return
    m = best_index[0]
    i = src[m]
    j = dst[m]
    k = n_elements + state[3]
    height[k] = weights[m]
    parent[i] = k
    parent[j] = k
    pop[k] = pop[i] + pop[j]
    factors[0] = pop[i] / pop[k]
    factors[1] = pop[j] / pop[k]
    state[0] = i
    state[1] = j
    state[2] = k
    state[3] += 1


def _example_suppress():
    src, dst, w = _example_graph()
    state, _ = _example_state(src, dst, 9)
    return 2, 32, (src, dst, w, state)


@course_kernel("void(int32[::1], int32[::1], float32[::1], int32[::1])", lesson=LESSON, example=_example_suppress)
def suppress_kernel(src, dst, weights, state):
    """Suppression: tombstone the entries (i, j) and (j, i) of the pair being merged.

    One thread per entry (any grid covering M threads); i and j come from ``state``.
    """
    e = cuda.grid(1)
    if e >= weights.shape[0]:
        return
    i = state[0]
    j = state[1]
    a = src[e]
    b = dst[e]
    if (a == i and b == j) or (a == j and b == i):
        weights[e] = -math.inf
        src[e] = -1
        dst[e] = -1


def _example_weight():
    src, dst, w = _example_graph()
    state, factors = _example_state(src, dst, 9)
    return 2, 32, (src, dst, w, state, factors)


@course_kernel("void(int32[::1], int32[::1], float32[::1], int32[::1], float32[::1])", lesson=LESSON,
               example=_example_weight)
def weight_relabel_kernel(src, dst, weights, state, factors):
    """Weighting: scale the entries of i and j by their share of k's population, relabel them to k.

    One thread per entry (any grid covering M threads). After suppression no entry
    joins i and j, so each entry is scaled at most once: by pop[i] / pop[k] if one of
    its endpoints is i, by pop[j] / pop[k] if it is j.
    """
    e = cuda.grid(1)
    if e >= weights.shape[0]:
        return
    i = state[0]
    j = state[1]
    k = state[2]
    a = src[e]
    b = dst[e]
    if a == i or b == i:
        weights[e] *= factors[0]
    elif a == j or b == j:
        weights[e] *= factors[1]
    if a == i or a == j:
        src[e] = k
    if b == i or b == j:
        dst[e] = k


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

    fusion_segmented.__name__ = f"fusion_segmented_{block}"
    return cuda.jit(fusion_segmented)


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


# --------------------------------------------------------------------------------------
# Registration of the factory-made kernels and the float64 variants
# --------------------------------------------------------------------------------------

def _example_argmax_soa():
    w = np.random.default_rng(1).random(77).astype(np.float32)
    w[[5, 60]] = 2.0  # a tie: index 5 must win
    w[10] = -np.inf
    return 2, 32, (w, np.zeros(2, np.float32), np.zeros(2, np.int32))


def _example_argmax_pairs():
    values = np.array([0.5, 2.0, 2.0, -np.inf, 1.0], np.float32)
    return 1, 32, (values, np.array([4, 9, 3, 0, 7], np.int32), np.zeros(1, np.float32), np.zeros(1, np.int32))


def _example_argmax_aos():
    from numba import cuda

    m = 77
    buffer = np.zeros((m, 2), np.float32)
    buffer[:, 0] = np.random.default_rng(2).random(m)
    buffer.view(np.int32)[:, 1] = np.arange(m)
    d_buffer = cuda.to_device(buffer)  # one buffer, two views: the struct array
    d_out = cuda.to_device(np.zeros((2, 2), np.float32))
    return 2, 32, (d_buffer, d_buffer.view(np.int32), d_out, d_out.view(np.int32))


def _example_segmented():
    src, dst, w, _ = _example_fusion_arrays()
    keys = np.zeros((2, 16), np.int64)
    left = sorted((int(dst[e]) << 32) | e for e in range(src.size) if src[e] == 9)
    right = sorted((int(src[e]) << 32) | e for e in range(src.size) if dst[e] == 9)
    keys[0, :len(left)] = left
    keys[1, :len(right)] = right
    return 1, 4, (keys, np.array([len(left), len(right)], np.int32), src, dst, w)


_B = REGISTERED_BLOCK
register_kernel(f"hac.argmax_soa_kernel[block={_B}]", "void(float32[::1], float32[::1], int32[::1])",
                lambda: argmax_soa_kernel(_B).py_func, LESSON, example=_example_argmax_soa)
register_kernel("hac.argmax_soa_kernel[block=32]", "void(float32[::1], float32[::1], int32[::1])",
                lambda: argmax_soa_kernel(32).py_func, LESSON, example=_example_argmax_soa)
register_kernel(f"hac.argmax_pairs_kernel[block={_B}]", "void(float32[::1], int32[::1], float32[::1], int32[::1])",
                lambda: argmax_pairs_kernel(_B).py_func, LESSON)
register_kernel("hac.argmax_pairs_kernel[block=32]", "void(float32[::1], int32[::1], float32[::1], int32[::1])",
                lambda: argmax_pairs_kernel(32).py_func, LESSON, example=_example_argmax_pairs)
register_kernel(f"hac.argmax_aos_kernel[block={_B}]",
                "void(float32[:, ::1], int32[:, ::1], float32[:, ::1], int32[:, ::1])",
                lambda: argmax_aos_kernel(_B).py_func, LESSON)
register_kernel("hac.argmax_aos_kernel[block=32]",
                "void(float32[:, ::1], int32[:, ::1], float32[:, ::1], int32[:, ::1])",
                lambda: argmax_aos_kernel(32).py_func, LESSON, example=_example_argmax_aos)
register_kernel(f"hac.fusion_segmented_kernel[block={_B}]",
                "void(int64[:, ::1], int32[::1], int32[::1], int32[::1], float32[::1])",
                lambda: fusion_segmented_kernel(_B).py_func, LESSON)
register_kernel("hac.fusion_segmented_kernel[block=4]",
                "void(int64[:, ::1], int32[::1], int32[::1], int32[::1], float32[::1])",
                lambda: fusion_segmented_kernel(4).py_func, LESSON, example=_example_segmented)
register_kernel(f"hac.argmax_soa_kernel[block={_B},float64]", "void(float64[::1], float64[::1], int32[::1])",
                lambda: argmax_soa_kernel(_B).py_func, LESSON)
register_kernel("hac.weight_relabel_kernel[float64]",
                "void(int32[::1], int32[::1], float64[::1], int32[::1], float64[::1])",
                lambda: weight_relabel_kernel.py_func, LESSON)
register_kernel("hac.merge_step_kernel[float64]",
                "void(int32[::1], int32[::1], int32[::1], float64[::1], float64[::1], int32[::1], float64[::1], "
                "int32[::1], float64[::1], int32)", lambda: merge_step_kernel.py_func, LESSON)
