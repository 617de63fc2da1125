"""The race and barrier checker on every BFS kernel: clean, or only the races the design relies on.

Three kernels race on purpose, and the lesson explains why the result does not depend
on the order: the edge-parallel kernel (threads reaching one vertex in the same
iteration all write the same depth; any of their parents is valid), the owner election
of the scan-based expansion (whichever write lands last wins) and the bottom-up step (a
thread reads neighbours' depths while their own threads may write current + 1, which
it never takes for current).
"""


import inspect

import numpy as np
import pytest
from course_lib.bfs import as_graph, data
from course_lib.bfs import kernels as K
from course_lib.sim import check

GRAPH = as_graph(data.from_edges([0, 0, 1, 2, 3, 3], [1, 2, 3, 3, 4, 5], 6), directed=False)


DEPTH = np.array([0, 1, 1, -1, -1, -1], np.int32)  # state after the first level


PARENT = np.array([0, 0, 0, -1, -1, -1], np.int32)


FRONTIER = np.array([1, 2, 0, 0, 0, 0], np.int32)


CANDIDATES = np.array([0, 3, 0, 3], np.int32)


CANDIDATE_PARENTS = np.array([1, 1, 2, 2], np.int32)


def launches():
    g = GRAPH
    edge_u, edge_v, both = g.edge_list
    owner = np.array([-1, -1, -1, 3, -1, -1], np.int32)
    keep = np.array([0, 0, 0, 1], np.int32)
    return {
        "init": (K.bfs_init_kernel, 1, 8, np.int32(0), DEPTH.copy(), PARENT.copy()),
        "edge_quadratic": (K.bfs_edge_quadratic_kernel, 1, 8, edge_u, edge_v, np.int32(both), np.int32(1),
                           DEPTH.copy(), PARENT.copy(), np.ones(1, np.int32)),
        "frontier_atomic": (K.bfs_frontier_atomic_kernel, 1, 8, g.indptr, g.indices, FRONTIER, np.int32(2),
                            np.int32(1), DEPTH.copy(), PARENT.copy(), np.zeros(6, np.int32), np.zeros(1, np.int32)),
        "bottom_up": (K.bfs_bottom_up_kernel, 1, 8, g.indptr, g.indices, np.int32(1), DEPTH.copy(), PARENT.copy()),
        "level_flags": (K.level_flags_kernel, 1, 8, DEPTH.copy(), np.int32(1), np.zeros(6, np.int32)),
        "degrees": (K.frontier_degree_kernel, 1, 8, g.indptr, FRONTIER, np.int32(2), np.zeros(6, np.int32)),
        "expand": (K.expand_frontier_kernel, 1, 8, g.indptr, g.indices, FRONTIER, np.int32(2),
                   np.array([0, 2], np.int32), np.int32(4), DEPTH.copy(), np.full(6, -1, np.int32),
                   np.zeros(4, np.int32), np.zeros(4, np.int32)),
        "claim": (K.claim_candidates_kernel, 1, 8, CANDIDATES, CANDIDATE_PARENTS, np.int32(4), owner, np.int32(1),
                  DEPTH.copy(), PARENT.copy(), np.zeros(4, np.int32)),
        "scan": (K.block_exclusive_scan_kernel(16), 2, 16, np.arange(20, dtype=np.int32), np.int32(20),
                 np.zeros(20, np.int32), np.zeros(2, np.int32)),
        "block_offsets": (K.add_block_offsets_kernel, 2, 16, np.zeros(20, np.int32), np.int32(20),
                          np.array([0, 120], np.int32)),
        "compact": (K.compact_kernel, 1, 8, CANDIDATES, keep, np.array([0, 0, 0, 0], np.int32), np.int32(4),
                    np.zeros(6, np.int32)),
    }


#: The arrays each kernel races on by design; every other kernel must be clean.
#: frontier_atomic: the plain read of depth[v] that filters before the atomic CAS races with
#: other threads' CAS (a plain access and an atomic are not exempt from each other); benign:
#: only the CAS decides who claims v.
BENIGN_RACES = {"edge_quadratic": {"depth", "parent", "done"}, "expand": {"owner"}, "bottom_up": {"depth"},
                "frontier_atomic": {"depth"}}


@pytest.mark.parametrize("name", sorted(launches()))
@pytest.mark.parametrize("seed", [None, 1])
def test_kernels_are_clean_or_race_only_by_design(name, seed):
    kernel, grid, block, *args = launches()[name]
    report = check(kernel, grid, block, *args, seed=seed)
    assert report.kinds() <= {"race"}, str(report)
    raced = {p.array for p in report.problems}
    assert raced <= BENIGN_RACES.get(name, set()), str(report)


def test_the_election_race_is_really_there():
    """Do two threads write owner[3]? Yes: candidates 1 and 3 are both edges into vertex 3."""
    kernel, grid, block, *args = launches()["expand"]
    report = check(kernel, grid, block, *args)
    assert [p.array for p in report.problems] == ["owner"]
    owner = args[7]
    assert owner[3] in (1, 3)


def test_the_kernels_carry_no_counters():
    """The kernels students read do only the search: no counter argument, no shared counters, no atomics
    except the frontier claims of the atomic design."""
    # The shipped bitmap search claims with atomics, gathers in shared memory and returns the next
    # frontier's size and arcs in ``counters`` (what the host needs to go on, not a work count).
    bitmap_search = {"bfs_bitmap_init_kernel", "bfs_twc_kernel", "bfs_bottom_up_bitmap_kernel"}
    for name in K.__all__:
        kernel = getattr(K, name)
        if not callable(kernel) or name in {"block_exclusive_scan_kernel"} | bitmap_search:
            continue
        source = inspect.getsource(kernel.py_func)
        assert "work" not in inspect.signature(kernel.py_func).parameters, name
        assert "shared" not in source, name
        if name != "bfs_frontier_atomic_kernel":
            assert "atomic" not in source.split('"""')[-1], name
