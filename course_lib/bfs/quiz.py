"""The source's quiz questions on breadth-first search, as self-check cells of the lesson."""

from ..predict import Prediction, prediction_dict
from ..quiz import quiz_file

#: The lesson's multiple-choice questions, written as prose in quiz.md.
QUIZ = quiz_file(__package__)

#: The lesson's "predict, then measure" exercises (see :mod:`course_lib.predict`).
PREDICTIONS = prediction_dict({
    "chain_edge_quadratic": Prediction(
        "Edge-parallel BFS on a chain of 10 vertices, from one end: how many edge examinations in total?",
        90,
        "The chain is 9 levels deep, so the host launches 9 iterations that set depths plus a 10th that finds "
        "nothing to do; every iteration examines all 9 edges: 10 x 9 = 90 = V (V - 1), for a graph of 9 edges.",
        rel_tol=0.0,
    ),
    "star_frontier": Prediction(
        "Frontier BFS on a star of 12 vertices (centre 0), from the leaf 1: how many edge examinations in total?",
        22,
        "Each reached vertex scans its adjacency list once: the leaf 1 (1 edge), then the centre (11 edges), then "
        "the 10 other leaves (1 edge each): 22 = 2E, every edge once per direction, however deep the search.",
        rel_tol=0.0,
    ),
})
