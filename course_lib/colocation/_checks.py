"""Argument checks shared by the public functions of Unit 8 (built on :mod:`course_lib._validate`)."""

from __future__ import annotations

import numpy as np

from .._validate import check_array, check_float, check_int
from ._types import MAX_PATTERN

__all__ = ["check_features", "check_inputs", "check_neighbour_distance", "check_pattern", "check_points"]


def check_points(points, name="points") -> np.ndarray:
    """Finite coordinates of shape (N, 2) (any real dtype), as float64."""
    return check_array(points, name, shape=(None, 2), dtype="iuf", finite=True).astype(np.float64)


def check_neighbour_distance(r, name="r") -> float:
    """The neighbour distance: a finite number > 0."""
    return check_float(r, name, minimum=0.0, min_inclusive=False)


def check_features(features, n_points, n_features=None, name="features") -> np.ndarray:
    """Feature ids of shape (n_points,), integers in ``[0, n_features)``, as int32."""
    features = check_array(features, name, ndim=1, dtype="iu")
    if len(features) != n_points:
        raise ValueError(f"{name} must have one entry per point: got {len(features)} {name} for {n_points} points")
    if len(features):
        low, high = int(features.min()), int(features.max())
        if low < 0:
            raise ValueError(f"{name} must be non-negative feature ids, got {low}")
        if n_features is not None and high >= n_features:
            raise ValueError(f"{name} must be feature ids below n_features = {n_features}, got {high}")
        if high > np.iinfo(np.int32).max or len(features) >= 2**31:
            raise ValueError(f"{name}: too many instances or feature ids for int32 indices")
    return features.astype(np.int32)


def check_pattern(pattern, name="pattern", n_features=None) -> tuple:
    """A pattern: a sorted tuple of at least one distinct feature id (below ``n_features`` if given)."""
    if isinstance(pattern, (str, bytes)) or not hasattr(pattern, "__len__") or len(pattern) == 0:
        raise ValueError(f"{name} must be a non-empty sequence of feature ids, got {pattern!r}")
    maximum = None if n_features is None else n_features - 1
    ids = tuple(check_int(f, name, minimum=0, maximum=maximum) for f in pattern)
    if list(ids) != sorted(set(ids)):
        raise ValueError(f"{name} must hold distinct feature ids in increasing order, got {ids}")
    return ids


def check_inputs(points, features, r, threshold, n_features=None, max_size=None):
    """Validate the arguments of :func:`~course_lib.colocation.mine`.

    Returns
    -------
    points : ndarray of shape (N, 2), float64
    features : ndarray of shape (N,), int32
    r, threshold : float
    n_features : int
    max_size : int
    """
    points = check_points(points)
    features = check_features(features, len(points))
    r = check_neighbour_distance(r)
    threshold = check_float(threshold, "threshold", minimum=0.0, maximum=1.0, min_inclusive=False)
    seen = int(features.max()) + 1 if len(features) else 0
    if n_features is None:
        n_features = seen
    else:
        n_features = check_int(n_features, "n_features", minimum=max(seen, 1))
    max_size = MAX_PATTERN if max_size is None else check_int(max_size, "max_size", minimum=2, maximum=MAX_PATTERN)
    return points, features, r, threshold, n_features, max_size
