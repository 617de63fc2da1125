"""Data of Unit 5: awkward small graphs, a seeded generator up to the thesis's size, and real fibers.

* Small graphs that are awkward on purpose: :func:`path_graph`, :func:`star_graph`,
  :func:`complete_graph`, :func:`components_graph` (disconnected, optionally with isolated
  elements), :func:`tied_graph` (integer affinities: many ties), :func:`random_graph`.
* :func:`planted_graph`: a sparse affinity graph with planted groups and subgroups (the
  bundles and sub-bundles a clustering should find), any size up to and beyond the
  thesis's N = 12,119 elements and M = 705,352 entries (:func:`thesis_size_graph`).
* Real white-matter fibers that ship inside DIPY's wheel (no download):
  :func:`load_fibers` reads the fornix (``tracks300.trk``, 300 fibers) or three labelled
  bundles of one of five subjects (``minimal_bundles.zip``: arcuate fasciculus,
  corticospinal tract, forceps major; 50 fibers each). :func:`fiber_graph` is the
  thesis's pipeline at small scale: fiber endpoints -> k-means parcels -> affinity
  between parcels A and B = the number of fibers joining them.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._validate import check_array, check_choice, check_flag, check_float, check_int, check_seed
from ._graph import AffinityGraph, as_graph, from_pairs

__all__ = [
    "BUNDLE_NAMES",
    "THESIS_N",
    "THESIS_M",
    "FiberGraph",
    "Fibers",
    "complete_graph",
    "components_graph",
    "fiber_graph",
    "fiber_bundles",
    "kmeans",
    "load_fibers",
    "path_graph",
    "planted_graph",
    "random_graph",
    "star_graph",
    "thesis_size_graph",
    "tied_graph",
]

#: The thesis's data set: 12,119 parcels, 705,352 stored affinities (both directions).
THESIS_N = 12_119
THESIS_M = 705_352
#: The labelled bundles of DIPY's ``minimal_bundles.zip``.
BUNDLE_NAMES = ("AF_L", "CST_R", "CC_ForcepsMajor")


def _weights(rng, size):
    """Distinct affinities in (0.05, 1.05): no ties (with probability 1)."""
    return 0.05 + rng.random(size)


def path_graph(n, seed=0) -> AffinityGraph:
    """A path 0 - 1 - ... - (n-1) with random distinct affinities (n >= 1)."""
    n = check_int(n, "n", minimum=1)
    rng = np.random.default_rng(check_seed(seed))
    i = np.arange(n - 1)
    return from_pairs(n, i, i + 1, _weights(rng, n - 1))


def star_graph(n, seed=0) -> AffinityGraph:
    """Element 0 joined to each of the n - 1 others, random distinct affinities (n >= 1)."""
    n = check_int(n, "n", minimum=1)
    rng = np.random.default_rng(check_seed(seed))
    leaves = np.arange(1, n)
    return from_pairs(n, np.zeros(n - 1, np.int64), leaves, _weights(rng, n - 1))


def complete_graph(n, seed=0) -> AffinityGraph:
    """Every pair joined, random distinct affinities (n >= 1)."""
    n = check_int(n, "n", minimum=1)
    rng = np.random.default_rng(check_seed(seed))
    i, j = np.triu_indices(n, 1)
    return from_pairs(n, i, j, _weights(rng, i.size))


def random_graph(n, density=0.3, seed=0, *, connected=True) -> AffinityGraph:
    """Each pair present with probability ``density``; a random spanning path keeps it connected.

    Parameters
    ----------
    n : int
    density : float in [0, 1]
    seed : int or None
    connected : bool
        Add a path through all elements in a random order (the graph is then connected).
    """
    n = check_int(n, "n", minimum=1)
    density = check_float(density, "density", minimum=0, maximum=1)
    connected = check_flag(connected, "connected")
    rng = np.random.default_rng(check_seed(seed))
    i, j = np.triu_indices(n, 1)
    keep = rng.random(i.size) < density
    if connected and n > 1:
        order = rng.permutation(n)
        a, b = np.minimum(order[:-1], order[1:]), np.maximum(order[:-1], order[1:])
        keep[a * n - a * (a + 1) // 2 + (b - a - 1)] = True  # index of (a, b) in triu order
    return from_pairs(n, i[keep], j[keep], _weights(rng, int(keep.sum())))


def components_graph(sizes=(5, 4, 3), n_isolated=2, density=0.6, seed=0) -> AffinityGraph:
    """Disconnected: one connected random graph per size, then ``n_isolated`` elements with no pair.

    The elements of the components are interleaved (element e belongs to component
    ``e % len(sizes)`` while all are still growing), so no component is a block of
    consecutive ids.
    """
    rng = np.random.default_rng(check_seed(seed))
    n_isolated = check_int(n_isolated, "n_isolated", minimum=0)
    sizes = [check_int(s, "sizes", minimum=1) for s in sizes]
    total = sum(sizes) + n_isolated
    ids = rng.permutation(total)
    parts, start = [], 0
    for s in sizes:
        parts.append(np.sort(ids[start:start + s]))
        start += s
    src, dst, w = [], [], []
    for members in parts:
        g = random_graph(len(members), density, seed=int(rng.integers(2**31)))
        src.append(members[g.src])
        dst.append(members[g.dst])
        w.append(g.weight)
    return as_graph((np.concatenate(src), np.concatenate(dst), np.concatenate(w)), n_elements=total)


def tied_graph(n, density=0.5, levels=3, seed=0) -> AffinityGraph:
    """Connected, with affinities drawn from ``levels`` integers: many exact ties (fiber counts look like this)."""
    g = random_graph(n, density, seed)
    rng = np.random.default_rng(check_seed(seed))
    levels = check_int(levels, "levels", minimum=1)
    upper = g.src < g.dst
    values = rng.integers(1, levels + 1, int(upper.sum())).astype(np.float64)
    return from_pairs(n, g.src[upper], g.dst[upper], values)


def planted_graph(n_elements=2000, n_entries=60_000, n_groups=8, n_subgroups=4, seed=0, *,
                  p_subgroup=0.5, p_group=0.3):
    """A sparse affinity graph with planted groups and subgroups, exactly the size asked for.

    Each element belongs to one of ``n_groups`` groups (bundles) and, inside it, to one
    of ``n_subgroups`` subgroups. Pairs are drawn until there are ``n_entries / 2``
    distinct ones: a partner from the same subgroup with probability ``p_subgroup``,
    from the same group (another subgroup) with ``p_group``, anywhere otherwise; a
    random spanning path is always included, so the graph is connected. Affinities:
    about 3 within a subgroup, 1.5 within a group, 0.5 across groups, with noise (all
    distinct, positive).

    Parameters
    ----------
    n_elements : int
        N >= 2.
    n_entries : int
        M, even, between 2 (N - 1) (the spanning path) and N (N - 1).
    n_groups, n_subgroups : int
    seed : int or None
    p_subgroup, p_group : float
        Probabilities of the two kinds of partner (their sum at most 1).

    Returns
    -------
    graph : AffinityGraph
    groups : ndarray of shape (N, 2), int32
        Group and subgroup of each element.
    """
    n = check_int(n_elements, "n_elements", minimum=2)
    m = check_int(n_entries, "n_entries", minimum=2 * (n - 1), maximum=n * (n - 1))
    if m % 2:
        raise ValueError(f"n_entries must be even (both directions of every pair are stored), got {m}")
    n_groups = check_int(n_groups, "n_groups", minimum=1, maximum=n)
    n_subgroups = check_int(n_subgroups, "n_subgroups", minimum=1)
    p_subgroup = check_float(p_subgroup, "p_subgroup", minimum=0, maximum=1)
    p_group = check_float(p_group, "p_group", minimum=0, maximum=1 - p_subgroup)
    rng = np.random.default_rng(check_seed(seed))
    group = rng.integers(0, n_groups, n)
    sub = rng.integers(0, n_subgroups, n)
    cell = group * n_subgroups + sub
    # Members of each cell (subgroup) and group, contiguous: a random member is one lookup.
    cell_members = np.argsort(cell, kind="stable")
    cell_start = np.searchsorted(cell[cell_members], np.arange(n_groups * n_subgroups))
    cell_size = np.bincount(cell, minlength=n_groups * n_subgroups)
    group_members = np.argsort(group, kind="stable")
    group_start = np.searchsorted(group[group_members], np.arange(n_groups))
    group_size = np.bincount(group, minlength=n_groups)
    order = rng.permutation(n)
    keys = np.unique(np.minimum(order[:-1], order[1:]).astype(np.int64) * n + np.maximum(order[:-1], order[1:]))
    wanted = m // 2
    while keys.size < wanted:
        batch = 2 * (wanted - keys.size) + 64
        a = rng.integers(0, n, batch)
        kind = rng.random(batch)
        b = rng.integers(0, n, batch)
        u = rng.random(batch)
        in_cell = kind < p_subgroup
        c = cell[a[in_cell]]
        b[in_cell] = cell_members[cell_start[c] + (u[in_cell] * cell_size[c]).astype(np.int64)]
        in_group = (kind >= p_subgroup) & (kind < p_subgroup + p_group)
        gr = group[a[in_group]]
        b[in_group] = group_members[group_start[gr] + (u[in_group] * group_size[gr]).astype(np.int64)]
        ok = a != b
        fresh = np.minimum(a[ok], b[ok]).astype(np.int64) * n + np.maximum(a[ok], b[ok])
        fresh = np.setdiff1d(np.unique(fresh), keys, assume_unique=True)
        room = wanted - keys.size
        if fresh.size > room:
            fresh = rng.choice(fresh, room, replace=False)
        keys = np.union1d(keys, fresh)
    i, j = keys // n, keys % n
    same_sub = cell[i] == cell[j]
    same_group = group[i] == group[j]
    mean = np.where(same_sub, 3.0, np.where(same_group, 1.5, 0.5))
    w = mean * (0.75 + 0.5 * rng.random(i.size))
    return from_pairs(n, i, j, w), np.stack([group, sub], axis=1).astype(np.int32)


def thesis_size_graph(seed=0):
    """:func:`planted_graph` at the thesis's size: N = 12,119, M = 705,352 (returns graph, groups)."""
    return planted_graph(THESIS_N, THESIS_M, n_groups=40, n_subgroups=8, seed=seed)


# --------------------------------------------------------------------------------------
# Real fibers from DIPY's wheel
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Fibers:
    """Streamlines of a tractography.

    Attributes
    ----------
    name : str
    streamlines : list of ndarray of shape (n_i, 3), float32
        Points of each fiber in millimetres.
    bundle : ndarray of shape (F,), int32, or None
        The known bundle of each fiber (index into ``bundle_names``), when labelled.
    bundle_names : tuple of str
    """

    name: str
    streamlines: list = field(repr=False)
    bundle: np.ndarray | None = field(default=None, repr=False)
    bundle_names: tuple = ()

    @property
    def n_fibers(self) -> int:
        return len(self.streamlines)

    def endpoints(self) -> np.ndarray:
        """First and last point of each fiber, shape (F, 2, 3), float64."""
        return np.array([[s[0], s[-1]] for s in self.streamlines], dtype=np.float64)


def _dipy_files() -> Path:
    try:
        import dipy
    except ImportError as exc:  # pragma: no cover - dipy is a dependency
        raise RuntimeError("the real fibers come from DIPY's wheel: pip install dipy") from exc
    return Path(dipy.__file__).parent / "data" / "files"


def _read_trk(source):
    import nibabel as nib

    return [np.asarray(s, dtype=np.float32) for s in nib.streamlines.load(source).streamlines]


def load_fibers(name="bundles", subject=1) -> Fibers:
    """Real fibers shipped inside DIPY's wheel, read with nibabel (no download).

    Parameters
    ----------
    name : {"bundles", "fornix"}
        ``"bundles"``: three labelled bundles of one subject (``minimal_bundles.zip``:
        AF_L, CST_R and CC_ForcepsMajor, 50 fibers each, 20 points per fiber);
        ``"fornix"``: 300 fibers of the fornix (``tracks300.trk``), unlabelled.
    subject : int
        1 to 5, for ``"bundles"``.

    Returns
    -------
    Fibers
    """
    name = check_choice(name, "name", ("bundles", "fornix"))
    files = _dipy_files()
    if name == "fornix":
        return Fibers("fornix", _read_trk(str(files / "tracks300.trk")))
    subject = check_int(subject, "subject", minimum=1, maximum=5)
    streamlines, bundle = [], []
    with zipfile.ZipFile(files / "minimal_bundles.zip") as archive:
        for b, bundle_name in enumerate(BUNDLE_NAMES):
            fibers = _read_trk(io.BytesIO(archive.read(f"sub_{subject}/{bundle_name}.trk")))
            streamlines += fibers
            bundle += [b] * len(fibers)
    return Fibers(f"bundles (subject {subject})", streamlines, np.array(bundle, np.int32), BUNDLE_NAMES)


def kmeans(points, k, seed=0, iterations=50):
    """Seeded k-means (k-means++ start, Lloyd iterations; an emptied cluster restarts at the worst point).

    Parameters
    ----------
    points : ndarray of shape (P, D)
    k : int
        1 <= k <= P.
    seed : int or None
    iterations : int

    Returns
    -------
    labels : ndarray of shape (P,), int32
    centroids : ndarray of shape (k, D), float64
    """
    x = check_array(points, "points", ndim=2, dtype="fiu", finite=True, allow_empty=False).astype(np.float64)
    k = check_int(k, "k", minimum=1, maximum=len(x))
    iterations = check_int(iterations, "iterations", minimum=1)
    rng = np.random.default_rng(check_seed(seed))
    centroids = [x[rng.integers(len(x))]]
    d2 = ((x - centroids[0]) ** 2).sum(1)
    for _ in range(1, k):
        total = d2.sum()
        pick = rng.choice(len(x), p=d2 / total) if total > 0 else rng.integers(len(x))
        centroids.append(x[pick])
        d2 = np.minimum(d2, ((x - x[pick]) ** 2).sum(1))
    centroids = np.array(centroids)
    labels = np.zeros(len(x), np.int64)
    for _ in range(iterations):
        dist = ((x[:, None, :] - centroids[None, :, :]) ** 2).sum(2)
        new = dist.argmin(1)
        for c in range(k):
            members = new == c
            if members.any():
                centroids[c] = x[members].mean(0)
            else:  # restart an empty cluster at the point farthest from its centroid
                worst = dist[np.arange(len(x)), new].argmax()
                centroids[c] = x[worst]
                new[worst] = c
        if np.array_equal(new, labels):
            break
        labels = new
    return labels.astype(np.int32), centroids


@dataclass(frozen=True)
class FiberGraph:
    """The thesis's pipeline at small scale: fibers -> parcels -> affinity graph.

    Attributes
    ----------
    graph : AffinityGraph
        One element per parcel; affinity(A, B) = number of fibers with one end in A and
        the other in B.
    endpoint_parcel : ndarray of shape (F, 2), int32
        Parcel of each fiber's first and last point.
    centroids : ndarray of shape (P, 3)
        Centre of each parcel (mm).
    fibers : Fibers
    """

    graph: AffinityGraph
    endpoint_parcel: np.ndarray = field(repr=False)
    centroids: np.ndarray = field(repr=False)
    fibers: Fibers = field(repr=False)


def fiber_graph(fibers=None, n_parcels=40, seed=0) -> FiberGraph:
    """Parcels by k-means of the fiber endpoints; affinity = fibers between two parcels.

    Parameters
    ----------
    fibers : Fibers, optional
        Default :func:`load_fibers` ``("bundles")``.
    n_parcels : int
        Parcels (graph elements), at most twice the number of fibers.
    seed : int or None
        Seed of the k-means.

    Returns
    -------
    FiberGraph
        A fiber whose two ends fall in the same parcel adds nothing (no self-loops).
    """
    fibers = load_fibers() if fibers is None else fibers
    ends = fibers.endpoints()
    n_parcels = check_int(n_parcels, "n_parcels", minimum=1, maximum=2 * fibers.n_fibers)
    labels, centroids = kmeans(ends.reshape(-1, 3), n_parcels, seed)
    endpoint_parcel = labels.reshape(-1, 2)
    a, b = endpoint_parcel[:, 0].astype(np.int64), endpoint_parcel[:, 1].astype(np.int64)
    keep = a != b
    lo, hi = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
    pair, counts = np.unique(lo * n_parcels + hi, return_counts=True)
    graph = from_pairs(n_parcels, pair // n_parcels, pair % n_parcels, counts.astype(np.float64))
    return FiberGraph(graph, endpoint_parcel.astype(np.int32), centroids, fibers)


def fiber_bundles(fiber_graph_, parcel_labels) -> np.ndarray:
    """Bundle of each fiber from a clustering of the parcels: the cluster of its first endpoint's parcel.

    Parameters
    ----------
    fiber_graph_ : FiberGraph
    parcel_labels : ndarray of shape (P,)
        Cluster of each parcel (e.g. ``tree.labels(n_clusters=3)``).

    Returns
    -------
    ndarray of shape (F,), int32
    """
    labels = check_array(parcel_labels, "parcel_labels", ndim=1, dtype="iu")
    if labels.size and labels.min() < 0:
        raise ValueError(f"parcel_labels must be cluster numbers >= 0, got {labels.min()}")
    if labels.shape != (fiber_graph_.graph.n_elements,):
        raise ValueError(f"parcel_labels must have shape ({fiber_graph_.graph.n_elements},), got {labels.shape}")
    return labels[fiber_graph_.endpoint_parcel[:, 0]].astype(np.int32)
