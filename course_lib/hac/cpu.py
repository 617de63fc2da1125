"""Compiled CPU versions of the thesis's algorithm (Numba).

* :func:`average_link_cpu` - the fast one, the strong CPU baseline: the same merges in
  the same order, but each cluster keeps a list of its pairs, so a merge costs the
  degrees of the two clusters instead of passes over all M entries. The largest affinity
  comes from one of two selections, picked by size: up to :data:`SCAN_UP_TO` elements,
  each cluster's best pair, kept up to date, and a scan over the live clusters per merge
  (O(N) per merge, two integer reductions on contiguous arrays); above, a heap of pairs
  (stale entries skipped when popped), whose cost does not grow with N per merge. On the
  planted graphs the heap pops about a hundred stale entries per merge (every merge
  re-pushes all of the new cluster's pairs), more than the scan reads up to the thesis's
  size. Its time goes to random accesses to the pairs: a pair is one record of at most
  16 bytes (affinity, its two clusters as a ^ b, key), marked fused away by its affinity,
  and the lists of pair ids share one pool, so a merge touches one cache line per pair it
  reads.
* :func:`average_link_scan` - the thesis's sequential C design compiled: every
  iteration scans the M entries for the maximum, the suppression, the weighting and
  the collection, then sorts k's entries to fuse the duplicates.

Both follow the rules of :func:`~course_lib.hac.reference.average_link_reference` (ties to
the lowest entry index; the lowest index of a run keeps the sum; the same float
operations in the same order), so in the same precision their results are identical.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._docs import fill_doc
from .._validate import check_dtype
from ._dendrogram import Dendrogram
from ._graph import CLUSTERING_PARAMETERS, as_graph

__all__ = ["SCAN_UP_TO", "average_link_cpu", "average_link_scan"]

#: Largest number of elements for which :func:`average_link_cpu` selects merges by scanning the
#: clusters' best pairs instead of popping a heap of pairs (the scan costs O(N) per merge, so
#: it loses on much larger graphs). Chosen from paired runs of both selections on planted
#: graphs of 400 to 12,119 elements, where the scan was the faster at every size; re-measure
#: with ``python -m course_lib.bench hac`` on a quiet machine before moving it.
SCAN_UP_TO = 16_000


# --------------------------------------------------------------------------------------
# The thesis's sequential design: O(M) per iteration
# --------------------------------------------------------------------------------------

@njit(cache=True)
def _scan_merges(src, dst, w, parent, height, pop, n, n_merges):
    m_entries = w.size
    keys = np.empty(m_entries, np.int64)
    for q in range(n_merges):
        # Matching: the first entry of largest weight.
        m = 0
        best = w[0]
        for e in range(1, m_entries):
            if w[e] > best:
                best = w[e]
                m = e
        i = src[m]
        j = dst[m]
        k = n + q
        height[k] = best
        # Suppression.
        for e in range(m_entries):
            if (src[e] == i and dst[e] == j) or (src[e] == j and dst[e] == i):
                w[e] = -np.inf
                src[e] = -1
                dst[e] = -1
        # Weighting.
        parent[i] = k
        parent[j] = k
        pop[k] = pop[i] + pop[j]
        fi = pop[i] / pop[k]
        fj = pop[j] / pop[k]
        for e in range(m_entries):
            a = src[e]
            b = dst[e]
            if a == i or b == i:
                w[e] *= fi
            elif a == j or b == j:
                w[e] *= fj
            if a == i or a == j:
                src[e] = k
            if b == i or b == j:
                dst[e] = k
        # Collection, integration, fusion, for each side.
        for side in range(2):
            count = 0
            for e in range(m_entries):
                if side == 0 and src[e] == k:
                    keys[count] = (np.int64(dst[e]) << 32) | e
                    count += 1
                elif side == 1 and dst[e] == k:
                    keys[count] = (np.int64(src[e]) << 32) | e
                    count += 1
            ordered = np.sort(keys[:count])
            p = 0
            while p < count:
                head = ordered[p] & 0xFFFFFFFF
                neighbour = ordered[p] >> 32
                total = w[head]
                r = p + 1
                while r < count and (ordered[r] >> 32) == neighbour:
                    e = ordered[r] & 0xFFFFFFFF
                    total = total + w[e]
                    w[e] = -np.inf
                    src[e] = -1
                    dst[e] = -1
                    r += 1
                w[head] = total
                p = r


def _buffers(g, dtype):
    """The tree's arrays for an :class:`~course_lib.hac.AffinityGraph` (checked) and a checked float dtype."""
    dtype = np.dtype(dtype)
    n_nodes = g.n_nodes
    parent = np.arange(n_nodes, dtype=np.int32)
    height = np.full(n_nodes, np.inf, dtype)
    pop = np.ones(n_nodes, dtype)
    return g, dtype, parent, height, pop


#: What both compiled versions take and return, documented once.
_clustering_doc = fill_doc(parameters=CLUSTERING_PARAMETERS, returns="""
Returns
-------
Dendrogram
""")


@_clustering_doc
def average_link_scan(graph, dtype=np.float64) -> Dendrogram:
    """The thesis's algorithm as its sequential C version did it: full scans every iteration.

    {parameters}

    {returns}
    """
    return _scan_checked(as_graph(graph), check_dtype(dtype, "dtype"))


def _scan_checked(g, dtype):
    """:func:`average_link_scan` of a checked graph and dtype (for :func:`course_lib.hac.cluster`, which checks
    them once)."""
    g, dtype, parent, height, pop = _buffers(g, dtype)
    src, dst, w = g.src.copy(), g.dst.copy(), g.weight.astype(dtype)
    n_merges = g.n_elements - g.n_components
    if n_merges:
        _scan_merges(src, dst, w, parent, height, pop, np.int64(g.n_elements), np.int64(n_merges))
    return Dendrogram(g.n_elements, parent, height, "cpu_scan")


# --------------------------------------------------------------------------------------
# The fast version: adjacency lists of pairs and a heap
# --------------------------------------------------------------------------------------

def _pair_dtype(dtype):
    """The record of one pair: ``w`` (its affinity, in ``dtype``; -inf once it is merged or fused
    away, >= 0 while live), ``x`` (its two clusters a ^ b, int32), ``key`` (the lower entry
    index of the pair's run, int32; the tie rule's order).

    One record per pair, not one array per field: the merge loop reads a pair's fields
    together at a random pair id, so one cache line instead of four (a quarter less time
    at N = 1,000). A pair is always reached from one of its clusters c, so ``x ^ c`` is the
    other: with both stored the float64 record took 24 bytes and a third of the records
    straddled two cache lines; it takes 16. int32, as :func:`~course_lib.hac.as_graph`
    keeps M and 2N below 2**31.
    """
    return np.dtype([("w", dtype), ("x", np.int32), ("key", np.int32)], align=True)


#: Children per node of the heap: a shallow, wide heap touches fewer cache lines per pop.
_ARITY = 8


@njit(cache=True, inline="always")
def _before(heap, a, b):
    """Heap order: larger weight first, then lower key (the thesis's tie rule).

    Column 0 holds the weight's float64 bits: for weights >= 0 (affinities and their
    averages) the integer order of the bits is the order of the values.
    """
    return heap[a, 0] > heap[b, 0] or (heap[a, 0] == heap[b, 0] and heap[a, 1] < heap[b, 1])


@njit(cache=True, inline="always")
def _swap(heap, a, b):
    for c in range(3):
        heap[a, c], heap[b, c] = heap[b, c], heap[a, c]


@njit(cache=True)
def _sift_up(heap, pos):
    while pos > 0:
        up = (pos - 1) // _ARITY
        if not _before(heap, pos, up):
            break
        _swap(heap, pos, up)
        pos = up


@njit(cache=True)
def _sift_down(heap, size):
    pos = 0
    while True:
        first = _ARITY * pos + 1
        if first >= size:
            break
        best = first
        for child in range(first + 1, min(first + _ARITY, size)):
            if _before(heap, child, best):
                best = child
        if not _before(heap, best, pos):
            break
        _swap(heap, pos, best)
        pos = best


@njit(cache=True)
def _push(heap, size, bits, key, pair, stamp):
    """Push and return the (possibly reallocated) heap."""
    if size == heap.shape[0]:
        bigger = np.empty((2 * size, 3), np.int64)
        bigger[:size] = heap
        heap = bigger
    heap[size, 0] = bits
    heap[size, 1] = key
    heap[size, 2] = (np.int64(pair) << 32) | stamp
    _sift_up(heap, size)
    return heap


@njit(cache=True)
def _merge_lists(i, j, k, fi, fj, pairs, mark, active, adj_start, adj_len, pool, pool_end):
    """Weighting, relabelling and fusion of i's and j's pairs into k's list, appended to the pool.

    Returns ``(pool, pool_end, start, count)``: the pool (a larger one after a compaction),
    its new end, and where k's ``count`` live pairs start. ``mark[other]`` holds k's pair to
    ``other`` on return (the caller resets it).
    """
    n_nodes = adj_start.size
    need = adj_len[i] + adj_len[j]
    if pool_end + need > pool.size:
        # Compact the lists of the active clusters into a larger pool.
        total = need
        for c in range(n_nodes):
            if active[c]:
                total += adj_len[c]
        fresh = np.empty(2 * total + 16, pool.dtype)
        end = 0
        for c in range(n_nodes):
            if active[c]:
                kept = 0
                for idx in range(adj_start[c], adj_start[c] + adj_len[c]):
                    if pairs[pool[idx]].w >= 0:  # live
                        fresh[end + kept] = pool[idx]
                        kept += 1
                adj_start[c] = end
                adj_len[c] = kept
                end += kept
        pool = fresh
        pool_end = end
    start = pool_end
    count = 0
    # Weighting and relabelling of i's pairs: (i, other) becomes (k, other).
    for idx in range(adj_start[i], adj_start[i] + adj_len[i]):
        r = pool[idx]
        w = pairs[r].w
        if w < 0:  # fused away
            continue
        other = pairs[r].x ^ i
        pairs[r].x = other ^ k
        pairs[r].w = w * fi
        mark[other] = r
        pool[start + count] = r
        count += 1
    # j's pairs: fused with i's pair to the same neighbour when there is one.
    for idx in range(adj_start[j], adj_start[j] + adj_len[j]):
        r = pool[idx]
        w = pairs[r].w
        if w < 0:
            continue
        other = pairs[r].x ^ j
        weighted = w * fj
        kept = mark[other]
        if kept >= 0:
            pairs[kept].w = pairs[kept].w + weighted
            if pairs[r].key < pairs[kept].key:
                pairs[kept].key = pairs[r].key
            pairs[r].w = -np.inf
        else:
            pairs[r].x = other ^ k
            pairs[r].w = weighted
            mark[other] = r
            pool[start + count] = r
            count += 1
    return pool, pool_end, start, count


@njit(cache=True)
def _fast_merges(n, n_merges, pairs, adj_start, adj_len, pool, parent, height, pop):
    n_pairs = pairs.size
    n_nodes = parent.size
    stamp = np.zeros(n_pairs, np.int64)
    heap = np.empty((2 * n_pairs + 16, 3), np.int64)
    scratch = np.empty(1, np.float64)  # float64 -> its bits, without allocating
    scratch_bits = scratch.view(np.int64)
    size = 0
    for p in range(n_pairs):
        scratch[0] = pairs[p].w
        heap[size, 0] = scratch_bits[0]
        heap[size, 1] = pairs[p].key
        heap[size, 2] = np.int64(p) << 32
        size += 1
        _sift_up(heap, size - 1)
    mark = np.full(n_nodes, -1, np.int64)
    active = np.zeros(n_nodes, np.bool_)
    active[:n] = True
    pool_end = adj_start[n - 1] + adj_len[n - 1] if n > 0 else 0
    # One cluster of each pair, for the pairs popped from the heap (the record holds a ^ b).
    end = np.empty(n_pairs, np.int32)
    for c in range(n):
        for idx in range(adj_start[c], adj_start[c] + adj_len[c]):
            end[pool[idx]] = c
    q = 0
    while q < n_merges:
        # Matching: the top of the heap, unless it is stale.
        p = heap[0, 2] >> 32
        st = heap[0, 2] & 0xFFFFFFFF
        size -= 1
        if size > 0:
            _swap(heap, 0, size)
            _sift_down(heap, size)
        if pairs[p].w < 0 or stamp[p] != st:
            continue
        if size > 4 * n_pairs:  # mostly stale entries: rebuild from the live pairs
            size = 0
            for r in range(n_pairs):
                if pairs[r].w >= 0 and r != p:
                    scratch[0] = pairs[r].w
                    heap[size, 0] = scratch_bits[0]
                    heap[size, 1] = pairs[r].key
                    heap[size, 2] = (np.int64(r) << 32) | stamp[r]
                    size += 1
                    _sift_up(heap, size - 1)
        k = n + q
        i, j, pool, start, count = _fuse(p, end[p], k, pairs, mark, active, adj_start, adj_len, pool, pool_end,
                                         parent, height, pop)
        pool_end = start + count
        # The new pairs of k go on the heap; their old entries are now stale.
        for idx in range(start, start + count):
            r = pool[idx]
            mark[pairs[r].x ^ k] = -1
            end[r] = k
            stamp[r] += 1
            scratch[0] = pairs[r].w
            heap = _push(heap, size, scratch_bits[0], pairs[r].key, r, stamp[r])
            size += 1
        q += 1


@njit(cache=True, inline="always")
def _fuse(p, i, k, pairs, mark, active, adj_start, adj_len, pool, pool_end, parent, height, pop):
    """Fuse the two clusters of pair ``p``, i and the other, into the new cluster ``k`` (its height,
    parents, population and list of pairs); returns (i, j, pool, start, count): k's list is
    ``pool[start:start + count]``."""
    j = pairs[p].x ^ i
    height[k] = pairs[p].w
    pairs[p].w = -np.inf  # suppression
    parent[i] = k
    parent[j] = k
    pop[k] = pop[i] + pop[j]
    fi = pop[i] / pop[k]
    fj = pop[j] / pop[k]
    pool, pool_end, start, count = _merge_lists(i, j, k, fi, fj, pairs, mark, active, adj_start, adj_len, pool,
                                                pool_end)
    active[i] = False
    active[j] = False
    active[k] = True
    adj_start[k] = start
    adj_len[k] = count
    return i, j, pool, start, count


@njit(cache=True)
def _best_of(c, pairs, adj_start, adj_len, pool):
    """Cluster c's first live pair in merge order: ``(pair, affinity, key)``, pair -1 if it has none.

    The best so far stays in registers; a pair fused away (affinity -inf) never beats the
    start (-inf, key -1), a live one (affinity >= 0) always does. The pass also drops the
    pairs fused away from c's list (every entry is written back, the end moves only past
    live ones: no branch), so the next pass over it is shorter.
    """
    best = -1
    best_w = -np.inf
    best_key = -1
    start = adj_start[c]
    kept = 0
    for idx in range(start, start + adj_len[c]):
        r = pool[idx]
        w = pairs[r].w
        key = pairs[r].key
        pool[start + kept] = r
        kept += w >= 0
        if w > best_w or (w == best_w and key < best_key):
            best = r
            best_w = w
            best_key = key
    adj_len[c] = kept
    return best, best_w, best_key


@njit(cache=True)
def _scan_best_merges(n, n_merges, pairs, adj_start, adj_len, pool, parent, height, pop):
    """The merges of :func:`_fast_merges`, selected by a scan over each cluster's best pair.

    ``best[c]`` is cluster c's first live pair in merge order, ``best_end[c]`` the cluster
    at its other end; the global first is the first of those. After a merge only k's
    neighbours can change: a neighbour whose best pair went to i or j (its weight changed,
    or it was fused away) looks through its list again, any other compares its best with
    its new pair to k.
    """
    n_nodes = parent.size
    mark = np.full(n_nodes, -1, np.int32)
    active = np.zeros(n_nodes, np.bool_)
    active[:n] = True
    best = np.full(n_nodes, -1, np.int32)
    best_end = np.full(n_nodes, -1, np.int32)
    pool_end = adj_start[n - 1] + adj_len[n - 1] if n > 0 else 0
    # The live clusters in slots 0 .. n_live - 1, with the affinity and key of each one's
    # best pair side by side: the scan reads two contiguous arrays of the live clusters only
    # (no gather, no merged ones). A merge puts k in i's slot and moves the last slot into
    # j's. The affinity is kept as the int64 bits of its float64 value (-0.0 made +0.0):
    # for affinities >= 0 and -inf (a cluster without pairs) the integers are ordered as the
    # values, so the scan is two integer reductions, which compile to vector instructions.
    scratch = np.empty(1, np.float64)
    scratch_bits = scratch.view(np.int64)
    slot_bits = np.empty(n, np.int64)
    slot_key = np.zeros(n, np.int32)
    slot_cluster = np.arange(n).astype(np.int32)
    slot_of = np.zeros(n_nodes, np.int32)
    slot_of[:n] = slot_cluster
    for c in range(n):
        b, w, slot_key[c] = _best_of(c, pairs, adj_start, adj_len, pool)
        scratch[0] = w + 0.0
        slot_bits[c] = scratch_bits[0]
        best[c] = b
        if b >= 0:
            best_end[c] = pairs[b].x ^ c
    n_live = n
    no_slot = np.int64(0x7FFFFFFFFFFFFFFF)
    for q in range(n_merges):
        # Matching: the first of the live clusters' best pairs: the largest affinity, then,
        # among the slots holding it, the lowest (key, slot).
        top_bits = slot_bits[0]
        for s in range(1, n_live):
            top_bits = max(top_bits, slot_bits[s])
        top = no_slot
        for s in range(n_live):
            top = min(top, (np.int64(slot_key[s]) << 32) | s if slot_bits[s] == top_bits else no_slot)
        c = slot_cluster[top & 0xFFFFFFFF]
        k = n + q
        i, j, pool, start, count = _fuse(best[c], c, k, pairs, mark, active, adj_start, adj_len, pool, pool_end,
                                         parent, height, pop)
        pool_end = start + count
        # k takes i's slot; the last slot fills j's.
        s = slot_of[i]
        slot_cluster[s] = k
        slot_of[k] = s
        s = slot_of[j]
        n_live -= 1
        if s != n_live:
            slot_bits[s] = slot_bits[n_live]
            slot_key[s] = slot_key[n_live]
            slot_cluster[s] = slot_cluster[n_live]
            slot_of[slot_cluster[s]] = s
        # k's pairs: its best, and each neighbour's. The neighbour's current best is read from
        # its slot, and best_end says whether it went to i or j, without touching that pair.
        best_k = -1
        best_k_w = -np.inf
        best_k_key = -1
        for idx in range(start, start + count):
            r = pool[idx]
            other = pairs[r].x ^ k
            w = pairs[r].w
            key = pairs[r].key
            mark[other] = -1
            if w > best_k_w or (w == best_k_w and key < best_k_key):
                best_k = r
                best_k_w = w
                best_k_key = key
            s = slot_of[other]
            end = best_end[other]
            if end == i or end == j:  # its best pair changed weight or was fused away: look again
                b, w, slot_key[s] = _best_of(other, pairs, adj_start, adj_len, pool)
                scratch[0] = w + 0.0
                slot_bits[s] = scratch_bits[0]
                best[other] = b
                best_end[other] = pairs[b].x ^ other
            else:
                scratch[0] = w + 0.0
                bits = scratch_bits[0]
                if bits > slot_bits[s] or (bits == slot_bits[s] and key < slot_key[s]):
                    best[other] = r
                    best_end[other] = k
                    slot_bits[s] = bits
                    slot_key[s] = key
        best[k] = best_k
        s = slot_of[k]
        scratch[0] = best_k_w + 0.0
        slot_bits[s] = scratch_bits[0]
        slot_key[s] = best_k_key
        if best_k >= 0:
            best_end[k] = pairs[best_k].x ^ k


@_clustering_doc
def average_link_cpu(graph, dtype=np.float64) -> Dendrogram:
    """The fast compiled version: the thesis's merges, found with per-cluster pair lists.

    {parameters}

    {returns}
        Identical to :func:`~course_lib.hac.reference.average_link_reference` in the same dtype,
        whichever selection ran (a scan up to :data:`SCAN_UP_TO` elements, a heap above).

    Examples
    --------
    >>> from course_lib.hac import average_link_cpu, path_graph
    >>> tree = average_link_cpu(path_graph(4))
    >>> tree.parent.tolist()
    [4, 4, 5, 6, 5, 6, 6]
    """
    return _average_link(as_graph(graph), check_dtype(dtype, "dtype"), "auto")


def _average_link(g, dtype, selection):
    """:func:`average_link_cpu` of a checked graph and dtype (for :func:`course_lib.hac.cluster`, which checks
    them once), with the selection named: ``"heap"``, ``"scan"`` or ``"auto"`` (by size)."""
    g, dtype, parent, height, pop = _buffers(g, dtype)
    n = g.n_elements
    if selection == "auto":
        selection = "scan" if n <= SCAN_UP_TO else "heap"
    merges = _scan_best_merges if selection == "scan" else _fast_merges
    n_pairs = g.n_pairs
    pairs = np.empty(n_pairs, _pair_dtype(dtype))
    adj_start = np.zeros(g.n_nodes, np.int64)
    adj_len = np.zeros(g.n_nodes, np.int64)
    # Room for as many pairs again: the first merges append to the pool instead of compacting it.
    pool = np.empty(4 * n_pairs, np.int32)
    _pair_lists(g.src, g.dst, g.weight, pairs, adj_start, adj_len, pool)
    n_merges = n - g.n_components
    if n_merges:
        merges(np.int64(n), np.int64(n_merges), pairs, adj_start, adj_len, pool, parent, height, pop)
    return Dendrogram(n, parent, height, "cpu")


@njit(cache=True)
def _pair_lists(src, dst, weight, pairs, adj_start, adj_len, pool):
    """One pair per entry (a, b) with a < b, and each element's list of its pairs, in one pass each.

    Entries are sorted by (src, dst), so (a, b) comes before its reverse (b, a): its index
    is the pair's key, the lower of the two. Fills ``pairs`` (length M / 2, see
    :func:`_pair_dtype`), ``adj_start`` and ``adj_len`` of the elements (zeros on entry),
    and the first M entries of ``pool`` (each element's pair ids in increasing order).
    Compiled: the NumPy version (masks, a stable argsort of the M endpoints, bincount)
    cost a fifth of a whole run at N = 1,000.
    """
    p = 0
    for e in range(src.size):
        a = src[e]
        b = dst[e]
        if a < b:
            pairs[p].x = a ^ b
            pairs[p].w = weight[e]
            pairs[p].key = e
            adj_len[a] += 1
            adj_len[b] += 1
            p += 1
    total = 0
    for c in range(adj_len.size):
        adj_start[c] = total
        total += adj_len[c]
    fill = adj_start.copy()
    p = 0
    for e in range(src.size):
        a = src[e]
        b = dst[e]
        if a >= b:
            continue
        pool[fill[a]] = p
        fill[a] += 1
        pool[fill[b]] = p
        fill[b] += 1
        p += 1
