"""The output of the clustering: ``parent`` and ``height`` vectors, and their SciPy linkage matrix."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validate import check_float, check_int

__all__ = ["Dendrogram", "to_linkage"]


@dataclass(frozen=True)
class Dendrogram:
    """The tree the thesis's algorithm builds, in its own terms.

    Attributes
    ----------
    n_elements : int
        N; nodes 0 .. N-1 are the elements (leaves).
    parent : ndarray of shape (2N - nC,), int32
        The cluster each node was merged into; merge q creates node N + q. A root (the
        last cluster of a connected component, or an isolated element) is its own parent.
    height : ndarray of shape (2N - nC,)
        Affinity at which node k was formed (float32 or float64 as computed); +inf for
        the leaves (an element is its own cluster at any affinity). Non-increasing
        along the merges, up to rounding.
    method : str
        How it was computed.
    stage_seconds : dict
        Seconds spent per stage, when the method measured them (else empty).
    """

    n_elements: int
    parent: np.ndarray = field(repr=False)
    height: np.ndarray = field(repr=False)
    method: str = ""
    stage_seconds: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def n_nodes(self) -> int:
        """2N - nC."""
        return int(self.parent.size)

    @property
    def n_merges(self) -> int:
        """N - nC."""
        return self.n_nodes - self.n_elements

    @property
    def n_components(self) -> int:
        """nC: the trees of the forest."""
        return 2 * self.n_elements - self.n_nodes

    @property
    def merge_heights(self) -> np.ndarray:
        """Affinities of the N - nC merges, in merge order."""
        return self.height[self.n_elements:]

    def children(self) -> np.ndarray:
        """The two nodes merged at each merge, shape (N - nC, 2), smaller id first."""
        nodes = np.arange(self.n_nodes)
        merged = nodes[self.parent != nodes]
        order = np.lexsort((merged, self.parent[merged]))
        pairs = merged[order].reshape(-1, 2)
        return pairs

    def linkage(self, offset=None) -> np.ndarray:
        """SciPy's linkage matrix: see :func:`to_linkage`."""
        return to_linkage(self, offset)

    def labels(self, n_clusters=None, *, min_affinity=None) -> np.ndarray:
        """Flat clusters: cut the tree by a number of clusters or by an affinity.

        Parameters
        ----------
        n_clusters : int, optional
            Keep merging until this many clusters remain (at least nC: components are
            never merged).
        min_affinity : float, optional
            Apply exactly the merges made at an affinity >= this value.

        Returns
        -------
        ndarray of shape (N,), int32
            Cluster label of each element, numbered 0, 1, ... in order of first appearance.
        """
        if (n_clusters is None) == (min_affinity is None):
            raise ValueError("labels needs exactly one of n_clusters and min_affinity")
        n = self.n_elements
        if n_clusters is not None:
            n_clusters = check_int(n_clusters, "n_clusters", minimum=self.n_components, maximum=n)
            n_applied = n - n_clusters
        else:
            threshold = check_float(min_affinity, "min_affinity")
            n_applied = int(np.count_nonzero(self.merge_heights >= threshold))
        root = np.arange(self.n_nodes)
        # Follow the first n_applied merges: a node's cluster is its highest applied ancestor.
        for node in range(self.n_nodes - 1, -1, -1):
            p = self.parent[node]
            if p != node and p - n < n_applied:
                root[node] = root[p]
        _, labels = np.unique(root[:n], return_inverse=True)
        first_seen = np.unique(labels, return_index=True)[1]
        rank = np.empty_like(first_seen)
        rank[np.argsort(first_seen)] = np.arange(first_seen.size)
        return rank[labels].astype(np.int32)

    def __repr__(self):
        return (f"Dendrogram(N={self.n_elements}, merges={self.n_merges}, components={self.n_components}, "
                f"dtype={self.height.dtype}, method={self.method!r})")


def to_linkage(tree: Dendrogram, offset=None) -> np.ndarray:
    """The tree as a SciPy linkage matrix Z, so ``dendrogram``, ``fcluster``, ``cophenet`` work on it.

    Affinities become distances ``d = offset - height`` (the thesis's similarity turned
    into SciPy's distance, as in D = c - S). Merge q is row q of Z and creates cluster
    N + q in both numberings. SciPy needs one tree: when nC > 1 the roots of the
    components are joined, in order of their ids, at distance ``offset * 1.1`` (or 1
    when the offset is 0), above every real merge: those rows are not merges the
    algorithm made.

    Parameters
    ----------
    tree : Dendrogram
    offset : float, optional
        c; default the largest merge affinity, so the first merge is at distance 0.

    Returns
    -------
    ndarray of shape (N - 1, 4), float64
        Columns: the two clusters merged (smaller first), distance, elements in the new cluster.
    """
    n = tree.n_elements
    if n < 2:
        return np.zeros((0, 4))
    heights = tree.merge_heights.astype(np.float64)
    c = float(heights.max()) if heights.size else 0.0
    if offset is not None:
        c = check_float(offset, "offset")
    pairs = tree.children()
    z = np.zeros((n - 1, 4))
    size = np.ones(2 * n - 1)
    z[:pairs.shape[0], :2] = pairs
    z[:pairs.shape[0], 2] = c - heights
    for q, (a, b) in enumerate(pairs):
        size[n + q] = size[a] + size[b]
    nodes = np.arange(tree.n_nodes)
    roots = list(nodes[tree.parent == nodes])
    join = c * 1.1 if c > 0 else 1.0
    row = pairs.shape[0]
    while len(roots) > 1:
        a, b = roots.pop(0), roots.pop(0)
        z[row] = (min(a, b), max(a, b), join, 0)
        size[n + row] = size[a] + size[b]
        roots.insert(0, n + row)
        row += 1
    z[:, 3] = size[n:]
    return z
