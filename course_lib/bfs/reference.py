"""Trusted references: SciPy's csgraph, and a validator of BFS parent trees.

Depths are unique, parent trees are not (a vertex may have several neighbours one
level up), so tests and graders compare depths exactly and *validate* parents, as the
Graph500 benchmark does.
"""

from __future__ import annotations

import numpy as np

from .._docs import fill_doc
from .._validate import check_array, check_positive_int
from scipy.sparse import csgraph

from .data import DEPTH_PARENT_RETURNS, SEARCH_PARAMETERS, as_graph, check_source

__all__ = ["bfs_reference", "bfs_scipy", "check_parent_tree", "parent_tree_problems"]


@fill_doc(parameters=SEARCH_PARAMETERS)
def bfs_reference(graph, source, *, directed=True):
    """Hop distances from ``source`` with :func:`scipy.sparse.csgraph.shortest_path`.

    An unweighted shortest-path search (a different algorithm from every BFS of the
    unit), so it is an independent check.

    {parameters}

    Returns
    -------
    ndarray of shape (V,), int32
        Depths, -1 where unreachable.
    """
    g = as_graph(graph, directed=directed)
    s = check_source(source, g.n_vertices)
    dist = csgraph.shortest_path(g.structure(), method="D", directed=True, unweighted=True, indices=s)
    depth = np.full(g.n_vertices, -1, dtype=np.int32)
    reached = np.isfinite(dist)
    depth[reached] = dist[reached].astype(np.int32)
    return depth


@fill_doc(parameters=SEARCH_PARAMETERS, returns=DEPTH_PARENT_RETURNS)
def bfs_scipy(graph, source, *, directed=True):
    """BFS with :func:`scipy.sparse.csgraph.breadth_first_order` (compiled C), with depths.

    {parameters}

    {returns}
    """
    g = as_graph(graph, directed=directed)
    s = check_source(source, g.n_vertices)
    order, predecessors = csgraph.breadth_first_order(g.structure(), s, directed=True, return_predecessors=True)
    parent = predecessors.astype(np.int32)
    parent[s] = s
    depth = np.full(g.n_vertices, -1, dtype=np.int32)
    depth[s] = 0
    # BFS order visits a vertex after its parent: one pass fills the depths.
    for v in order[1:]:
        depth[v] = depth[parent[v]] + 1
    return depth, np.where(depth >= 0, parent, -1).astype(np.int32)


def parent_tree_problems(graph, source, parent, *, directed=True, limit=5):
    """What is wrong with a BFS parent array (an empty list if it is a valid BFS tree).

    A valid BFS parent array has ``parent[source] == source``; for every other vertex
    reachable from the source, ``parent[v]`` is an in-neighbour of ``v`` (an edge
    ``parent[v] -> v`` exists) one level closer to the source; every unreachable
    vertex has ``parent[v] == -1``.

    Parameters
    ----------
    graph : scipy.sparse matrix of shape (V, V) or Graph
    source : int
    parent : array_like of shape (V,)
    directed : bool
    limit : int
        Report at most this many vertices per kind of problem.

    Returns
    -------
    list of str
    """
    g = as_graph(graph, directed=directed)
    s = check_source(source, g.n_vertices)
    limit = check_positive_int(limit, "limit")
    parent = check_array(parent, "parent", ndim=1, dtype="iu")
    if parent.shape != (g.n_vertices,):
        return [f"parent must have shape ({g.n_vertices},), got {parent.shape}"]
    parent = parent.astype(np.int64)
    depth = bfs_reference(g, s, directed=g.directed)
    problems = []
    if parent[s] != s:
        problems.append(f"parent[source] must be the source itself ({s}), got {parent[s]}")
    unreached = np.flatnonzero((depth < 0) & (parent != -1))
    if unreached.size:
        problems.append(f"vertices not reachable from the source must have parent -1: {_some(unreached, limit)}")
    others = np.flatnonzero(depth > 0)
    p = parent[others]
    out_of_range = others[(p < 0) | (p >= g.n_vertices)]
    if out_of_range.size:
        problems.append(f"reachable vertices without a valid parent id: {_some(out_of_range, limit)}")
    ok = (p >= 0) & (p < g.n_vertices)
    v, p = others[ok], p[ok]
    wrong_level = v[depth[p] != depth[v] - 1]
    if wrong_level.size:
        problems.append("a parent must be exactly one level closer to the source (depth[parent] = depth[v] - 1); "
                        f"not so for vertices {_some(wrong_level, limit)}")
    has_edge = np.asarray(g.structure()[p, v]).ravel() != 0 if v.size else np.ones(0, bool)
    no_edge = v[~has_edge]
    if no_edge.size:
        problems.append(f"no edge parent[v] -> v in the graph for vertices {_some(no_edge, limit)}")
    return problems


def check_parent_tree(graph, source, parent, *, directed=True):
    """Raise ``ValueError`` describing the problems if ``parent`` is not a valid BFS tree.

    See :func:`parent_tree_problems` for what is checked.
    """
    problems = parent_tree_problems(graph, source, parent, directed=directed)
    if problems:
        raise ValueError("not a valid BFS parent tree: " + "; ".join(problems))


def _some(vertices, limit):
    shown = ", ".join(str(int(v)) for v in vertices[:limit])
    more = f" (and {vertices.size - limit} more)" if vertices.size > limit else ""
    return f"[{shown}]{more}"
