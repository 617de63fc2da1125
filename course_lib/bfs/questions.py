"""Problem set 3 (``solutions/ps3_bfs.ipynb``): questions, visible and hidden tests.

- ``ps3.q1`` (6 points): a frontier kernel, one thread per frontier vertex, building the
  next frontier any correct way. Answer: ``check("ps3.q1", frontier_kernel)``. The
  grader runs the host loop of :func:`run_frontier_kernel` in the student's process and,
  in its own, compares the depths with SciPy's, accepts any valid BFS parent tree and
  checks that nothing was written past the end of an array.
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
from ..grading.ownwork import as_student_function
from . import data
from .api import default_block as threads_per_block
from .data import Graph, as_graph, check_source
from .reference import bfs_reference, parent_tree_problems

PROBLEM_SET = "ps3"
#: The choices offered for the worst-case work of the edge-parallel BFS (question 3).
WORK_CHOICES = ("O(V + E)", "O(V log V + E)", "O(V * E)", "O(E^2)")


# ----------------------------------------------------------------------------- q1
# Every test is split (see course_lib.grading.core): ``inputs`` and ``judge`` run in the grader,
# ``produce`` runs the student's kernel and returns the raw (padded) output arrays.

#: Extra elements after each output array the kernel writes (depth, parent, next_size and,
#: more of them, next_frontier): on a GPU, a store one element past the end rarely faults,
#: so the grader pads the arrays, passes exact-size views and checks that the padding is untouched.
GUARD_ELEMENTS = 32
#: What the guard elements hold: no vertex id, depth or count a kernel could mean to store.
GUARD_VALUE = np.int32(-0x7A5A5A5A)


def run_frontier_kernel(kernel, graph, source, *, directed=False, block=None):
    """Run a frontier kernel level by level, as the problem set's host code does.

    The kernel is launched as ``kernel[blocks, block](indptr, indices, frontier,
    frontier_size, current, depth, parent, next_frontier, next_size)`` with one thread
    per frontier vertex; ``next_size[0]`` is zeroed before each launch and read back
    after it. The arrays the kernel writes are exact-size views of larger buffers whose
    extra elements must stay untouched. The loop itself is :func:`run_frontier_levels`.

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
        again), or holds something that is not a vertex id, or the kernel wrote past the
        end of an array.
    """
    g = as_graph(graph, directed=directed)
    source = check_source(source, g.n_vertices)
    out = run_frontier_levels(kernel, g.indptr, g.indices, source, block=block)
    return _exact(out["depth"], g.n_vertices, "depth"), _exact(out["parent"], g.n_vertices, "parent")


def _frontier_capacity(n_vertices, n_arcs):
    # A kernel that appends without claiming may list a vertex once per edge into it.
    return max(n_arcs, n_vertices, 1)


def _padded(n, guard, fill):
    buffer = np.full(n + guard, GUARD_VALUE, np.int32)
    buffer[:n] = fill
    return buffer


def run_frontier_levels(kernel, indptr, indices, source, *, block=None):
    """The host loop of :func:`run_frontier_kernel` on padded buffers.

    Parameters
    ----------
    kernel : @cuda.jit kernel
    indptr : ndarray of shape (V + 1,), int32
    indices : ndarray of shape (E,), int32
        The CSR structure the kernel traverses (symmetric for an undirected graph).
    source : int
        0 <= source < V.
    block : int, optional
        Threads per block (default :func:`~course_lib.bfs.api.threads_per_block`).

    Returns
    -------
    dict
        ``depth`` and ``parent``: int32 of shape (V + GUARD_ELEMENTS,), whose last
        GUARD_ELEMENTS entries must still hold GUARD_VALUE.

    Raises
    ------
    TestFailure
        As :func:`run_frontier_kernel`, for the frontier and ``next_size``; the guards of
        ``depth`` and ``parent`` are left for the caller to check.
    """
    from numba import cuda

    indptr = np.ascontiguousarray(indptr, np.int32)
    indices = np.ascontiguousarray(indices, np.int32)
    n_vertices, n_arcs = indptr.size - 1, indices.size
    block = block or threads_per_block()
    capacity = _frontier_capacity(n_vertices, n_arcs)
    degrees = np.diff(indptr).astype(np.int64)
    depth = _padded(n_vertices, GUARD_ELEMENTS, -1)
    parent = _padded(n_vertices, GUARD_ELEMENTS, -1)
    depth[source], parent[source] = 0, source
    d_depth, d_parent = cuda.to_device(depth), cuda.to_device(parent)
    listed = np.array([source], np.int32)
    frontier = _padded(capacity, GUARD_ELEMENTS, 0)
    frontier[0] = source
    d_frontier, d_next = cuda.to_device(frontier), cuda.to_device(_padded(capacity, GUARD_ELEMENTS, 0))
    counter = _padded(1, GUARD_ELEMENTS, 0)
    d_next_size = cuda.to_device(counter)
    d_indptr, d_indices = cuda.to_device(indptr), cuda.to_device(indices)
    size, current = 1, 0
    while size > 0:
        if current > n_vertices:
            raise TestFailure(f"the frontier never empties: still {size} vertices after {current} levels "
                              "(are visited vertices appended again?)")
        d_next_size.copy_to_device(counter)
        # A kernel that appends every neighbour, visited or not, lists up to the sum of the frontier's
        # degrees: the guard behind next_frontier holds that many, so that on a GPU an overflow lands
        # in it (and is reported) rather than in other memory.
        room = max(capacity, int(degrees[listed].sum())) + GUARD_ELEMENTS
        if d_next.shape[0] < room:
            d_next = cuda.to_device(_padded(capacity, room - capacity, 0))
        try:
            kernel[max(1, -(-size // block)), block](
                d_indptr, d_indices, d_frontier[:capacity], np.int32(size), np.int32(current),
                d_depth[:n_vertices], d_parent[:n_vertices], d_next[:capacity], d_next_size[:1])
        except IndexError as exc:  # the simulator checks bounds (a GPU writes past the end silently)
            raise TestFailure(f"an index went past the end of an array at level {current} ({exc}). If it was "
                              "next_frontier, it overflowed although it has room for every edge into the level: "
                              "are visited vertices appended again?") from None
        counts = d_next_size.copy_to_host()
        if np.any(counts[1:] != GUARD_VALUE):
            raise TestFailure(f"the kernel wrote past the end of next_size at level {current}: it has one element")
        size = int(counts[0])
        listed = d_next.copy_to_host()
        if not 0 <= size <= capacity or np.any(listed[capacity:] != GUARD_VALUE):
            raise TestFailure(f"next_frontier overflowed at level {current}: next_size = {size}, and the kernel "
                              f"wrote past the end of next_frontier, which has room for every edge into the level "
                              f"({capacity}): are visited vertices appended again?")
        listed = listed[:size]
        if size and (listed.min() < 0 or listed.max() >= n_vertices):
            raise TestFailure(f"the next frontier of level {current} holds a value that is not a vertex id")
        d_frontier, d_next = d_next, d_frontier
        current += 1
    return {"depth": d_depth.copy_to_host(), "parent": d_parent.copy_to_host()}


def _exact(padded, n, name):
    """The first n entries of a padded output, after checking that nothing was written past them."""
    padded = np.asarray(padded)
    if padded.shape != (n + GUARD_ELEMENTS,) or padded.dtype.kind not in "iu":
        raise TestFailure(f"{name} came back with shape {padded.shape} and dtype {padded.dtype}, "
                          f"expected ({n + GUARD_ELEMENTS},) int32")
    touched = np.flatnonzero(padded[n:] != GUARD_VALUE)
    if touched.size:
        raise TestFailure(f"the kernel wrote past the end of {name} (index {n + int(touched[0])} of an array of "
                          f"{n}): guard the stores with a bounds check")
    return padded[:n].astype(np.int32)


def _prepare_kernel(kernel):
    return as_student_kernel(kernel, "frontier kernel")


def _case(graph, source, directed):
    """Plain-data description of a test graph (what crosses to the student's process)."""
    g = as_graph(graph, directed=directed)
    return {"indptr": g.indptr, "indices": g.indices, "source": int(source), "directed": bool(directed)}


def _graph_of(case):
    return Graph(len(case["indptr"]) - 1, case["directed"], np.asarray(case["indptr"], np.int32),
                 np.asarray(case["indices"], np.int32))


def _produce_one(kernel, case):
    return run_frontier_levels(kernel, case["indptr"], case["indices"], case["source"])


def _outputs_of(got, name):
    if not isinstance(got, dict) or not all(isinstance(got.get(k), np.ndarray) for k in ("depth", "parent")):
        raise TestFailure(f"{name}: expected the depth and parent arrays, got {type(got).__name__}")
    return got["depth"], got["parent"]


def _depth_test(label, make_graph, *, directed=False, hidden=False):
    def inputs(rng, info):
        graph, source = make_graph(rng)
        return _case(graph, source, directed)

    def judge(data, got, info):
        g = _graph_of(data)
        depth, parent = _outputs_of(got, "the kernel's outputs")
        depth, _ = _exact(depth, g.n_vertices, "depth"), _exact(parent, g.n_vertices, "parent")
        expected = bfs_reference(g, data["source"])
        wrong = np.flatnonzero(depth != expected)
        if wrong.size:
            v = int(wrong[0])
            raise TestFailure(f"depths differ from SciPy's at {wrong.size} of {expected.size} vertices; first at "
                              f"vertex {v}: got {depth[v]}, expected {expected[v]} (-1 = unreachable)")

    hint = ("claim a neighbour only while it is unvisited (depth -1), with cuda.atomic.cas so that exactly one "
            "thread wins; reserve its slot in next_frontier with cuda.atomic.add on next_size[0]")
    return Test(label, hidden=hidden, hint=hint, inputs=inputs, produce=_produce_one, judge=judge)


def _parents_inputs(rng, info):
    return {"cases": [_case(data.kronecker(5, 4, seed=int(rng.integers(1 << 20))), 0, False),
                      _case(data.disconnected((6, 5), 2, seed=int(rng.integers(1 << 20)), directed=True), 1, True)]}


def _parents_produce(kernel, inputs):
    return [_produce_one(kernel, case) for case in inputs["cases"]]


def _parents_judge(inputs, got, info):
    if not isinstance(got, list) or len(got) != len(inputs["cases"]):
        raise TestFailure("expected the outputs of one run per graph")
    for case, outputs in zip(inputs["cases"], got):
        g = _graph_of(case)
        depth, parent = _outputs_of(outputs, "the kernel's outputs")
        _exact(depth, g.n_vertices, "depth")
        problems = parent_tree_problems(g, case["source"], _exact(parent, g.n_vertices, "parent"))
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
    Test("a valid BFS parent tree", inputs=_parents_inputs, produce=_parents_produce, judge=_parents_judge,
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

Q1 = Question("ps3.q1", "frontier BFS kernel", 6, tuple(_Q1_TESTS), prepare=_prepare_kernel,
              tolerance="exact depths against SciPy's shortest paths; any valid BFS parent tree")


# ----------------------------------------------------------------------------- q2
def _prepare_functions(keys, functions):
    def prepare(answer):
        if not isinstance(answer, dict):
            raise TestFailure("answer with a dict: {" + ", ".join(f"'{k}': ..." for k in keys) + "}")
        missing = set(keys) - set(answer)
        if missing:
            raise TestFailure(f"the answer dict lacks {sorted(missing)}")
        for key in functions:
            if not callable(answer[key]):
                raise TestFailure(f"{key} must be a function of N, e.g. lambda n: ...")
            as_student_function(answer[key], key)
        return answer

    return prepare


def _calls(key):
    """``produce`` step: call the student's function ``answer[key]`` on each argument."""
    def produce(answer, inputs):
        return [answer[key](n) for n in inputs["args"]]

    return produce


def _args(*fixed, low, high):
    def inputs(rng, info):
        return {"args": [*fixed, int(rng.integers(low, high))]}

    return inputs


def _one_per_input(got, args):
    if not isinstance(got, list) or len(got) != len(args):
        raise TestFailure(f"expected one result per input, got {got!r}"[:300])
    return zip(args, got)


def _is_number(value):
    return type(value) in (int, float)


def _min_max_depth_judge(inputs, got, info):
    for n, value in _one_per_input(got, inputs["args"]):
        if not _is_number(value) or value != 1:
            raise TestFailure(f"min_max_depth({n}) = {value!r}: draw the graph of {n} vertices whose deepest vertex "
                              "is as close to the root as possible")


def _max_max_depth_judge(inputs, got, info):
    for n, value in _one_per_input(got, inputs["args"]):
        if not _is_number(value) or value != n - 1:
            raise TestFailure(f"max_max_depth({n}) = {value!r}: draw the connected graph of {n} vertices whose "
                              "deepest vertex is as far from the root as possible, and count hops, not vertices")


Q2 = Question("ps3.q2", "minimum and maximum possible depth", 2, (
    Test("smallest possible maximum depth", inputs=_args(2, 10, 1000, low=3, high=10**6),
         produce=_calls("min_max_depth"), judge=_min_max_depth_judge, hint="the star"),
    Test("largest possible maximum depth", inputs=_args(2, 10, 1000, low=3, high=10**6),
         produce=_calls("max_max_depth"), judge=_max_max_depth_judge, hint="the chain"),
), prepare=_prepare_functions(("min_max_depth", "max_max_depth"), ("min_max_depth", "max_max_depth")),
    tolerance="exact integers")


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


def _chain_count_judge(key, expected, explanation):
    def judge(inputs, got, info):
        for n, value in _one_per_input(got, inputs["args"]):
            if not _is_number(value) or value != expected(n):
                raise TestFailure(f"{key}({n}) = {value!r}, but the kernels examine {expected(n)} edges: "
                                  f"{explanation}")

    return judge


def _no_inputs(rng, info):
    return {}


def _complexity_produce(answer, inputs):
    return answer["complexity"]


def _complexity_judge(inputs, got, info):
    if type(got) is not str or got not in WORK_CHOICES:
        raise TestFailure(f"complexity must be one of {WORK_CHOICES}, got {got!r}")
    if got != "O(V * E)":
        raise TestFailure(f"{got} is not the worst case: which graph needs the most iterations, and how many edges "
                          "does each iteration examine?")


Q3 = Question("ps3.q3", "counting the work", 2, (
    Test("edge-parallel BFS on a chain", inputs=_args(2, 3, 10, 1000, low=4, high=10**5),
         produce=_calls("quadratic_on_chain"), judge=_chain_count_judge(
             "quadratic_on_chain", quadratic_edges_on_chain,
             "every iteration examines all edges, and the host needs one more iteration than the maximum depth "
             "to learn it is done"),
         hint="an undirected chain of n vertices has n - 1 edges, each examined once per iteration"),
    Test("frontier BFS on a chain", inputs=_args(2, 3, 10, 1000, low=4, high=10**5),
         produce=_calls("frontier_on_chain"), judge=_chain_count_judge(
             "frontier_on_chain", frontier_edges_on_chain,
             "each vertex scans its adjacency list once, and an undirected edge is in two adjacency lists"),
         hint="sum the degrees"),
    Test("worst-case work of the edge-parallel BFS", inputs=_no_inputs, produce=_complexity_produce,
         judge=_complexity_judge),
), prepare=_prepare_functions(("quadratic_on_chain", "frontier_on_chain", "complexity"),
                              ("quadratic_on_chain", "frontier_on_chain")), tolerance="exact integers")

QUESTIONS = (Q1, Q2, Q3)
