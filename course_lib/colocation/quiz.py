"""Self-check questions of lesson 08 (co-location mining)."""

from ..predict import Prediction, prediction_dict
from ..quiz import Quiz, quiz_dict

QUIZ = quiz_dict({
    "quadruplet": Quiz(
        "Cells have side r. Why does every row instance of a pattern fit inside one 2 x 2 block of cells?",
        ("Because the grid is aligned with the points",
         "Its instances are pairwise within r, so its bounding box is at most r wide and tall: it spans at most "
         "two columns and two rows of cells",
         "Because patterns have at most four features",
         "It does not: a row instance can span a 3 x 3 block"),
        1,
        "A box at most r wide overlaps at most two consecutive columns of width r (and likewise rows), so one "
        "quadruplet of cells holds the whole row instance. That is what makes the CountMap filter safe.",
    ),
    "launches": Quiz(
        "The per-candidate filter launches 2 kernels per candidate. With 13 features, how many launches does it "
        "make for all size-3 candidates (before any are pruned)?",
        ("6", "286", "572", "2"),
        2,
        "C(13, 3) = 286 candidates, 2 launches each: 572 (the source's figure). The batched filter needs 2.",
    ),
    "bound": Quiz(
        "The filter's figure for a candidate is 0.4 and the threshold is 0.5. What can we conclude?",
        ("The candidate is prevalent",
         "The candidate is not prevalent: the figure is an upper bound of its participation index",
         "Nothing until the refine step runs",
         "The threshold must be lowered"),
        1,
        "The CountMap counts every instance that could take part; the exact PI can only be smaller. Below the "
        "threshold, the candidate is pruned without building a single row instance.",
    ),
    "pinned": Quiz(
        "Why not allocate every host buffer, including multi-GB instance tables, in pinned memory?",
        ("Pinned memory is slower to copy",
         "Page-locked memory cannot be swapped out: it is taken from the operating system and other programs, "
         "and pinning a lot degrades the whole machine",
         "The GPU cannot read pinned memory",
         "Numba does not support it"),
        1,
        "Pinned transfers are faster and can overlap with kernels, but the memory is locked in RAM, and each "
        "allocation is itself slow (the operating system must lock the pages). Pin the buffers that are copied "
        "often, allocate them once and reuse them, and leave big tables in ordinary memory.",
    ),
})

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
