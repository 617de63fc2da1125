"""Checking an adjacency matrix and turning it into the arrays the kernels read."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

__all__ = ["Graph", "as_graph", "check_source"]

_INT32_MAX = np.iinfo(np.int32).max


@dataclass(frozen=True)
class Graph:
    """A validated graph in the layouts the BFS variants use.

    Attributes
    ----------
    n_vertices : int
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
    if not isinstance(directed, (bool, np.bool_)):
        raise ValueError(f"directed must be True or False, got {directed!r}")
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
