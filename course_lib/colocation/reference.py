"""Trusted reference for co-location mining: SciPy's k-d tree and plain Python sets.

Definitions (Huang, Shekhar & Xiong 2004; the source's notation):

- two instances are *neighbours* if their Euclidean distance is at most ``r``;
- a *row instance* of a pattern (a set of features) is a set of instances, one of each feature
  of the pattern, that are pairwise neighbours (a clique);
- the *participation ratio* of feature ``f`` in pattern ``c`` is the fraction of ``f``'s
  instances that appear in at least one row instance of ``c``;
- the *participation index* ``PI(c)`` is the smallest participation ratio over ``c``'s features;
- ``c`` is *prevalent* if ``PI(c) >= threshold``. PI never grows when a feature is added, so
  candidates of size k + 1 are built from prevalent patterns of size k (Apriori).

Neighbour pairs come from :meth:`scipy.spatial.cKDTree.query_pairs`; instance tables are built
with Python sets. Slow, obviously right, and independent of the grid used by every other version.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
from scipy.spatial import cKDTree

from .._validate import check_int
from ._checks import check_features, check_neighbour_distance, check_pattern, check_points

__all__ = ["apriori_candidates", "instance_table_reference", "mine_reference", "neighbour_pairs_reference",
           "participation_index_reference"]


def neighbour_pairs_reference(points, r):
    """All pairs ``(i, j)``, ``i < j``, with ``|p_i - p_j| <= r``.

    Parameters
    ----------
    points : ndarray of shape (N, 2), float64
    r : float

    Returns
    -------
    ndarray of shape (P, 2), int64, rows sorted
    """
    points = check_points(points)
    r = check_neighbour_distance(r)
    if len(points) < 2:
        return np.zeros((0, 2), np.int64)
    pairs = cKDTree(points).query_pairs(r, output_type="ndarray")
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))] if len(pairs) else np.zeros((0, 2), np.int64)


def _neighbour_sets(points, r):
    adjacent = [set() for _ in range(len(points))]
    for i, j in neighbour_pairs_reference(points, r):
        adjacent[i].add(int(j))
        adjacent[j].add(int(i))
    return adjacent


def instance_table_reference(points, features, r, pattern):
    """Every row instance of ``pattern`` (a sorted tuple of features).

    Parameters
    ----------
    points : array_like of shape (N, 2)
    features : array_like of shape (N,), integer ids
    r : float
        Neighbour distance (> 0).
    pattern : sequence of int
        Sorted distinct feature ids.

    Returns
    -------
    list of tuple of int
        Instance ids, one per feature of the pattern in the pattern's order, sorted.

    Examples
    --------
    >>> instance_table_reference([[0, 0], [1, 0], [3, 0], [3.5, 0]], [0, 1, 0, 1], 1.0, (0, 1))
    [(0, 1), (2, 3)]
    """
    points, features, r, pattern = _checked(points, features, r, pattern)
    return _instance_table(points, features, r, pattern)


def _checked(points, features, r, pattern):
    points = check_points(points)
    return points, check_features(features, len(points)), check_neighbour_distance(r), check_pattern(pattern)


def _instance_table(points, features, r, pattern, adjacent=None):
    adjacent = _neighbour_sets(points, r) if adjacent is None else adjacent
    rows = [(int(i),) for i in np.flatnonzero(features == pattern[0])]
    for f in pattern[1:]:
        # A new member must be a neighbour of the first member, then of all the others.
        rows = [row + (j,) for row in rows for j in sorted(adjacent[row[0]])
                if features[j] == f and all(j in adjacent[m] for m in row[1:])]
    return sorted(rows)


def participation_index_reference(points, features, r, pattern):
    """Participation ratios and index of ``pattern``.

    Returns
    -------
    pi : float
        The participation index (0 when a feature has no instance).
    ratios : ndarray of shape (len(pattern),), float64
    """
    points, features, r, pattern = _checked(points, features, r, pattern)
    rows = _instance_table(points, features, r, pattern)
    ratios = np.zeros(len(pattern))
    for pos, f in enumerate(pattern):
        total = int(np.count_nonzero(features == f))
        ratios[pos] = len({row[pos] for row in rows}) / total if total else 0.0
    return float(ratios.min()) if len(ratios) else 0.0, ratios


def apriori_candidates(prevalent, k):
    """Candidates of size ``k + 1`` from the prevalent patterns of size ``k`` (sorted tuples).

    Two prevalent patterns that share their first ``k - 1`` features are joined; a candidate is
    kept only if all its size-``k`` subsets are prevalent.

    Returns
    -------
    list of tuple of int, sorted

    Examples
    --------
    >>> apriori_candidates([(0, 1), (0, 2), (1, 2), (1, 3)], 2)
    [(0, 1, 2)]
    """
    k = check_int(k, "k", minimum=1)
    if isinstance(prevalent, (str, bytes)) or not hasattr(prevalent, "__iter__"):
        raise ValueError(f"prevalent must be a sequence of patterns, got {prevalent!r}")
    prevalent = [check_pattern(p, "prevalent") for p in prevalent]
    if any(len(p) != k for p in prevalent):
        raise ValueError(f"prevalent must hold patterns of size k = {k}")
    prevalent = sorted(set(prevalent))
    known = set(prevalent)
    out = []
    for a, b in combinations(prevalent, 2):
        if a[:-1] == b[:-1]:
            cand = a + (b[-1],) if a[-1] < b[-1] else b + (a[-1],)
            if all(sub in known for sub in combinations(cand, k)):
                out.append(cand)
    return sorted(set(out))


def mine_reference(points, features, r, threshold, *, n_features=None, max_size=None):
    """All prevalent patterns of size >= 2 and their participation index.

    Parameters
    ----------
    points : ndarray of shape (N, 2), float64
    features : ndarray of shape (N,), int
    r : float
    threshold : float in (0, 1]
    n_features : int, optional
        Number of features (default ``features.max() + 1``).
    max_size : int, optional
        Largest pattern size to look for (default and at most 8, as the other methods).

    Returns
    -------
    dict
        ``{pattern: PI}`` for every prevalent pattern, patterns as sorted tuples of features.
    """
    from ._checks import check_inputs

    return _mine_reference_checked(*check_inputs(points, features, r, threshold, n_features, max_size))


def _mine_reference_checked(points, features, r, threshold, n_features, max_size):
    """:func:`mine_reference` of inputs :func:`~course_lib.colocation.check_inputs` has checked."""
    adjacent = _neighbour_sets(points, r)
    counts = np.bincount(features, minlength=n_features) if len(features) else np.zeros(n_features, int)
    present = [f for f in range(n_features) if counts[f] > 0]
    found = {}
    candidates = [tuple(c) for c in combinations(present, 2)]
    k = 2
    while candidates and k <= max_size:
        prevalent = []
        for cand in candidates:
            rows = _instance_table(points, features, r, cand, adjacent)
            pi = min(len({row[pos] for row in rows}) / counts[f] for pos, f in enumerate(cand))
            if pi >= threshold:
                found[cand] = float(pi)
                prevalent.append(cand)
        candidates = apriori_candidates(prevalent, k)
        k += 1
    return dict(sorted(found.items()))
