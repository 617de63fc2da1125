"""Graphs for BFS experiments: seeded generators and small real graphs shipped by NetworkX.

Every generator returns a ``scipy.sparse.csr_matrix`` of shape (V, V) whose stored
entries are the edges (values 1, int8). Undirected graphs are returned symmetric.
:func:`as_graph` checks an adjacency matrix and turns it into a :class:`Graph`, the
arrays the kernels read.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from .._validate import check_array, check_choice, check_flag, check_float, check_int, check_seed

__all__ = [
    "REAL_GRAPHS",
    "Graph",
    "as_graph",
    "check_source",
    "chain",
    "disconnected",
    "from_edges",
    "grid_2d",
    "kronecker",
    "random_graph",
    "real_graph",
    "star",
    "with_self_loops_and_duplicates",
]


#: The parameters of every search of the unit, for their docstrings (:func:`course_lib._docs.fill_doc`).
SEARCH_PARAMETERS = """
Parameters
----------
graph : scipy.sparse matrix of shape (V, V) or Graph
source : int
directed : bool
"""

#: What the searches that build a BFS tree return, for their docstrings.
DEPTH_PARENT_RETURNS = """
Returns
-------
depth : ndarray of shape (V,), int32
    -1 where unreachable.
parent : ndarray of shape (V,), int32
    The source is its own parent; -1 where unreachable.
"""


def _check_count(value, name, minimum=1):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def from_edges(u, v, n_vertices, *, directed=False):
    """Adjacency matrix of an edge list.

    Parameters
    ----------
    u, v : array_like of shape (E,), integers in 0..n_vertices-1
        Edge ``u[i] -> v[i]``.
    n_vertices : int
    directed : bool
        False: also store ``v[i] -> u[i]``.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_vertices, n_vertices), int8
        Duplicate edges merged, column indices sorted.
    """
    n = _check_count(n_vertices, "n_vertices")
    directed = check_flag(directed, "directed")
    u = check_array(u, "u", ndim=1, dtype="iu").astype(np.int64)
    v = check_array(v, "v", ndim=1, dtype="iu").astype(np.int64)
    if u.shape != v.shape:
        raise ValueError(f"u and v must have the same length, got {u.size} and {v.size}")
    for name, ends in (("u", u), ("v", v)):
        if ends.size and (ends.min() < 0 or ends.max() >= n):
            raise ValueError(f"{name} must hold vertex ids in 0..{n - 1}, got {ends.min()} .. {ends.max()}")
    if not directed:
        u, v = np.concatenate([u, v]), np.concatenate([v, u])
    m = sp.csr_matrix((np.ones(u.size, np.int8), (u, v)), shape=(n, n))
    m.sum_duplicates()
    m.data[:] = 1
    return m


def star(n_vertices, *, center=0, directed=False):
    """A star: ``center`` joined to every other vertex. Maximum depth 1 from the centre.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_vertices, n_vertices)
    """
    n = _check_count(n_vertices, "n_vertices")
    center = check_int(center, "center", minimum=0, maximum=n - 1)
    if not 0 <= center < n:
        raise ValueError(f"center must be in 0..{n - 1}, got {center}")
    leaves = np.delete(np.arange(n), center)
    return from_edges(np.full(leaves.size, center), leaves, n, directed=directed)


def chain(n_vertices, *, directed=False):
    """A path 0 - 1 - ... - (V-1): maximum depth V - 1 from vertex 0, the worst case.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_vertices, n_vertices)
    """
    n = _check_count(n_vertices, "n_vertices")
    return from_edges(np.arange(n - 1), np.arange(1, n), n, directed=directed)


def grid_2d(rows, cols):
    """A 4-neighbour grid (road-like: high diameter, degree <= 4), vertex ``r * cols + c``.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (rows * cols, rows * cols), symmetric
    """
    rows = _check_count(rows, "rows")
    cols = _check_count(cols, "cols")
    ids = np.arange(rows * cols).reshape(rows, cols)
    u = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    v = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    return from_edges(u, v, rows * cols)


def kronecker(scale, edge_factor=16, *, seed=0, directed=False, abc=(0.57, 0.19, 0.19)):
    """Graph500-style Kronecker (R-MAT) graph: power-law degrees, low diameter.

    ``edge_factor * 2**scale`` edges are drawn bit by bit: at each of the ``scale``
    levels an edge falls in one quadrant of the adjacency matrix with probabilities
    ``a, b, c, 1 - a - b - c`` (Graph500 values by default). Vertex ids are then
    permuted at random, as Graph500 does, so that high degree is not tied to small ids.
    Self-loops and repeated edges are dropped.

    Parameters
    ----------
    scale : int
        log2 of the number of vertices (0..30).
    edge_factor : int
        Edges drawn per vertex.
    seed : int
    directed : bool
    abc : tuple of 3 floats

    Returns
    -------
    scipy.sparse.csr_matrix of shape (2**scale, 2**scale)
    """
    directed = check_flag(directed, "directed")
    scale = _check_count(scale, "scale", 0)
    if scale > 30:
        raise ValueError(f"scale must be at most 30 (int32 vertex ids), got {scale}")
    edge_factor = _check_count(edge_factor, "edge_factor")
    a, b, c = abc
    if min(a, b, c) < 0 or a + b + c > 1:
        raise ValueError(f"abc must be non-negative probabilities summing to at most 1, got {abc}")
    rng = np.random.default_rng(check_seed(seed))
    n = 1 << scale
    m = edge_factor * n
    u = np.zeros(m, dtype=np.int64)
    v = np.zeros(m, dtype=np.int64)
    ab, c_norm, a_norm = a + b, c / (1 - a - b) if a + b < 1 else 0.0, a / (a + b) if a + b > 0 else 0.0
    for bit in range(scale):
        # Graph500 reference generator: choose the row half, then the column half given it.
        row_bit = rng.random(m) > ab
        col_bit = rng.random(m) > np.where(row_bit, c_norm, a_norm)
        u |= row_bit.astype(np.int64) << bit
        v |= col_bit.astype(np.int64) << bit
    perm = rng.permutation(n)
    u, v = perm[u], perm[v]
    keep = u != v
    return from_edges(u[keep], v[keep], n, directed=directed)


def random_graph(n_vertices, average_degree, *, seed=0, directed=False):
    """Uniform random (Erdos-Renyi-like) graph with about ``average_degree`` edges per vertex.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_vertices, n_vertices)
    """
    directed = check_flag(directed, "directed")
    n = _check_count(n_vertices, "n_vertices")
    average_degree = check_float(average_degree, "average_degree", minimum=0)
    rng = np.random.default_rng(check_seed(seed))
    m = int(round(average_degree * n / (1 if directed else 2)))
    u = rng.integers(0, n, m)
    v = rng.integers(0, n, m)
    keep = u != v
    return from_edges(u[keep], v[keep], n, directed=directed)


def disconnected(component_sizes=(12, 7, 5), n_isolated=3, *, seed=0, directed=False):
    """Several random connected components plus isolated vertices, labels shuffled.

    Each component is a random spanning tree with a few extra edges, so it is
    connected; nothing joins two components.

    Parameters
    ----------
    component_sizes : sequence of int
    n_isolated : int
        Vertices with no edge at all.
    seed : int
    directed : bool
        True: each edge gets one random direction (components may then be only weakly
        connected).

    Returns
    -------
    scipy.sparse.csr_matrix of shape (sum(component_sizes) + n_isolated,) * 2
    """
    directed = check_flag(directed, "directed")
    rng = np.random.default_rng(check_seed(seed))
    sizes = [_check_count(s, "component size") for s in component_sizes]
    n_isolated = _check_count(n_isolated, "n_isolated", 0)
    n = sum(sizes) + n_isolated
    if n == 0:
        raise ValueError("the graph would have no vertices")
    labels = rng.permutation(n)
    us, vs, first = [], [], 0
    for size in sizes:
        ids = labels[first:first + size]
        first += size
        if size > 1:
            # A random tree (each vertex joins an earlier one) plus size // 2 random chords.
            child = np.arange(1, size)
            tree_parent = (rng.random(size - 1) * child).astype(np.int64)
            chord_u = rng.integers(0, size, size // 2)
            chord_v = rng.integers(0, size, size // 2)
            uu = np.concatenate([tree_parent, chord_u])
            vv = np.concatenate([child, chord_v])
            keep = uu != vv
            uu, vv = uu[keep], vv[keep]
            if directed:
                flip = rng.random(uu.size) < 0.5
                uu, vv = np.where(flip, vv, uu), np.where(flip, uu, vv)
            us.append(ids[uu])
            vs.append(ids[vv])
    u = np.concatenate(us) if us else np.zeros(0, np.int64)
    v = np.concatenate(vs) if vs else np.zeros(0, np.int64)
    return from_edges(u, v, n, directed=directed)


def with_self_loops_and_duplicates(graph, *, n_loops=3, n_duplicates=5, seed=0):
    """A copy of ``graph`` with self-loops and repeated edges stored in its CSR arrays.

    The result keeps the repeats as separate stored entries (it is built from
    ``data, indices, indptr`` directly, which SciPy does not merge), so kernels see
    them; a BFS must give the same depths as on ``graph``.

    Parameters
    ----------
    graph : scipy.sparse matrix of shape (V, V) with at least one stored edge
    n_loops : int
        Self-loops added on random vertices.
    n_duplicates : int
        Existing edges stored once more.
    seed : int

    Returns
    -------
    scipy.sparse.csr_matrix of shape (V, V), not in canonical format
    """
    n_loops = check_int(n_loops, "n_loops", minimum=0)
    n_duplicates = check_int(n_duplicates, "n_duplicates", minimum=0)
    rng = np.random.default_rng(check_seed(seed))
    coo = sp.coo_matrix(as_graph(graph, directed=True).structure())
    n = coo.shape[0]
    if coo.nnz == 0:
        raise ValueError("graph has no edge to duplicate")
    pick = rng.integers(0, coo.nnz, n_duplicates)
    loops = rng.integers(0, n, n_loops)
    rows = np.concatenate([coo.row, coo.row[pick], loops])
    cols = np.concatenate([coo.col, coo.col[pick], loops])
    order = np.argsort(rows, kind="stable")
    rows, cols = rows[order], cols[order]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))]).astype(np.int32)
    out = sp.csr_matrix((np.ones(rows.size, np.int8), cols.astype(np.int32), indptr), shape=(n, n))
    assert not out.has_canonical_format  # the repeats are really stored
    return out


#: Small real graphs whose data NetworkX ships inside its package (no download).
REAL_GRAPHS = {
    "karate_club": "Zachary's karate club: 34 members, 78 friendships (1977)",
    "les_miserables": "co-appearances of 77 characters in Victor Hugo's novel (Knuth, 1993)",
    "florentine_families": "marriages between 15 Renaissance Florentine families (Padgett)",
    "davis_southern_women": "18 women and the 14 social events they attended (bipartite, Davis 1941)",
}


def real_graph(name):
    """A small real graph shipped by NetworkX, as a symmetric adjacency matrix.

    Parameters
    ----------
    name : str
        A key of :data:`REAL_GRAPHS`.

    Returns
    -------
    adjacency : scipy.sparse.csr_matrix of shape (V, V), int8
    labels : list of str
        The vertex names, in matrix order.
    """
    import networkx as nx

    builders = {
        "karate_club": nx.karate_club_graph,
        "les_miserables": nx.les_miserables_graph,
        "florentine_families": nx.florentine_families_graph,
        "davis_southern_women": nx.davis_southern_women_graph,
    }
    check_choice(name, "name", sorted(builders))
    g = builders[name]()
    labels = [str(node) for node in g.nodes]
    adjacency = nx.to_scipy_sparse_array(g, format="csr", weight=None, dtype=np.int8)
    return sp.csr_matrix(adjacency), labels


# ---- the validated graph the BFS variants read

_INT32_MAX = np.iinfo(np.int32).max


@dataclass(frozen=True)
class Graph:
    """A validated graph in the layouts the BFS variants use.

    Attributes
    ----------
    n_vertices : int
        V: the vertices are numbered 0 to V - 1.
    directed : bool
        False: an edge stored in either direction is followed both ways.
    indptr : ndarray of shape (V + 1,), int32
    indices : ndarray of shape (E,), int32
        CSR of the out-neighbours (for an undirected graph, of the symmetric structure).
        Duplicate edges and self-loops of a directed input are kept as they are.
    """

    n_vertices: int
    directed: bool
    indptr: np.ndarray
    indices: np.ndarray

    @property
    def n_arcs(self) -> int:
        """Entries of the CSR structure (each undirected edge counts twice, once per direction)."""
        return int(self.indices.shape[0])

    @cached_property
    def degrees(self) -> np.ndarray:
        """Out-degree of every vertex, int64 of shape (V,)."""
        return np.diff(self.indptr).astype(np.int64)

    @cached_property
    def edge_list(self) -> tuple[np.ndarray, np.ndarray, int]:
        """``(edge_u, edge_v, both_directions)`` for the edge-parallel kernel.

        A directed graph gives every arc; an undirected one every edge once
        (``u <= v``) with ``both_directions = 1``, as in the source's kernel.
        """
        rows = np.repeat(np.arange(self.n_vertices, dtype=np.int32), np.diff(self.indptr))
        cols = self.indices
        if self.directed:
            return rows, cols.copy(), 0
        keep = rows <= cols
        return np.ascontiguousarray(rows[keep]), np.ascontiguousarray(cols[keep]), 1

    @cached_property
    def in_edges(self) -> tuple[np.ndarray, np.ndarray]:
        """``(in_indptr, in_indices)``: CSR of the in-neighbours (the transpose), int32.

        For an undirected graph these are :attr:`indptr` and :attr:`indices` themselves.
        """
        if not self.directed:
            return self.indptr, self.indices
        transpose = self.structure().T.tocsr()
        return (np.ascontiguousarray(transpose.indptr, dtype=np.int32),
                np.ascontiguousarray(transpose.indices, dtype=np.int32))

    def structure(self) -> sp.csr_matrix:
        """The CSR structure as a SciPy matrix with all stored values 1 (int8)."""
        data = np.ones(self.n_arcs, dtype=np.int8)
        return sp.csr_matrix((data, self.indices, self.indptr), shape=(self.n_vertices,) * 2)


def as_graph(graph, *, directed: bool = True) -> Graph:
    """Validate a SciPy sparse adjacency matrix and build a :class:`Graph`.

    Every stored entry ``graph[u, v]`` is an edge ``u -> v``, whatever its value (as in
    :mod:`scipy.sparse.csgraph` traversals).

    Parameters
    ----------
    graph : scipy.sparse matrix or array of shape (V, V), or Graph
        Any sparse format; converted to CSR. A :class:`Graph` is returned as it is.
    directed : bool
        False to follow every edge in both directions (ignored for a :class:`Graph`).

    Returns
    -------
    Graph

    Raises
    ------
    ValueError
        Not a sparse matrix, not square, no vertices, too many edges for int32
        indices, or a malformed CSR structure (negative or out-of-range column
        indices, inconsistent ``indptr``).
    """
    if isinstance(graph, Graph):
        return graph  # already validated; it keeps the direction it was built with
    if not sp.issparse(graph):
        raise ValueError(
            f"graph must be a SciPy sparse adjacency matrix (e.g. scipy.sparse.csr_matrix), got {type(graph).__name__}"
        )
    if len(graph.shape) != 2 or graph.shape[0] != graph.shape[1]:
        raise ValueError(f"graph must be a square V x V adjacency matrix, got shape {graph.shape}")
    directed = check_flag(directed, "directed")
    if graph.dtype.kind not in "biuf":
        raise ValueError(f"graph must hold real or boolean values (each stored entry is an edge), "
                         f"got dtype {graph.dtype}")
    n = int(graph.shape[0])
    if n == 0:
        raise ValueError("graph has no vertices (shape (0, 0)): a search needs at least the source")
    if n > _INT32_MAX:
        raise ValueError(f"graph has {n} vertices; the kernels use int32 vertex ids (at most {_INT32_MAX})")
    csr = graph.tocsr() if graph.format != "csr" else graph
    indptr = np.asarray(csr.indptr)
    indices = np.asarray(csr.indices)
    _check_structure(indptr, indices, n)
    if not directed:
        ones = sp.csr_matrix((np.ones(indices.shape[0], np.int8), indices, indptr), shape=(n, n))
        sym = (ones + ones.T).tocsr()
        sym.sum_duplicates()
        sym.sort_indices()
        indptr, indices = sym.indptr, sym.indices
    if indices.shape[0] > _INT32_MAX:
        raise ValueError(f"graph has {indices.shape[0]} arcs; the kernels use int32 offsets (at most {_INT32_MAX})")
    return Graph(n, bool(directed), np.ascontiguousarray(indptr, dtype=np.int32),
                 np.ascontiguousarray(indices, dtype=np.int32))


def _check_structure(indptr, indices, n):
    """SciPy checks CSR values only on request: check them here, with clear messages."""
    if indptr.shape != (n + 1,):
        raise ValueError(f"graph.indptr must have shape ({n + 1},), got {indptr.shape}")
    if indptr[0] != 0 or indptr[-1] != indices.shape[0] or np.any(np.diff(indptr) < 0):
        raise ValueError("graph.indptr must start at 0, never decrease and end at the number of stored entries")
    if indices.size:
        low, high = int(indices.min()), int(indices.max())
        if low < 0:
            raise ValueError(f"graph has a negative column index ({low}); vertex ids must be in 0..{n - 1}")
        if high >= n:
            raise ValueError(f"graph has column index {high}, out of range for {n} vertices (0..{n - 1})")


def check_source(source, n_vertices: int) -> int:
    """Validate the start vertex and return it as an int.

    Raises
    ------
    ValueError
        ``source`` is not an integer, is negative (no wrap-around as in NumPy
        indexing) or is >= ``n_vertices``.
    """
    if isinstance(source, (bool, np.bool_)) or not isinstance(source, (int, np.integer)):
        raise ValueError(f"source must be an integer vertex id, got {source!r}")
    s = int(source)
    if s < 0:
        raise ValueError(f"source must be a vertex id in 0..{n_vertices - 1}, got negative {s} "
                         "(negative ids do not wrap around)")
    if s >= n_vertices:
        raise ValueError(f"source {s} is out of range for a graph of {n_vertices} vertices (0..{n_vertices - 1})")
    return s


# ----------------------------------------------------------------------------- vertex sets, bit-packed
#: Vertices per word of a bit-packed vertex set.
WORD_BITS = 32


def pack_bits(flags):
    """Bit-pack a vertex set: bit ``v % 32`` of word ``v // 32`` is set for each vertex ``v`` in it.

    Parameters
    ----------
    flags : array of shape (V,)
        Non-zero for the vertices in the set.

    Returns
    -------
    numpy.ndarray
        uint32 of shape (ceil(V / 32),).
    """
    flags = np.asarray(flags).astype(bool)
    words = -(-flags.size // WORD_BITS)
    padded = np.zeros(words * WORD_BITS, bool)
    padded[:flags.size] = flags
    return np.packbits(padded, bitorder="little").view("<u4").astype(np.uint32)


def unpack_bits(words, n):
    """The vertex flags (uint8 of shape (n,)) of bit-packed ``words`` (see :func:`pack_bits`)."""
    as_bytes = np.ascontiguousarray(np.asarray(words, np.uint32).astype("<u4")).view(np.uint8)
    return np.unpackbits(as_bytes, bitorder="little")[:n].astype(np.uint8)
