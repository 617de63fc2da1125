"""Problem set 5, question 3 (``ps5.q3``): the device-resident merge loop written on the host, its given kernels,
its reference and its grading. Part of problem set 5 (:mod:`course_lib.hac.questions`, which lists it in
``QUESTIONS``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, float64, int64

from ..grading.core import TestFailure
from ..grading.authoring.harness import function, question, result_test
from ..grading.authoring.coverage import host_coverage_test
from ..grading.authoring.hostcosts import copies_and_allocations_bounds, counted_call, growth_test, judge_bounded


# ps5.q3 (4 points): **the device-resident merge loop, written on the host**. Two kernels are given
# (:func:`closest_pair_kernel`, :func:`merge_pair_kernel`): the first finds the most similar pair of live clusters of
# a dense similarity matrix, the second merges it (average link: the merged row is the size-weighted mean of the two
# rows), records the merge in the tree and retires the second cluster. The student writes ``merge_all(similarity)``,
# the host program that runs the n - 1 merges and returns the tree ``(merges, heights)``. The matrix, the clusters'
# sizes and the winning pair stay on the device: nothing but the finished tree comes back. Graded on results (the
# trusted NumPy loop :func:`merges_reference`, hidden sizes) and on counts measured in the student's process
# (:func:`course_lib.grading.authoring.hostcosts.counted_call`): at most two launches per merge (plus
# :data:`Q3_SPARE_LAUNCHES`), at most :data:`Q3_MAX_COPIES` copies, :data:`Q3_MAX_DTOH` of them back to the host, and
# :data:`Q3_MAX_ALLOCATIONS` allocations, whatever n. A loop that copies the pair back every merge, allocates every
# merge, or writes the initial state element by element (one copy each) is capped at half.

#: Threads of the one block that launches :func:`closest_pair_kernel` (its shared arrays have this size).
PAIR_BLOCK = 64
#: Launches a run may make beyond two per merge (a kernel of the student's own that initialises the state, say).
Q3_SPARE_LAUNCHES = 2
#: Copies a run may make, whatever n: the matrix and three arrays of initial state in, the tree's two arrays out,
#: one spare.
Q3_MAX_COPIES = 7
#: Copies back to the host: the merges and the heights.
Q3_MAX_DTOH = 2
#: Device allocations a run may make, whatever n: the matrix, the live flags, the sizes, the node ids, the winning
#: pair, the two arrays of the tree, one spare.
Q3_MAX_ALLOCATIONS = 8


@cuda.jit
def closest_pair_kernel(similarity, alive, best):
    """The most similar pair (i < j) of live clusters, in one block of :data:`PAIR_BLOCK` threads (given).

    Parameters
    ----------
    similarity : float64 device array (n, n)
        Symmetric; only the entries of live rows and columns are read.
    alive : int32 device array (n,)
        1 for a live cluster (a row of the matrix still in use), 0 for a retired one.
    best : int64 device array (1,)
        Output: ``i * n + j`` of the pair; among equal similarities the smallest ``i * n + j``.

    Launch as ``closest_pair_kernel[1, PAIR_BLOCK]``.
    """
    values = cuda.shared.array(PAIR_BLOCK, float64)
    pairs = cuda.shared.array(PAIR_BLOCK, int64)
    t = cuda.threadIdx.x
    n = similarity.shape[0]
    value = -math.inf
    pair = int64(-1)
    # Each thread walks its pairs in increasing order, so a strict > keeps the smallest pair among ties.
    for p in range(t, n * n, PAIR_BLOCK):
        i = p // n
        j = p - i * n
        if i < j and alive[i] == 1 and alive[j] == 1 and similarity[i, j] > value:
            value = similarity[i, j]
            pair = p
    values[t] = value
    pairs[t] = pair
    cuda.syncthreads()
    stride = PAIR_BLOCK // 2
    while stride > 0:
        if t < stride:
            other, other_pair = values[t + stride], pairs[t + stride]
            if other_pair >= 0 and (other > values[t] or (other == values[t] and
                                                          (pairs[t] < 0 or other_pair < pairs[t]))):
                values[t] = other
                pairs[t] = other_pair
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        best[0] = pairs[0]


@cuda.jit
def merge_pair_kernel(similarity, alive, sizes, node_of, best, step, merges, heights):
    """Merge the pair in ``best`` (average link) and record merge ``step`` of the tree, in one block (given).

    Parameters
    ----------
    similarity : float64 device array (n, n)
        Row and column i become the size-weighted mean of rows i and j: ``(s_i S[i, k] + s_j S[j, k]) /
        (s_i + s_j)`` for every other live k.
    alive : int32 device array (n,)
        ``alive[j]`` becomes 0: cluster j is retired, cluster i holds the union.
    sizes : float64 device array (n,)
        Elements per cluster; ``sizes[i]`` becomes ``s_i + s_j``.
    node_of : int32 device array (n,)
        The tree node each live cluster is (0 to n - 1 for the elements); ``node_of[i]`` becomes ``n + step``.
    best : int64 device array (1,)
        ``i * n + j``, as :func:`closest_pair_kernel` leaves it.
    step : int
        The merge's number, 0 to n - 2.
    merges : int32 device array (n - 1, 2)
        Output row ``step``: the two nodes merged (``node_of[i]``, ``node_of[j]``); the new node is ``n + step``.
    heights : float64 device array (n - 1,)
        Output ``heights[step]``: the similarity of the pair merged.

    Launch as ``merge_pair_kernel[1, block]`` for any block (the threads stride over the columns).
    """
    t = cuda.threadIdx.x
    n = similarity.shape[0]
    i = best[0] // n
    j = best[0] - i * n
    size_i = sizes[i]
    size_j = sizes[j]
    for k in range(t, n, cuda.blockDim.x):
        if alive[k] == 1 and k != i and k != j:
            merged = (size_i * similarity[i, k] + size_j * similarity[j, k]) / (size_i + size_j)
            similarity[i, k] = merged
            similarity[k, i] = merged
    # Every thread has read the sizes before thread 0 changes them.
    cuda.syncthreads()
    if t == 0:
        merges[step, 0] = node_of[i]
        merges[step, 1] = node_of[j]
        heights[step] = similarity[i, j]
        node_of[i] = n + step
        sizes[i] = size_i + size_j
        alive[j] = 0


def merges_reference(similarity):
    """The trusted loop, in NumPy: average-link merges of a dense similarity matrix, most similar first.

    Parameters
    ----------
    similarity : float64 ndarray (n, n)
        Symmetric.

    Returns
    -------
    merges : int64 ndarray (n - 1, 2)
        The nodes merged at each step (elements 0 to n - 1; merge s makes node n + s).
    heights : float64 ndarray (n - 1,)
        The similarity of each merge.
    """
    s = np.array(similarity, np.float64)
    n = s.shape[0]
    alive = np.ones(n, bool)
    sizes = np.ones(n)
    node_of = np.arange(n)
    merges, heights = np.zeros((max(n - 1, 0), 2), np.int64), np.zeros(max(n - 1, 0))
    upper = np.triu(np.ones((n, n), bool), 1)
    for step in range(n - 1):
        live_pairs = upper & alive[:, None] & alive[None, :]
        # argmax over the flattened live pairs: the first (smallest i * n + j) among equal values
        p = int(np.argmax(np.where(live_pairs, s, -np.inf)))
        i, j = divmod(p, n)
        others = alive.copy()
        others[[i, j]] = False
        merged = (sizes[i] * s[i, others] + sizes[j] * s[j, others]) / (sizes[i] + sizes[j])
        s[i, others] = merged
        s[others, i] = merged
        merges[step] = node_of[i], node_of[j]
        heights[step] = s[i, j]
        node_of[i] = n + step
        sizes[i] += sizes[j]
        alive[j] = False
    return merges, heights


def similarity_case(n, seed):
    """``inputs`` data: a symmetric n x n matrix of similarities in (0, 1), distinct off the diagonal."""
    rng = np.random.default_rng(seed)
    values = rng.permutation(n * n).reshape(n, n) / (n * n) * 0.98 + 0.01
    upper = np.triu(values, 1)
    return {"similarity": upper + upper.T + np.eye(n)}


def _similarity_inputs(n):
    return lambda rng, info: similarity_case(n, int(rng.integers(1 << 30)))


def _hidden_similarity(rng, info):
    return similarity_case(int(rng.integers(3, 40)), int(rng.integers(1 << 30)))


def _run_merges(answer, data):
    """Runs the student's host program on a copy of the matrix, measuring its launches, copies and allocations."""
    out, counts = counted_call(answer.value, np.array(data["similarity"], np.float64))
    if not isinstance(out, tuple) or len(out) != 2:
        raise TestFailure("merge_all must return a pair (merges, heights)")
    return {"merges": np.asarray(out[0]), "heights": np.asarray(out[1]), **counts}


def judge_merges(data, got):
    """The nodes merged at every step equal the trusted loop's; the heights to :data:`Q3_RTOL`."""
    want_merges, want_heights = merges_reference(data["similarity"])
    n = len(data["similarity"])
    merges = np.asarray(got["merges"])
    if merges.shape != want_merges.shape or not np.array_equal(merges, want_merges):
        first = next((s for s in range(min(len(merges), len(want_merges)))
                      if not np.array_equal(merges[s], want_merges[s])), None) if merges.ndim == 2 else None
        where = f"first wrong at step {first}: " if first is not None else ""
        raise TestFailure(f"merges for n = {n}: {where}shape {merges.shape}, expected {want_merges.shape}; "
                          f"expected rows {want_merges[:3].tolist()}, got {merges[:3].tolist()}", cause="merges")
    heights = np.asarray(got["heights"], np.float64).ravel()
    if heights.shape != want_heights.shape or not np.allclose(heights, want_heights, rtol=Q3_RTOL, atol=0):
        raise TestFailure(f"heights for n = {n}: expected {np.round(want_heights[:4], 6).tolist()}, got "
                          f"{np.round(heights[:4], 6).tolist()}", cause="heights")


def judge_merge_counts(data, got):
    """Right tree, two launches per merge, and copies and allocations that do not grow with n."""
    judge_merges(data, got)
    n = len(data["similarity"])
    judge_bounded((("launches", got["launches"], 2 * (n - 1) + Q3_SPARE_LAUNCHES, "two per merge"),
                   ("copies back to the host", got["DtoH_count"], Q3_MAX_DTOH, "only the finished tree"),
                   *copies_and_allocations_bounds(got, Q3_MAX_COPIES, Q3_MAX_ALLOCATIONS)),
                  f"for n = {n} ({n - 1} merges)")


#: Relative tolerance of the heights: float64 means, and a GPU may contract a product and a sum into one FMA.
Q3_RTOL = 1e-12

Q3 = question(
    "ps5.q3", "the device-resident merge loop on the host: only the tree comes back", 4,
    answer=function("merge_all", allowed=(closest_pair_kernel, merge_pair_kernel)),
    tolerance="the merges exact, the heights to 1e-12 (relative)",
    tests=[
        result_test("three elements", 1, inputs=_similarity_inputs(3), run=_run_merges, judge=judge_merges),
        result_test("17 elements", 1, inputs=_similarity_inputs(17), run=_run_merges, judge=judge_merges),
        result_test("hidden: a random matrix of 3 to 39 elements", 0.5, hidden=True, inputs=_hidden_similarity,
                    run=_run_merges, judge=judge_merges),
        growth_test("launches, copies and allocations per run (record(); 24 elements, and 12: none grows with the "
                    "merges)", 1.5, inputs=(_similarity_inputs(24), _similarity_inputs(12)), run=_run_merges,
                    judge=judge_merge_counts, steps=lambda data: len(data["similarity"]) - 1),
        host_coverage_test("hidden: every statement of your host program ran in the grader's runs"),
    ])
