"""Public entry points of Unit 3: :func:`bfs` and :func:`traverse` (with the work of each level)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .. import device
from .._validate import check_block, check_choice, check_flag, check_int
from . import cpu
from ._workspace import BitmapWorkspace
from .data import Graph, as_graph, check_source
from . import model

__all__ = ["BITMAP_METHODS", "METHODS", "BFSRun", "BitmapWorkspace", "DeviceGraph", "bfs", "default_block", "exclusive_scan", "traverse"]

METHODS = ("direction_optimizing_twc", "frontier_twc", "frontier_atomic", "frontier_scan", "edge_quadratic",
           "direction_optimizing", "cpu")
#: The searches on the bitmap workspace: degree-aware top-down steps (and bottom-up steps on the bitmap).
BITMAP_METHODS = ("frontier_twc", "direction_optimizing_twc")
#: Direction-optimising switches (Beamer, Asanovic & Patterson, SC 2012): go bottom-up when the
#: frontier's arcs exceed the unexplored arcs / ALPHA, back top-down when the frontier holds
#: fewer than V / BETA vertices.
ALPHA = 14
BETA = 24


def default_block() -> int:
    """Threads per block of the BFS kernels: 256 on a GPU, 32 in the simulator."""
    return device.pick(sim=32, gpu=256)


def _default_scan_block() -> int:
    """Values per block of the scan: 1024 on a GPU, 16 in the simulator (each barrier is costly there)."""
    return device.pick(sim=16, gpu=1024)


@dataclass
class BFSRun:
    """The outcome of one search, with the work it did, level by level.

    The kernels do only the search; the work is counted from what it produced
    (:mod:`course_lib.bfs.model`), a count the tests check against the simulator's
    profiler on the kernels themselves (:func:`course_lib.bfs.profiling.measure_search`).

    Attributes
    ----------
    method : str
    source : int
    depth : ndarray of shape (V,), int32
        Hops from the source, -1 where unreachable. A device array when the search was
        asked to leave its result on the device (``traverse(..., download=False)``).
    parent : ndarray of shape (V,), int32
        A BFS tree: the source is its own parent, -1 where unreachable (a device array
        as ``depth``).
    graph : Graph
        The graph searched.
    iterations : int
        Iterations (levels) the host ran: maximum depth + 1 (the last one reaches nothing).
    frontier_sizes : list of int
        Vertices expanded at each iteration (for ``"edge_quadratic"``: vertices
        of the depth being expanded, which that method finds by scanning every edge).
    directions : list of str
        ``"top-down"`` or ``"bottom-up"`` for each iteration of ``"direction_optimizing"``
        (empty for the other methods).
    """

    method: str
    source: int
    depth: np.ndarray
    parent: np.ndarray
    graph: Graph = field(repr=False)
    iterations: int
    frontier_sizes: list = field(default_factory=list)
    directions: list = field(default_factory=list)

    @cached_property
    def _host_depth(self) -> np.ndarray:
        """``depth`` on the host (copied once when the search left it on the device)."""
        return self.depth if isinstance(self.depth, np.ndarray) else self.depth.copy_to_host()

    @cached_property
    def edges_examined(self) -> list:
        """Edges the kernels examined at each iteration (list of int; :func:`course_lib.bfs.model.edges_examined`)."""
        return model.edges_examined(self.graph, self.method, self._host_depth, self.iterations, self.directions)

    @cached_property
    def newly_reached(self) -> list:
        """Vertices that got their depth at each iteration (list of int): the next frontier's size.

        Every design writes each of them once, except the edge-parallel ``"edge_quadratic"``,
        whose threads racing to one vertex may all write it (the profiler measures those writes).
        """
        return model.newly_reached(self._host_depth, self.iterations)

    @property
    def total_edges_examined(self) -> int:
        return int(sum(self.edges_examined))

    @property
    def max_depth(self) -> int:
        return int(self._host_depth.max())

    def summary(self) -> str:
        """One line: method, iterations, maximum depth, total edges examined."""
        return (f"{self.method:<16} iterations={self.iterations:<5} max depth={self.max_depth:<5} "
                f"edges examined={self.total_edges_examined}")


def bfs(graph, source, method="direction_optimizing_twc", *, parents=False, directed=True):
    """Breadth-first search: the depth (hops from ``source``) of every vertex.

    Parameters
    ----------
    graph : scipy.sparse matrix or array of shape (V, V)
        Adjacency matrix: every stored entry ``graph[u, v]`` is an edge ``u -> v``
        (any format; CSR is used as is). Duplicate entries and self-loops are allowed.
    source : int
        Start vertex, 0 <= source < V.
    method : {"direction_optimizing_twc", "frontier_twc", "frontier_atomic", "frontier_scan", "edge_quadratic", \
"direction_optimizing", "cpu"}
        ``"direction_optimizing_twc"`` (the default): ``"frontier_twc"`` steps while the
        frontier is small, bottom-up steps on the frontier bitmap while it is large;
        ``"frontier_twc"``: top-down, each adjacency list walked by a block, a warp or
        threads of a block-wide scan according to its length (Merrill's gathering), a
        visited bitmap, the workspace allocated once per graph and one copy per level
        (the next frontier's size and arcs); ``"frontier_atomic"``: one thread per frontier vertex, the next frontier built
        with atomics (O(V + E) work); ``"frontier_scan"``: one thread per frontier
        edge, the next frontier built by a scan-based stream compaction;
        ``"direction_optimizing"``: ``"frontier_atomic"`` steps, and bottom-up steps
        (each unvisited vertex looks for a parent) while the frontier is large;
        ``"edge_quadratic"``:
        the edge-parallel "try #1", one thread per edge each iteration (O(V * E)
        work in the worst case); ``"cpu"``: the compiled CPU queue BFS.
    parents : bool
        Also return a BFS parent array.
    directed : bool
        False to follow every edge in both directions (``graph`` need not be symmetric).

    Returns
    -------
    depth : ndarray of shape (V,), int32
        -1 where unreachable.
    parent : ndarray of shape (V,), int32
        Only with ``parents=True``: the source is its own parent, -1 where
        unreachable; one of the valid BFS trees (which one may differ between runs).

    Raises
    ------
    ValueError
        ``graph`` is not a square sparse matrix, has a malformed structure (negative or
        out-of-range indices), ``source`` is out of range or negative, or ``method`` is
        unknown.

    Examples
    --------
    >>> from course_lib.bfs import bfs, chain
    >>> bfs(chain(4), 0, method="cpu")
    array([0, 1, 2, 3], dtype=int32)
    """
    parents = check_flag(parents, "parents")
    run = traverse(graph, source, method, directed=directed)
    return (run.depth, run.parent) if parents else run.depth


def traverse(graph, source, method="direction_optimizing_twc", *, directed=True, on_device=None,
             download=True) -> BFSRun:
    """Run one BFS variant and return depths, parents and its work per level.

    Parameters and errors as in :func:`bfs`, and:

    on_device : DeviceGraph, optional
        The graph already on the device (the benchmark times traversals only).
    download : bool
        True (the default): ``depth`` and ``parent`` come back as NumPy arrays; the bitmap
        searches download both in one copy into page-locked memory that the workspace
        reuses once no result refers to it. False: leave them on the device (a GPU method
        only): ``run.depth`` and ``run.parent`` are device arrays and are not downloaded
        (``"edge_quadratic"``, which counts its levels from the depths, still copies depth
        once); for the bitmap searches they are the workspace's, overwritten by the next
        search on the same :class:`DeviceGraph`.

    Returns
    -------
    BFSRun
    """
    check_choice(method, "method", METHODS)
    download = check_flag(download, "download")
    g = as_graph(graph, directed=directed)
    s = check_source(source, g.n_vertices)
    if method == "cpu":
        if not download:
            raise ValueError("download=False leaves the result on the device: method 'cpu' has none")
        depth, parent, sizes, _ = cpu._bfs_checked(g, s, return_levels=True)
        return BFSRun(method, s, depth, parent, g, len(sizes), [int(x) for x in sizes])
    if on_device is None or on_device.graph is not g:
        on_device = DeviceGraph(g)
    if method in BITMAP_METHODS:
        return _run_bitmap(g, s, on_device, method, download)
    runner = {"edge_quadratic": _run_edge_quadratic, "frontier_atomic": _run_frontier_atomic,
              "frontier_scan": _run_frontier_scan, "direction_optimizing": _run_direction_optimizing}[method]
    return runner(g, s, on_device, download)


def _result(d_depth, d_parent, download):
    """Depth and parent as the caller asked: downloaded (two copies), or the device arrays themselves."""
    if not download:
        return d_depth, d_parent
    return d_depth.copy_to_host(), d_parent.copy_to_host()


def _blocks(n, tpb):
    """Blocks covering ``n`` threads; at least one (a launch cannot be empty)."""
    return max(1, (n + tpb - 1) // tpb)


class DeviceGraph:
    """A graph's arrays copied to the device once (the benchmark reuses them between runs).

    Parameters
    ----------
    graph : Graph
    """

    def __init__(self, graph: Graph):
        self.graph = graph

    @cached_property
    def indptr(self):
        from numba import cuda

        return cuda.to_device(self.graph.indptr)

    @cached_property
    def indices(self):
        from numba import cuda

        return cuda.to_device(self.graph.indices)

    @cached_property
    def in_indptr(self):
        from numba import cuda

        return self.indptr if not self.graph.directed else cuda.to_device(self.graph.in_edges[0])

    @cached_property
    def in_indices(self):
        from numba import cuda

        return self.indices if not self.graph.directed else cuda.to_device(self.graph.in_edges[1])

    @cached_property
    def workspace(self) -> "BitmapWorkspace":
        """The bitmap searches' arrays, allocated on first use and reused by every later search."""
        return BitmapWorkspace(self.graph.n_vertices)

    @cached_property
    def edge_u(self):
        from numba import cuda

        return cuda.to_device(self.graph.edge_list[0])

    @cached_property
    def edge_v(self):
        from numba import cuda

        return cuda.to_device(self.graph.edge_list[1])


def _run_bitmap(g: Graph, source: int, on_device, method, download=True) -> BFSRun:
    """The bitmap searches: one launch and one 8-byte copy per level, one copy of the result, nothing allocated.

    Top-down steps run :func:`~course_lib.bfs.kernels.bfs_twc_kernel`; with
    ``"direction_optimizing_twc"`` the switch of :func:`_run_direction_optimizing` (Beamer's
    ALPHA and BETA) picks :func:`~course_lib.bfs.kernels.bfs_bottom_up_bitmap_kernel` while
    the frontier is large. Both kernels leave the next frontier's size and out-arcs in the
    counters, which is all the host needs to decide the next step.
    """
    from . import kernels

    tpb = default_block()
    n = g.n_vertices
    ws = on_device.workspace
    kernel = kernels.bfs_twc_kernel(tpb)
    words = ws.visited.shape[0]
    word_grid = _blocks(words * kernels.WARP, tpb)  # a warp per visited word
    d_indptr, d_indices = on_device.indptr, on_device.indices
    optimizing = method == "direction_optimizing_twc"
    if optimizing:
        d_in_indptr, d_in_indices = on_device.in_indptr, on_device.in_indices
    frontier, following = ws.queues
    kernels.bfs_bitmap_init_kernel[_blocks(n, tpb), tpb](np.int32(source), ws.depth, ws.parent, ws.visited, ws.bits,
                                                        ws.counters, frontier)
    size, arcs = 1, int(g.indptr[source + 1] - g.indptr[source])
    unexplored = g.n_arcs - arcs
    sizes, directions = [], []
    current, bottom_up = 0, False
    while size > 0:
        if optimizing:
            if not bottom_up and arcs > unexplored / ALPHA:
                bottom_up = True
            elif bottom_up and size < n / BETA:
                bottom_up = False
            directions.append("bottom-up" if bottom_up else "top-down")
        sizes.append(size)
        if bottom_up:
            kernels.bfs_bottom_up_bitmap_kernel[word_grid, tpb](
                d_in_indptr, d_in_indices, d_indptr, np.int32(current), ws.depth, ws.parent, ws.visited, ws.bits,
                following, ws.counters)
        else:
            kernel[_blocks(size, tpb), tpb](d_indptr, d_indices, frontier, np.int32(size), np.int32(current),
                                            ws.depth, ws.parent, ws.visited, ws.bits, following, ws.counters)
        ws.counters[current % 2].copy_to_host(ws.pinned)  # the level's one copy: next size and arcs
        size, arcs = int(ws.pinned[0]), int(ws.pinned[1])
        unexplored -= arcs
        frontier, following = following, frontier
        current += 1
    if download:
        host = ws.download()
        depth, parent = host[0], host[1]
    else:
        depth, parent = ws.depth, ws.parent
    return BFSRun(method, source, depth, parent, g, current, sizes, directions)


def _first_frontier(source, n):
    from numba import cuda

    frontier = np.zeros(n, dtype=np.int32)
    frontier[0] = source
    return cuda.to_device(frontier)


def _init(g: Graph, source: int):
    from numba import cuda

    from . import kernels

    tpb = default_block()
    d_depth = cuda.device_array(g.n_vertices, dtype=np.int32)
    d_parent = cuda.device_array(g.n_vertices, dtype=np.int32)
    kernels.bfs_init_kernel[_blocks(g.n_vertices, tpb), tpb](np.int32(source), d_depth, d_parent)
    return d_depth, d_parent


def _run_edge_quadratic(g: Graph, source: int, on_device, download=True) -> BFSRun:
    """The source's host loop: copy ``done = 1`` in, launch over all edges, copy it back."""
    from numba import cuda

    from . import kernels

    tpb = default_block()
    edge_u, edge_v, both = g.edge_list
    d_u, d_v = on_device.edge_u, on_device.edge_v
    d_depth, d_parent = _init(g, source)
    true = np.ones(1, np.int32)
    d_done = cuda.to_device(true)
    current = 0
    while True:
        d_done.copy_to_device(true)
        kernels.bfs_edge_quadratic_kernel[_blocks(edge_u.size, tpb), tpb](
            d_u, d_v, np.int32(both), np.int32(current), d_depth, d_parent, d_done)
        if d_done.copy_to_host()[0]:
            break
        current += 1
    depth, parent = _result(d_depth, d_parent, download)
    host_depth = depth if download else depth.copy_to_host()
    # This method has no frontier: report how many vertices each iteration's depth had.
    sizes = [int(x) for x in np.bincount(host_depth[host_depth >= 0], minlength=current + 1)]
    return BFSRun("edge_quadratic", source, depth, parent, g, current + 1, sizes)


def _run_frontier_atomic(g: Graph, source: int, on_device, download=True) -> BFSRun:
    from numba import cuda

    d_depth, d_parent = _init(g, source)
    d_frontier = _first_frontier(source, g.n_vertices)
    d_next = cuda.device_array(g.n_vertices, dtype=np.int32)
    d_next_size = cuda.device_array(1, dtype=np.int32)
    sizes = []
    size, current = 1, 0
    while size > 0:
        sizes.append(size)
        size = _atomic_level(on_device, d_frontier, size, current, d_depth, d_parent, d_next, d_next_size)
        d_frontier, d_next = d_next, d_frontier
        current += 1
    return BFSRun("frontier_atomic", source, *_result(d_depth, d_parent, download), g, current, sizes)


def _atomic_level(on_device, d_frontier, size, current, d_depth, d_parent, d_next, d_next_size):
    """Expand one level with :func:`~course_lib.bfs.kernels.bfs_frontier_atomic_kernel`.

    Returns
    -------
    int
        The size of the next frontier, written to ``d_next``.
    """
    from . import kernels

    tpb = default_block()
    d_next_size.copy_to_device(np.zeros(1, np.int32))
    kernels.bfs_frontier_atomic_kernel[_blocks(size, tpb), tpb](
        on_device.indptr, on_device.indices, d_frontier, np.int32(size), np.int32(current), d_depth, d_parent, d_next,
        d_next_size)
    return int(d_next_size.copy_to_host()[0])


def exclusive_scan(d_values, n: int, *, block=None):
    """Exclusive prefix sum of ``d_values[:n]`` on the device (int32), and the total.

    Each block scans ``block`` values (:func:`~course_lib.bfs.kernels.block_exclusive_scan_kernel`);
    the block totals are scanned the same way, recursively, and added back.

    Parameters
    ----------
    d_values : device array of int32, shape (>= n,)
    n : int
    block : int, optional
        Values (and threads) per block of the scan, a power of two: default 1024 on a
        GPU, 16 in the simulator (where every barrier is costly).

    Returns
    -------
    out : device array of int32, shape (max(n, 1),)
    total : int
    """
    from numba import cuda

    from . import kernels

    n = check_int(n, "n", minimum=0)
    block = _default_scan_block() if block is None else check_block(block)
    if block & (block - 1):
        raise ValueError(f"block must be a power of two (the scan halves it), got {block}")
    d_out = cuda.device_array(max(n, 1), dtype=np.int32)
    if n == 0:
        return d_out, 0
    n_blocks = _blocks(n, block)
    d_sums = cuda.device_array(n_blocks, dtype=np.int32)
    kernels.block_exclusive_scan_kernel(block)[n_blocks, block](d_values, np.int32(n), d_out, d_sums)
    if n_blocks == 1:
        return d_out, int(d_sums.copy_to_host()[0])
    d_offsets, total = exclusive_scan(d_sums, n_blocks, block=block)
    kernels.add_block_offsets_kernel[n_blocks, block](d_out, np.int32(n), d_offsets)
    return d_out, total


def _run_frontier_scan(g: Graph, source: int, on_device, download=True) -> BFSRun:
    """Frontier BFS whose next frontier comes from a scan-based compaction (no atomics on it)."""
    from numba import cuda

    from . import kernels

    tpb = default_block()
    n = g.n_vertices
    d_indptr, d_indices = on_device.indptr, on_device.indices
    d_depth, d_parent = _init(g, source)
    d_owner = cuda.to_device(np.full(n, -1, np.int32))
    capacity = max(g.n_arcs, 1)  # a level never has more candidates than arcs
    d_candidates = cuda.device_array(capacity, dtype=np.int32)
    d_candidate_parents = cuda.device_array(capacity, dtype=np.int32)
    d_keep = cuda.device_array(capacity, dtype=np.int32)
    d_degrees = cuda.device_array(n, dtype=np.int32)
    d_frontier = _first_frontier(source, n)
    d_next = cuda.device_array(n, dtype=np.int32)
    sizes = []
    size, current = 1, 0
    while size > 0:
        sizes.append(size)
        kernels.frontier_degree_kernel[_blocks(size, tpb), tpb](d_indptr, d_frontier, np.int32(size), d_degrees)
        d_offsets, n_candidates = exclusive_scan(d_degrees, size)
        next_size = 0
        if n_candidates:
            edge_grid = _blocks(n_candidates, tpb)
            kernels.expand_frontier_kernel[edge_grid, tpb](
                d_indptr, d_indices, d_frontier, np.int32(size), d_offsets, np.int32(n_candidates), d_depth, d_owner,
                d_candidates, d_candidate_parents)
            kernels.claim_candidates_kernel[edge_grid, tpb](
                d_candidates, d_candidate_parents, np.int32(n_candidates), d_owner, np.int32(current), d_depth,
                d_parent, d_keep)
            d_positions, next_size = exclusive_scan(d_keep, n_candidates)
            kernels.compact_kernel[edge_grid, tpb](d_candidates, d_keep, d_positions, np.int32(n_candidates), d_next)
        size = next_size
        d_frontier, d_next = d_next, d_frontier
        current += 1
    return BFSRun("frontier_scan", source, *_result(d_depth, d_parent, download), g, current, sizes)


def _run_direction_optimizing(g: Graph, source: int, on_device, download=True) -> BFSRun:
    """Top-down steps with atomics while the frontier is small, bottom-up steps while it is large.

    The switch follows Beamer et al.: bottom-up once the frontier's arcs exceed the
    arcs still unexplored / ``ALPHA``; top-down again once the frontier has fewer than
    V / ``BETA`` vertices. A level found bottom-up is counted from the depths by a flag map
    and a scan, and listed by a compaction when the next step is top-down. The unexplored arcs are counted from the top-down levels' frontiers,
    so after a bottom-up phase they are overestimated, which only makes a second switch
    less eager.
    """
    from numba import cuda

    from . import kernels

    tpb = default_block()
    n = g.n_vertices
    d_indptr = on_device.indptr
    d_in_indptr, d_in_indices = on_device.in_indptr, on_device.in_indices
    d_depth, d_parent = _init(g, source)
    d_frontier = _first_frontier(source, n)
    d_next = cuda.device_array(n, dtype=np.int32)
    d_next_size = cuda.device_array(1, dtype=np.int32)
    d_degrees = cuda.device_array(n, dtype=np.int32)
    d_flags = cuda.device_array(n, dtype=np.int32)
    d_vertex_ids = cuda.to_device(np.arange(n, dtype=np.int32))
    sizes, directions = [], []
    unexplored_arcs = g.n_arcs
    size, current, bottom_up, listed, d_positions = 1, 0, False, True, None
    while size > 0:
        if bottom_up and size < n / BETA:
            bottom_up = False
        if not bottom_up:
            if not listed:  # the level was found bottom-up: list its flagged vertices
                kernels.compact_kernel[_blocks(n, tpb), tpb](d_vertex_ids, d_flags, d_positions, np.int32(n),
                                                             d_frontier)
            kernels.frontier_degree_kernel[_blocks(size, tpb), tpb](d_indptr, d_frontier, np.int32(size), d_degrees)
            _, frontier_arcs = exclusive_scan(d_degrees, size)
            unexplored_arcs -= frontier_arcs
            bottom_up = frontier_arcs > max(unexplored_arcs, 0) / ALPHA and frontier_arcs > 0
        sizes.append(size)
        directions.append("bottom-up" if bottom_up else "top-down")
        if bottom_up:
            kernels.bfs_bottom_up_kernel[_blocks(n, tpb), tpb](d_in_indptr, d_in_indices, np.int32(current), d_depth,
                                                               d_parent)
            # The next frontier: the vertices now of depth current + 1, flagged and counted.
            kernels.level_flags_kernel[_blocks(n, tpb), tpb](d_depth, np.int32(current + 1), d_flags)
            d_positions, size = exclusive_scan(d_flags, n)
            listed = False
        else:
            size = _atomic_level(on_device, d_frontier, size, current, d_depth, d_parent, d_next, d_next_size)
            listed = True
            d_frontier, d_next = d_next, d_frontier
        current += 1
    return BFSRun("direction_optimizing", source, *_result(d_depth, d_parent, download), g, current, sizes,
                  directions)
