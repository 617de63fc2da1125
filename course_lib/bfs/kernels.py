"""Reference CUDA kernels of Unit 3 (breadth-first search), taught in ``lessons/03_bfs.ipynb``.

Conventions shared by every kernel:

- a graph is a CSR adjacency structure: ``indptr`` (int32, shape (V + 1,)) and
  ``indices`` (int32, shape (E,)); the out-neighbours of ``u`` are
  ``indices[indptr[u]:indptr[u + 1]]``. The quadratic kernel reads an edge list
  ``edge_u``, ``edge_v`` (int32, shape (E,)) instead;
- ``depth`` (int32, shape (V,)) holds the number of hops from the source, ``UNVISITED``
  (-1) for vertices not reached yet; ``parent`` (int32, shape (V,)) the vertex a
  vertex was discovered from (the source is its own parent);
- the kernels do only the search: what a search cost (edges examined, depths written)
  is counted on the host from what it produced (:mod:`course_lib.bfs.model`) and
  measured on these kernels by the simulator's profiler
  (:mod:`course_lib.bfs.profiling`), never by counters inside them.

The sequence of the lesson: :func:`bfs_init_kernel` and :func:`bfs_edge_quadratic_kernel`
(the edge-parallel "try #1", O(V * E) work), then the frontier kernels (O(V + E) work):
:func:`bfs_frontier_atomic_kernel` builds the next frontier with atomics, and the scan
pipeline (:func:`frontier_degree_kernel`, :func:`expand_frontier_kernel`,
:func:`claim_candidates_kernel`, :func:`block_exclusive_scan_kernel`,
:func:`add_block_offsets_kernel`, :func:`compact_kernel`) builds it with a stream
compaction and no atomics on the frontier. Direction-optimising BFS adds the bottom-up
step :func:`bfs_bottom_up_kernel` and :func:`level_flags_kernel`.

The search the library ships (``"frontier_twc"``, ``"direction_optimizing_twc"``):
:func:`bfs_bitmap_init_kernel`, then per level one launch of :func:`bfs_twc_kernel`
(top-down, lists shared out by degree: block, warp or scan gathering) or
:func:`bfs_bottom_up_bitmap_kernel` (bottom-up on the frontier bitmap), on a workspace
allocated once per graph.
"""

from __future__ import annotations

from functools import lru_cache

from numba import cuda, int32, uint32

from ..registry import course_kernel, register_kernel

__all__ = [
    "UNVISITED",
    "add_block_offsets_kernel",
    "bfs_bitmap_init_kernel",
    "bfs_bottom_up_bitmap_kernel",
    "bfs_bottom_up_kernel",
    "bfs_twc_kernel",
    "bfs_edge_quadratic_kernel",
    "bfs_frontier_atomic_kernel",
    "bfs_init_kernel",
    "block_exclusive_scan_kernel",
    "claim_candidates_kernel",
    "compact_kernel",
    "expand_frontier_kernel",
    "frontier_degree_kernel",
    "level_flags_kernel",
]

LESSON = "lessons/03_bfs.ipynb"
#: Depth of a vertex the search has not reached.
UNVISITED = -1

_I32 = "int32[::1]"


@course_kernel(f"void(int32, {_I32}, {_I32})", lesson=LESSON)
def bfs_init_kernel(source, depth, parent):
    """Map over the vertices: depth 0 at the source, ``UNVISITED`` elsewhere.

    Parameters
    ----------
    source : int32
        The start vertex, 0 <= source < V.
    depth, parent : int32 arrays of shape (V,)
        Outputs. The source becomes its own parent, every other parent -1.

    Launch with any 1-D grid covering V threads.
    """
    v = cuda.grid(1)
    if v < depth.shape[0]:
        if v == source:
            depth[v] = 0
            parent[v] = source
        else:
            depth[v] = UNVISITED
            parent[v] = -1


@course_kernel(f"void({_I32}, {_I32}, int32, int32, {_I32}, {_I32}, {_I32})", lesson=LESSON)
def bfs_edge_quadratic_kernel(edge_u, edge_v, both_directions, current, depth, parent, done):
    """One iteration of "BFS try #1": one thread per edge, every edge every iteration.

    If one end of the edge has depth ``current`` and the other end is unvisited, the
    unvisited end gets depth ``current + 1`` and ``done[0]`` is cleared so that the
    host runs another iteration.

    Two threads may reach the same vertex in one iteration: both write the same depth
    (``current + 1``) and a valid parent, so the race is benign. A thread that reads a
    depth another thread is writing sees either ``UNVISITED`` or ``current + 1``,
    neither of which equals ``current``, so a vertex is never expanded in the
    iteration that discovers it.

    Parameters
    ----------
    edge_u, edge_v : int32 arrays of shape (E,)
        The edges, ``edge_u[e] -> edge_v[e]``.
    both_directions : int32
        1 for an undirected graph: the edge is also followed from ``edge_v[e]`` to
        ``edge_u[e]`` (the source's "converse case"); 0 for a directed graph.
    current : int32
        The depth being expanded in this iteration (0, 1, 2, ...).
    depth, parent : int32 arrays of shape (V,)
        Updated in place.
    done : int32 array of shape (1,)
        Set to 1 by the host before the launch; any thread that writes a depth sets it to 0.

    Launch with a 1-D grid covering E threads (at least one block: a launch cannot be empty).
    """
    e = cuda.grid(1)
    if e < edge_u.shape[0]:
        u = edge_u[e]
        v = edge_v[e]
        depth_u = depth[u]
        depth_v = depth[v]
        if depth_u == current and depth_v == UNVISITED:
            depth[v] = current + 1
            parent[v] = u
            done[0] = 0
        elif both_directions != 0 and depth_v == current and depth_u == UNVISITED:
            depth[u] = current + 1
            parent[u] = v
            done[0] = 0


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


# ---- The search an expert ships: degree-aware top-down expansion on a visited bitmap ---------------
#
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
def _claim(v, u, indptr, current, depth, parent, visited, bits, next_frontier, counters):
    """Mark ``v`` visited with one atomic OR; the one thread that set the bit records and appends it."""
    bit = uint32(1) << uint32(v & 31)
    old = cuda.atomic.or_(visited, v >> 5, bit)
    if (old & bit) == 0:
        depth[v] = current + 1
        parent[v] = u
        level = current % 2
        slot = cuda.atomic.add(counters, (level, 0), 1)
        next_frontier[slot] = v
        cuda.atomic.add(counters, (level, 1), indptr[v + 1] - indptr[v])
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
    4M vertices: it stays in L2); the thread that sets the bit records depth and parent,
    appends the vertex to the next frontier and counts its arcs. The bitmap makes the
    check race-free without a plain read of ``depth`` that other threads are writing.

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
            k = chosen[0] + t
            while k < chosen[1]:
                _claim(indices[k], chosen[2], indptr, current, depth, parent, visited, bits, next_frontier, counters)
                k += block
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
            k = warp_start + lane
            while k < warp_end:
                _claim(indices[k], warp_u, indptr, current, depth, parent, visited, bits, next_frontier, counters)
                k += WARP
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
        j = t
        while j < total:
            lo = 0
            hi = block - 1
            while lo < hi:  # the first list whose inclusive end exceeds j
                mid = (lo + hi) // 2
                if ends[mid] > j:
                    hi = mid
                else:
                    lo = mid + 1
            before = ends[lo - 1] if lo > 0 else 0
            _claim(indices[starts[lo] + j - before], vertices[lo], indptr, current, depth, parent, visited, bits,
                   next_frontier, counters)
            j += block

    bfs_twc.__name__ = f"bfs_twc_{block}"
    return cuda.jit(bfs_twc)


@course_kernel(f"void({_I32}, {_I32}, {_I32}, int32, {_I32}, {_I32}, {_U32}, {_BITS}, {_I32}, {_COUNTERS})",
               lesson=LESSON, example=lambda: _example_bottom_up())
def bfs_bottom_up_bitmap_kernel(in_indptr, in_indices, indptr, current, depth, parent, visited, bits, next_frontier,
                                counters):
    """Bottom-up step on the bitmaps: one thread per 32 vertices (one visited word).

    The thread owning word w reads it once; each of its unvisited vertices scans its
    in-neighbours and stops at the first one whose bit is set in the frontier bitmap
    ``bits[current % 3]`` (a 1-bit test in a bitmap that stays in cache, instead of a
    4-byte ``depth`` read). The thread alone writes word w of ``visited`` and of the next
    frontier's bitmap, so no atomic is needed there; the vertices found are appended to
    ``next_frontier`` for a following top-down step, counted with their out-arcs.

    Parameters
    ----------
    in_indptr, in_indices : int32 arrays
        CSR of the in-neighbours.
    indptr : int32 array of shape (V + 1,)
        Out-neighbour offsets (the out-arcs of the next frontier are counted).
    current : int32
    depth, parent, visited, bits, next_frontier, counters
        The workspace (see :func:`bfs_bitmap_init_kernel`).

    Launch with any 1-D grid (grid-stride over the words).
    """
    _housekeeping(bits, counters, current)
    n = depth.shape[0]
    frontier_bits = current % 3
    level = current % 2
    for w in range(cuda.grid(1), visited.shape[0], cuda.gridsize(1)):
        seen = visited[w]
        found = uint32(0)
        for b in range(32):
            v = w * 32 + b
            bit = uint32(1) << uint32(b)
            if v < n and (seen & bit) == 0:
                for k in range(in_indptr[v], in_indptr[v + 1]):
                    u = in_indices[k]
                    if bits[frontier_bits, u >> 5] & (uint32(1) << uint32(u & 31)):
                        depth[v] = current + 1
                        parent[v] = u
                        found |= bit
                        slot = cuda.atomic.add(counters, (level, 0), 1)
                        next_frontier[slot] = v
                        cuda.atomic.add(counters, (level, 1), indptr[v + 1] - indptr[v])
                        break
        if found:
            visited[w] = seen | found
            bits[(current + 1) % 3, w] = found


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
