"""Trusted CPU references of Unit 5.

* :func:`average_link_reference`: the thesis's sparse algorithm step by step in NumPy
  (float64 by default), with the stage names of its profile (matching, suppression,
  weighting, collection, integration, fusion). This is also "the Python original":
  every iteration scans all M entries, as the thesis's Python and C versions did.
* :func:`scipy_average_linkage`: SciPy's ``linkage(method="average")`` on the dense
  distances D = c - S (a missing pair is an affinity of 0), one connected component at
  a time. On a connected graph without ties it makes the same merges at the same
  heights as the sparse algorithm, because s(k, l) = (n_i s(i, l) + n_j s(j, l)) /
  (n_i + n_j) is exactly UPGMA's update of c - s.
"""

from __future__ import annotations

import time

import numpy as np

from ._dendrogram import Dendrogram
from ._graph import as_graph

__all__ = ["STAGES", "average_link_reference", "scipy_average_linkage"]

#: The thesis's stages, in order (its Cuadro 1).
STAGES = ("matching", "suppression", "weighting", "collection", "integration", "fusion")


def _check_dtype(dtype):
    dtype = np.dtype(dtype) if dtype is not None else np.dtype(np.float64)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    return dtype


def average_link_reference(graph, dtype=np.float64, *, max_merges=None) -> Dendrogram:
    """The thesis's algorithm in NumPy: N - nC iterations, each a few passes over the M entries.

    Parameters
    ----------
    graph : graph accepted by :func:`~course_lib.hac.as_graph`
    dtype : float32 or float64
        Type of the affinities during the computation (the precision study runs both).
    max_merges : int, optional
        Stop after this many merges (to time the first iterations of a large graph);
        the remaining parents stay their own and heights +inf.

    Returns
    -------
    Dendrogram
        ``stage_seconds`` holds the time spent in each of :data:`STAGES`.

    Notes
    -----
    Ties go to the lowest entry index (``numpy.argmax``); entries are stored sorted by
    (src, dst), so the order of the input does not matter. In fusion, the lower index
    of each run keeps the sum. Every faster version follows the same rules, so in the
    same precision they all produce this result exactly.
    """
    g = as_graph(graph)
    dtype = _check_dtype(dtype)
    n, n_nodes = g.n_elements, g.n_nodes
    src = g.src.astype(np.int64)
    dst = g.dst.astype(np.int64)
    w = g.weight.astype(dtype)
    parent = np.arange(n_nodes, dtype=np.int32)
    height = np.full(n_nodes, np.inf, dtype)
    pop = np.ones(n_nodes, dtype)
    seconds = dict.fromkeys(STAGES, 0.0)
    n_merges = g.n_elements - g.n_components
    if max_merges is not None:
        n_merges = min(n_merges, int(max_merges))
    clock = time.perf_counter
    for q in range(n_merges):
        t0 = clock()
        m = int(np.argmax(w))  # 1. matching
        i, j, k = int(src[m]), int(dst[m]), n + q
        height[k] = w[m]
        t1 = clock()
        dead = ((src == i) & (dst == j)) | ((src == j) & (dst == i))  # 2. suppression
        w[dead] = -np.inf
        src[dead] = -1
        dst[dead] = -1
        t2 = clock()
        parent[i] = parent[j] = k  # 3. weighting
        pop[k] = pop[i] + pop[j]
        on_i = (src == i) | (dst == i)
        on_j = (src == j) | (dst == j)
        w[on_i] *= pop[i] / pop[k]
        w[on_j] *= pop[j] / pop[k]
        src[(src == i) | (src == j)] = k
        dst[(dst == i) | (dst == j)] = k
        t3 = clock()
        sides = [(np.flatnonzero(src == k), dst), (np.flatnonzero(dst == k), src)]  # 4.1 collection
        t4 = clock()
        runs = []
        for entries, other in sides:  # 4.2 integration: sort by the other endpoint (stable: by index within)
            order = np.argsort(other[entries], kind="stable")
            entries = entries[order]
            keys = other[entries]
            starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if entries.size else np.zeros(0, np.int64)
            runs.append((entries, starts))
        t5 = clock()
        for entries, starts in runs:  # 4.3 fusion: the first of each run keeps the sum
            if entries.size == starts.size:
                continue
            sums = np.add.reduceat(w[entries], starts)
            survivors = entries[starts]
            others = np.setdiff1d(entries, survivors, assume_unique=True)
            w[survivors] = sums
            w[others] = -np.inf
            src[others] = -1
            dst[others] = -1
        t6 = clock()
        for name, dt in zip(STAGES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5)):
            seconds[name] += dt
    return Dendrogram(n, parent, height, "reference", seconds)


def scipy_average_linkage(graph, *, linkage_function=None) -> Dendrogram:
    """UPGMA on D = c - S with SciPy, per connected component, as a :class:`Dendrogram`.

    Parameters
    ----------
    graph : graph accepted by :func:`~course_lib.hac.as_graph`
        Dense work: O(n^2) memory per component of n elements.
    linkage_function : callable, optional
        ``f(condensed_distances) -> Z`` to use instead of SciPy's average linkage
        (e.g. ``fastcluster.average``, the CPU peer of the benchmark).

    Returns
    -------
    Dendrogram
        Heights are affinities (c - d), float64. The merges of all components are
        numbered N, N+1, ... in order of decreasing affinity, as the sparse algorithm
        numbers them (same order when the affinities have no ties).
    """
    from scipy.cluster.hierarchy import linkage
    from scipy.spatial.distance import squareform

    g = as_graph(graph)
    n = g.n_elements
    dense = g.to_sparse().toarray()
    offset = float(g.weight.max()) if g.weight.size else 0.0
    merges = []  # (affinity, merge rank within component, leaf set a, leaf set b)
    for c in range(g.n_components):
        members = np.flatnonzero(g.component == c)
        if members.size < 2:
            continue
        block = dense[np.ix_(members, members)]
        distances = offset - block
        np.fill_diagonal(distances, 0.0)
        condensed = squareform(distances, checks=False)
        z = (linkage_function or (lambda y: linkage(y, method="average")))(condensed)
        local = [np.array([x]) for x in members]
        for row, (a, b, d, _) in enumerate(z):
            ids_a, ids_b = local[int(a)], local[int(b)]
            local.append(np.concatenate([ids_a, ids_b]))
            merges.append((offset - d, c, row, ids_a, ids_b))
    # Merge order over all components: decreasing affinity (each component's own order kept).
    merges.sort(key=lambda item: (-item[0], item[1], item[2]))
    parent = np.arange(2 * n - g.n_components, dtype=np.int32)
    height = np.full(parent.size, np.inf)
    current = np.arange(n)  # the node holding each element now
    for q, (affinity, _, _, ids_a, ids_b) in enumerate(merges):
        k = n + q
        parent[current[ids_a[0]]] = k
        parent[current[ids_b[0]]] = k
        current[ids_a] = k
        current[ids_b] = k
        height[k] = affinity
    return Dendrogram(n, parent, height, "scipy")
