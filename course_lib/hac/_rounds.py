"""Average linkage in rounds of reciprocal nearest neighbours (RAC), in NumPy.

Average linkage is *reducible*: merging two clusters never makes the new cluster closer to
a third than the nearer of the two was (s(k, l) is a weighted mean of s(i, l) and s(j, l)).
So when two clusters are each other's nearest neighbour (a reciprocal pair), nothing the
other merges do can come between them: the sequential algorithm (always the largest
affinity first) merges them too, at the same height. That is the argument of the
nearest-neighbour chain (Murtagh 1983; Muellner 2011) and of RAC (Sumengen et al., 2021,
arXiv 2105.11653): merge *every* reciprocal pair of a round at once, repeat. The rounds make
exactly the sequential algorithm's merges; renumbering them by height gives its tree.

:func:`average_link_rounds` is that loop, round by round, with the float operations of the
GPU method ``"gpu_rac"`` (:mod:`course_lib.hac._rac`) in the same order, so in the same
precision both give the same tree bit for bit; it also reports how much work each round
does (the model of :mod:`course_lib.hac.model` predicts the GPU time from it).

The rules both follow:

* an entry holds the *sum* of the affinities between two clusters, S(a, b); the average is
  S(a, b) / (n_a n_b), computed as ``S / (pop[a] * pop[b])``. A merge only adds sums:
  S(k, l) = S(i, l) + S(j, l) (+ the other two when l's own pair merges in the same round);
* every pair of clusters has a *key*: its smallest pair of elements (u < v) with an entry,
  as u N + v. Among equal averages the smaller key wins, which is the sequential
  algorithm's rule (the lowest entry index, entries sorted by (src, dst), the lowest index
  of a run keeping the sum): with the same comparisons, the rounds make its merges even on
  exact ties (fiber counts have many);
* a cluster is named by its smallest element (its *slot*); its nearest neighbour is the
  neighbour of largest (average, -key). Both directions of a pair hold the same sum bit for
  bit, so both ends compute the same average;
* the up to four entries that become one are added in increasing order of their keys, so
  both directions add the same numbers in the same order; the entry of smallest key
  survives (its key is the new pair's), the others are dropped, and the survivors keep
  their order (stream compaction);
* the merges are numbered by (height, -key), largest first: the sequential order. A merge
  is never numbered before one of its children (its sort height and key are capped by
  theirs: rounding can put a parent an ulp above a child), and what the cap makes equal
  goes to the earlier round.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._docs import fill_doc
from .._validate import check_dtype, check_flag
from ._dendrogram import Dendrogram
from ._graph import CLUSTERING_PARAMETERS, as_graph

__all__ = ["RoundStats", "average_link_rounds", "dendrogram_from_merges"]

#: Columns of a merge record (one row per merge, float64): the two children (leaves are
#: their element, the merge of record m is ``N + m``), the height, then what the merges are
#: numbered by: the height and the pair's key (u, v) (capped by the children's), the round.
RECORD_COLUMNS = ("child_a", "child_b", "height", "sort_height", "sort_u", "sort_v", "round")
#: "No pair": above every pair key u N + v.
KEY_NONE = np.iinfo(np.int64).max


@dataclass(frozen=True)
class RoundStats:
    """The work of each round of :func:`average_link_rounds`.

    Attributes
    ----------
    entries : ndarray of shape (R,), int64
        Live entries at the start of each round (both directions counted).
    merges : ndarray of shape (R,), int64
        Reciprocal pairs merged in each round.
    touched : ndarray of shape (R,), int64
        Entries with an end in a merging cluster (looked up in the round's hash table).
    """

    entries: np.ndarray
    merges: np.ndarray
    touched: np.ndarray

    @property
    def rounds(self) -> int:
        """R, the number of rounds."""
        return int(self.entries.size)


def dendrogram_from_merges(n_elements, records, dtype, method) -> Dendrogram:
    """The Dendrogram of a list of merge records (:data:`RECORD_COLUMNS`), numbered by height.

    Parameters
    ----------
    n_elements : int
    records : ndarray of shape (N - nC, 7), float64
        In creation order (record m created the temporary cluster ``N + m``).
    dtype : numpy.dtype
        Of the returned heights.
    method : str

    Returns
    -------
    Dendrogram
    """
    n = int(n_elements)
    count = records.shape[0]
    parent = np.arange(n + count, dtype=np.int32)
    height = np.full(n + count, np.inf, dtype)
    if count:
        order = np.argsort(-records[:, 3])
        ranked = records[order, 3]
        if np.any(ranked[1:] == ranked[:-1]):  # equal heights (ties, or a capped parent): by key, then round
            order = np.lexsort((records[:, 6], records[:, 5], records[:, 4], -records[:, 3]))
        rank = np.empty(count, np.int64)
        rank[order] = np.arange(count)
        final = np.concatenate([np.arange(n), n + rank])  # temporary id -> final id
        made = n + rank
        parent[final[records[:, 0].astype(np.int64)]] = made
        parent[final[records[:, 1].astype(np.int64)]] = made
        height[made] = records[:, 2].astype(dtype)
    return Dendrogram(n, parent, height, method, {})


def _segment_sums(values, starts, sizes):
    """Sum of each segment, left to right in the values' dtype (at most 4 per segment)."""
    total = values[starts].copy()
    for p in range(1, int(sizes.max()) if sizes.size else 1):
        more = sizes > p
        total[more] = total[more] + values[starts[more] + p]
    return total


@fill_doc(parameters=CLUSTERING_PARAMETERS)
def average_link_rounds(graph, dtype=np.float64, *, stats=False):
    """Average linkage by rounds of reciprocal nearest neighbours, in NumPy (RAC).

    {parameters}
        Type of the sums and averages during the computation.
    stats : bool
        Also return the :class:`RoundStats` of the run.

    Returns
    -------
    Dendrogram, or (Dendrogram, RoundStats)
        The sequential algorithm's tree (ties included, up to rounding: see the module's
        rules); bit for bit the tree of the GPU method ``"gpu_rac"`` in the same dtype.
    """
    g = as_graph(graph)
    dtype = check_dtype(dtype, "dtype")
    stats = check_flag(stats, "stats")
    n = g.n_elements
    slots = np.arange(n)
    x, y, link = g.src.astype(np.int64), g.dst.astype(np.int64), g.weight.astype(dtype)
    key = np.minimum(x, y) * n + np.maximum(x, y)  # the pair's key: its smallest element pair, (u, v) -> u N + v
    pop = np.ones(n, dtype)
    node = np.arange(n, dtype=np.int64)  # temporary id of the cluster in each slot
    sort_height = np.full(n, np.inf)  # per slot: the sort height and key of its cluster's merge
    sort_key = np.full(n, -1, np.int64)
    records, entries, merges, touched = [], [], [], []
    r = made = 0
    while x.size:
        w = link / (pop[x] * pop[y])
        best = np.full(n, -np.inf, dtype)
        np.maximum.at(best, x, w)
        tie = np.flatnonzero(w == best[x])
        nn_key = np.full(n, KEY_NONE, np.int64)
        np.minimum.at(nn_key, x[tie], key[tie])
        nn = np.full(n, -1, np.int64)
        chosen = tie[key[tie] == nn_key[x[tie]]]
        nn[x[chosen]] = y[chosen]
        has = nn >= 0
        reciprocal = np.zeros(n, bool)
        reciprocal[has] = nn[nn[has]] == slots[has]
        keep_slot = slots[reciprocal & (slots < nn)]
        gone = nn[keep_slot]
        if keep_slot.size == 0:  # the live pair of largest (average, -key) is always reciprocal
            raise RuntimeError("a round without a reciprocal pair")
        h, k = best[keep_slot].astype(np.float64), nn_key[keep_slot]
        for child in (keep_slot, gone):  # capped by the children: lower height, or same height and larger key
            worse = (sort_height[child] < h) | ((sort_height[child] == h) & (sort_key[child] > k))
            h, k = np.where(worse, sort_height[child], h), np.where(worse, sort_key[child], k)
        records.append(np.stack([node[keep_slot], node[gone], best[keep_slot].astype(np.float64), h, k // n, k % n,
                                 np.full(h.size, r)], axis=1))
        node[keep_slot] = n + made + np.arange(keep_slot.size)
        made += keep_slot.size
        sort_height[keep_slot], sort_key[keep_slot] = h, k
        pop[keep_slot] = pop[keep_slot] + pop[gone]
        rep = slots.copy()
        rep[gone] = keep_slot
        merging = np.zeros(n, bool)
        merging[keep_slot] = merging[gone] = True
        entries.append(x.size)
        merges.append(keep_slot.size)
        touched.append(int(np.count_nonzero(merging[x] | merging[y])))
        # Relabel; drop the merged pairs' own entries; add up the (at most 4) entries of each new pair.
        nx, ny = rep[x], rep[y]
        live = np.flatnonzero(nx != ny)
        order = live[np.lexsort((key[live], ny[live], nx[live]))]
        head = np.r_[order.size > 0, (nx[order][1:] != nx[order][:-1]) | (ny[order][1:] != ny[order][:-1])]
        starts = np.flatnonzero(head)
        sizes = np.diff(np.r_[starts, order.size])
        sums = _segment_sums(link[order], starts, sizes)
        survivor = order[starts]  # the smallest key of each group: the entry that keeps the sum
        keep = np.argsort(survivor, kind="stable")  # stream compaction keeps the survivors' order
        x, y, link, key = nx[survivor[keep]], ny[survivor[keep]], sums[keep], key[survivor[keep]]
        r += 1
    records = np.concatenate(records) if records else np.zeros((0, len(RECORD_COLUMNS)))
    tree = dendrogram_from_merges(n, records, dtype, "rounds")
    if not stats:
        return tree
    as_array = lambda v: np.asarray(v, np.int64)  # noqa: E731
    return tree, RoundStats(as_array(entries), as_array(merges), as_array(touched))
