"""The search the library ships: degree-aware top-down expansion and bottom-up steps on a visited bitmap.

Conventions in :mod:`course_lib.bfs.kernels`.
"""

from __future__ import annotations

from functools import lru_cache

from numba import cuda, int32, uint32

from ..registry import course_kernel, register_kernel
from ._kernels_common import I32 as _I32
from ._kernels_common import LESSON, UNVISITED

__all__ = ["FULL_MASK", "TWC_BLOCK", "WARP", "bfs_bitmap_init_kernel", "bfs_bottom_up_bitmap_kernel", "bfs_twc_kernel"]

# Workspace (allocated once per graph, see :class:`course_lib.bfs.api.BitmapWorkspace`):
# ``visited`` (uint32, one bit per vertex), ``bits`` (uint32 (3, words): frontier bitmaps used in
# rotation: level L reads ``bits[L % 3]``, writes ``bits[(L + 1) % 3]`` and clears ``bits[(L + 2) % 3]``)
# and ``counters`` (int32 (2, 2): size and out-arcs of the next frontier; level L adds into
# ``counters[L % 2]`` and zeroes ``counters[(L + 1) % 2]``, so the host reads one pair per level
# and resets nothing).

_U32 = "uint32[::1]"
_BITS = "uint32[:, ::1]"
_COUNTERS = "int32[:, ::1]"
#: Every lane of a warp takes part in the warp votes and shuffles.
FULL_MASK = 0xFFFFFFFF
WARP = 32


@cuda.jit(device=True, inline=True)
def _housekeeping(bits, counters, current):
    """Clear the frontier bitmap two levels ahead and the counters of the next level (grid-stride)."""
    g = cuda.grid(1)
    clear = (current + 2) % 3
    for w in range(g, bits.shape[1], cuda.gridsize(1)):
        bits[clear, w] = 0
    if g == 0:
        counters[(current + 1) % 2, 0] = 0
        counters[(current + 1) % 2, 1] = 0


@cuda.jit(device=True, inline=True)
def _append_found(found, v, lane, indptr, current, next_frontier, counters):
    """Append the vertices a warp found to the next frontier and count them: one pair of atomics per warp.

    Every lane of the warp calls it together (the loops around it are warp-uniform). The warp
    votes (``ballot_sync``); one lane, the lowest that found a vertex, reserves the warp's
    slots with one atomic add of the vote's ``popc`` and adds the warp's out-arcs (summed by
    five ``shfl_xor_sync``) with another; each finder writes its vertex at the reserved
    start plus its rank among the finders below it (``popc(votes & lanemask_lt())``). Two
    atomics on the same two counters per found vertex would serialise there, at one L2
    slice, for every vertex the search discovers.

    Returns
    -------
    int32
        The vote: bit l is set when lane l found its ``v``.
    """
    votes = cuda.ballot_sync(FULL_MASK, found)
    if votes != 0:
        arcs = 0
        if found:
            arcs = indptr[v + 1] - indptr[v]
        offset = WARP // 2
        while offset > 0:
            arcs += cuda.shfl_xor_sync(FULL_MASK, arcs, offset)
            offset //= 2
        leader = cuda.ffs(votes) - 1
        level = current % 2
        first = 0
        if lane == leader:
            first = cuda.atomic.add(counters, (level, 0), cuda.popc(votes))
            cuda.atomic.add(counters, (level, 1), arcs)
        first = cuda.shfl_sync(FULL_MASK, first, leader)
        if found:
            next_frontier[first + cuda.popc(votes & cuda.lanemask_lt())] = v
    return votes


@cuda.jit(device=True, inline=True)
def _claim_warp(valid, v, u, lane, indptr, current, depth, parent, visited, bits, next_frontier, counters):
    """The lanes with ``valid`` claim ``v`` (reached from ``u``) with one atomic OR each on the visited bitmap.

    Every lane of the warp calls it together. The lane that set the bit records depth and
    parent and marks ``v`` in the next frontier's bitmap; :func:`_append_found` appends and
    counts the warp's new vertices.
    """
    won = False
    bit = uint32(0)
    if valid:
        bit = uint32(1) << uint32(v & 31)
        old = cuda.atomic.or_(visited, v >> 5, bit)
        won = (old & bit) == 0
    _append_found(won, v, lane, indptr, current, next_frontier, counters)
    if won:
        depth[v] = current + 1
        parent[v] = u
        cuda.atomic.or_(bits, ((current + 1) % 3, v >> 5), bit)


@course_kernel(f"void(int32, {_I32}, {_I32}, {_U32}, {_BITS}, {_COUNTERS}, {_I32})", lesson=LESSON,
               example=lambda: _example_bitmap_init())
def bfs_bitmap_init_kernel(source, depth, parent, visited, bits, counters, frontier):
    """Start a search on the bitmap workspace: every array set by a grid-stride loop, no copy.

    Parameters
    ----------
    source : int32
    depth, parent : int32 arrays of shape (V,)
        ``UNVISITED`` everywhere but the source (depth 0, its own parent).
    visited : uint32 array of shape (ceil(V / 32),)
        Only the source's bit set.
    bits : uint32 array of shape (3, ceil(V / 32))
        ``bits[0]`` = the first frontier (the source), the others clear.
    counters : int32 array of shape (2, 2)
        Zeroed.
    frontier : int32 array of shape (V,)
        ``frontier[0] = source``.
    """
    g = cuda.grid(1)
    stride = cuda.gridsize(1)
    for v in range(g, depth.shape[0], stride):
        depth[v] = 0 if v == source else UNVISITED
        parent[v] = source if v == source else UNVISITED
    for w in range(g, visited.shape[0], stride):
        word = uint32(1) << uint32(source & 31) if w == source >> 5 else uint32(0)
        visited[w] = word
        bits[0, w] = word
        bits[1, w] = 0
        bits[2, w] = 0
    if g == 0:
        for i in range(2):
            counters[i, 0] = 0
            counters[i, 1] = 0
        frontier[0] = source


@lru_cache(maxsize=None)
def bfs_twc_kernel(block: int):
    """Top-down expansion of one level by degree: a block for the largest lists, a warp for the large, a scan for the rest.

    One thread per frontier vertex walking its own list (:func:`bfs_frontier_atomic_kernel`)
    makes a whole warp, and the whole search, wait for the hub vertex: on a power-law
    graph one list holds ~170k of the 128M arcs. Merrill, Garland & Grimshaw's
    gathering (PPoPP 2012; Gunrock's "TWC") shares each list out by its length:

    1. *CTA*: while some vertex of the block has a list of >= ``block`` arcs, the block
       elects one and all its threads walk that list together;
    2. *warp*: while some vertex of a warp has >= 32 arcs, the warp elects one
       (``ballot_sync``) and its 32 lanes walk it, reading consecutive arcs;
    3. *scan*: the remaining short lists are concatenated by a block-wide prefix sum of
       their lengths, and the block walks the concatenation, thread j taking arcs
       j, j + block, ... (a binary search in the prefix sums names each arc's vertex).

    Every arc costs one atomic OR on the visited bitmap (one bit per vertex, 512 KB for
    4M vertices: it stays in L2); the thread that sets the bit records depth and parent.
    The bitmap makes the check race-free without a plain read of ``depth`` that other
    threads are writing. The loops of the three phases take the same trips in every lane
    of a warp, so each round of arcs ends in a warp vote: the warp appends its new
    vertices and counts them and their out-arcs with one pair of atomics
    (:func:`_append_found`), not a pair per vertex.

    Parameters
    ----------
    block : int
        Threads per block, a multiple of 32 (32..1024).

    Returns
    -------
    numba.cuda kernel
        ``kernel[ceil(size / block), block](indptr, indices, frontier, size, current, depth,
        parent, visited, bits, next_frontier, counters)`` (workspace as in
        :func:`bfs_bitmap_init_kernel`): expands the ``size`` vertices of depth ``current``.
    """
    if isinstance(block, bool) or int(block) != block or not 32 <= block <= 1024 or block % WARP:
        raise ValueError(f"block must be a multiple of 32 between 32 and 1024 (whole warps), got {block!r}")
    block = int(block)

    def bfs_twc(indptr, indices, frontier, frontier_size, current, depth, parent, visited, bits, next_frontier,
                counters):
        owner = cuda.shared.array(1, int32)
        chosen = cuda.shared.array(3, int32)
        ends = cuda.shared.array(block, int32)  # inclusive prefix sums of the short lists' lengths
        starts = cuda.shared.array(block, int32)
        vertices = cuda.shared.array(block, int32)
        _housekeeping(bits, counters, current)
        t = cuda.threadIdx.x
        lane = t % WARP
        i = cuda.blockIdx.x * block + t
        u = -1
        start = 0
        end = 0
        if i < frontier_size:
            u = frontier[i]
            start = indptr[u]
            end = indptr[u + 1]
        # 1. CTA gathering: one long list at a time, the whole block on it.
        while cuda.syncthreads_or(1 if end - start >= block else 0):
            if t == 0:
                owner[0] = -1
            cuda.syncthreads()
            if end - start >= block:
                cuda.atomic.max(owner, 0, t)
            cuda.syncthreads()
            if owner[0] == t:
                chosen[0] = start
                chosen[1] = end
                chosen[2] = u
                start = end  # handed to the block
            cuda.syncthreads()
            base = chosen[0]
            while base < chosen[1]:  # block-uniform trips: whole warps reach the vote
                k = base + t
                valid = k < chosen[1]
                v = indices[k] if valid else 0
                _claim_warp(valid, v, chosen[2], lane, indptr, current, depth, parent, visited, bits, next_frontier,
                            counters)
                base += block
            cuda.syncthreads()  # everyone is done with ``chosen`` before the next election
        # 2. Warp gathering: one list of >= 32 arcs at a time per warp.
        while True:
            large = cuda.ballot_sync(FULL_MASK, 1 if end - start >= WARP else 0)
            if large == 0:
                break
            leader = cuda.ffs(large) - 1
            warp_start = cuda.shfl_sync(FULL_MASK, start, leader)
            warp_end = cuda.shfl_sync(FULL_MASK, end, leader)
            warp_u = cuda.shfl_sync(FULL_MASK, u, leader)
            if lane == leader:
                start = end
            base = warp_start
            while base < warp_end:  # warp-uniform trips
                k = base + lane
                valid = k < warp_end
                v = indices[k] if valid else 0
                _claim_warp(valid, v, warp_u, lane, indptr, current, depth, parent, visited, bits, next_frontier,
                            counters)
                base += WARP
        # 3. Scan gathering: the short lists, concatenated by a block prefix sum.
        ends[t] = end - start
        starts[t] = start
        vertices[t] = u
        cuda.syncthreads()
        offset = 1
        while offset < block:  # Hillis-Steele inclusive scan, uniform barriers
            add = 0
            if t >= offset:
                add = ends[t - offset]
            cuda.syncthreads()
            ends[t] += add
            cuda.syncthreads()
            offset *= 2
        total = ends[block - 1]
        base = 0
        while base < total:  # block-uniform trips: whole warps reach the vote
            j = base + t
            valid = j < total
            v = 0
            from_u = 0
            if valid:
                lo = 0
                hi = block - 1
                while lo < hi:  # the first list whose inclusive end exceeds j
                    mid = (lo + hi) // 2
                    if ends[mid] > j:
                        hi = mid
                    else:
                        lo = mid + 1
                before = ends[lo - 1] if lo > 0 else 0
                v = indices[starts[lo] + j - before]
                from_u = vertices[lo]
            _claim_warp(valid, v, from_u, lane, indptr, current, depth, parent, visited, bits, next_frontier,
                        counters)
            base += block

    bfs_twc.__name__ = f"bfs_twc_{block}"
    return cuda.jit(bfs_twc)


@course_kernel(f"void({_I32}, {_I32}, {_I32}, int32, {_I32}, {_I32}, {_U32}, {_BITS}, {_I32}, {_COUNTERS})",
               lesson=LESSON, example=lambda: _example_bottom_up())
def bfs_bottom_up_bitmap_kernel(in_indptr, in_indices, indptr, current, depth, parent, visited, bits, next_frontier,
                                counters):
    """Bottom-up step on the bitmaps: a warp per 32 vertices (one visited word), a lane per vertex.

    The warp owning word w reads it (one broadcast load); each lane whose vertex is
    unvisited scans its in-neighbours (consecutive lanes read consecutive ``in_indptr``
    entries) and stops at the first one whose bit is set in the frontier bitmap
    ``bits[current % 3]`` (a 1-bit test in a bitmap that stays in cache, instead of a
    4-byte ``depth`` read). The warp's vote (``ballot_sync``) is the word of vertices found:
    one lane stores it in ``visited`` and in the next frontier's bitmap (no atomic there),
    and the vertices found are appended to ``next_frontier`` for a following top-down step
    and counted with their out-arcs, one pair of atomics per warp (:func:`_append_found`).

    Parameters
    ----------
    in_indptr, in_indices : int32 arrays
        CSR of the in-neighbours.
    indptr : int32 array of shape (V + 1,)
        Out-neighbour offsets (the out-arcs of the next frontier are counted).
    current : int32
    depth, parent, visited, bits, next_frontier, counters
        The workspace (see :func:`bfs_bitmap_init_kernel`).

    Launch with blocks of whole warps and any 1-D grid (warps stride over the words).
    """
    _housekeeping(bits, counters, current)
    n = depth.shape[0]
    frontier_bits = current % 3
    lane = cuda.threadIdx.x % WARP
    warps = cuda.gridsize(1) // WARP
    for w in range(cuda.grid(1) // WARP, visited.shape[0], warps):  # warp-uniform trips
        seen = visited[w]
        v = w * WARP + lane
        found = False
        from_u = 0
        if v < n and (seen >> uint32(lane)) & uint32(1) == 0:
            for k in range(in_indptr[v], in_indptr[v + 1]):
                u = in_indices[k]
                if bits[frontier_bits, u >> 5] & (uint32(1) << uint32(u & 31)):
                    from_u = u
                    found = True
                    break
        votes = _append_found(found, v, lane, indptr, current, next_frontier, counters)
        if found:
            depth[v] = current + 1
            parent[v] = from_u
        if votes != 0:  # warp-uniform
            cuda.syncwarp()  # every lane has read visited[w] before lane 0 rewrites it
        if lane == 0 and votes != 0:
            word = uint32(votes)
            visited[w] = seen | word
            bits[(current + 1) % 3, w] = word


def _example_graph():
    """A 150-vertex graph with a hub (degree 100), a vertex of degree 40 and short lists, as CSR."""
    import numpy as np

    rng = np.random.default_rng(3)
    n = 150
    lists = [rng.choice(n, 100, replace=False), rng.choice(n, 40, replace=False)]
    lists += [rng.choice(n, int(k), replace=False) for k in rng.integers(0, 6, n - 2)]
    indptr = np.concatenate([[0], np.cumsum([len(a) for a in lists])]).astype(np.int32)
    indices = np.concatenate(lists).astype(np.int32)
    return n, indptr, indices


def _example_workspace(n, frontier):
    """The workspace as the search leaves it with ``frontier`` (depth 0) as the current level."""
    import numpy as np

    words = -(-n // 32)
    depth = np.full(n, UNVISITED, np.int32)
    parent = np.full(n, UNVISITED, np.int32)
    depth[frontier] = 0
    parent[frontier] = frontier
    visited = np.zeros(words, np.uint32)
    for v in frontier:
        visited[v >> 5] |= np.uint32(1 << (v & 31))
    bits = np.zeros((3, words), np.uint32)
    bits[0] = visited
    return depth, parent, visited, bits, np.zeros((2, 2), np.int32)


def _example_twc(block):
    import numpy as np

    n, indptr, indices = _example_graph()
    frontier = np.array([5, 0, 9, 1, 17] + list(range(20, 20 + block)), np.int32)  # the hub and the 40 share blocks
    depth, parent, visited, bits, counters = _example_workspace(n, frontier)
    grid = -(-frontier.size // block)
    return grid, block, (indptr, indices, frontier, np.int32(frontier.size), np.int32(0), depth, parent, visited,
                         bits, np.zeros(n, np.int32), counters)


def _example_bottom_up():
    import numpy as np

    n, indptr, indices = _example_graph()
    frontier = np.array([0, 3, 7, 11], np.int32)
    depth, parent, visited, bits, counters = _example_workspace(n, frontier)
    # The graph read as undirected would need the transpose; the out-lists serve as in-lists here.
    return 2, 32, (indptr, indices, indptr, np.int32(0), depth, parent, visited, bits, np.zeros(n, np.int32),
                   counters)


def _example_bitmap_init():
    import numpy as np

    n = 70
    words = -(-n // 32)
    return 2, 32, (np.int32(37), np.zeros(n, np.int32), np.zeros(n, np.int32), np.zeros(words, np.uint32),
                   np.ones((3, words), np.uint32), np.ones((2, 2), np.int32), np.zeros(n, np.int32))


#: Threads per block of the top-down bitmap kernel on a GPU (registered for the compile check).
TWC_BLOCK = 256
_TWC_SIG = f"void({_I32}, {_I32}, {_I32}, int32, int32, {_I32}, {_I32}, {_U32}, {_BITS}, {_I32}, {_COUNTERS})"
register_kernel(f"bfs.bfs_twc_kernel[block={TWC_BLOCK}]", _TWC_SIG, lambda: bfs_twc_kernel(TWC_BLOCK).py_func, LESSON)
for _block in (32, 64):
    register_kernel(f"bfs.bfs_twc_kernel[block={_block}]", _TWC_SIG, lambda b=_block: bfs_twc_kernel(b).py_func,
                    LESSON, example=lambda b=_block: _example_twc(b))
