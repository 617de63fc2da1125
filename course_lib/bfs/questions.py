"""Problem set 3 (``solutions/ps3_bfs.ipynb``), on the shared harness (:mod:`course_lib.grading.authoring.harness`).

- ``ps3.q1`` (6 points): a **race-free bottom-up step** on bit-packed frontiers (one bit per vertex in uint32
  words, as Beamer's step keeps its frontier cache-resident). Answer: ``check("ps3.q1", bottom_up_step)``, a
  kernel ``(in_indptr, in_indices, frontier_bits, current, depth, parent, next_bits, next_count)`` with one
  thread per vertex, run level by level by :func:`run_bottom_up`. The next frontier's word of a warp is the
  warp's vote (``cuda.ballot_sync``), stored by one lane, and counted once per warp (``cuda.popc``): no vertex
  writes a shared word alone, so nothing races and no atomic is spent per vertex. The library's bottom-up
  kernel reads byte depths and writes no frontier; none of this is printed. Graded on depths (SciPy) and any valid parent tree, on ``next_count`` equal
  to the vertices reached, on a clean race check, and the technique's signature (``BOTTOM_UP_SIGNATURE``)
  measured by the profiler on two fixed configurations (a random graph's level 2, blocks of 64 threads;
  another's, blocks of 96 and a partial last block) and, in a hidden test (no points of its own; its failure
  caps the question like the visible one's), on two drawn at grading time from the grading seed: a random graph
  of V in ``DRAWN_VERTICES`` (V odd, so the last warp is partial) with a mean degree in ``DRAWN_DEGREES``, at
  level 1 or 2, with blocks of one warp (32) in one and of 64, 128 or 160 threads in the other (every block
  runs: these launches are small). A step that votes only in blocks of several warps, or only on the graphs
  and levels of the visible test, fails there. A second hidden test profiles each drawn graph's first level, its
  deepest, and the widest past the third (:func:`drawn_depth`), so that an early exit kept only at the levels the
  other tests profile shows too. Features and bounds, from the cost model of a bottom-up step
  (one thread per vertex; an unvisited vertex scans its in-neighbours, in any order, and stops at the first
  one in the frontier; it writes only its own entries and adds itself to the count once):

  * global bytes loaded: at most 1.4 x (8 bytes per edge examined in the worst order, d - f + 1 for a
    vertex with f of its d in-neighbours in the frontier, + 4 per vertex + 8 per unvisited vertex) + 64:
    any scan order passes (a loop re-reading a row bound per edge too), a scan without the early exit does not;
  * atomic operations on global memory: at most one per warp that reached a vertex (the count, added by popc
    of the vote, or a block's privatised count added once per block): a per-vertex ``atomic.or_`` into the
    words, or a per-vertex count, shows here;
  * atomic operations, shared and global: at most one per warp plus one per block that reached a vertex (a
    per-block shared counter that each warp adds its popc to, added to ``next_count`` once per block, is the
    technique too); a per-vertex atomic on a shared counter shows here;
  * global bytes stored: at most 1.25 x (8 per vertex reached (depth, parent) + 4 per word holding one) + 16:
    a top-down step writing a vertex from each of its frontier neighbours stores more;
  * thread span (busiest thread over the mean): at most 2 x that of the model (one thread per vertex,
    each examining its worst-order edges + 1): a thread sweeping many vertices shows here.
- ``ps3.q2`` (2 points): predict the edges the step examines, and measure its global loads per level.
  Answer: ``{"kernel": bottom_up_step, "predicted_edges": f(in_indptr, in_indices, frontier_flags,
  depth), "measure": g(kernel, graph, level)}``. The grader calls ``g`` on the student's step and on
  decoys of its own (kernels with the step's arguments and another traffic: every in-edge read, or the
  depths read twice), on random graphs and levels drawn at grading time, and measures each launch itself; a
  failure there caps the question at half.
- ``ps3.q3`` (2 points): the work of the edge-parallel and frontier BFS on a one-way chain searched from its
  middle, and the worst-case work of a search made of bottom-up steps only. Answer:
  ``{"quadratic_on_chain": f(n), "frontier_on_chain": g(n), "complexity": one of WORK_CHOICES}``. The lesson
  prints the counts for an undirected chain from one end (V (V - 1) and 2E) and the worst case of the
  edge-parallel BFS; none of them is an answer here.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ..grading.authoring.harness import (STORED, Answer, Launch, calls_test, choice, fail, function, guarded, inner,
                                         kernel, measurement, question, race_test, result_test, unguard, value_test)
from ..grading.authoring.measuring import kernel_measurement_test
from ..grading.authoring.signature import Feature, at_most, signature_test
from . import data
from .data import WORD_BITS, Graph, as_graph, pack_bits, unpack_bits  # noqa: F401  (vertex sets, bit-packed)
from .reference import bfs_reference, parent_tree_problems
from ..grading.resources import answer_key

# The answer keys are the grader's (grading_resources/keys/ps3_bfs.py), read when a value is judged.
examined_edges = answer_key("ps3", "examined_edges")
quadratic_on_chain = answer_key("ps3", "quadratic_on_chain")
frontier_on_chain = answer_key("ps3", "frontier_on_chain")

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
        ``reached`` (the vertices whose bit of next_bits is set at each level).
    """
    from numba import cuda

    n = len(in_indptr) - 1
    depth, parent = np.full(n, -1, np.int32), np.full(n, -1, np.int32)
    depth[source], parent[source] = 0, source
    d_depth, d_parent = cuda.to_device(guarded(depth)), cuda.to_device(guarded(parent))
    d_indptr, d_indices = cuda.to_device(np.asarray(in_indptr, np.int32)), cuda.to_device(np.asarray(in_indices, np.int32))
    flags = np.zeros(n, np.uint8)
    flags[source] = 1
    words = -(-n // WORD_BITS)
    counts, reached = [], []
    for current in range(n):
        d_next = cuda.to_device(guarded(np.zeros(words, np.uint32)))
        d_count = cuda.to_device(guarded(np.zeros(1, np.int32)))
        d_bits = cuda.to_device(guarded(pack_bits(flags), fill=0))
        step[max(1, -(-n // BLOCK)), BLOCK](d_indptr, d_indices, inner(d_bits), np.int32(current), inner(d_depth),
                                            inner(d_parent), inner(d_next), inner(d_count))
        count = unguard(d_count.copy_to_host(), (1,), name="next_count")[0]
        next_words = unguard(d_next.copy_to_host(), (words,), name="next_bits")
        if words * WORD_BITS > n and int(next_words[-1]) >> (n - (words - 1) * WORD_BITS):
            raise fail(f"level {current}: next_bits has bits set past vertex {n - 1}", "bounds")
        flags = unpack_bits(next_words, n)
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
            "frontier_bits": pack_bits(c["flags"]), "current": np.int32(c["current"]),
            "depth": np.array(c["depth"]), "parent": parent, "next_bits": np.zeros(-(-n // WORD_BITS), np.uint32),
            "next_count": np.zeros(1, np.int32)}
    block = int(c.get("block", BLOCK))
    return Launch(answer.kernel(), max(1, -(-n // block)), block, args, outputs=("depth", "next_bits", "next_count"))


def expect_level(c):
    depth = np.array(c["depth"])
    found = (depth == -1) & (bfs_reference(_graph(c), c["source"]) == c["current"] + 1)
    depth[found] = c["current"] + 1
    return {"depth": depth, "next_bits": pack_bits(found), "next_count": np.array([found.sum()], np.int32)}


def worst_order_per_vertex(in_indptr, in_indices, frontier_flags, depth):
    """Edges each vertex examines with early exit in the worst scan order: d - f + 1 for an unvisited vertex with
    f of its d in-neighbours in the frontier (all d when f = 0), 0 for a visited one."""
    indptr, indices = np.asarray(in_indptr), np.asarray(in_indices)
    flags = np.asarray(frontier_flags).astype(bool)
    out = np.zeros(len(indptr) - 1, np.int64)
    for v in np.flatnonzero(np.asarray(depth) == -1):
        neighbours = indices[indptr[v]:indptr[v + 1]]
        f = int(flags[neighbours].sum())
        out[v] = neighbours.size - f + 1 if f else neighbours.size
    return out


def worst_order_edges(in_indptr, in_indices, frontier_flags, depth):
    """Edges examined with early exit in the worst scan order, all vertices together."""
    return int(worst_order_per_vertex(in_indptr, in_indices, frontier_flags, depth).sum())


def model_span(c):
    """Busiest thread over the mean of one thread per vertex, each examining its worst-order edges (+ 1), threads
    past the last vertex of the last block included: 2 x this bounds the measured span."""
    per_vertex = worst_order_per_vertex(c["in_indptr"], c["in_indices"], c["flags"], c["depth"]) + 1
    block = int(c.get("block", BLOCK))
    threads = max(1, -(-per_vertex.size // block)) * block
    return float(per_vertex.max(initial=1) * threads / (per_vertex.sum() + threads - per_vertex.size))


def any_order_bytes(c):
    depth = np.asarray(c["depth"])
    model = 8 * worst_order_edges(c["in_indptr"], c["in_indices"], c["flags"], depth) + 4 * depth.size \
        + 8 * int(np.sum(depth == -1))
    return 1.4 * model + 64


def _reached(c):
    return int(expect_level(c)["next_count"][0])


def _words_reached(c):
    """Words of next_bits holding a vertex reached: one store and one count per warp that found any."""
    return int(np.count_nonzero(expect_level(c)["next_bits"]))


def _blocks_reached(c):
    """Blocks holding a vertex reached: one global add each when the count is privatised per block."""
    found = unpack_bits(expect_level(c)["next_bits"], len(c["depth"]))
    block = int(c.get("block", BLOCK))
    return int(np.count_nonzero(np.add.reduceat(found, np.arange(0, found.size, block)))) if found.size else 0


BOTTOM_UP_SIGNATURE = (
    Feature("global bytes loaded", lambda m, c: m["global_load_bytes"], at_most(any_order_bytes),
            "an unvisited vertex stops scanning its in-neighbours at the first one in the frontier (in whatever "
            "order it scans them), reading one bit of a frontier word per edge",
            "8 bytes per edge examined (its index, its frontier word), in the worst scan order"),
    Feature("atomic operations on global memory", lambda m, c: m["global_atomics"], at_most(_words_reached),
            "the warp votes its next-frontier word (ballot_sync) and one lane adds its popc to next_count (or to "
            "a per-block shared counter, added to next_count once per block): at most one global atomic per warp "
            "that reached a vertex, none per vertex", "one atomic per word reached"),
    Feature("atomic operations (shared and global)", lambda m, c: m["atomics"],
            at_most(lambda c: _words_reached(c) + _blocks_reached(c)),
            "one atomic per warp that reached a vertex, plus one per block when the block privatises the count "
            "in shared memory; never one per vertex", "one per word reached, one per block reached"),
    Feature("global bytes stored", lambda m, c: m["global_store_bytes"],
            at_most(lambda c: 1.25 * (8 * _reached(c) + 4 * _words_reached(c)) + 16),
            "each vertex reached is written once, by its own thread (depth, parent); one lane stores the warp's word",
            "8 bytes per vertex reached, 4 per word reached"),
    Feature("thread span (busiest thread's statements / mean)", lambda m, c: m["thread_span"],
            at_most(lambda c: 2 * model_span(c)),
            "one thread per vertex: a thread examines only its own vertex's in-neighbours",
            "the busiest vertex's scan over the mean, in the worst order"),
)


def signature_level(graph, level, block):
    return lambda rng, info: {**one_level(graph, 0, level), "block": block}


#: Vertices and mean degrees of the graphs the signature draws at grading time.
DRAWN_VERTICES, DRAWN_DEGREES = (150, 700), (6, 16)


def drawn_level(block_sizes):
    """A signature configuration drawn at grading time: a random graph of V in ``DRAWN_VERTICES`` (an awkward
    V, so the last block and its last warp are partial), a mean degree in ``DRAWN_DEGREES``, level 1 or 2, and
    blocks of a size drawn from ``block_sizes`` (one warp, or several)."""
    def inputs(rng, info):
        n = int(rng.integers(*DRAWN_VERTICES)) | 1
        graph = data.random_graph(n, int(rng.integers(*DRAWN_DEGREES)), seed=int(rng.integers(1 << 20)))
        return {**one_level(graph, 0, int(rng.integers(1, 3))), "block": int(rng.choice(block_sizes))}
    return inputs


def drawn_depth(block_sizes, pick, degrees=DRAWN_DEGREES, vertices=DRAWN_VERTICES):
    """A signature configuration at a level chosen from the drawn graph's own search: ``pick(sizes, rng)``, where
    ``sizes[l]`` counts the vertices at depth l, so that the first level, the deepest and the widest past level 2
    are profiled: an early exit kept only at the levels other tests profile shows at these."""
    def inputs(rng, info):
        n = int(rng.integers(*vertices)) | 1
        graph = data.random_graph(n, int(rng.integers(*degrees)), seed=int(rng.integers(1 << 20)))
        depths = one_level(graph, 0, n)["depth"]
        sizes = np.bincount(depths[depths >= 0])
        level = max(0, min(len(sizes) - 2, int(pick(sizes, rng))))
        return {**one_level(graph, 0, level), "block": int(rng.choice(block_sizes))}
    return inputs


def widest_past(first):
    """``pick`` of :func:`drawn_depth`: the level at or past ``first`` whose frontier is the largest."""
    return lambda sizes, rng: first + int(np.argmax(sizes[first:-1])) if len(sizes) > first + 1 else len(sizes) - 2


_DENSE = (lambda rng: (measure_graph(), 0))
_KERNEL = kernel("bottom_up_step")

Q1 = question(
    "ps3.q1", "race-free bottom-up step on bit-packed frontiers", 6, answer=_KERNEL,
    tolerance="exact depths against SciPy's shortest paths; any valid BFS parent tree",
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
        signature_test("the bottom-up technique, measured (profiler; blocks of 64 and 96)", 1,
                       configs=[signature_level(measure_graph(), 2, 64),
                                signature_level(data.random_graph(150, 10, seed=5), 2, 96)],
                       launch=launch_level, expect=expect_level, features=BOTTOM_UP_SIGNATURE,
                       label=lambda c: f"level {c['current']} of a {len(c['depth'])}-vertex graph"),
        signature_test("hidden: the bottom-up technique on graphs, levels and blocks drawn at grading time", 0,
                       hidden=True, configs=[drawn_level((32,)), drawn_level((64, 128, 160))],
                       launch=launch_level, expect=expect_level, features=BOTTOM_UP_SIGNATURE),
        signature_test("hidden: the bottom-up technique at the first, the widest past the third and the deepest level",
                       0, hidden=True,
                       configs=[drawn_depth((64,), lambda sizes, rng: 0),
                                drawn_depth((96, 128), widest_past(3), degrees=(3, 5), vertices=(500, 700)),
                                drawn_depth((32, 160), lambda sizes, rng: len(sizes) - 2)],
                       launch=launch_level, expect=expect_level, features=BOTTOM_UP_SIGNATURE),
    ])


# ----------------------------------------------------------------------------- q2
def _edges_args(rng, info):
    cases = [one_level(measure_graph(), 0, level) for level in (0, 1, 2)]
    cases.append(one_level(data.chain(7), 0, 2))
    return [(c["in_indptr"], c["in_indices"], c["flags"], c["depth"]) for c in cases]


@cuda.jit
def read_every_in_edge(in_indptr, in_indices, frontier_bits, current, depth, parent, next_bits, next_count):
    """A decoy for ``measure`` (traffic only, no search): each vertex reads all its in-neighbours' frontier words."""
    v = cuda.grid(1)
    if v < depth.shape[0]:
        seen = 0
        for k in range(in_indptr[v], in_indptr[v + 1]):
            seen += frontier_bits[in_indices[k] >> 5] & 1
        if seen < 0:  # never: keeps the loads
            next_count[0] = seen


@cuda.jit
def read_depths_twice(in_indptr, in_indices, frontier_bits, current, depth, parent, next_bits, next_count):
    """A decoy for ``measure`` (traffic only, no search): each vertex reads its depth, its word and depth again."""
    v = cuda.grid(1)
    if v < depth.shape[0] and depth[v] + (frontier_bits[v >> 5] & 1) + depth[v] < -10:
        next_count[0] = 1


#: The grader's own steps that ``measure`` must measure as well (their traffic differs from the technique's).
MEASURE_DECOYS = {"a kernel reading every in-edge": read_every_in_edge,
                  "a kernel reading the depths twice": read_depths_twice}


def _measure_configs(rng, info):
    """(vertices, mean degree, seed, level): the measured graph at a level drawn now, and a random graph."""
    return [(120, 12, 4, int(rng.choice(MEASURE_LEVELS))),
            (int(rng.integers(60, 130)), int(rng.integers(6, 14)), int(rng.integers(1 << 20)), int(rng.integers(1, 3)))]


def _measure_arguments(config):
    n, degree, seed, level = config
    return data.random_graph(n, degree, seed=seed), level


def _decoy_launch(kernel_obj, config):
    n, degree, seed, level = config
    return launch_level(Answer(kernel_obj, {}), one_level(data.random_graph(n, degree, seed=seed), 0, level))


Q2 = question(
    "ps3.q2", "predict the edges examined, measure the loads", 2,
    answer={"kernel": _KERNEL, "predicted_edges": function("predicted_edges"), "measure": measurement()},
    tolerance="edges exact; measurements within 1% of the course's profiler",
    tests=[
        calls_test("the predicted edges examined", 1, key="predicted_edges", args=_edges_args, expect=examined_edges),
        kernel_measurement_test("your measure(), on your step and on the grader's, on drawn graphs and levels", 1,
                                key="measure", kernel_key="kernel", decoys=MEASURE_DECOYS, configs=_measure_configs,
                                arguments=_measure_arguments, launch=_decoy_launch,
                                measure=lambda metrics, config: metrics["global_load_bytes"], rtol=0.01, caps=True),
    ])


# ----------------------------------------------------------------------------- q3
def chain_args(rng, info):
    return [(n,) for n in (2, 3, 10, 1000, int(rng.integers(4, 10**5)))]


Q3 = question(
    "ps3.q3", "counting the work", 2,
    answer={"quadratic_on_chain": function("quadratic_on_chain"), "frontier_on_chain": function("frontier_on_chain"),
            "complexity": choice("complexity", WORK_CHOICES)},
    tolerance="exact integers",
    tests=[
        calls_test("edge-parallel BFS on a one-way chain from its middle", 0.75, key="quadratic_on_chain",
                   args=chain_args, expect=quadratic_on_chain),
        calls_test("frontier BFS on a one-way chain from its middle", 0.75, key="frontier_on_chain", args=chain_args,
                   expect=frontier_on_chain),
        value_test("worst-case work of a search made of bottom-up steps only", 0.5, key="complexity",
                   expect=lambda info: "O(V * E)",
                   explain=STORED),
    ])

QUESTIONS = (Q1, Q2, Q3)
