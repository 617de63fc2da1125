"""Seeded spatial data for co-location mining: planted feature groups plus noise.

A *feature* is an event type (crime, bar, bus stop...); each of its *instances* is a point in
the plane. :func:`planted_colocations` places groups of features close together on purpose
(every instance of a planted group lies within ``r / 2`` of a shared centre, so all of them are
pairwise neighbours at distance ``r``) and scatters the rest uniformly, so the prevalent patterns
are known in advance. It scales to millions of instances.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validate import check_float, check_int, check_seed

__all__ = ["SpatialData", "planted_colocations", "uniform_features"]


@dataclass(frozen=True)
class SpatialData:
    """Points with a feature each.

    Attributes
    ----------
    points : ndarray of shape (N, 2), float64
        Coordinates of the instances.
    features : ndarray of shape (N,), int32
        Feature (event type) of each instance, in ``[0, n_features)``.
    n_features : int
    planted : tuple of tuple of int
        The feature groups placed together on purpose (sorted tuples).
    r : float
        The neighbour distance the data were made for.
    """

    points: np.ndarray
    features: np.ndarray
    n_features: int
    planted: tuple = field(default=())
    r: float = 1.0

    def __len__(self):
        return len(self.features)


def planted_colocations(n_instances=2000, n_features=6, *, groups=((0, 1), (2, 3, 4)), r=1.0,
                        extent=None, group_fraction=0.6, seed=0) -> SpatialData:
    """Instances of ``n_features`` features with co-located groups planted.

    Each planted group gets ``round(group_fraction * share)`` *sites*: a centre drawn uniformly
    in the square, with one instance of every feature of the group within ``r / 2`` of it
    (so a site is a row instance of the group). All other instances are uniform noise.
    Features not in any group are pure noise.

    Parameters
    ----------
    n_instances : int
        Total number of instances N (>= 0).
    n_features : int
        Number of features F (>= 1).
    groups : sequence of sequences of int
        The planted feature groups (each of size >= 2, features in ``[0, F)``).
    r : float
        Neighbour distance (> 0).
    extent : float, optional
        Side of the square; default chosen so that noise instances have about 0.3 neighbours
        of each other feature on average.
    group_fraction : float
        Fraction of a planted feature's instances that sit on sites (in [0, 1]).
    seed : int
        Seed of the random generator.

    Returns
    -------
    SpatialData
    """
    n = check_int(n_instances, "n_instances", minimum=0)
    n_features = check_int(n_features, "n_features", minimum=1)
    r = check_float(r, "r", minimum=0.0, min_inclusive=False)
    group_fraction = check_float(group_fraction, "group_fraction", minimum=0.0, maximum=1.0)
    seed = check_seed(seed)
    planted = []
    for g in groups:
        g = tuple(sorted(check_int(f, "groups", minimum=0, maximum=n_features - 1) for f in g))
        if len(g) < 2 or len(set(g)) != len(g):
            raise ValueError(f"groups must hold groups of at least 2 distinct features, got {g}")
        planted.append(g)
    if extent is None:
        # Expected neighbours of one feature's instance among another feature's: (N/F) pi r^2 / extent^2.
        extent = max(r, float(np.sqrt(max(n, 1) / n_features * np.pi * r * r / 0.3)))
    extent = check_float(extent, "extent", minimum=0.0, min_inclusive=False)
    rng = np.random.default_rng(seed)
    per_feature = np.full(n_features, n // n_features, np.int64)
    per_feature[: n % n_features] += 1
    pts, feats = [], []
    remaining = per_feature.copy()
    for g in planted:
        # Sites limited by the smallest remaining feature of the group.
        sites = int(min(round(group_fraction * per_feature[f]) for f in g))
        sites = min(sites, int(min(remaining[f] for f in g)))
        if sites == 0:
            continue
        centres = rng.uniform(r / 2, max(extent - r / 2, r / 2), size=(sites, 2))
        for f in g:
            # Uniform in a disc of radius r / 2 (sqrt for uniform area), pairwise within r.
            rad = (r / 2) * np.sqrt(rng.uniform(0, 1, sites)) * (1 - 1e-9)
            ang = rng.uniform(0, 2 * np.pi, sites)
            pts.append(centres + np.column_stack([rad * np.cos(ang), rad * np.sin(ang)]))
            feats.append(np.full(sites, f, np.int32))
            remaining[f] -= sites
    for f in range(n_features):
        if remaining[f] > 0:
            pts.append(rng.uniform(0, extent, size=(int(remaining[f]), 2)))
            feats.append(np.full(int(remaining[f]), f, np.int32))
    points = np.concatenate(pts) if pts else np.zeros((0, 2))
    features = np.concatenate(feats) if feats else np.zeros(0, np.int32)
    order = rng.permutation(len(features))  # instances come in no particular order
    return SpatialData(np.ascontiguousarray(points[order], dtype=np.float64),
                       np.ascontiguousarray(features[order], dtype=np.int32),
                       n_features, tuple(planted), r)


def uniform_features(n_instances=1000, n_features=4, *, extent=10.0, seed=0) -> SpatialData:
    """Instances of every feature scattered uniformly (no planted structure).

    Returns
    -------
    SpatialData
        ``points`` uniform in ``[0, extent)^2``, features drawn uniformly in ``[0, F)``.
    """
    n = check_int(n_instances, "n_instances", minimum=0)
    n_features = check_int(n_features, "n_features", minimum=1)
    extent = check_float(extent, "extent", minimum=0.0, min_inclusive=False)
    rng = np.random.default_rng(check_seed(seed))
    points = rng.uniform(0, extent, size=(n, 2))
    features = rng.integers(0, n_features, size=n).astype(np.int32)
    return SpatialData(points, features, n_features, (), 1.0)
