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

Comparing dendrograms by their structure (:func:`compare_dendrograms`, which the thesis's precision
study :func:`~course_lib.hac.api.precision_study` uses). Two correct runs can differ parent by
parent: a rounding difference changes which of two nearly equal affinities is the maximum, so later
clusters get other numbers (the thesis saw about 10% of the parents differ between its GPU and CPU
versions). The comparisons here look at what the tree means instead: the cophenetic correlation (do
both trees put each pair of elements together at similar heights?) and the agreement of the flat
clusters obtained by cutting both trees into the same number of clusters (adjusted Rand index, 1 =
identical partitions).
"""

from __future__ import annotations

import time

import numpy as np

from .._docs import fill_doc
from .._validate import check_array, check_dtype, check_int
from ._dendrogram import Dendrogram
from ._graph import CLUSTERING_PARAMETERS, as_graph

__all__ = ["STAGES", "adjusted_rand_index", "average_link_reference", "compare_dendrograms", "cophenetic_correlation",
           "scipy_average_linkage"]

#: The thesis's stages, in order (its Cuadro 1).
STAGES = ("matching", "suppression", "weighting", "collection", "integration", "fusion")


@fill_doc(parameters=CLUSTERING_PARAMETERS)
def average_link_reference(graph, dtype=np.float64, *, max_merges=None) -> Dendrogram:
    """The thesis's algorithm in NumPy: N - nC iterations, each a few passes over the M entries.

    {parameters}
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
    max_merges = None if max_merges is None else check_int(max_merges, "max_merges", minimum=0)
    return _reference_checked(as_graph(graph), check_dtype(dtype, "dtype"), max_merges)


def _reference_checked(g, dtype, max_merges=None):
    """:func:`average_link_reference` of a checked graph, dtype and ``max_merges`` (for
    :func:`course_lib.hac.cluster`, which checks them once)."""
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
        n_merges = min(n_merges, max_merges)
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


# ----------------------------------------------------------------------------------------------
# Comparing dendrograms: what the trees mean, not parent by parent
# ----------------------------------------------------------------------------------------------


def adjusted_rand_index(a, b) -> float:
    """Adjusted Rand index of two labelings of the same elements (1: identical, about 0: chance)."""
    a = check_array(a, "a", ndim=1, dtype="iu", allow_empty=False)
    b = check_array(b, "b", ndim=1, dtype="iu", allow_empty=False)
    a = np.unique(a, return_inverse=True)[1].ravel()
    b = np.unique(b, return_inverse=True)[1].ravel()
    if a.shape != b.shape:
        raise ValueError(f"the labelings must have the same shape, got {a.shape} and {b.shape}")
    n = a.size
    table = np.zeros((a.max(initial=-1) + 1, b.max(initial=-1) + 1), np.int64)
    np.add.at(table, (a, b), 1)

    def pairs(x):
        return float((x * (x - 1) // 2).sum())

    index, rows, cols = pairs(table), pairs(table.sum(1)), pairs(table.sum(0))
    total = n * (n - 1) / 2
    expected = rows * cols / total if total else 0.0
    maximum = (rows + cols) / 2
    if maximum == expected:  # both partitions trivial (all in one, or all apart): identical
        return 1.0
    return (index - expected) / (maximum - expected)


def _common_offset(a: Dendrogram, b: Dendrogram) -> float:
    heights = np.concatenate([a.merge_heights, b.merge_heights]).astype(np.float64)
    return float(heights.max()) if heights.size else 0.0


def cophenetic_correlation(a: Dendrogram, b: Dendrogram) -> float:
    """Pearson correlation of the cophenetic distances of two trees over the same elements.

    Both trees are turned into linkage matrices with the same offset c (distances
    c - affinity). NaN with fewer than 3 elements, 1.0 if both trees give every pair
    the same distance.
    """
    from scipy.cluster.hierarchy import cophenet

    if a.n_elements != b.n_elements:
        raise ValueError(f"the trees cluster different numbers of elements: {a.n_elements} and {b.n_elements}")
    if a.n_elements < 3:
        return float("nan")
    c = _common_offset(a, b)
    da, db = cophenet(a.linkage(c)), cophenet(b.linkage(c))
    if np.ptp(da) == 0 or np.ptp(db) == 0:
        return 1.0 if np.array_equal(da, db) else 0.0
    return float(np.corrcoef(da, db)[0, 1])


def compare_dendrograms(a: Dendrogram, b: Dendrogram, cuts=(2, 4, 8, 16)) -> dict:
    """Structure, heights and parents of two trees of the same elements.

    Parameters
    ----------
    a, b : Dendrogram
        ``b`` is the reference for the relative errors.
    cuts : sequence of int
        Numbers of clusters to cut both trees into (values outside [nC, N] are skipped).

    Returns
    -------
    dict
        ``cophenetic`` (correlation), ``agreement`` ({n_clusters: adjusted Rand index}),
        ``max_relative_height_error`` (merge by merge, against ``b``),
        ``parents_differing`` (fraction of nodes whose parent differs),
        ``same_tree`` (identical parents).
    """
    if a.n_elements != b.n_elements or a.n_nodes != b.n_nodes:
        raise ValueError(f"the trees differ in size: {a} and {b}")
    ha, hb = a.merge_heights.astype(np.float64), b.merge_heights.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.abs(ha - hb) / np.abs(hb)
    rel = np.where(hb == ha, 0.0, rel)
    agreement = {}
    low = max(a.n_components, b.n_components)
    for k in cuts:
        if low <= k <= a.n_elements:
            agreement[int(k)] = adjusted_rand_index(a.labels(n_clusters=k), b.labels(n_clusters=k))
    return {
        "cophenetic": cophenetic_correlation(a, b),
        "agreement": agreement,
        "max_relative_height_error": float(rel.max()) if rel.size else 0.0,
        "parents_differing": float(np.mean(a.parent != b.parent)) if a.n_nodes else 0.0,
        "same_tree": bool(np.array_equal(a.parent, b.parent)),
    }

