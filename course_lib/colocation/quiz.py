"""Self-check questions of lesson 08 (co-location mining)."""

from ..predict import Prediction, prediction_dict
from ..quiz import quiz_file

#: The lesson's multiple-choice questions, written as prose in quiz.md.
QUIZ = quiz_file(__package__)

#: The lesson's "predict, then measure" exercises (see :mod:`course_lib.predict`).
PREDICTIONS = prediction_dict({
    "participation_index": Prediction(
        "Feature 0 has 4 instances and feature 1 has 2. Three instances of feature 0 are neighbours of the first "
        "instance of feature 1, and no other pair is within r. What is the participation index of (0, 1)?",
        0.5,
        "The participation ratios: 3 of feature 0's 4 instances take part in a row instance (0.75), 1 of feature "
        "1's 2 (0.5). The index is the smallest ratio, 0.5: a pattern is only as prevalent as its least "
        "participating feature.",
        rel_tol=0.01,
    ),
    "filter_bound": Prediction(
        "The same points: the fourth instance of feature 0 and the second of feature 1 lie in adjacent grid cells, "
        "1.65 r apart. What upper bound of the participation index does the CountMap filter give (0, 1)?",
        1.0,
        "The filter sees only counts per cell. The two far instances share a 2 x 2 quadruplet that holds both "
        "features, so the filter cannot rule them out: every instance counts, min(4 / 4, 2 / 2) = 1. The bound is "
        "safe (at least the exact 0.5) but loose here; the refine step finds the exact value.",
        rel_tol=0.01,
    ),
    "apriori_candidates": Prediction(
        "The prevalent size-2 patterns of a data set of 5 features are (0, 1), (0, 2), (0, 3), (1, 2) and (3, 4). "
        "How many size-3 candidates does Apriori generate?",
        1,
        "Joining prevalent pairs that share their first feature gives (0, 1, 2), (0, 1, 3) and (0, 2, 3). A "
        "superset of a pattern that is not prevalent cannot be prevalent (adding a feature only lowers PI), so a "
        "candidate needs every size-2 subset prevalent: (1, 3) and (2, 3) are not, which leaves (0, 1, 2) alone, "
        "instead of the C(5, 3) = 10 triples.",
        rel_tol=0.0,
    ),
})
