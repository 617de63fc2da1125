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

The whole loop in one cooperative launch: :func:`merge_loop_kernel` runs many merges,
stages A (argmax), B (merge, weighting, atomic fusion) and C (survivors, tombstones)
separated by ``cuda.cg.this_grid().sync()`` (see :mod:`course_lib.hac._persistent`).

Stages 2 to 4 are defined here; matching in :mod:`course_lib.hac._argmax`, fusion in
:mod:`course_lib.hac._fusion`, and what they share in :mod:`course_lib.hac._kernel_base`.
Every kernel is named here, where the unit, its lesson and the tests find them.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from ..registry import course_kernel, register_kernel
from ._argmax import argmax_aos_kernel, argmax_pairs_kernel, argmax_soa_kernel
from ._fusion import _example_merge_runs  # noqa: F401  (the tests launch it)
from ._fusion import (collect_kernel, fusion_apply_kernel, fusion_reset_kernel, fusion_scatter_kernel,
                      fusion_segmented_kernel, merge_runs_kernel, sort_keys_kernel)
from ._kernel_base import INDEX_SENTINEL, KEY_SENTINEL, LESSON, better  # noqa: F401
from ._persistent import GRID_SYNCS_PER_MERGE, merge_loop_kernel

__all__ = [
    "GRID_SYNCS_PER_MERGE",
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
    "merge_loop_kernel",
    "merge_runs_kernel",
    "merge_step_kernel",
    "sort_keys_kernel",
    "suppress_kernel",
    "weight_relabel_kernel",
]


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


# The float64 variants of this module's kernels (those of the others are registered there).
register_kernel("hac.weight_relabel_kernel[float64]",
                "void(int32[::1], int32[::1], float64[::1], int32[::1], float64[::1])",
                lambda: weight_relabel_kernel.py_func, LESSON)
register_kernel("hac.merge_step_kernel[float64]",
                "void(int32[::1], int32[::1], int32[::1], float64[::1], float64[::1], int32[::1], float64[::1], "
                "int32[::1], float64[::1], int32)", lambda: merge_step_kernel.py_func, LESSON)
