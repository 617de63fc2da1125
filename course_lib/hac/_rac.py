"""Average linkage on the device in rounds of reciprocal pairs: one cooperative kernel, 6 grid syncs per round.

Why this design. The one-merge-per-iteration loops pay for every merge: the host-driven
``"gpu"`` 8 launches, the persistent ``"gpu_persistent"`` 3 grid syncs and 3 scans of the
whole edge list, 12,118 times at the thesis's size (0.2425 s on an H200, 2026-11-28, where the
course's CPU heap takes 0.102 s). A faster persistent loop (more blocks, 2 syncs per merge,
tombstones compacted now and then) still runs 12,118 dependent iterations, about 5 us each at
best: ~0.06 s. Average linkage is reducible, so every reciprocal nearest-neighbour pair of a
round can merge at once and the merges are still the sequential algorithm's
(:mod:`course_lib.hac._rounds` gives the argument and the tie rule): on the thesis-size planted
graph that is 32 rounds instead of 12,118 iterations, and the edge list shrinks every round
(705,352 entries, then 619,354, 562,754, ...: 5.1 million entry visits per stage in all).
Each round is a few data-parallel passes; launched from the host they would cost a few
launches per round (~50 us of host time each), so :func:`rounds_kernel` runs every round in
one cooperative launch (all blocks resident, ``this_grid().sync()`` between the stages), with
all state on the device and one download at the end. The unit's model predicts a few
milliseconds on an H200 (:func:`course_lib.hac.model.predict_rac`); no GPU has run it yet,
so ``"gpu_persistent"`` stays the default GPU method until the probe measures both. Its
worst case is a graph with one reciprocal pair per round (a path of increasing
affinities): then N - nC rounds, each no dearer than a persistent merge.

One round, :data:`GRID_SYNCS_PER_ROUND` grid barriers:

A. every live entry (a, b) computes the average S(a, b) / (n_a n_b) of its sum and raises
   ``best[a]`` to it (``atomic.max``). Barrier.
B. the entries that equal ``best[a]`` lower ``slot_key[a]`` to their pair key
   (``atomic.min``, int64): the nearest pair, ties to the smaller key, whatever order the
   atomics run in. Barrier.
C. each slot a finds its neighbour b from the key (one element of the key's pair is in a,
   the other's slot is b, from the element-to-slot map ``home``); if b's nearest pair is the
   same, they merge: the smaller slot writes the merge record (children, height, the
   (height, key) it is numbered by, round) and keeps the cluster, whose population becomes
   the sum. Barrier.
D. each entry with an end in a merging cluster is inserted in a hash table (open
   addressing, ``atomic.cas`` of its index into an empty slot). Barrier.
E. each entry relabels its ends (a merging cluster takes the smaller slot) and finds in the
   table the up to three other entries that become the same new pair; the one of smallest
   key survives and adds the sums in key order (both directions add the same numbers in the
   same order). Survivors are flagged, and each block scans its flags tile by tile (a
   Hillis-Steele scan in shared memory, as in the primitives unit), keeping a running
   offset. Barrier.
F. each block adds the totals of the blocks before it (its offset in the new list) and
   scatters its survivors to the other buffer (stream compaction: flags, scan, scatter);
   the touched entries clear their hash slots; ``best`` and ``slot_key`` are reset and
   ``home`` follows the merges. Barrier.

The merges come out in round order; the host numbers them as the sequential algorithm does
(:func:`~course_lib.hac._rounds.dendrogram_from_merges`, a sort of N - nC records). The grid
is every block that fits on the device at once (the cooperative limit), capped at one thread
per :data:`ENTRIES_PER_THREAD` entries. Per clustering: 4 allocations, 3 uploads, 1 launch,
1 download (:class:`RoundsClustering`), whatever N and M.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numba import cuda

from ..registry import register_kernel
from ._kernel_base import LESSON, REGISTERED_BLOCK, _check_power_of_two, jit_for_block
from ._rounds import KEY_NONE, RECORD_COLUMNS, dendrogram_from_merges

__all__ = ["GRID_SYNCS_PER_ROUND", "RoundsClustering", "rounds_kernel"]

#: Grid barriers per round (phases A to F above); one more before the first round (initialisation).
GRID_SYNCS_PER_ROUND = 6
#: Entries per thread below which the grid stops growing: a block with nothing to do still waits
#: at every grid barrier (on a GPU, the cooperative limit binds first on large graphs).
ENTRIES_PER_THREAD = 4
#: Multipliers of the hash of an ordered pair (u, v) (odd, below 2**32: u * A stays within int64).
HASH_A = 2_654_435_761
HASH_B = 2_246_822_519


@cuda.jit(device=True, inline=True)
def _hash(u, v, mask):
    h = (np.int64(u) * HASH_A) ^ (np.int64(v) * HASH_B)
    return (h ^ (h >> 29)) & mask


@cuda.jit(device=True, inline=True)
def _find(table, ends, buf, u, v, mask):
    """Index of the live entry (u, v) in the round's hash table, or -1 if there is none."""
    h = _hash(u, v, mask)
    while True:
        f = table[h]
        if f < 0 or (ends[buf, 0, f] == u and ends[buf, 1, f] == v):
            return f
        h = (h + 1) & mask


@cuda.jit(device=True, inline=True)
def _sum_by_key(k0, v0, k1, v1, k2, v2, k3, v3):
    """v0 + v1 + v2 + v3 added in increasing order of their keys (a 5-comparator sorting network)."""
    if k1 < k0:
        k0, v0, k1, v1 = k1, v1, k0, v0
    if k3 < k2:
        k2, v2, k3, v3 = k3, v3, k2, v2
    if k2 < k0:
        k0, v0, k2, v2 = k2, v2, k0, v0
    if k3 < k1:
        k1, v1, k3, v3 = k3, v3, k1, v1
    if k2 < k1:
        k1, v1, k2, v2 = k2, v2, k1, v1
    return ((v0 + v1) + v2) + v3


@cuda.jit(device=True, inline=True)
def _scan_in_block(scan, t, block):
    """Inclusive scan of ``scan[:block]`` in shared memory, called by every thread of the block (Hillis-Steele:
    in step k each thread adds the value ``2**k`` places below it; all reads of a step before any write)."""
    step = 1
    while step < block:
        below = scan[t - step] if t >= step else 0
        cuda.syncthreads()
        scan[t] += below
        cuda.syncthreads()
        step *= 2


@cuda.jit(device=True, inline=True)
def _new_sum(ends, link, keys, table, partner, buf, e, mask):
    """Entry e's part in the new list: (keep, sum). keep is 0 for a merged pair's own entry
    and for an entry whose new pair another entry (of smaller key) carries."""
    x = ends[buf, 0, e]
    y = ends[buf, 1, e]
    px = partner[x]
    py = partner[y]
    value = link[buf, e]
    if px < 0 and py < 0:
        return 1, value
    if (x if px < 0 else min(x, px)) == (y if py < 0 else min(y, py)):
        return 0, value
    missing = KEY_NONE  # above every key; adds a zero at the end of the sum
    zero = link.dtype.type(0)
    own = keys[buf, e]
    k1, v1, k2, v2, k3, v3 = missing, zero, missing, zero, missing, zero
    if py >= 0:
        f = _find(table, ends, buf, x, py, mask)
        if f >= 0:
            k1, v1 = keys[buf, f], link[buf, f]
    if px >= 0:
        f = _find(table, ends, buf, px, y, mask)
        if f >= 0:
            k2, v2 = keys[buf, f], link[buf, f]
        if py >= 0:
            f = _find(table, ends, buf, px, py, mask)
            if f >= 0:
                k3, v3 = keys[buf, f], link[buf, f]
    if own > min(k1, min(k2, k3)):
        return 0, value
    return 1, _sum_by_key(own, value, k1, v1, k2, v2, k3, v3)


@lru_cache(maxsize=None)
def rounds_kernel(block: int):
    """The cooperative kernel that runs every round of a clustering (phases A-F above).

    Parameters
    ----------
    block : int
        Threads per block, a power of two (the block scan halves nothing but doubles its stride).

    Returns
    -------
    numba.cuda kernel
        ``kernel[grid, block](ends, link, work, table, slot_int, slot_val, block_total, counts, merges,
        n_elements)``. ``ends`` int32 (2, 2, M): two buffers of (src, dst), buffer 0 filled;
        ``link`` (float32 or float64) (3, M): two buffers of sums (buffer 0 = the affinities)
        and the new sums; ``work`` int32 (2, M): local positions, hash slots; ``table`` int32
        (H,), H a power of two >= 2M; ``slot_int`` int32 (3, N): nearest neighbour, partner,
        temporary cluster id per slot; ``slot_val`` (link's dtype) (2, N): population, best
        average; ``block_total`` int32 (grid,); ``counts`` int32 (N - nC + 1,): merges per
        round; ``merges`` float64 (N - nC, 6): the merge records
        (:data:`~course_lib.hac._rounds.RECORD_COLUMNS`). Everything but ``ends[0]`` and
        ``link[0]`` is initialised by the kernel.
    """
    block = _check_power_of_two(block)
    scan_size = 2 * block  # a compile-time constant: two rows of partial sums in stage F

    def rounds_loop(ends, link, keys, work, table, slot_int, slot_key, slot_val, block_total, counts, merges,
                    n_elements):
        scan = cuda.shared.array(scan_size, np.int32)
        grid = cuda.cg.this_grid()
        t = cuda.threadIdx.x
        bid = cuda.blockIdx.x
        n_blocks = cuda.gridDim.x
        start = cuda.grid(1)
        stride = cuda.gridsize(1)
        n = n_elements
        mask = np.int64(table.shape[0] - 1)
        home = slot_int[0]
        partner = slot_int[1]
        node = slot_int[2]
        pop = slot_val[0]
        best = slot_val[1]
        lowest = link.dtype.type(-math.inf)
        # Initialisation: every slot a cluster of one, the table empty, no merge recorded.
        for x in range(start, n, stride):
            home[x] = x
            slot_key[x] = KEY_NONE
            node[x] = x
            pop[x] = 1
            best[x] = lowest
        for e in range(start, ends.shape[2], stride):
            u = ends[0, 0, e]
            v = ends[0, 1, e]
            keys[0, e] = np.int64(min(u, v)) * n + max(u, v)
        for h in range(start, table.shape[0], stride):
            table[h] = -1
        for q in range(start, counts.shape[0], stride):
            counts[q] = 0
        for q in range(start, merges.shape[0], stride):
            merges[q, 6] = -1.0
        grid.sync()
        live = ends.shape[2]
        r = 0
        made = 0
        buf = 0
        while live > 0:
            # A: the best average of each cluster.
            for e in range(start, live, stride):
                x = ends[buf, 0, e]
                y = ends[buf, 1, e]
                cuda.atomic.max(best, x, link[buf, e] / (pop[x] * pop[y]))
            grid.sync()
            # B: its nearest pair, the smallest key among the best.
            for e in range(start, live, stride):
                x = ends[buf, 0, e]
                y = ends[buf, 1, e]
                if link[buf, e] / (pop[x] * pop[y]) == best[x]:
                    cuda.atomic.min(slot_key, x, keys[buf, e])
            grid.sync()
            # C: reciprocal pairs merge; the smaller slot records the merge and keeps the cluster.
            for x in range(start, n, stride):
                key = slot_key[x]
                mate = -1
                if key != KEY_NONE:
                    u = key // n  # the pair's key is a pair of elements: one is in x, the other in its neighbour
                    y = home[u] if home[u] != x else home[key - u * n]
                    if slot_key[y] == key:
                        mate = y
                partner[x] = mate
                if mate > x:
                    m = made + cuda.atomic.add(counts, r, 1)
                    a = node[x]
                    b = node[mate]
                    height = np.float64(best[x])
                    capped_height = height
                    capped_key = key
                    for child in (a, b):  # a merge sorts after its children: capped by their (height, -key)
                        if child >= n:
                            h = merges[child - n, 3]
                            k = np.int64(merges[child - n, 4]) * n + np.int64(merges[child - n, 5])
                            if h < capped_height or (h == capped_height and k > capped_key):
                                capped_height = h
                                capped_key = k
                    merges[m, 0] = a
                    merges[m, 1] = b
                    merges[m, 2] = height
                    merges[m, 3] = capped_height
                    merges[m, 4] = capped_key // n
                    merges[m, 5] = capped_key % n
                    merges[m, 6] = r
                    node[x] = n + m
                    pop[x] = pop[x] + pop[mate]
            grid.sync()
            merged = counts[r]
            if merged == 0:  # unreachable: the largest live pair is always reciprocal
                break
            # D: the entries of merging clusters go into the hash table.
            for e in range(start, live, stride):
                if partner[ends[buf, 0, e]] >= 0 or partner[ends[buf, 1, e]] >= 0:
                    h = _hash(ends[buf, 0, e], ends[buf, 1, e], mask)
                    while cuda.atomic.cas(table, h, -1, e) != -1:
                        h = (h + 1) & mask
                    work[1, e] = h
            grid.sync()
            # E: keep flags and new sums; each block scans its contiguous chunk, tile by tile.
            per = -(-live // n_blocks)
            per = -(-per // block) * block
            first = bid * per
            last = min(first + per, live)
            running = 0
            for base in range(first, last, block):
                e = base + t
                keep = 0
                if e < last:
                    keep, value = _new_sum(ends, link, keys, table, partner, buf, e, mask)
                    link[2, e] = value
                scan[t] = keep
                cuda.syncthreads()
                _scan_in_block(scan, t, block)
                if e < last:
                    work[0, e] = running + scan[t] - 1 if keep else -1
                running += scan[block - 1]
                cuda.syncthreads()
            if t == 0:
                block_total[bid] = running
            grid.sync()
            # F: this block's offset, the scatter to the other buffer, the table cleared, best and nn reset.
            before = 0
            total = 0
            for p in range(t, n_blocks, block):
                total += block_total[p]
                if p < bid:
                    before += block_total[p]
            scan[t] = before
            scan[block + t] = total
            cuda.syncthreads()
            half = block // 2
            while half > 0:
                if t < half:
                    scan[t] += scan[t + half]
                    scan[block + t] += scan[block + t + half]
                cuda.syncthreads()
                half //= 2
            offset = scan[0]
            total = scan[block]
            nxt = 1 - buf
            for base in range(first, last, block):
                e = base + t
                if e < last:
                    x = ends[buf, 0, e]
                    y = ends[buf, 1, e]
                    px = partner[x]
                    py = partner[y]
                    p = work[0, e]
                    if p >= 0:
                        ends[nxt, 0, offset + p] = x if px < 0 else min(x, px)
                        ends[nxt, 1, offset + p] = y if py < 0 else min(y, py)
                        link[nxt, offset + p] = link[2, e]
                        keys[nxt, offset + p] = keys[buf, e]
                    if px >= 0 or py >= 0:
                        table[work[1, e]] = -1
            for x in range(start, n, stride):
                slot_key[x] = KEY_NONE
                best[x] = lowest
                mate = partner[home[x]]  # x is an element here: its cluster's slot after the round
                if mate >= 0 and mate < home[x]:
                    home[x] = mate
            made += merged
            live = total
            buf = nxt
            r += 1
            grid.sync()

    return jit_for_block(rounds_loop, block)


def _signature(dtype):
    return (f"void(int32[:, :, ::1], {dtype}[:, ::1], int64[:, ::1], int32[:, ::1], int32[::1], int32[:, ::1], "
            f"int64[::1], {dtype}[:, ::1], int32[::1], int32[::1], float64[:, ::1], int32)")


# float32 only (the default; float64 is the same code): each compile of this kernel is long in the compile check.
register_kernel(f"hac.rounds_kernel[float32,block={REGISTERED_BLOCK}]", _signature("float32"),
                lambda: rounds_kernel(REGISTERED_BLOCK).py_func, LESSON)


def _table_size(n_entries):
    """Slots of the hash table: a power of two >= 2M (at most half full: short probes)."""
    return 1 << max(1, int(2 * n_entries - 1).bit_length())


class RoundsClustering:
    """One clustering by :func:`rounds_kernel`: 4 allocations, 3 uploads, 1 launch, 1 download.

    Parameters
    ----------
    graph : AffinityGraph
    dtype : numpy.dtype
        float32 or float64: the sums and averages on the device.
    block : int
        Threads per block, a power of two.

    Notes
    -----
    The arrays of the kernel are views of four allocations (an int32 pool, an int64 pool of
    pair keys, a pool of the weight dtype, the float64 merge records), whatever N and M. A
    graph without any pair (N = 1, or isolated elements only) needs no device work at all.
    """

    #: Device allocations, host-to-device and device-to-host copies, launches per clustering.
    ALLOCATIONS, UPLOADS, DOWNLOADS, LAUNCHES = 4, 3, 1, 1

    def __init__(self, graph, dtype, block):
        self.graph, self.dtype, self.block = graph, np.dtype(dtype), int(block)
        self.n, self.m = graph.n_elements, graph.n_entries
        self.n_merges = self.n - graph.n_components
        self.table_size = _table_size(self.m)
        self.kernel = rounds_kernel(self.block)

    def _arrays(self):
        """Allocate the pools, upload the graph, return the kernel's arguments (views)."""
        n, m, block = self.n, self.m, self.block
        parts = max(1, -(-m // (block * ENTRIES_PER_THREAD)))
        sizes = (4 * m, 2 * m, self.table_size, 3 * n, parts, self.n_merges + 1)
        ints = cuda.device_array(sum(sizes), np.int32)
        wide = cuda.device_array(2 * m + n, np.int64)
        values = cuda.device_array(3 * m + 2 * n, self.dtype)
        merges = cuda.device_array((self.n_merges, len(RECORD_COLUMNS)), np.float64)
        views, offset = [], 0
        for size in sizes:
            views.append(ints[offset:offset + size])
            offset += size
        ends = views[0].reshape(2, 2, m)
        link = values[:3 * m].reshape(3, m)
        ends[0, 0].copy_to_device(np.ascontiguousarray(self.graph.src, np.int32))  # int32 already: no host copy
        ends[0, 1].copy_to_device(np.ascontiguousarray(self.graph.dst, np.int32))
        link[0].copy_to_device(self.graph.weight.astype(self.dtype, copy=False))
        return (ends, link, wide[:2 * m].reshape(2, m), views[1].reshape(2, m), views[2], views[3].reshape(3, n),
                wide[2 * m:], values[3 * m:].reshape(2, n), views[4], views[5], merges, np.int32(n))

    def grid(self, args):
        """Blocks of the launch: every co-resident block, at most one per ``block * ENTRIES_PER_THREAD`` entries."""
        from ._persistent import cooperative_grid

        return min(cooperative_grid(self.kernel, args, self.block), args[8].shape[0])

    def run(self):
        """All the merges; returns the Dendrogram (merges numbered as the sequential algorithm makes them)."""
        if self.n_merges == 0:
            return dendrogram_from_merges(self.n, np.zeros((0, len(RECORD_COLUMNS))), self.dtype, "gpu_rac")
        args = self._arrays()
        self.kernel[self.grid(args), self.block](*args)
        records = args[10].copy_to_host()
        if np.any(records[:, 6] < 0):
            raise RuntimeError("the rounds kernel stopped before every merge was made (non-finite affinities?)")
        return dendrogram_from_merges(self.n, records, self.dtype, "gpu_rac")
