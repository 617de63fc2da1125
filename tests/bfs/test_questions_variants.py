"""Does ps3.q1 grade the bottom-up technique rather than one solution?

Kernels written from the problem statement (one thread per vertex; an unvisited vertex looks through
its in-neighbours for one in the frontier, stops at the first, writes only its own entries and adds
one to next_count): wrong techniques with right results earn at most half, right ones written
differently (another scan order included) full marks.
"""

import pytest
from numba import cuda

from course_lib.grading import get_question, run_tests

POINTS = 6


def grade(kernel):
    return run_tests(get_question("ps3.q1"), kernel, hidden=True, seed=3)


# ----------------------------------------------------------------------------- wrong techniques
@cuda.jit
def no_early_exit(in_indptr, in_indices, frontier_flags, current, depth, parent, next_flags, next_count):
    v = cuda.grid(1)
    if v < depth.shape[0] and depth[v] == -1:
        found = -1
        for k in range(in_indptr[v], in_indptr[v + 1]):
            if frontier_flags[in_indices[k]] and found == -1:
                found = in_indices[k]
        if found != -1:
            depth[v] = current + 1
            parent[v] = found
            next_flags[v] = 1
            cuda.atomic.add(next_count, 0, 1)


@cuda.jit
def top_down_with_cas(in_indptr, in_indices, frontier_flags, current, depth, parent, next_flags, next_count):
    """Each frontier vertex claims its unvisited neighbours with compare-and-swap (undirected graphs)."""
    u = cuda.grid(1)
    if u < depth.shape[0] and frontier_flags[u]:
        for k in range(in_indptr[u], in_indptr[u + 1]):
            v = in_indices[k]
            if cuda.atomic.cas(depth, v, -1, current + 1) == -1:
                parent[v] = u
                next_flags[v] = 1
                cuda.atomic.add(next_count, 0, 1)


@cuda.jit
def atomics_on_its_own_vertex(in_indptr, in_indices, frontier_flags, current, depth, parent, next_flags, next_count):
    """The technique, but every write of the thread's own vertex is an atomic."""
    v = cuda.grid(1)
    if v < depth.shape[0] and depth[v] == -1:
        for k in range(in_indptr[v], in_indptr[v + 1]):
            u = in_indices[k]
            if frontier_flags[u]:
                cuda.atomic.exch(depth, v, current + 1)
                cuda.atomic.exch(parent, v, u)
                cuda.atomic.max(next_flags, v, 1)
                cuda.atomic.add(next_count, 0, 1)
                break


@cuda.jit
def one_thread_sweeps_every_vertex(in_indptr, in_indices, frontier_flags, current, depth, parent, next_flags,
                                   next_count):
    if cuda.grid(1) != 0:
        return
    for v in range(depth.shape[0]):
        if depth[v] == -1:
            for k in range(in_indptr[v], in_indptr[v + 1]):
                u = in_indices[k]
                if frontier_flags[u]:
                    depth[v] = current + 1
                    parent[v] = u
                    next_flags[v] = 1
                    next_count[0] += 1
                    break


WRONG = [no_early_exit, top_down_with_cas, atomics_on_its_own_vertex, one_thread_sweeps_every_vertex]


# ----------------------------------------------------------------------------- right, written differently
@cuda.jit
def scan_from_the_last(in_indptr, in_indices, frontier_flags, current, depth, parent, next_flags, next_count):
    """The in-neighbours scanned from the last one down: the technique in another order."""
    v = cuda.grid(1)
    if v < depth.shape[0] and depth[v] == -1:
        k = in_indptr[v + 1] - 1
        while k >= in_indptr[v]:
            u = in_indices[k]
            if frontier_flags[u] != 0:
                depth[v] = current + 1
                parent[v] = u
                next_flags[v] = 1
                cuda.atomic.add(next_count, 0, 1)
                break
            k -= 1


@cuda.jit
def early_returns(in_indptr, in_indices, frontier_flags, current, depth, parent, next_flags, next_count):
    me = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if me >= depth.shape[0]:
        return
    if depth[me] != -1:
        return
    for e in range(in_indptr[me], in_indptr[me + 1]):
        w = in_indices[e]
        if frontier_flags[w] == 1:
            parent[me] = w
            depth[me] = current + 1
            next_flags[me] = 1
            cuda.atomic.add(next_count, 0, 1)
            return


@cuda.jit
def found_flag_then_write(in_indptr, in_indices, frontier_flags, current, depth, parent, next_flags, next_count):
    """A loop that stops on a flag, and the writes after it."""
    vertex = cuda.grid(1)
    if vertex < depth.shape[0]:
        if depth[vertex] < 0:
            first, last = in_indptr[vertex], in_indptr[vertex + 1]
            hit = -1
            pos = first
            while hit < 0 and pos < last:
                if frontier_flags[in_indices[pos]]:
                    hit = in_indices[pos]
                pos += 1
            if hit >= 0:
                cuda.atomic.add(next_count, 0, 1)
                next_flags[vertex] = 1
                parent[vertex] = hit
                depth[vertex] = current + 1


RIGHT = [scan_from_the_last, early_returns, found_flag_then_write]


@pytest.mark.parametrize("kernel", WRONG, ids=lambda k: k.__name__)
def test_a_wrong_technique_with_right_results_earns_at_most_half(kernel):
    result = grade(kernel)
    assert result.points <= POINTS / 2, str(result)


@pytest.mark.parametrize("kernel", RIGHT, ids=lambda k: k.__name__)
def test_the_technique_written_differently_earns_full_marks(kernel):
    result = grade(kernel)
    assert result.points == POINTS, str(result)
