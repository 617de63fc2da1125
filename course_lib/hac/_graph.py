"""The input of the clustering: a symmetric, sparse, weighted affinity graph, validated once.

The thesis stores the graph as two vectors of endpoints (``edges[0]``, ``edges[1]``)
and one of affinities, with both directions of every pair present: M entries for
M / 2 pairs. :func:`as_graph` turns an edge list or a SciPy sparse matrix into that
form and refuses what the algorithm cannot cluster, with a message naming the
problem: non-symmetric or duplicated entries, negative or non-finite affinities,
self-loops, indices out of range.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from .._validate import check_array, check_int

__all__ = ["AffinityGraph", "as_graph", "from_pairs"]

#: The parameters of the clustering functions, for their docstrings (:func:`course_lib._docs.fill_doc`).
CLUSTERING_PARAMETERS = """
Parameters
----------
graph : graph accepted by :func:`~course_lib.hac.as_graph`
dtype : float32 or float64
"""

#: Largest graph the int32 indices of the kernels can address (2N - 1 cluster ids, M entries).
MAX_ENTRIES = 2**31 - 1


@dataclass(frozen=True)
class AffinityGraph:
    """A symmetric affinity graph in the thesis's edge-list form.

    Attributes
    ----------
    n_elements : int
        N, the number of elements (vertices) to cluster.
    src, dst : ndarray of shape (M,), int32
        Endpoints of each stored entry; both directions of every pair are stored, sorted
        by (src, dst).
    weight : ndarray of shape (M,), float64
        Affinity of each entry (>= 0, finite); ``weight`` of (i, j) equals that of (j, i).
    component : ndarray of shape (N,), int32
        Connected component of each element (isolated elements are components of their own).
    """

    n_elements: int
    src: np.ndarray = field(repr=False)
    dst: np.ndarray = field(repr=False)
    weight: np.ndarray = field(repr=False)
    component: np.ndarray = field(repr=False)

    @property
    def n_entries(self) -> int:
        """M: stored entries, both directions counted."""
        return int(self.src.size)

    @property
    def n_pairs(self) -> int:
        """M / 2: distinct pairs with an affinity."""
        return self.n_entries // 2

    @property
    def n_components(self) -> int:
        """nC: connected components; the clustering performs N - nC merges."""
        return int(self.component.max()) + 1 if self.n_elements else 0

    @property
    def n_nodes(self) -> int:
        """2N - nC: leaves plus merges, the length of ``parent`` and ``height``."""
        return 2 * self.n_elements - self.n_components

    def to_sparse(self) -> sp.csr_matrix:
        """The affinities as an (N, N) ``scipy.sparse.csr_matrix`` (float64)."""
        n = self.n_elements
        return sp.csr_matrix((self.weight, (self.src, self.dst)), shape=(n, n))

    def __repr__(self):
        return (f"AffinityGraph(N={self.n_elements}, M={self.n_entries} entries ({self.n_pairs} pairs), "
                f"components={self.n_components})")


def _components(n, src, dst) -> np.ndarray:
    if n == 0:
        return np.zeros(0, np.int32)
    adjacency = sp.csr_matrix((np.ones(src.size, np.int8), (src, dst)), shape=(n, n))
    _, labels = csgraph.connected_components(adjacency, directed=False)
    return labels.astype(np.int32)


def from_pairs(n_elements, i, j, w) -> AffinityGraph:
    """A graph from one entry per pair: (i[p], j[p]) with affinity w[p], mirrored here.

    Parameters
    ----------
    n_elements : int
        N.
    i, j : array_like of shape (P,), integer
        Endpoints, i != j, each unordered pair at most once.
    w : array_like of shape (P,), real
        Affinities (>= 0, finite).

    Returns
    -------
    AffinityGraph
    """
    n_elements = check_int(n_elements, "n_elements", minimum=1)
    i = check_array(i, "i", ndim=1, dtype="iu")
    j = check_array(j, "j", shape=i.shape, dtype="iu")
    w = check_array(w, "w", shape=i.shape, dtype="fiu", finite=True)
    for name, ends in (("i", i), ("j", j)):
        if ends.size and (ends.min() < 0 or ends.max() >= n_elements):
            raise ValueError(f"{name} must hold indices in 0 .. {n_elements - 1}, got {ends.min()} .. {ends.max()}")
    return as_graph((np.concatenate([i, j]), np.concatenate([j, i]), np.concatenate([w, w])),
                    n_elements=n_elements)


def as_graph(graph, n_elements=None) -> AffinityGraph:
    """Validate an affinity graph and return it in the thesis's edge-list form.

    Parameters
    ----------
    graph : AffinityGraph, scipy.sparse matrix of shape (N, N), or tuple (src, dst, weight)
        A sparse matrix: every stored entry (i, j) is an affinity (explicit zeros
        included, duplicates summed as SciPy does); it must be symmetric with an empty
        diagonal. An edge list: three 1-D arrays of equal length M listing both
        directions of every pair, each ordered pair at most once.
    n_elements : int, optional
        N, for an edge list: the number of elements, isolated ones included (default:
        the largest index + 1). Must match the shape of a sparse matrix.

    Returns
    -------
    AffinityGraph

    Raises
    ------
    ValueError
        An empty graph (N = 0), indices that are negative or not below N, self-loops,
        repeated entries, affinities that are negative, NaN or infinite, an entry
        whose reverse is missing or has another affinity, or a graph too large for
        int32 indices.

    Examples
    --------
    >>> g = as_graph(([0, 1, 1, 2], [1, 0, 2, 1], [0.5, 0.5, 2.0, 2.0]))
    >>> g
    AffinityGraph(N=3, M=4 entries (2 pairs), components=1)
    """
    if isinstance(graph, AffinityGraph):
        if n_elements is not None and check_int(n_elements, "n_elements", minimum=1) != graph.n_elements:
            raise ValueError(f"n_elements={n_elements} does not match the graph's {graph.n_elements} elements")
        return graph
    if sp.issparse(graph):
        src, dst, weight, n = _from_sparse(graph, n_elements)
    elif isinstance(graph, (tuple, list)) and len(graph) == 3:
        src, dst, weight, n = _from_edge_list(graph, n_elements)
    else:
        raise ValueError("graph must be a SciPy sparse matrix of shape (N, N), a tuple (src, dst, weight) of "
                         f"three 1-D arrays, or an AffinityGraph; got {type(graph).__name__}")
    if n == 0:
        raise ValueError("graph is empty (N = 0 elements): there is nothing to cluster")
    if 2 * n >= MAX_ENTRIES or src.size >= MAX_ENTRIES:
        raise ValueError(f"graph has N={n} elements and M={src.size} entries: too large for int32 indices")
    loops = np.flatnonzero(src == dst)
    if loops.size:
        raise ValueError(f"graph has {loops.size} self-loop(s), e.g. ({src[loops[0]]}, {dst[loops[0]]}): an element "
                         "is not merged with itself; drop the diagonal (e.g. A.setdiag(0); A.eliminate_zeros())")
    bad = np.flatnonzero(weight < 0)
    if bad.size:
        raise ValueError(f"graph has {bad.size} negative affinit(ies), e.g. {weight[bad[0]]!r} at "
                         f"({src[bad[0]]}, {dst[bad[0]]}): affinities must be >= 0 (a missing pair counts as 0)")
    order = np.lexsort((dst, src))
    src, dst, weight = src[order], dst[order], weight[order]
    if src.size > 1:
        same = np.flatnonzero((src[1:] == src[:-1]) & (dst[1:] == dst[:-1]))
        if same.size:
            p = same[0]
            raise ValueError(f"graph has {same.size} repeated entr(ies), e.g. ({src[p]}, {dst[p]}) twice: list each "
                             "direction of a pair once")
    # The reverse of entry (a, b) sits at the position of (b, a) in the same sorted order.
    reverse = np.lexsort((src, dst))
    mismatch = np.flatnonzero((src[reverse] != dst) | (dst[reverse] != src))
    if mismatch.size:
        p = mismatch[0]
        raise ValueError(f"graph is not symmetric: entry ({src[p]}, {dst[p]}) has no reverse ({dst[p]}, {src[p]}); "
                         "store both directions (for a matrix A, use A + A.T or A.maximum(A.T))")
    unequal = np.flatnonzero(weight[reverse] != weight)
    if unequal.size:
        p = unequal[0]
        raise ValueError(f"graph is not symmetric: affinity of ({src[p]}, {dst[p]}) is {weight[p]!r} but of "
                         f"({dst[p]}, {src[p]}) is {weight[reverse][p]!r}; symmetrise it, e.g. (A + A.T) / 2")
    src = src.astype(np.int32)
    dst = dst.astype(np.int32)
    return AffinityGraph(n, src, dst, weight.astype(np.float64), _components(n, src, dst))


def _from_sparse(matrix, n_elements):
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"graph must be a square (N, N) matrix, got shape {matrix.shape}")
    if matrix.dtype.kind not in "biuf":
        raise ValueError(f"graph must hold real affinities, got dtype {matrix.dtype}")
    n = int(matrix.shape[0])
    if n_elements is not None and check_int(n_elements, "n_elements", minimum=1) != n:
        raise ValueError(f"graph has {n} rows but n_elements={n_elements}: they must match")
    coo = sp.coo_matrix(matrix)
    coo.sum_duplicates()
    weight = coo.data.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(weight))
    if bad.size:
        raise ValueError(f"graph has {bad.size} non-finite affinit(ies), e.g. {weight[bad[0]]!r} at "
                         f"({coo.row[bad[0]]}, {coo.col[bad[0]]})")
    return coo.row.astype(np.int64), coo.col.astype(np.int64), weight, n


def _from_edge_list(edges, n_elements):
    src = check_array(edges[0], "src", ndim=1, dtype="iu")
    dst = check_array(edges[1], "dst", ndim=1, dtype="iu")
    weight = check_array(edges[2], "weight", ndim=1, dtype="biuf", finite=True)
    if not src.size == dst.size == weight.size:
        raise ValueError(f"src, dst and weight must have the same length, got {src.size}, {dst.size} and "
                         f"{weight.size}")
    src = src.astype(np.int64)
    dst = dst.astype(np.int64)
    if src.size and min(src.min(), dst.min()) < 0:
        raise ValueError(f"src and dst must be non-negative element indices, got {min(src.min(), dst.min())}")
    largest = int(max(src.max(), dst.max())) if src.size else -1
    if n_elements is None:
        n = largest + 1
    else:
        n = check_int(n_elements, "n_elements", minimum=1)
        if largest >= n:
            raise ValueError(f"src and dst must be below n_elements={n}, got index {largest}")
    return src, dst, weight.astype(np.float64), n
