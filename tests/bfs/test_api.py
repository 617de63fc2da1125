"""Unit 3: every BFS variant gives SciPy's depths and a valid parent tree, on every graph family."""

import numpy as np
import pytest
import scipy.sparse as sp

from course_lib import bfs, pick
from course_lib.bfs import data

GPU_METHODS = ["direction_optimizing_twc", "frontier_twc", "frontier_atomic", "frontier_scan", "edge_quadratic",
               "direction_optimizing"]


def _families():
    """Small graphs of every family (the simulator runs ~100 us per thread)."""
    side = pick(sim=4, gpu=40)
    return {
        "star": data.star(pick(sim=9, gpu=1000)),
        "chain": data.chain(pick(sim=7, gpu=300)),
        "grid": data.grid_2d(side, side + 1),
        "kronecker": data.kronecker(pick(sim=5, gpu=14), 4, seed=3),
        "disconnected": data.disconnected((6, 4), 2, seed=1),
        "loops_and_duplicates": data.with_self_loops_and_duplicates(data.random_graph(13, 3, seed=4, directed=True)),
        "karate_club": data.real_graph("karate_club")[0],
    }


FAMILIES = _families()


def assert_valid_search(graph, source, depth, parent, directed):
    expected = bfs.bfs_reference(graph, source, directed=directed)
    assert depth.dtype == np.int32 and depth.shape == expected.shape
    np.testing.assert_array_equal(depth, expected)
    assert parent.dtype == np.int32
    assert bfs.parent_tree_problems(graph, source, parent, directed=directed) == []


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("method", GPU_METHODS + ["cpu"])
def test_undirected_depths_equal_scipy(method, family):
    graph = FAMILIES[family]
    depth, parent = bfs.bfs(graph, 0, method=method, parents=True, directed=False)
    assert_valid_search(graph, 0, depth, parent, directed=False)


#: Directed graphs: a one-way power-law graph, components joined one way only, and a multigraph with loops.
DIRECTED = {
    "kronecker": data.kronecker(4, 3, seed=2, directed=True),
    "disconnected": data.disconnected((7, 5), 2, seed=5, directed=True),
    "loops_and_duplicates": FAMILIES["loops_and_duplicates"],
}


@pytest.mark.parametrize("family", sorted(DIRECTED))
@pytest.mark.parametrize("method", GPU_METHODS + ["cpu"])
def test_directed_depths_equal_scipy(method, family):
    graph = DIRECTED[family]
    source = int(np.argmax(np.diff(graph.indptr)))  # a source with out-edges
    depth, parent = bfs.bfs(graph, source, method=method, parents=True, directed=True)
    assert_valid_search(graph, source, depth, parent, directed=True)
    if family != "kronecker":
        assert (depth == -1).any()  # some vertices are reachable only against the edges' direction


@pytest.mark.parametrize("method", bfs.METHODS)
def test_directed_chain_is_one_way(method):
    depth = bfs.bfs(data.chain(5, directed=True), 2, method=method)
    np.testing.assert_array_equal(depth, [-1, -1, 0, 1, 2])


@pytest.mark.parametrize("method", bfs.METHODS)
def test_isolated_source_reaches_nothing(method):
    graph = data.from_edges([1, 2], [2, 3], 5)  # vertex 0 has no edge
    depth, parent = bfs.bfs(graph, 0, method=method, parents=True)
    np.testing.assert_array_equal(depth, [0, -1, -1, -1, -1])
    np.testing.assert_array_equal(parent, [0, -1, -1, -1, -1])


@pytest.mark.parametrize("method", bfs.METHODS)
def test_single_vertex_and_no_edges(method):
    depth, parent = bfs.bfs(sp.csr_matrix((1, 1), dtype=np.int8), 0, method=method, parents=True)
    np.testing.assert_array_equal(depth, [0])
    np.testing.assert_array_equal(parent, [0])
    depth = bfs.bfs(sp.csr_matrix((4, 4), dtype=np.int8), 3, method=method)
    np.testing.assert_array_equal(depth, [-1, -1, -1, 0])


@pytest.mark.parametrize("method", GPU_METHODS)
def test_sizes_around_the_block(method):
    """Frontiers and edge lists of 31, 32 and 33 elements against blocks of 32 threads."""
    for n in (pick(sim=32, gpu=256), pick(sim=33, gpu=257)):
        graph = data.star(n)  # n - 1 leaves: frontier n - 1, edge list n - 1
        run = bfs.traverse(graph, 0, method, directed=False)
        np.testing.assert_array_equal(run.depth, bfs.bfs_reference(graph, 0, directed=False))


def test_explicit_zeros_are_edges_like_in_scipy():
    graph = sp.csr_matrix((np.array([0, 5], np.int8), np.array([1, 2]), np.array([0, 1, 2, 2])), shape=(3, 3))
    assert graph.nnz == 2
    np.testing.assert_array_equal(bfs.bfs(graph, 0, method="frontier_atomic"), [0, 1, 2])


def test_other_sparse_formats_are_accepted():
    graph = data.grid_2d(2, 3)
    expected = bfs.bfs_reference(graph, 0)
    for converted in (graph.tocoo(), graph.tocsc(), sp.csr_array(graph), graph.astype(np.float64)):
        np.testing.assert_array_equal(bfs.bfs(converted, 0, method="cpu"), expected)


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("directed", [True, False])
def test_parallel_cpu_bfs_equals_scipy(family, directed):
    graph = FAMILIES[family]
    source = int(np.argmax(np.diff(graph.indptr)))
    depth, parent = bfs.bfs_cpu_parallel(graph, source, directed=directed)
    assert_valid_search(graph, source, depth, parent, directed=directed)


def test_parallel_cpu_bfs_goes_bottom_up_on_a_power_law_graph():
    """Same depths whichever direction each level takes: the hub's level is large enough to switch."""
    graph = data.kronecker(9, 16, seed=4)
    hub = int(np.argmax(np.diff(graph.indptr)))
    depth, parent = bfs.bfs_cpu_parallel(graph, hub, directed=False)
    assert_valid_search(graph, hub, depth, parent, directed=False)


def test_scipy_peer_gives_the_same_depths_and_a_valid_tree():
    graph = data.kronecker(7, 8, seed=9)
    depth, parent = bfs.bfs_scipy(graph, 5, directed=False)
    assert_valid_search(graph, 5, depth, parent, directed=False)


def _csr(indices, indptr, n):
    return sp.csr_matrix((np.ones(len(indices), np.int8), np.array(indices), np.array(indptr)), shape=(n, n))


def test_quadratic_bfs_scans_every_edge_every_iteration_on_a_chain():
    """Is the edge-parallel BFS O(V * E) on a chain? V iterations over all V - 1 edges."""
    n = 9
    run = bfs.traverse(data.chain(n), 0, "edge_quadratic", directed=False)
    assert run.iterations == n  # depths 0..n-1 expanded; the last iteration finds nothing
    assert run.edges_examined == [n - 1] * n
    assert run.newly_reached == [1] * (n - 1) + [0]


def test_frontier_bfs_examines_each_arc_once():
    """Is the frontier BFS linear? Each reached vertex's adjacency list is scanned once."""
    graph = data.grid_2d(4, 5)
    g = bfs.as_graph(graph, directed=False)
    _, _, _, cpu_edges = bfs.bfs_cpu(g, 7, return_levels=True)
    for method in ("frontier_atomic", "frontier_scan", "frontier_twc", "cpu"):
        run = bfs.traverse(graph, 7, method, directed=False)
        assert run.total_edges_examined == g.n_arcs
        assert run.edges_examined == [int(x) for x in cpu_edges]  # what the CPU queue BFS counts in its loop
        # The host loop's frontier sizes are the levels of the depths.
        assert run.frontier_sizes == [int((run.depth == d).sum()) for d in range(run.iterations)]
        assert run.iterations == run.max_depth + 1


def test_direction_optimizing_goes_bottom_up_and_examines_fewer_edges():
    """Does the bottom-up step pay off on a power-law graph? Most vertices find a parent at once."""
    graph = bfs.as_graph(data.kronecker(8, 8, seed=1), directed=False)
    source = int(np.argmin(np.where(graph.degrees > 0, graph.degrees, graph.n_arcs)))
    top_down = bfs.traverse(graph, source, "frontier_atomic")
    hybrid = bfs.traverse(graph, source, "direction_optimizing")
    np.testing.assert_array_equal(hybrid.depth, top_down.depth)
    assert hybrid.directions[0] == "top-down" and "bottom-up" in hybrid.directions
    assert len(hybrid.directions) == hybrid.iterations == top_down.iterations
    assert hybrid.total_edges_examined < top_down.total_edges_examined / 2
    # The host loop's next frontier (counted by a flag map and a scan after a bottom-up step) is the next level.
    assert hybrid.frontier_sizes[1:] == hybrid.newly_reached[:-1]
    assert hybrid.newly_reached[-1] == 0


@pytest.mark.parametrize("directed", [False, True])
def test_bitmap_direction_optimizing_goes_bottom_up(directed):
    matrix = data.kronecker(8, 8, seed=1, directed=directed)
    graph = bfs.as_graph(matrix, directed=directed)
    source = int(np.argmax(graph.degrees))
    top_down = bfs.traverse(graph, source, "frontier_twc")
    hybrid = bfs.traverse(graph, source, "direction_optimizing_twc")
    expected = bfs.bfs_reference(matrix, source, directed=directed)
    np.testing.assert_array_equal(top_down.depth, expected)
    np.testing.assert_array_equal(hybrid.depth, expected)
    assert "bottom-up" in hybrid.directions and len(hybrid.directions) == hybrid.iterations
    assert hybrid.total_edges_examined < top_down.total_edges_examined
    # The counters the host reads each level are the next level's size.
    assert hybrid.frontier_sizes[1:] == hybrid.newly_reached[:-1] and hybrid.newly_reached[-1] == 0


@pytest.mark.parametrize("block", [32, 64])
def test_twc_gathers_by_block_warp_and_scan(monkeypatch, block):
    """A hub longer than the block, lists of 32..63 arcs (a warp each when the block is 64) and short ones."""
    rng = np.random.default_rng(block)
    n = 300
    lengths = [150, 70, 45, 33, 40] + list(rng.integers(0, 5, n - 5))
    rows = np.repeat(np.arange(n), lengths)
    cols = np.concatenate([rng.choice(n, k, replace=False) for k in lengths])
    graph = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n))
    monkeypatch.setattr(bfs.api, "default_block", lambda: block)
    for source in (0, 7):
        depth, parent = bfs.bfs(graph, source, method="frontier_twc", parents=True)
        assert_valid_search(graph, source, depth, parent, directed=True)


def _count_allocations(monkeypatch):
    from numba import cuda

    allocations = []
    for name in ("device_array", "device_array_like", "to_device", "pinned_array", "mapped_array"):
        original = getattr(cuda, name)
        monkeypatch.setattr(cuda, name, lambda *a, _o=original, _n=name, **k: allocations.append(_n) or _o(*a, **k))
    return allocations


def test_bitmap_search_costs_one_copy_per_level_and_one_for_the_result(monkeypatch):
    """A launch and an 8-byte copy per level, then depth and parent in one copy; nothing allocated once the
    caller has let go of the previous result (or holds just one: the workspace keeps two result buffers)."""
    from course_lib.sim import record

    graph = bfs.as_graph(data.grid_2d(5, 6), directed=False)
    on_device = bfs.DeviceGraph(graph)
    held = bfs.traverse(graph, 0, "direction_optimizing_twc", on_device=on_device)  # the workspace is made once
    held = [held, bfs.traverse(graph, 0, "frontier_twc", on_device=on_device)]  # ... and its two result buffers
    del held
    allocations = _count_allocations(monkeypatch)
    run = None
    for method in bfs.BITMAP_METHODS * 2:
        with record() as log:
            run = bfs.traverse(graph, 3, method, on_device=on_device)  # the previous run is still held here
        summary = log.summary()
        assert allocations == []
        assert summary["HtoD_count"] == 0
        assert summary["launches"] == run.iterations + 1  # the init, then one kernel per level
        assert summary["DtoH_count"] == run.iterations + 1  # a level's counters, then depth and parent at once
        assert summary["DtoH_bytes"] == 8 * run.iterations + 2 * 4 * graph.n_vertices
        assert run.iterations == run.max_depth + 1 >= 8
        np.testing.assert_array_equal(run.depth, bfs.bfs_reference(graph, 3, directed=False))


def test_a_kept_result_is_never_overwritten(monkeypatch):
    """Results live in the workspace's page-locked buffers, reused only when nothing refers to them."""
    graph = bfs.as_graph(data.grid_2d(3, 5), directed=False)
    on_device = bfs.DeviceGraph(graph)
    expected = {s: bfs.bfs_reference(graph, s, directed=False) for s in (0, 14, 7)}
    first = bfs.traverse(graph, 0, on_device=on_device)
    piece = first.parent[2:9]  # a view of a view
    depth = first.depth
    del first
    second = bfs.traverse(graph, 14, on_device=on_device)
    allocations = _count_allocations(monkeypatch)
    third = bfs.traverse(graph, 7, on_device=on_device)  # both buffers are held: a third is made
    assert allocations == ["pinned_array"]
    for run, source in ((second, 14), (third, 7)):
        np.testing.assert_array_equal(run.depth, expected[source])
        assert bfs.parent_tree_problems(graph, source, run.parent, directed=False) == []
    np.testing.assert_array_equal(depth, expected[0])
    assert ((piece == -1) | (expected[0][piece] == expected[0][2:9] - 1)).all() and (piece >= 0).all()
    del depth, piece, second
    allocations.clear()
    bfs.traverse(graph, 7, on_device=on_device)
    assert allocations == []  # the workspace still had one free buffer


@pytest.mark.parametrize("method", ["direction_optimizing_twc", "frontier_atomic"])
def test_download_false_leaves_depth_and_parent_on_the_device(method):
    from course_lib.sim import record

    def is_device_array(a):
        return hasattr(a, "copy_to_host") and not isinstance(a, np.ndarray)

    graph = bfs.as_graph(data.kronecker(5, 4, seed=3), directed=False)
    source = int(np.argmax(graph.degrees))
    on_device = bfs.DeviceGraph(graph)
    bfs.traverse(graph, source, method, on_device=on_device)
    with record() as log:
        run = bfs.traverse(graph, source, method, on_device=on_device, download=False)
    assert is_device_array(run.depth) and is_device_array(run.parent)
    result_bytes = sum(t.nbytes for t in log.transfers if t.direction == "DtoH" and t.nbytes >= 4 * graph.n_vertices)
    assert result_bytes == 0  # only the host loop's small copies
    expected = bfs.bfs_reference(graph, source, directed=False)
    np.testing.assert_array_equal(run.depth.copy_to_host(), expected)
    assert bfs.parent_tree_problems(graph, source, run.parent.copy_to_host(), directed=False) == []
    assert run.max_depth == expected.max() and sum(run.newly_reached) == (expected > 0).sum()
    with pytest.raises(ValueError, match="method 'cpu' has none"):
        bfs.traverse(graph, source, "cpu", download=False)


@pytest.mark.parametrize("method", bfs.BITMAP_METHODS)
def test_bitmap_searches_on_awkward_sizes(method):
    """One vertex, a prime past a warp (a star: bottom-up from the first level), a chain, isolated vertices.

    (Stars of 32 and 33 vertices: test_sizes_around_the_block.)"""
    graphs = [data.star(1), data.star(37), data.chain(3), data.disconnected((5, 29), 3, seed=2),
              data.from_edges(np.array([], np.int32), np.array([], np.int32), 37)]
    for matrix in graphs:
        graph = bfs.as_graph(matrix, directed=False)
        for source in sorted({0, graph.n_vertices - 1}):
            run = bfs.traverse(graph, source, method)
            assert_valid_search(matrix, source, run.depth, run.parent, directed=False)
            # The counters the host read at each level are the next level's size.
            assert run.frontier_sizes[1:] == run.newly_reached[:-1] and run.newly_reached[-1] == 0


def _counter_atomics(report):
    """Atomics of the two counter updates of a bitmap kernel, and the warp votes that found a vertex."""
    rows = [report.line("cuda.atomic.add(counters, (level, 0)"), report.line("cuda.atomic.add(counters, (level, 1)")]
    votes_with_finds = report.line("arcs = 0").active_lanes // 32  # whole warps take that branch
    return [row.atomics for row in rows], votes_with_finds


def test_bitmap_kernels_count_their_finds_with_one_atomic_pair_per_warp():
    """The next frontier's size and arcs grow by one atomic per warp and vote, not one per vertex found."""
    from course_lib.bfs import _kernels_bitmap as bitmap
    from course_lib.sim import profile

    grid, block, args = bitmap._example_twc(32)
    report = profile(bitmap.bfs_twc_kernel(32), grid, block, *args)
    counters, depth = args[-1], args[5]
    found = int(counters[0, 0])
    assert found == int((depth == 1).sum()) > 64
    (sizes, arcs), votes = _counter_atomics(report)
    assert sizes == arcs == votes < found / 4
    indptr, frontier = args[0], args[2]
    assert report.line("old = cuda.atomic.or_(visited").atomics == int(np.diff(indptr)[frontier].sum())  # per arc
    grid, block, args = bitmap._example_bottom_up()
    report = profile(bitmap.bfs_bottom_up_bitmap_kernel, grid, block, *args)
    depth, counters = args[4], args[-1]
    reached = np.flatnonzero(depth == 1)
    assert int(counters[0, 0]) == reached.size > 0
    words = np.unique(reached >> 5).size  # a warp owns a word: one vote with finds per word
    assert _counter_atomics(report) == ([words, words], words)
    assert int(counters[0, 1]) == int(np.diff(args[2])[reached].sum())  # out-arcs of the vertices found


def test_twc_kernel_needs_whole_warps():
    from course_lib.bfs import kernels

    for block in (16, 48, 2048):
        with pytest.raises(ValueError, match="multiple of 32"):
            kernels.bfs_twc_kernel(block)


def test_star_needs_two_iterations_chain_needs_v():
    star = bfs.traverse(data.star(12), 0, "edge_quadratic", directed=False)
    chain = bfs.traverse(data.chain(12), 0, "edge_quadratic", directed=False)
    assert (star.iterations, chain.iterations) == (2, 12)
    assert star.total_edges_examined == 2 * 11 and chain.total_edges_examined == 12 * 11


def test_benign_race_duplicate_writes_are_measured():
    """Two edges reach vertex 3 in the same iteration: one or both threads write depth 2.

    Whether the second thread still sees vertex 3 unvisited depends on timing (on a
    GPU both usually do); either way the depth is the same and the parent valid. The
    profiler counts the depth stores that really ran in the simulator's order.
    """
    from course_lib.bfs.profiling import measure_search

    graph = data.from_edges([0, 0, 1, 2], [1, 2, 3, 3], 4)
    for _ in range(3):
        run, measured = measure_search(graph, 0, "edge_quadratic", directed=False)
        np.testing.assert_array_equal(run.depth, [0, 1, 1, 2])
        assert run.newly_reached == [2, 1, 0]
        writes = [m.depth_writes for m in measured]
        assert writes[0] == 2 and writes[1] in (1, 2) and writes[2] == 0
        assert run.parent[3] in (1, 2)


def test_exclusive_scan_on_awkward_lengths():
    from numba import cuda

    rng = np.random.default_rng(1)
    for n in (1, 15, 16, 17, 40, 257):  # 257 > 16 * 16: three levels of block sums in the simulator
        values = rng.integers(0, 5, n).astype(np.int32)
        out, total = bfs.exclusive_scan(cuda.to_device(values), n)
        np.testing.assert_array_equal(out.copy_to_host()[:n], np.cumsum(values) - values)
        assert total == int(values.sum())


@pytest.mark.parametrize("graph,source,message", [
    (sp.csr_matrix((3, 4)), 0, "square"),
    (np.eye(3), 0, "SciPy sparse adjacency matrix"),
    ([[0, 1], [1, 0]], 0, "SciPy sparse adjacency matrix"),
    (sp.csr_matrix((0, 0)), 0, "no vertices"),
    (data.chain(4), 4, "out of range"),
    (data.chain(4), -1, "negative"),
    (data.chain(4), 1.5, "integer"),
    (data.chain(4), True, "integer"),
    (_csr([1, -1], [0, 1, 2], 2), 0, "negative column index"),
    (_csr([1, 5], [0, 1, 2], 2), 0, "column index 5, out of range"),
])
def test_bad_input_is_a_clear_error(graph, source, message):
    for method in bfs.METHODS:
        with pytest.raises(ValueError, match=message):
            bfs.bfs(graph, source, method=method)


def test_unknown_method_and_direction_flag():
    with pytest.raises(ValueError, match="method must be one of"):
        bfs.bfs(data.chain(3), 0, method="bottom_up")
    with pytest.raises(ValueError, match="directed must be True or False"):
        bfs.bfs(data.chain(3), 0, directed="yes")
