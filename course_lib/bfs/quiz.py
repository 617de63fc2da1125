"""The source's quiz questions on breadth-first search, as self-check cells of the lesson."""

from ..quiz import Quiz, quiz_dict

QUIZ = quiz_dict({
    "depth_range": Quiz(
        "Over all connected graphs of N vertices, what are the smallest and the largest possible maximum depth "
        "of a BFS from a given root?",
        ("1 and N", "1 and N - 1", "log2 N and N - 1", "0 and N / 2"), 1,
        "A star (every vertex joined to the root) has maximum depth 1; a chain from the root has N - 1. The "
        "chain is the worst case for the step complexity: N - 1 levels, one after another.",
    ),
    "race": Quiz(
        "In the edge-parallel BFS, two threads reach the same unvisited vertex in the same iteration. Does the "
        "result depend on which thread writes first?",
        ("yes: a race condition", "no: both write the same depth"), 1,
        "Every write in iteration d stores d + 1, so the order does not matter for the depth. The parents may "
        "differ between runs, but each is a valid BFS parent. Clearing `done` from many threads is harmless "
        "for the same reason.",
    ),
    "work": Quiz(
        "What is the worst-case work of the edge-parallel BFS (every edge examined at every iteration)?",
        ("O(V + E)", "O(V log V + E)", "O(V * E)", "O(E^2)"), 2,
        "A chain needs V iterations and each scans all E edges: O(V * E), at least quadratic in V for any "
        "graph with E >= V.",
    ),
    "frontier_work": Quiz(
        "If only the vertices of the current level (the frontier) scan their edges, how much work does the "
        "whole search do?",
        ("O(V + E)", "O(V * E)", "O(E log V)", "O(V^2)"), 0,
        "Each reached vertex enters one frontier and scans its adjacency list once: every edge is examined "
        "once per direction.",
    ),
})
