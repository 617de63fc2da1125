"""The merge loop on the device: one cooperative kernel runs many merges, grid barriers between stages.

The host-driven loop (:mod:`course_lib.hac._device`) pays 8 launches per merge; on a GPU a
numba launch costs tens of microseconds of host time, far more than the ~2 us of memory
traffic a merge needs once the graph sits in L2. :func:`merge_loop_kernel` keeps the whole
loop in one launch: a *cooperative* grid (every block resident at once, so
``cuda.cg.this_grid().sync()`` is a real barrier across blocks) walks the entries with a
grid-sized stride and separates each merge's three stages by grid barriers:

A. every thread keeps the best (weight, index) of its entries (ties to the lowest index,
   as ``numpy.argmax``) and clears the accumulators the previous merge used (its surviving
   entries name every neighbour it touched); each block writes one partial. Barrier.
B. every block reduces all the partials itself, so each knows the winner m = (i, j) and
   k = N + q without another barrier; block 0 records parent, height and population.
   Each entry of i or j (except the pair itself) is scaled by its side's share of k's
   population, relabelled to k and added into ``acc[side, l]`` with ``atomic.add``, its
   index into ``first[side, l]`` with ``atomic.min``. Barrier.
C. the survivor of each (side, l) (the lowest index) takes the sum, the other entries of
   k and the pair (i, j), (j, i) become tombstones. Barrier.

The pair (i, j) is tombstoned in C, not B: other blocks read ``src[m]`` and ``dst[m]`` in B.
A run has at most two entries (one from i, one from j), so the float sum does not depend
on the order of the atomics: the tree equals the host-driven loop's with ``fusion="atomic"``.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numba import cuda

from ..registry import register_kernel
from ._argmax import _reduce_in_shared
from .._docs import fill_doc
from ._kernel_base import (BLOCK_FACTORY_DOC, INDEX_SENTINEL, LESSON, REGISTERED_BLOCK, _check_power_of_two, better,
                           jit_for_block)

__all__ = ["GRID_SYNCS_PER_MERGE", "merge_loop_kernel"]

#: Grid barriers per merge (stages A, B and C above).
GRID_SYNCS_PER_MERGE = 3
#: "No previous merge" for stage A: matches no entry (live endpoints are >= 0, tombstones -1).
NO_CLUSTER = -2


@lru_cache(maxsize=None)
@fill_doc(factory=BLOCK_FACTORY_DOC)
def merge_loop_kernel(block: int):
    """The device-resident merge loop, merges ``q_start`` to ``q_stop - 1`` in one cooperative launch.

    {factory}
        ``kernel[grid, block](src, dst, weights, pop, parent, height, acc, first, part_value,
        part_index, n_elements, q_start, q_stop)`` with ``src``, ``dst`` (int32) and
        ``weights`` (float32 or float64) of shape (M,); ``pop``, ``height`` (weight dtype)
        and ``parent`` (int32) of shape (2N - nC,); ``acc`` (weight dtype) and ``first``
        (int32) of shape (2, 2N - nC), zero and ``INDEX_SENTINEL`` before the first merge;
        ``part_value``, ``part_index`` of shape (grid,); ``n_elements``, ``q_start``,
        ``q_stop`` int32. ``grid`` must not exceed the device's cooperative limit
        (``max_cooperative_grid_blocks``). The kernel calls ``this_grid().sync()``, so
        numba launches it cooperatively.
    """
    block = _check_power_of_two(block)

    def merge_loop(src, dst, weights, pop, parent, height, acc, first, part_value, part_index, n_elements,
                   q_start, q_stop):
        shared_value = cuda.shared.array(block, weights.dtype)
        shared_index = cuda.shared.array(block, np.int32)
        grid = cuda.cg.this_grid()
        t = cuda.threadIdx.x
        start = cuda.grid(1)
        stride = cuda.gridsize(1)
        n_entries = weights.shape[0]
        n_parts = cuda.gridDim.x
        # The previous merge's k: its accumulators are cleared in stage A (after a launch that stopped at q_start).
        k_prev = n_elements + q_start - 1 if q_start > 0 else NO_CLUSTER
        for q in range(q_start, q_stop):
            # A: local argmax; clear the accumulators of the previous merge.
            best_value = weights.dtype.type(-math.inf)
            best_index = INDEX_SENTINEL
            e = start
            while e < n_entries:
                a = src[e]
                b = dst[e]
                if a == k_prev:
                    acc[0, b] = 0
                    first[0, b] = INDEX_SENTINEL
                elif b == k_prev:
                    acc[1, a] = 0
                    first[1, a] = INDEX_SENTINEL
                value = weights[e]
                if better(value, e, best_value, best_index):
                    best_value = value
                    best_index = e
                e += stride
            cuda.syncthreads()  # the scratch's last reader (stage B of the previous merge) is done
            _reduce_in_shared(shared_value, shared_index, best_value, best_index, t, block)
            if t == 0:
                part_value[cuda.blockIdx.x] = shared_value[0]
                part_index[cuda.blockIdx.x] = shared_index[0]
            grid.sync()
            # B: every block finds the same winner among the partials.
            best_value = weights.dtype.type(-math.inf)
            best_index = INDEX_SENTINEL
            p = t
            while p < n_parts:
                if better(part_value[p], part_index[p], best_value, best_index):
                    best_value = part_value[p]
                    best_index = part_index[p]
                p += block
            cuda.syncthreads()
            _reduce_in_shared(shared_value, shared_index, best_value, best_index, t, block)
            m = shared_index[0]
            i = src[m]
            j = dst[m]
            k = n_elements + q
            pop_k = pop[i] + pop[j]
            factor_i = pop[i] / pop_k
            factor_j = pop[j] / pop_k
            if cuda.blockIdx.x == 0 and t == 0:
                height[k] = weights[m]
                parent[i] = k
                parent[j] = k
                pop[k] = pop_k
            e = start
            while e < n_entries:
                a = src[e]
                b = dst[e]
                pair = (a == i and b == j) or (a == j and b == i)
                if not pair and (a == i or a == j or b == i or b == j):
                    if a == i or b == i:
                        w = weights[e] * factor_i
                    else:
                        w = weights[e] * factor_j
                    if a == i or a == j:
                        src[e] = k
                        cuda.atomic.add(acc, (0, b), w)
                        cuda.atomic.min(first, (0, b), e)
                    else:
                        dst[e] = k
                        cuda.atomic.add(acc, (1, a), w)
                        cuda.atomic.min(first, (1, a), e)
                e += stride
            grid.sync()
            # C: the survivor of each run takes the sum; the rest of k's runs and the pair become tombstones.
            e = start
            while e < n_entries:
                a = src[e]
                b = dst[e]
                side = -1
                other = 0
                if a == k:
                    side = 0
                    other = b
                elif b == k:
                    side = 1
                    other = a
                if side >= 0 and first[side, other] == e:
                    weights[e] = acc[side, other]
                elif side >= 0 or (a == i and b == j) or (a == j and b == i):
                    weights[e] = -math.inf
                    src[e] = -1
                    dst[e] = -1
                e += stride
            k_prev = k
            grid.sync()

    return jit_for_block(merge_loop, block)


def _signature(dtype):
    return (f"void(int32[::1], int32[::1], {dtype}[::1], {dtype}[::1], int32[::1], {dtype}[::1], {dtype}[:, ::1], "
            f"int32[:, ::1], {dtype}[::1], int32[::1], int32, int32, int32)")


for _dtype in ("float32", "float64"):
    register_kernel(f"hac.merge_loop_kernel[{_dtype},block={REGISTERED_BLOCK}]", _signature(_dtype),
                    lambda: merge_loop_kernel(REGISTERED_BLOCK).py_func, LESSON)


def cooperative_grid(kernel, args, block):
    """Largest cooperative grid of ``kernel`` at ``block`` threads for these arguments (the device's limit)."""
    from .. import device

    if device.is_simulator():
        from ..sim import max_cooperative_grid_blocks

        return max_cooperative_grid_blocks(block)
    import numba

    compiled = kernel.compile(tuple(numba.typeof(a) for a in args))
    return compiled.max_cooperative_grid_blocks(block)


class PersistentClustering:
    """One clustering by :func:`merge_loop_kernel`: upload, one launch per ``merges_per_launch``, download.

    Parameters
    ----------
    graph : AffinityGraph
    dtype : numpy.dtype
        float32 or float64.
    block : int
        Threads per block, a power of two.
    merges_per_launch : int, optional
        Merges run by one launch (default: all of them, one launch). Smaller values split the
        loop (a launch resumes where the previous one stopped), e.g. to time part of a run.

    Notes
    -----
    The grid is the smallest of the device's cooperative limit, ``block`` (so that stage B
    reduces the partials with one load per thread) and the blocks the entries fill. Per
    clustering: 8 uploads, ``ceil(merges / merges_per_launch)`` launches and 2 downloads,
    whatever N and M; per merge: 3 grid barriers and no host work at all.
    """

    def __init__(self, graph, dtype, block, merges_per_launch=None):
        from numba import cuda

        self.graph, self.dtype, self.block = graph, np.dtype(dtype), block
        n, m, nodes = graph.n_elements, graph.n_entries, graph.n_nodes
        self.n, self.m = n, m
        self.merges_per_launch = merges_per_launch
        self.src = cuda.to_device(graph.src.astype(np.int32))
        self.dst = cuda.to_device(graph.dst.astype(np.int32))
        self.weights = cuda.to_device(graph.weight.astype(self.dtype))
        self.pop = cuda.to_device(np.ones(nodes, self.dtype))
        self.parent = cuda.to_device(np.arange(nodes, dtype=np.int32))
        self.height = cuda.to_device(np.full(nodes, np.inf, self.dtype))
        self.acc = cuda.to_device(np.zeros((2, nodes), self.dtype))
        self.first = cuda.to_device(np.full((2, nodes), INDEX_SENTINEL, np.int32))
        self.kernel = merge_loop_kernel(block)
        parts = min(block, max(1, -(-m // block)))
        self.part_value = cuda.device_array(parts, self.dtype)
        self.part_index = cuda.device_array(parts, np.int32)
        limit = cooperative_grid(self.kernel, self._args(0, 0), block)
        self.grid = min(parts, limit)

    def _args(self, q_start, q_stop):
        return (self.src, self.dst, self.weights, self.pop, self.parent, self.height, self.acc, self.first,
                self.part_value, self.part_index, np.int32(self.n), np.int32(q_start), np.int32(q_stop))

    def run(self, *, max_merges=None):
        """Run the N - nC merges (or ``max_merges``) and return the Dendrogram."""
        from ._dendrogram import Dendrogram

        n_merges = self.n - self.graph.n_components
        if max_merges is not None:
            n_merges = min(n_merges, int(max_merges))
        chunk = n_merges if self.merges_per_launch is None else int(self.merges_per_launch)
        q = 0
        while q < n_merges:
            stop = min(n_merges, q + max(chunk, 1))
            self.kernel[self.grid, self.block](*self._args(q, stop))
            q = stop
        parent, height = self.parent.copy_to_host(), self.height.copy_to_host()
        return Dendrogram(self.n, parent, height, "gpu_persistent", {})
