"""Replaying the levels of a search under the simulator's profiler: SIMT efficiency, atomics, measured work.

The state before a level is rebuilt from the depths of a finished search, so any level
can be replayed under :func:`course_lib.sim.profile` with the kernel of any design.
The profiler counts how many times each lane ran each line of a kernel; the lines that
read an edge's neighbour and that store a depth (:data:`WORK_LINES`) give the edges a
level examined and the depths it wrote, measured on the kernels students read, which
carry no counters. :func:`measure_search` does it for every level of a search, to check
the counts :func:`course_lib.bfs.traverse` derives on the host (:mod:`course_lib.bfs.model`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .data import as_graph

__all__ = ["LEVEL_KERNELS", "STEPS", "WORK_LINES", "MeasuredLevel", "level_launch", "measure_level",
           "measure_search", "profile_level"]

#: The expansion kernel each top-down method runs at every level.
LEVEL_KERNELS = {"frontier_atomic": "bfs_frontier_atomic_kernel", "frontier_scan": "expand_frontier_kernel"}
#: The kinds of step a level can take: the three top-down designs and the bottom-up step.
STEPS = ("edge_quadratic", "frontier_atomic", "frontier_scan", "bottom_up")
#: Per kernel, the statements one lane runs once per edge examined, and once per depth written.
#: In the atomic kernel a won compare-and-swap writes the depth, and only the winner stores the parent.
WORK_LINES = {
    "bfs_edge_quadratic_kernel": (("u = edge_u[e]",), ("depth[v] = current + 1", "depth[u] = current + 1")),
    "bfs_frontier_atomic_kernel": (("v = indices[k]",), ("parent[v] = u",)),
    "expand_frontier_kernel": (("v = indices[indptr[u] + k - edge_offsets[low]]",), ()),
    "claim_candidates_kernel": ((), ("depth[v] = current + 1",)),
    "bfs_bottom_up_kernel": (("u = in_indices[k]",), ("depth[v] = current + 1",)),
}


class MeasuredLevel(NamedTuple):
    """What the profiler measured in one level.

    Attributes
    ----------
    edges_examined : int
        Executions, over all lanes, of the line that reads an edge's neighbour.
    depth_writes : int
        Executions of the lines that store a depth (a won compare-and-swap in the atomic design).
    reports : list of course_lib.sim.ProfileReport
        One per kernel launched (none when the level had no edge to expand).
    """

    edges_examined: int
    depth_writes: int
    reports: list


def _state_before(g, depth, level):
    depth = np.asarray(depth, dtype=np.int32)
    if depth.shape != (g.n_vertices,):
        raise ValueError(f"depth must have shape ({g.n_vertices},), got {depth.shape}")
    if not 0 <= level <= depth.max():
        raise ValueError(f"level must be between 0 and the maximum depth {depth.max()}, got {level}")
    before = np.where(depth <= level, depth, -1).astype(np.int32)
    parent = np.full(g.n_vertices, -1, np.int32)  # the kernels only write parents
    return depth, before, parent


def level_launch(graph, depth, level, method="frontier_atomic", block=32):
    """The launch that expands ``level`` with ``method``'s expansion kernel, from the state before it.

    Parameters
    ----------
    graph : scipy.sparse matrix of shape (V, V) or Graph
    depth : ndarray of shape (V,), int
        Depths of a finished search of ``graph``.
    level : int
        0 <= level <= max depth.
    method : {"frontier_atomic", "frontier_scan"}
        ``"frontier_atomic"``: one thread per frontier vertex (``bfs_frontier_atomic_kernel``);
        ``"frontier_scan"``: one thread per frontier edge (``expand_frontier_kernel``).
    block : int
        Threads per block.

    Returns
    -------
    kernel, griddim, blockdim, args
        Ready for ``kernel[griddim, blockdim](*args)``, :func:`course_lib.sim.profile`
        or :func:`course_lib.sim.check`; ``args`` are NumPy arrays and scalars.
    """
    from . import kernels

    if method not in LEVEL_KERNELS:
        raise ValueError(f"method must be one of {sorted(LEVEL_KERNELS)}, got {method!r}")
    g = as_graph(graph)
    depth, before, parent = _state_before(g, depth, level)
    frontier = np.flatnonzero(depth == level).astype(np.int32)
    size = np.int32(frontier.size)
    if method == "frontier_atomic":
        args = (g.indptr, g.indices, frontier, size, np.int32(level), before, parent,
                np.zeros(g.n_vertices, np.int32), np.zeros(1, np.int32))
        return getattr(kernels, LEVEL_KERNELS[method]), -(-frontier.size // block), block, args
    degrees = g.degrees[frontier]
    offsets = (np.cumsum(degrees) - degrees).astype(np.int32)
    n_candidates = int(degrees.sum())
    args = (g.indptr, g.indices, frontier, size, offsets, np.int32(n_candidates), before,
            np.full(g.n_vertices, -1, np.int32), np.zeros(max(n_candidates, 1), np.int32),
            np.zeros(max(n_candidates, 1), np.int32))
    return getattr(kernels, LEVEL_KERNELS[method]), max(1, -(-n_candidates // block)), block, args


def profile_level(graph, depth, level, method="frontier_atomic", block=32):
    """Profile one level's expansion in the simulator (:func:`course_lib.sim.profile`).

    Parameters as in :func:`level_launch`.

    Returns
    -------
    course_lib.sim.profile.ProfileReport
        ``.total.simt_efficiency``, ``.total.atomics``, per-line counts.
    """
    from ..sim import profile

    kernel, grid, threads, args = level_launch(graph, depth, level, method, block)
    return profile(kernel, grid, threads, *args)


def _lane_runs(report, statements):
    """Executions, summed over the lanes, of the lines whose source is one of ``statements``."""
    return sum(row.active_lanes for row in report.lines if row.source in statements)


def measure_level(graph, depth, level, step, block=32):
    """Replay ``level`` with the kernel(s) of ``step`` under the profiler; count the edges and depth writes.

    Parameters
    ----------
    graph : scipy.sparse matrix of shape (V, V) or Graph
        A :class:`~course_lib.bfs.data.Graph` keeps its direction; a matrix is directed.
    depth : ndarray of shape (V,), int
        Depths of a finished search of ``graph``.
    level : int
        0 <= level <= max depth.
    step : {"edge_quadratic", "frontier_atomic", "frontier_scan", "bottom_up"}
        The kind of step: the edge-parallel iteration, either top-down frontier design
        (for ``"frontier_scan"``, its expansion and claim kernels), or the bottom-up step.
    block : int
        Threads per block.

    Returns
    -------
    MeasuredLevel
    """
    from ..sim import profile
    from . import kernels

    if step not in STEPS:
        raise ValueError(f"step must be one of {list(STEPS)}, got {step!r}")
    g = as_graph(graph)
    depth, before, parent = _state_before(g, depth, level)
    if step == "edge_quadratic":
        edge_u, edge_v, both = g.edge_list
        launches = [(kernels.bfs_edge_quadratic_kernel, max(1, -(-edge_u.size // block)),
                     (edge_u, edge_v, np.int32(both), np.int32(level), before, parent, np.ones(1, np.int32)))]
    elif step == "bottom_up":
        in_indptr, in_indices = g.in_edges
        launches = [(kernels.bfs_bottom_up_kernel, -(-g.n_vertices // block),
                     (in_indptr, in_indices, np.int32(level), before, parent))]
    elif step == "frontier_atomic":
        kernel, grid, _, args = level_launch(g, depth, level, step, block)
        launches = [(kernel, grid, args)]
    else:
        kernel, grid, _, args = level_launch(g, depth, level, step, block)
        n_candidates, owner, candidates, candidate_parents = args[5], args[7], args[8], args[9]
        keep = np.zeros(candidates.size, np.int32)
        # The claim reads what the expansion wrote: profile() copies the arrays back after each launch.
        launches = [] if n_candidates == 0 else [  # the host skips a level without edges, as traverse does
            (kernel, grid, args),
            (kernels.claim_candidates_kernel, grid,
             (candidates, candidate_parents, n_candidates, owner, np.int32(level), before, parent, keep))]
    reports, edges, writes = [], 0, 0
    for kernel, grid, args in launches:
        report = profile(kernel, grid, block, *args)
        edge_lines, write_lines = WORK_LINES[report.kernel]
        edges += _lane_runs(report, edge_lines)
        writes += _lane_runs(report, write_lines)
        reports.append(report)
    return MeasuredLevel(edges, writes, reports)


def measure_search(graph, source, method, *, directed=True, block=32):
    """Search with :func:`course_lib.bfs.traverse`, then replay every level under the profiler.

    Parameters
    ----------
    graph, source, directed
        As in :func:`course_lib.bfs.traverse`.
    method : {"edge_quadratic", "frontier_atomic", "frontier_scan", "direction_optimizing"}
        Each level is replayed with the step that method took there.
    block : int
        Threads per block of the replays.

    Returns
    -------
    run : BFSRun
        The search, with the work :func:`~course_lib.bfs.traverse` counted on the host.
    measured : list of MeasuredLevel
        One per iteration of the search, measured on the kernels.
    """
    from .api import traverse

    if method not in STEPS[:3] + ("direction_optimizing",):
        raise ValueError(f"method must be one of the GPU methods {list(STEPS[:3]) + ['direction_optimizing']}, "
                         f"got {method!r}")
    run = traverse(graph, source, method, directed=directed)
    steps = [("bottom_up" if d == "bottom-up" else "frontier_atomic") for d in run.directions] or \
        [method] * run.iterations
    return run, [measure_level(run.graph, run.depth, level, step, block) for level, step in enumerate(steps)]
