"""Self-check questions of the lesson on average-linkage clustering."""

from ..predict import Prediction, prediction_dict
from ..quiz import quiz_file

#: The lesson's multiple-choice questions, written as prose in quiz.md.
QUIZ = quiz_file(__package__)

#: The lesson's "predict, then measure" exercises (see :mod:`course_lib.predict`).
PREDICTIONS = prediction_dict({
    "aos_float64_sectors": Prediction(
        "With float64 weights the argmax's struct {double value; long index} is 16 bytes. How many 32-byte sectors "
        "does each of its load requests touch (the profiler's sectors per request)?",
        16,
        "At each load the 32 lanes read fields 16 bytes apart: the request spans 32 x 16 = 512 bytes, 16 sectors, "
        "and uses half of every sector (the value load skips the indices, the index load skips the values). In "
        "float32 the struct is 8 bytes and a request touches 8 sectors; 32 consecutive doubles of a struct-of-arrays "
        "layout would need 8.",
        rel_tol=0.0,
    ),
    "forest_nodes": Prediction(
        "hac.components_graph((5, 4, 3), n_isolated=2) has 14 elements: connected components of 5, 4 and 3 "
        "elements, and 2 elements joined to nothing. How long are the dendrogram's parent and height vectors?",
        23,
        "Every element is a leaf node and every merge adds one node. Components never merge, and an element joined "
        "to nothing is a component of its own: nC = 5, so N - nC = 9 merges and 2N - nC = 14 + 9 = 23 nodes, "
        "5 of them roots.",
        rel_tol=0.0,
    ),
    "missing_pairs_height": Prediction(
        "Four elements have affinities 9 (0-1), 8 (2-3), 6 (0-2) and 3 (1-3), and no other pair. At which affinity "
        "does average linkage make its last merge?",
        2.25,
        "0 and 1 merge at 9, then 2 and 3 at 8. The last merge joins {0, 1} and {2, 3}: the mean over all "
        "2 x 2 = 4 pairs, the two missing pairs (0-3 and 1-2) counting 0: (6 + 3 + 0 + 0) / 4 = 2.25. The mean of "
        "the pairs that exist (4.5) ignores the missing ones; 6 would be single linkage.",
        rel_tol=0.01,
    ),
})
