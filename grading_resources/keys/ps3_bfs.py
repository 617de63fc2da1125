"""The grader's answer keys of ps3 (``course_lib/bfs/questions.py`` judges with them): read by
``course_lib.grading.resources.answer_key`` in the grader's process, never importable from the library."""

import numpy as np


def examined_edges(in_indptr, in_indices, frontier_flags, depth):
    """Edges a bottom-up step with early exit examines: up to the first frontier neighbour of each unvisited vertex."""
    total = 0
    for v in np.flatnonzero(np.asarray(depth) == -1):
        neighbours = np.asarray(in_indices[in_indptr[v]:in_indptr[v + 1]])
        hits = np.flatnonzero(np.asarray(frontier_flags)[neighbours])
        total += int(hits[0]) + 1 if hits.size else neighbours.size
    return total


def quadratic_on_chain(n):
    """Edges the edge-parallel BFS examines on the one-way chain 0 -> 1 -> ... -> n-1 from vertex n // 2: all
    n - 1 arcs at each iteration, one per level (depths 0 .. n - 1 - n // 2) plus the last one, which finds nothing."""
    return (n - 1) * (n - n // 2)


def frontier_on_chain(n):
    """Edges the frontier BFS examines there: the out-arcs of the reached vertices n // 2 .. n - 1."""
    return n - 1 - n // 2
