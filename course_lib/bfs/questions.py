"""Problem set 3 (``solutions/ps3_bfs.ipynb``): questions, visible and hidden tests.

- ``ps3.q1`` (6 points): a frontier kernel, one thread per frontier vertex, building the
  next frontier any correct way. Answer: ``check("ps3.q1", frontier_kernel)``. The
  grader runs the host loop of :func:`run_frontier_kernel`, compares the depths with
  SciPy's and accepts any valid BFS parent tree.
- ``ps3.q2`` (2 points): the source's depth quiz. Answer: a dict of two functions,
  ``{"min_max_depth": f(n), "max_max_depth": g(n)}``.
- ``ps3.q3`` (2 points): work. Answer: a dict ``{"quadratic_on_chain": f(n),
  "frontier_on_chain": g(n), "complexity": one of WORK_CHOICES}``: the edges the
  kernels examine on an undirected chain of n vertices searched from one end, and the
  worst-case work of the edge-parallel BFS.
"""

from __future__ import annotations

import numpy as np

from .. import device
from ..grading.core import Question, Test, TestFailure, as_student_kernel
from . import data
from .api import threads_per_block
from .graph import as_graph
from .reference import bfs_reference, parent_tree_problems

PROBLEM_SET = "ps3"
#: The choices offered for the worst-case work of the edge-parallel BFS (question 3).
WORK_CHOICES = ("O(V + E)", "O(V log V + E)", "O(V * E)", "O(E^2)")


# ----------------------------------------------------------------------------- q1
def run_frontier_kernel(kernel, graph, source, *, directed=False, block=None):
    """Run a frontier kernel level by level, as the problem set's host code does.

    The kernel is launched as ``kernel[blocks, block](indptr, indices, frontier,
    frontier_size, current, depth, parent, next_frontier, next_size)`` with one thread
    per frontier vertex; ``next_size[0]`` is zeroed before each launch and read back
    after it.

    Parameters
    ----------
    kernel : @cuda.jit kernel
    graph : scipy.sparse matrix of shape (V, V)
    source : int
    directed : bool
    block : int, optional
        Threads per block (default :func:`~course_lib.bfs.api.threads_per_block`).

    Returns
    -------
    depth, parent : ndarray of shape (V,), int32

    Raises
    ------
    TestFailure
        The frontier never empties, or overflows its array (a vertex appended again and
        again), or holds something that is not a vertex id.
    """
    from numba import cuda

    from .api import _init

    g = as_graph(graph, directed=directed)
    block = block or threads_per_block()
    d_indptr, d_indices = cuda.to_device(g.indptr), cuda.to_device(g.indices)
    d_depth, d_parent = _init(g, source)
    # A kernel that appends without claiming may list a vertex once per edge into it.
    capacity = max(g.n_arcs, g.n_vertices, 1)
    frontier = np.zeros(capacity, np.int32)
    frontier[0] = source
    d_frontier, d_next = cuda.to_device(frontier), cuda.to_device(np.zeros(capacity, np.int32))
    d_next_size = cuda.to_device(np.zeros(1, np.int32))
    size, current = 1, 0
    while size > 0:
        if current > g.n_vertices:
            raise TestFailure(f"the frontier never empties: still {size} vertices after {current} levels "
                              "(are visited vertices appended again?)")
        d_next_size.copy_to_device(np.zeros(1, np.int32))
        try:
            kernel[max(1, -(-size // block)), block](d_indptr, d_indices, d_frontier, np.int32(size),
                                                     np.int32(current), d_depth, d_parent, d_next, d_next_size)
        except IndexError as exc:  # the simulator checks bounds (a GPU would corrupt memory silently)
            raise TestFailure(f"an index went past the end of an array at level {current} ({exc}). If it was "
                              "next_frontier, it overflowed although it has room for every edge into the level: "
                              "are visited vertices appended again?") from None
        size = int(d_next_size.copy_to_host()[0])
        if not 0 <= size <= capacity:
            raise TestFailure(f"next_size = {size} after level {current}: more entries than edges into the level")
        listed = d_next.copy_to_host()[:size]
        if size and (listed.min() < 0 or listed.max() >= g.n_vertices):
            raise TestFailure(f"the next frontier of level {current} holds a value that is not a vertex id")
        d_frontier, d_next = d_next, d_frontier
        current += 1
    return d_depth.copy_to_host(), d_parent.copy_to_host()


def _prepare_kernel(kernel):
    return as_student_kernel(kernel, "frontier kernel")


def _depth_test(label, make_graph, *, directed=False, hidden=False):
    def run(kernel, rng):
        graph, source = make_graph(rng)
        depth, _ = run_frontier_kernel(kernel, graph, source, directed=directed)
        expected = bfs_reference(graph, source, directed=directed)
        wrong = np.flatnonzero(depth != expected)
        if wrong.size:
            v = int(wrong[0])
            raise TestFailure(f"depths differ from SciPy's at {wrong.size} of {expected.size} vertices; first at "
                              f"vertex {v}: got {depth[v]}, expected {expected[v]} (-1 = unreachable)")

    hint = ("claim a neighbour only while it is unvisited (depth -1), with cuda.atomic.cas so that exactly one "
            "thread wins; reserve its slot in next_frontier with cuda.atomic.add on next_size[0]")
    return Test(label, run, hidden=hidden, hint=hint)


def _parents_test(kernel, rng):
    for graph, source, directed in ((data.kronecker(5, 4, seed=int(rng.integers(1 << 20))), 0, False),
                                    (data.disconnected((6, 5), 2, seed=int(rng.integers(1 << 20)), directed=True),
                                     1, True)):
        _, parent = run_frontier_kernel(kernel, graph, source, directed=directed)
        problems = parent_tree_problems(graph, source, parent, directed=directed)
        if problems:
            raise TestFailure("the parent array is not a valid BFS tree: " + "; ".join(problems))


def _source_with_edges(graph, rng):
    candidates = np.flatnonzero(np.diff(graph.indptr) > 0)
    return int(rng.choice(candidates)) if candidates.size else 0


_Q1_TESTS = [
    _depth_test("a chain (one vertex per level)", lambda rng: (data.chain(6), 0)),
    _depth_test("a star (one level larger than a block)",
                lambda rng: (data.star(device.pick(sim=40, gpu=1000)), 0)),
    _depth_test("unreachable vertices and an isolated source",
                lambda rng: (data.from_edges([1, 2, 4], [2, 3, 5], 7), 1)),
    _depth_test("a directed graph (edges followed one way)",
                lambda rng: (data.chain(5, directed=True), 2), directed=True),
    _depth_test("Zachary's karate club", lambda rng: (data.real_graph("karate_club")[0], 33)),
    Test("a valid BFS parent tree", _parents_test,
         hint="the thread that claims vertex v must store its own vertex u in parent[v]"),
    _depth_test("hidden: a random power-law graph",
                lambda rng: (lambda g: (g, _source_with_edges(g, rng)))(
                    data.kronecker(device.pick(sim=6, gpu=12), 8, seed=int(rng.integers(1 << 20)))), hidden=True),
    _depth_test("hidden: a directed graph with several components",
                lambda rng: (lambda g: (g, _source_with_edges(g, rng)))(
                    data.disconnected((9, 6, 4), 3, seed=int(rng.integers(1 << 20)), directed=True)),
                directed=True, hidden=True),
    _depth_test("hidden: self-loops and repeated edges",
                lambda rng: (lambda g: (g, _source_with_edges(g, rng)))(data.with_self_loops_and_duplicates(
                    data.random_graph(15, 3, seed=int(rng.integers(1 << 20)), directed=True),
                    seed=int(rng.integers(1 << 20)))), directed=True, hidden=True),
]

Q1 = Question("ps3.q1", "frontier BFS kernel", 6, tuple(_Q1_TESTS), prepare=_prepare_kernel)


# ----------------------------------------------------------------------------- q2
def _prepare_functions(keys):
    def prepare(answer):
        if not isinstance(answer, dict):
            raise TestFailure("answer with a dict: {" + ", ".join(f"'{k}': ..." for k in keys) + "}")
        missing = set(keys) - set(answer)
        if missing:
            raise TestFailure(f"the answer dict lacks {sorted(missing)}")
        return answer

    return prepare


def _callable(answer, key):
    if not callable(answer[key]):
        raise TestFailure(f"{key} must be a function of N, e.g. lambda n: ...")
    return answer[key]


def _min_max_depth(answer, rng):
    f = _callable(answer, "min_max_depth")
    for n in (2, 10, 1000, int(rng.integers(3, 10**6))):
        if f(n) != 1:
            raise TestFailure(f"min_max_depth({n}) = {f(n)}: draw the graph of {n} vertices whose deepest vertex "
                              "is as close to the root as possible")


def _max_max_depth(answer, rng):
    f = _callable(answer, "max_max_depth")
    for n in (2, 10, 1000, int(rng.integers(3, 10**6))):
        if f(n) != n - 1:
            raise TestFailure(f"max_max_depth({n}) = {f(n)}: draw the connected graph of {n} vertices whose "
                              "deepest vertex is as far from the root as possible, and count hops, not vertices")


Q2 = Question("ps3.q2", "minimum and maximum possible depth", 2, (
    Test("smallest possible maximum depth", _min_max_depth, hint="the star"),
    Test("largest possible maximum depth", _max_max_depth, hint="the chain"),
), prepare=_prepare_functions(("min_max_depth", "max_max_depth")))


# ----------------------------------------------------------------------------- q3
def quadratic_edges_on_chain(n):
    """Edges the edge-parallel kernel examines on an undirected chain of n vertices, from one end.

    n iterations (depths 0..n-1; the last finds nothing to do, which is how the host
    learns it is done), each over all n - 1 edges.
    """
    return n * (n - 1)


def frontier_edges_on_chain(n):
    """Edges the frontier kernels examine on the same chain: each arc once, 2 (n - 1)."""
    return 2 * (n - 1)


def _chain_count(key, expected, explanation):
    def run(answer, rng):
        f = _callable(answer, key)
        for n in (2, 3, 10, 1000, int(rng.integers(4, 10**5))):
            if f(n) != expected(n):
                raise TestFailure(f"{key}({n}) = {f(n)}, but the kernels examine {expected(n)} edges: {explanation}")

    return run


def _complexity(answer, rng):
    got = answer["complexity"]
    if got not in WORK_CHOICES:
        raise TestFailure(f"complexity must be one of {WORK_CHOICES}, got {got!r}")
    if got != "O(V * E)":
        raise TestFailure(f"{got} is not the worst case: which graph needs the most iterations, and how many edges "
                          "does each iteration examine?")


Q3 = Question("ps3.q3", "counting the work", 2, (
    Test("edge-parallel BFS on a chain", _chain_count(
        "quadratic_on_chain", quadratic_edges_on_chain,
        "every iteration examines all edges, and the host needs one more iteration than the maximum depth "
        "to learn it is done"),
         hint="an undirected chain of n vertices has n - 1 edges, each examined once per iteration"),
    Test("frontier BFS on a chain", _chain_count(
        "frontier_on_chain", frontier_edges_on_chain,
        "each vertex scans its adjacency list once, and an undirected edge is in two adjacency lists"),
         hint="sum the degrees"),
    Test("worst-case work of the edge-parallel BFS", _complexity),
), prepare=_prepare_functions(("quadratic_on_chain", "frontier_on_chain", "complexity")))

QUESTIONS = (Q1, Q2, Q3)
