"""The lesson's linear-work frontier BFS: the next frontier built with atomics, or by a scan and a compaction.

Also the direction-optimising step of the lesson (:func:`bfs_bottom_up_kernel`, :func:`level_flags_kernel`).
Conventions in :mod:`course_lib.bfs.kernels`.
"""

from __future__ import annotations

from functools import lru_cache

from numba import cuda, int32

from ..registry import course_kernel, register_kernel
from ._kernels_common import I32 as _I32
from ._kernels_common import LESSON, UNVISITED

__all__ = [
    "add_block_offsets_kernel",
    "bfs_bottom_up_kernel",
    "bfs_frontier_atomic_kernel",
    "block_exclusive_scan_kernel",
    "claim_candidates_kernel",
    "compact_kernel",
    "expand_frontier_kernel",
    "frontier_degree_kernel",
    "level_flags_kernel",
]


@course_kernel(f"void({_I32}, {_I32}, {_I32}, int32, int32, {_I32}, {_I32}, {_I32}, {_I32})", lesson=LESSON)
def bfs_frontier_atomic_kernel(indptr, indices, frontier, frontier_size, current, depth, parent,
                               next_frontier, next_size):
    """Expand one level: one thread per frontier vertex, the next frontier built with atomics.

    The thread of frontier vertex ``u`` scans its adjacency list. An unvisited
    neighbour ``v`` is claimed with a compare-and-swap on ``depth[v]``
    (``UNVISITED -> current + 1``): exactly one thread wins, records itself as the
    parent and appends ``v`` to the next frontier at a slot reserved with an atomic
    add on ``next_size[0]``. Every vertex enters a frontier once, so the total work
    over the whole search is O(V + E).

    Parameters
    ----------
    indptr : int32 array of shape (V + 1,)
    indices : int32 array of shape (E,)
    frontier : int32 array of shape (>= frontier_size,)
        The vertices of depth ``current``, in any order.
    frontier_size : int32
    current : int32
    depth, parent : int32 arrays of shape (V,)
        Updated in place.
    next_frontier : int32 array of shape (V,)
        Receives the vertices of depth ``current + 1`` (in no particular order).
    next_size : int32 array of shape (1,)
        Zero before the launch; the size of the next frontier after it.

    Launch with a 1-D grid covering ``frontier_size`` threads.
    """
    i = cuda.grid(1)
    if i < frontier_size:
        u = frontier[i]
        start = indptr[u]
        stop = indptr[u + 1]
        for k in range(start, stop):
            v = indices[k]
            # A plain read filters out visited neighbours before the (costlier) atomic.
            if depth[v] == UNVISITED:
                if cuda.atomic.cas(depth, v, UNVISITED, current + 1) == UNVISITED:
                    parent[v] = u
                    slot = cuda.atomic.add(next_size, 0, 1)
                    next_frontier[slot] = v


@course_kernel(f"void({_I32}, {_I32}, int32, {_I32})", lesson=LESSON)
def frontier_degree_kernel(indptr, frontier, frontier_size, degrees):
    """Map over the frontier: ``degrees[i]`` = out-degree of ``frontier[i]``.

    Their exclusive scan gives each frontier vertex its slice of the candidate list.

    Parameters
    ----------
    indptr : int32 array of shape (V + 1,)
    frontier : int32 array of shape (>= frontier_size,)
    frontier_size : int32
    degrees : int32 array of shape (>= frontier_size,)
        Output.
    """
    i = cuda.grid(1)
    if i < frontier_size:
        u = frontier[i]
        degrees[i] = indptr[u + 1] - indptr[u]


@course_kernel(
    f"void({_I32}, {_I32}, {_I32}, int32, {_I32}, int32, {_I32}, {_I32}, {_I32}, {_I32})", lesson=LESSON
)
def expand_frontier_kernel(indptr, indices, frontier, frontier_size, edge_offsets, n_candidates, depth, owner,
                           candidates, candidate_parents):
    """Gather the frontier's edges into a candidate list, one thread per edge, and elect owners.

    Candidate ``k`` is edge number ``k - edge_offsets[i]`` of frontier vertex
    ``u = frontier[i]``, where ``i`` is the last frontier position with
    ``edge_offsets[i] <= k`` (a binary search). One thread per *edge* rather than per
    vertex keeps the threads evenly loaded however skewed the degrees are. The thread
    stores the neighbour ``v`` and ``u`` (its would-be parent) and, if ``v`` is
    unvisited, writes ``k`` into ``owner[v]``. Several threads may write ``owner[v]``;
    whichever write lands last names the one candidate that claims ``v``
    (:func:`claim_candidates_kernel`). No atomics.

    Parameters
    ----------
    indptr : int32 array of shape (V + 1,)
    indices : int32 array of shape (E,)
    frontier : int32 array of shape (>= frontier_size,)
    frontier_size : int32
        At least 1.
    edge_offsets : int32 array of shape (>= frontier_size,)
        Exclusive scan of the frontier's degrees.
    n_candidates : int32
        Total degree of the frontier.
    depth : int32 array of shape (V,)
        Read only.
    owner : int32 array of shape (V,)
        Scratch: index of the candidate elected for each vertex.
    candidates, candidate_parents : int32 arrays of shape (>= n_candidates,)
        Outputs.

    Launch with a 1-D grid covering ``n_candidates`` threads.
    """
    k = cuda.grid(1)
    if k < n_candidates:
        low = 0
        high = frontier_size - 1
        while low < high:  # the last i with edge_offsets[i] <= k (skips degree-0 vertices)
            middle = (low + high + 1) // 2
            if edge_offsets[middle] <= k:
                low = middle
            else:
                high = middle - 1
        u = frontier[low]
        v = indices[indptr[u] + k - edge_offsets[low]]
        candidates[k] = v
        candidate_parents[k] = u
        if depth[v] == UNVISITED:
            owner[v] = k


@course_kernel(f"void({_I32}, {_I32}, int32, {_I32}, int32, {_I32}, {_I32}, {_I32})", lesson=LESSON)
def claim_candidates_kernel(candidates, candidate_parents, n_candidates, owner, current, depth, parent, keep):
    """One thread per candidate: the elected candidate of an unvisited vertex claims it.

    ``keep[k]`` becomes 1 for exactly one candidate of each newly discovered vertex,
    0 for the others, so compacting ``candidates`` by ``keep`` gives the next
    frontier without duplicates. ``owner[v]`` may be left over from an earlier level
    only for a vertex visited then, whose depth is no longer ``UNVISITED``.

    Parameters
    ----------
    candidates, candidate_parents : int32 arrays of shape (>= n_candidates,)
    n_candidates : int32
    owner : int32 array of shape (V,)
        As written by :func:`expand_frontier_kernel` in the same level.
    current : int32
    depth, parent : int32 arrays of shape (V,)
        Updated in place.
    keep : int32 array of shape (>= n_candidates,)
        Output flags.
    """
    k = cuda.grid(1)
    if k < n_candidates:
        v = candidates[k]
        flag = 0
        # Testing the election first means only the elected thread ever reads depth[v],
        # so no thread reads what another one writes.
        if owner[v] == k and depth[v] == UNVISITED:
            depth[v] = current + 1
            parent[v] = candidate_parents[k]
            flag = 1
        keep[k] = flag


@lru_cache(maxsize=None)
def block_exclusive_scan_kernel(block: int):
    """Work-efficient (Blelloch) exclusive scan of one block of ``block`` values.

    Block ``b`` scans ``values[b * block:(b + 1) * block]`` in shared memory: an
    up-sweep builds partial sums in a balanced tree, the root is cleared, and a
    down-sweep pushes the prefix sums back down: 2 * block additions, log2(block)
    barriers each way. The block's total goes to ``block_sums[b]``; scanning those and
    adding them back (:func:`add_block_offsets_kernel`) completes a scan of any length.

    Parameters
    ----------
    block : int
        Threads per block and values per block; a power of two, 2..1024.

    Returns
    -------
    numba.cuda kernel
        ``kernel[ceil(n / block), block](values, n, out, block_sums)`` with int32
        ``values`` and ``out`` of shape (>= n,) and ``block_sums`` of shape
        (ceil(n / block),).
    """
    if block < 2 or block > 1024 or block & (block - 1):
        raise ValueError(f"the scan block must be a power of two between 2 and 1024, got {block}")

    def block_exclusive_scan(values, n, out, block_sums):
        temp = cuda.shared.array(block, int32)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * block + t
        temp[t] = values[i] if i < n else 0
        stride = 1
        while stride < block:  # up-sweep: temp[j] accumulates the sum of its subtree
            cuda.syncthreads()
            j = (t + 1) * 2 * stride - 1
            if j < block:
                temp[j] += temp[j - stride]
            stride *= 2
        cuda.syncthreads()
        if t == 0:
            block_sums[cuda.blockIdx.x] = temp[block - 1]
            temp[block - 1] = 0
        stride = block // 2
        while stride > 0:  # down-sweep: pass each prefix to the right child, add to the left
            cuda.syncthreads()
            j = (t + 1) * 2 * stride - 1
            if j < block:
                left = temp[j - stride]
                temp[j - stride] = temp[j]
                temp[j] += left
            stride //= 2
        cuda.syncthreads()
        if i < n:
            out[i] = temp[t]

    block_exclusive_scan.__name__ = f"block_exclusive_scan_{block}"
    return cuda.jit(block_exclusive_scan)


@course_kernel(f"void({_I32}, int32, {_I32})", lesson=LESSON)
def add_block_offsets_kernel(out, n, block_offsets):
    """Add to every element of block ``b`` the exclusive prefix of the block totals.

    Launch with the same block size as the scan it completes.

    Parameters
    ----------
    out : int32 array of shape (>= n,)
        Block-local exclusive scans, made global in place.
    n : int32
    block_offsets : int32 array of shape (number of blocks,)
    """
    i = cuda.grid(1)
    if i < n:
        out[i] += block_offsets[cuda.blockIdx.x]


@course_kernel(f"void({_I32}, {_I32}, {_I32}, int32, {_I32})", lesson=LESSON)
def compact_kernel(candidates, keep, positions, n_candidates, next_frontier):
    """Stream compaction: kept candidate ``k`` goes to ``next_frontier[positions[k]]``.

    Parameters
    ----------
    candidates, keep, positions : int32 arrays of shape (>= n_candidates,)
        ``positions`` is the exclusive scan of ``keep``.
    n_candidates : int32
    next_frontier : int32 array of shape (>= number kept,)
        Output, in the order of the candidates.
    """
    k = cuda.grid(1)
    if k < n_candidates and keep[k] != 0:
        next_frontier[positions[k]] = candidates[k]


@course_kernel(f"void({_I32}, {_I32}, int32, {_I32}, {_I32})", lesson=LESSON)
def bfs_bottom_up_kernel(in_indptr, in_indices, current, depth, parent):
    """Bottom-up step of direction-optimising BFS: one thread per vertex looks for a parent.

    Each unvisited vertex ``v`` scans its in-neighbours and stops at the first one of
    depth ``current``, which becomes its parent. When the frontier holds a large part
    of the graph, most unvisited vertices find a parent after a few edges, so the step
    examines far fewer edges than expanding the frontier would. A thread writes only
    its own vertex; a neighbour being written concurrently reads as ``UNVISITED`` or
    ``current + 1``, never ``current``, so the levels stay exact. The vertices found
    (now of depth ``current + 1``) are the next frontier; :func:`level_flags_kernel` and
    a scan list them.

    Parameters
    ----------
    in_indptr : int32 array of shape (V + 1,)
    in_indices : int32 array of shape (E,)
        CSR of the in-neighbours (the transpose; the same arrays for an undirected graph).
    current : int32
    depth, parent : int32 arrays of shape (V,)
        Updated in place.

    Launch with a 1-D grid covering V threads.
    """
    v = cuda.grid(1)
    if v < depth.shape[0] and depth[v] == UNVISITED:
        for k in range(in_indptr[v], in_indptr[v + 1]):
            u = in_indices[k]
            if depth[u] == current:
                depth[v] = current + 1
                parent[v] = u
                break


@course_kernel(f"void({_I32}, int32, {_I32})", lesson=LESSON)
def level_flags_kernel(depth, level, flags):
    """Map over the vertices: ``flags[v] = 1`` if ``depth[v] == level``, else 0.

    Scanning the flags and compacting the vertex ids turns a level found bottom-up back
    into a frontier list for the next top-down step.

    Parameters
    ----------
    depth : int32 array of shape (V,)
    level : int32
    flags : int32 array of shape (V,)
        Output.
    """
    v = cuda.grid(1)
    if v < depth.shape[0]:
        flags[v] = 1 if depth[v] == level else 0


for _block in (256, 1024):
    register_kernel(f"bfs.block_exclusive_scan_kernel[block={_block}]", f"void({_I32}, int32, {_I32}, {_I32})",
                    (lambda b=_block: block_exclusive_scan_kernel(b).py_func), LESSON)
