"""Problem set 3 (``solutions/ps3_bfs.ipynb``), on the shared harness (:mod:`course_lib.grading.harness`).

- ``ps3.q1`` (6 points): a **race-free bottom-up step** with frontier bitmaps. Answer:
  ``check("ps3.q1", bottom_up_step)``, a kernel ``(in_indptr, in_indices, frontier_flags, current, depth,
  parent, next_flags, next_count)`` with one thread per vertex, run level by level by
  :func:`run_bottom_up`. Graded on depths (SciPy) and any valid parent tree, on ``next_count`` equal
  to the vertices reached, on a clean race check, and with the profiler: each unvisited vertex stops
  at its first parent (global loads near the early-exit model).
- ``ps3.q2`` (2 points): predict the edges the step examines, and measure its global loads per level.
  Answer: ``{"kernel": bottom_up_step, "predicted_edges": f(in_indptr, in_indices, frontier_flags,
  depth), "measure": g(level)}``.
- ``ps3.q3`` (2 points): the work of the edge-parallel and frontier BFS on a one-way chain searched from its
  middle, and the worst-case work of a search made of bottom-up steps only. Answer:
  ``{"quadratic_on_chain": f(n), "frontier_on_chain": g(n), "complexity": one of WORK_CHOICES}``. The lesson
  prints the counts for an undirected chain from one end (V (V - 1) and 2E) and the worst case of the
  edge-parallel BFS; none of them is an answer here.
"""

from __future__ import annotations

import numpy as np

from ..grading.harness import (Launch, calls_test, choice, fail, function, guarded, inner, kernel, measured_test,
                               measurement, question, race_test, result_test, technique_test, unguard, value_test)
from . import data
from .data import Graph, as_graph
from .reference import bfs_reference, parent_tree_problems

PROBLEM_SET = "ps3"
WORK_CHOICES = ("O(V + E)", "O(V log V + E)", "O(V * E)", "O(E^2)")
BLOCK = 32
#: Graph, source and levels of the measure-and-explain question.
MEASURE_LEVELS = (1, 2, 3)


def measure_graph():
    """The graph measured in q2 (undirected, 120 vertices, mean degree 12); the notebook builds the same one."""
    return data.random_graph(120, 12, seed=4)


# ----------------------------------------------------------------------------- q1
def graph_case(graph, source, directed):
    """``inputs`` data: the in-neighbour CSR the step reads, the out-CSR the judge checks, and the source."""
    g = as_graph(graph, directed=directed)
    in_indptr, in_indices = g.in_edges
    return {"indptr": g.indptr, "indices": g.indices, "in_indptr": in_indptr, "in_indices": in_indices,
            "source": int(source), "directed": bool(directed)}


def case(make, directed=False):
    return lambda rng, info: graph_case(*make(rng), directed)


def run_bottom_up(step, in_indptr, in_indices, source):
    """The host loop: launch the step once per level until it reaches nothing; depth and parent are guarded.

    Returns
    -------
    dict
        ``depth`` and ``parent`` (int32, guarded rows), ``counts`` (next_count after each level) and
        ``reached`` (the next_flags set at each level).
    """
    from numba import cuda

    n = len(in_indptr) - 1
    depth, parent = np.full(n, -1, np.int32), np.full(n, -1, np.int32)
    depth[source], parent[source] = 0, source
    d_depth, d_parent = cuda.to_device(guarded(depth)), cuda.to_device(guarded(parent))
    d_indptr, d_indices = cuda.to_device(np.asarray(in_indptr, np.int32)), cuda.to_device(np.asarray(in_indices, np.int32))
    flags = np.zeros(n, np.uint8)
    flags[source] = 1
    counts, reached = [], []
    for current in range(n):
        d_next, d_count = cuda.to_device(guarded(np.zeros(n, np.uint8))), cuda.to_device(guarded(np.zeros(1, np.int32)))
        d_flags = cuda.to_device(guarded(flags, fill=0))
        step[max(1, -(-n // BLOCK)), BLOCK](d_indptr, d_indices, inner(d_flags), np.int32(current), inner(d_depth),
                                            inner(d_parent), inner(d_next), inner(d_count))
        count = unguard(d_count.copy_to_host(), (1,), name="next_count")[0]
        flags = unguard(d_next.copy_to_host(), (n,), name="next_flags")
        counts.append(int(count))
        reached.append(np.flatnonzero(flags).astype(np.int32))
        if count == 0 or not flags.any():
            break
    return {"depth": d_depth.copy_to_host(), "parent": d_parent.copy_to_host(), "counts": counts,
            "reached": reached}


def _run(answer, case_data):
    return run_bottom_up(answer.kernel(), case_data["in_indptr"], case_data["in_indices"], case_data["source"])


def _graph(case_data):
    return Graph(len(case_data["indptr"]) - 1, case_data["directed"], np.asarray(case_data["indptr"], np.int32),
                 np.asarray(case_data["indices"], np.int32))


def judge_depths(case_data, got):
    g = _graph(case_data)
    depth = unguard(got["depth"], (g.n_vertices,), name="depth")
    parent = unguard(got["parent"], (g.n_vertices,), name="parent")
    expected = bfs_reference(g, case_data["source"])
    wrong = np.flatnonzero(depth != expected)
    if wrong.size:
        v = int(wrong[0])
        raise fail(f"depths differ from SciPy's at {wrong.size} of {expected.size} vertices; first at vertex {v}: "
                   f"got {depth[v]}, expected {expected[v]} (-1 = unreachable)", "value")
    problems = parent_tree_problems(g, case_data["source"], parent)
    if problems:
        raise fail("the parent array is not a valid BFS tree: " + "; ".join(problems), "value")


def judge_counts(case_data, got):
    """next_count after each level equals the vertices the level reached (each listed once)."""
    expected = bfs_reference(_graph(case_data), case_data["source"])
    for level, (count, listed) in enumerate(zip(got["counts"], got["reached"])):
        want = np.flatnonzero(expected == level + 1)
        if count != want.size or not np.array_equal(np.sort(np.asarray(listed)), want):
            raise fail(f"level {level}: next_count = {count} and {len(listed)} vertices flagged, but the level reaches "
                       f"{want.size}: each vertex must be claimed once, by its own thread", "race")


def search_test(name, points, make, *, directed=False, hidden=False, counts=False):
    def judge(case_data, got):
        if not isinstance(got, dict) or not {"depth", "parent", "counts", "reached"} <= set(got):
            raise fail("the search's outputs did not come back")
        (judge_counts if counts else judge_depths)(case_data, got)

    return result_test(name, points, inputs=case(make, directed), run=_run, hidden=hidden,
                       technique=counts, judge=judge)


def one_level(graph, source, level, directed=False):
    """``inputs`` data for one launch: the state before ``level`` is expanded, from SciPy's depths."""
    c = graph_case(graph, source, directed)
    depth = bfs_reference(_graph(c), source)
    c.update(current=int(level), flags=(depth == level).astype(np.uint8),
             depth=np.where((depth >= 0) & (depth <= level), depth, -1).astype(np.int32))
    return c


def launch_level(answer, c):
    n = len(c["in_indptr"]) - 1
    parent = np.where(np.asarray(c["depth"]) >= 0, 0, -1).astype(np.int32)
    args = {"in_indptr": np.asarray(c["in_indptr"]), "in_indices": np.asarray(c["in_indices"]),
            "frontier_flags": np.asarray(c["flags"]), "current": np.int32(c["current"]),
            "depth": np.array(c["depth"]), "parent": parent, "next_flags": np.zeros(n, np.uint8),
            "next_count": np.zeros(1, np.int32)}
    return Launch(answer.kernel(), max(1, -(-n // BLOCK)), BLOCK, args, outputs=("depth", "next_flags", "next_count"))


def expect_level(c):
    depth = np.array(c["depth"])
    found = (depth == -1) & (bfs_reference(_graph(c), c["source"]) == c["current"] + 1)
    depth[found] = c["current"] + 1
    return {"depth": depth, "next_flags": found.astype(np.uint8), "next_count": np.array([found.sum()], np.int32)}


def examined_edges(in_indptr, in_indices, frontier_flags, depth):
    """Edges a bottom-up step with early exit examines: up to the first frontier neighbour of each unvisited vertex."""
    total = 0
    for v in np.flatnonzero(np.asarray(depth) == -1):
        neighbours = np.asarray(in_indices[in_indptr[v]:in_indptr[v + 1]])
        hits = np.flatnonzero(np.asarray(frontier_flags)[neighbours])
        total += int(hits[0]) + 1 if hits.size else neighbours.size
    return total


def early_exit_bytes(c):
    """Loads of the early-exit step, with 25% slack: 5 bytes per examined edge (its index and flag), 4 per vertex
    (its depth) and 8 per unvisited vertex (its two indptr entries)."""
    depth = np.asarray(c["depth"])
    model = 5 * examined_edges(c["in_indptr"], c["in_indices"], c["flags"], depth) + 4 * depth.size \
        + 8 * int(np.sum(depth == -1))
    return 0.0, 1.25 * model + 64


def _loaded(metrics, c):
    return metrics["global_load_bytes"]


_DENSE = (lambda rng: (measure_graph(), 0))
_KERNEL = kernel("bottom_up_step")

Q1 = question(
    "ps3.q1", "race-free bottom-up step", 6, answer=_KERNEL,
    tolerance="exact depths against SciPy's shortest paths; any valid BFS parent tree",
    hints={"race": "a thread writes only its own vertex: depth[v], parent[v], next_flags[v], and one atomic add "
                   "to next_count; never another vertex's entries",
           "bounds": "guard v < V before reading in_indptr[v + 1]",
           "value": "an unvisited vertex (depth -1) looks through its in-neighbours for one with frontier_flags set; "
                    "the first one found is its parent and its depth is current + 1",
           "technique": "stop scanning at the first frontier neighbour (break): that early exit is why bottom-up "
                        "steps examine few edges on large frontiers"},
    tests=[
        search_test("a chain (one vertex per level)", 1, lambda rng: (data.chain(6), 0)),
        search_test("a component larger than a block, unreachable vertices", 1,
                    lambda rng: (data.disconnected((40, 5), 2, seed=1), 0)),
        search_test("a directed graph (in-neighbours)", 0.5, lambda rng: (data.chain(5, directed=True), 2),
                    directed=True),
        search_test("hidden: a random power-law graph", 0.5, lambda rng: (data.kronecker(6, 8, seed=int(
            rng.integers(1 << 20))), 0), hidden=True),
        search_test("next_count equals the vertices reached", 1, lambda rng: (data.real_graph("karate_club")[0], 33),
                    counts=True),
        race_test("race check of one level", 1, technique=True, inputs=lambda rng, info: one_level(*_DENSE(rng), 1),
                  launch=launch_level, expect=expect_level),
        technique_test("early exit (profiler: bytes loaded)", 1, inputs=lambda rng, info: one_level(*_DENSE(rng), 1),
                       launch=launch_level, expect=expect_level, measure=_loaded, limit=early_exit_bytes,
                       unit="global bytes loaded", technique="each unvisited vertex stops at its first frontier "
                                                             "neighbour (5 bytes per edge examined)"),
    ])


# ----------------------------------------------------------------------------- q2
def _edges_args(rng, info):
    cases = [one_level(measure_graph(), 0, level) for level in (0, 1, 2)]
    cases.append(one_level(data.chain(7), 0, 2))
    return [(c["in_indptr"], c["in_indices"], c["flags"], c["depth"]) for c in cases]


def _measure_launch(answer, d, level):
    return launch_level(answer["kernel"], one_level(measure_graph(), 0, level))


Q2 = question(
    "ps3.q2", "predict the edges examined, measure the loads", 2,
    answer={"kernel": _KERNEL, "predicted_edges": function("predicted_edges"), "measure": measurement()},
    tolerance="edges exact; measurements within 1% of the course's profiler",
    tests=[
        calls_test("the predicted edges examined", 1, key="predicted_edges", args=_edges_args, expect=examined_edges,
                   hint="an unvisited vertex examines its in-neighbours up to and including the first one in the "
                        "frontier; a visited vertex examines none"),
        measured_test("your measurements, bytes loaded per level", 1, key="measure", rtol=0.01,
                      inputs=lambda rng, info: {"params": list(MEASURE_LEVELS)}, launch=_measure_launch,
                      measure=lambda metrics, d, level: metrics["global_load_bytes"],
                      hint="profile(bottom_up_step, ...).total.global_load_bytes for the launch of each level"),
    ])


# ----------------------------------------------------------------------------- q3
def chain_args(rng, info):
    return [(n,) for n in (2, 3, 10, 1000, int(rng.integers(4, 10**5)))]


def quadratic_on_chain(n):
    """Edges the edge-parallel BFS examines on the one-way chain 0 -> 1 -> ... -> n-1 from vertex n // 2: all
    n - 1 arcs at each iteration, one per level (depths 0 .. n - 1 - n // 2) plus the last one, which finds nothing."""
    return (n - 1) * (n - n // 2)


def frontier_on_chain(n):
    """Edges the frontier BFS examines there: the out-arcs of the reached vertices n // 2 .. n - 1."""
    return n - 1 - n // 2


Q3 = question(
    "ps3.q3", "counting the work", 2,
    answer={"quadratic_on_chain": function("quadratic_on_chain"), "frontier_on_chain": function("frontier_on_chain"),
            "complexity": choice("complexity", WORK_CHOICES)},
    tolerance="exact integers",
    tests=[
        calls_test("edge-parallel BFS on a one-way chain from its middle", 0.75, key="quadratic_on_chain",
                   args=chain_args, expect=quadratic_on_chain,
                   hint="every arc is examined at every iteration, reachable or not, and the host needs one more "
                        "iteration than the maximum depth to learn it is done"),
        calls_test("frontier BFS on a one-way chain from its middle", 0.75, key="frontier_on_chain", args=chain_args,
                   expect=frontier_on_chain, hint="only reached vertices scan their out-arcs"),
        value_test("worst-case work of a search made of bottom-up steps only", 0.5, key="complexity",
                   expect=lambda info: "O(V * E)",
                   explain=lambda got, want: "the early exit needs a frontier neighbour: which graph needs the most "
                                             "levels, and what do its unvisited vertices examine at each level?"),
    ])

QUESTIONS = (Q1, Q2, Q3)
