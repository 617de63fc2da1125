"""Comparing dendrograms by their structure, and the thesis's precision study.

Two correct runs can differ parent by parent: a rounding difference changes which of
two nearly equal affinities is the maximum, so later clusters get other numbers (the
thesis saw about 10% of the parents differ between its GPU and CPU versions). The
comparisons here look at what the tree means instead: the cophenetic correlation (do
both trees put each pair of elements together at similar heights?) and the agreement
of the flat clusters obtained by cutting both trees into the same number of clusters
(adjusted Rand index, 1 = identical partitions).
"""

from __future__ import annotations

import numpy as np

from ._dendrogram import Dendrogram

__all__ = ["adjusted_rand_index", "compare_dendrograms", "cophenetic_correlation", "precision_study"]


def adjusted_rand_index(a, b) -> float:
    """Adjusted Rand index of two labelings of the same elements (1: identical, about 0: chance)."""
    a = np.unique(np.asarray(a), return_inverse=True)[1]
    b = np.unique(np.asarray(b), return_inverse=True)[1]
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


def precision_study(graph, method="cpu", cuts=(2, 4, 8, 16, 32)) -> dict:
    """The thesis's study: the same clustering in float32 and in float64.

    Parameters
    ----------
    graph : graph accepted by :func:`~course_lib.hac.as_graph`
    method : str
        A method of :func:`~course_lib.hac.cluster` that takes a dtype (not ``"scipy"``).
    cuts : sequence of int

    Returns
    -------
    dict
        The :func:`compare_dendrograms` of float32 against float64, plus
        ``relative_error`` (array, merge by merge), ``top_relative_error`` (largest over
        the last 10% of the merges, the top of the tree) and ``bottom_relative_error``
        (over the first 90%), and both trees (``float32``, ``float64``).
    """
    from .api import cluster

    if method == "scipy":
        raise ValueError("method must take a dtype: 'scipy' works in float64 only")
    t64 = cluster(graph, method, dtype=np.float64)
    t32 = cluster(graph, method, dtype=np.float32)
    out = compare_dendrograms(t32, t64, cuts)
    h32, h64 = t32.merge_heights.astype(np.float64), t64.merge_heights
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(h32 == h64, 0.0, np.abs(h32 - h64) / np.abs(h64))
    top = max(1, rel.size // 10) if rel.size else 0
    out.update(relative_error=rel, float32=t32, float64=t64,
               top_relative_error=float(rel[-top:].max()) if top else 0.0,
               bottom_relative_error=float(rel[:-top].max()) if rel.size > top else 0.0)
    return out
