"""Self-check questions of the lesson on stochastic cell proliferation."""

from ..predict import Prediction, prediction_dict
from ..quiz import Quiz, quiz_dict
from ._core import FATE_RULE

QUIZ = quiz_dict({
    "tree_memory": Quiz(
        "In the fixed-slot binary tree, level g of L initial cells has how many slots, used or not?",
        ("L + g", "L * g", "L * 2**g", "2**L"), 2,
        "Slot i's daughters go to slots 2i and 2i + 1, so every level doubles the array, whether the "
        "slots hold cells that divided or cells that stopped.",
    ),
    "depth": Quiz(
        "Why can no cell be deeper than log2(max phi_0 / phi_min) generations, whatever tau_max is?",
        ("Each division halves phi, and a cell whose daughters would fall below phi_min is discarded",
         "CUDA limits recursion to 24 levels", "Timers are bounded by tau_max"), 0,
        "Label dilution: a generation-g cell has phi_0 / 2**g, and the rule never lets a cell's daughters "
        "fall below phi_min: " + FATE_RULE,
    ),
    "counter_rng": Quiz(
        "A compacted array moves cells to new positions every level. What keeps a cell's random "
        "numbers the same whatever the batch, block size or device?",
        ("A per-thread generator seeded with the thread index",
         "Numbers keyed by (cell id, generation) through a counter-based generator",
         "Drawing all numbers on the host first"), 1,
        "A counter-based generator (Philox) is a pure function of (counter, key): the counter names the "
        "cell and the generation, so any thread computes the same numbers for the same cell.",
    ),
    "shared_histogram": Quiz(
        "With per-block shared-memory bins, how many global atomics does one block issue at most?",
        ("one per recorded cell", "one per non-empty bin", "one per thread", "none"), 1,
        "Cells count into the block's shared bins; at the end each non-empty bin is added to the "
        "global histogram once.",
    ),
    "validation": Quiz(
        "Two runs of a stochastic simulator with different random streams give different histograms. "
        "How do you show they simulate the same model?",
        ("Overlay the two histograms and look", "Require equal histograms",
         "Compare the distributions over many seeds with a two-sample test and a distance threshold"), 2,
        "Pool many runs per implementation and test: a permutation two-sample test on the Hellinger "
        "distance of the pooled histograms, with thresholds stated in advance (compare_runs).",
    ),
})

#: The lesson's "predict, then measure" exercises (see :mod:`course_lib.predict`).
PREDICTIONS = prediction_dict({
    "deepest_generation": Prediction(
        "50 initial cells, all of fluorescence 300, with phi_min = 11 and tau_max = 10,000 h, far later than any "
        "division time: what is the deepest generation that any cell reaches?",
        4,
        "The rule: " + FATE_RULE + " Here no division comes after tau_max, so phi alone decides. A generation-g "
        "cell has 300 / 2**g: generation 3 (37.5) still makes daughters of 18.75; generation 4 (18.75) would make "
        "9.4, so its cells are discarded instead. Label dilution alone sets the depth, floor(log2(300 / 11)) = 4, "
        "whatever tau_max is.",
        rel_tol=0.0,
    ),
    "deepest_recorded": Prediction(
        "In the same run, what is the deepest generation of a recorded cell (one in the output histogram)?",
        0,
        "The rule: " + FATE_RULE + " With tau_max = 10,000 h every division of a dividing type comes before "
        "tau_max, so such a cell goes on dividing until its daughters would fall below phi_min, and is then "
        "discarded, not recorded. Only cells whose next division never comes are recorded: the quiescent type, "
        "at generation 0. Very late histograms show only the quiescent cells.",
        rel_tol=0.0,
    ),
    "histogram_global_atomics": Prediction(
        "100 initial cells, all of the same fluorescence, and tau_max = 0: every division would come after tau_max, "
        "so by the rule every cell is recorded at once. The "
        "fate kernel runs in blocks of 32 threads with per-block shared bins. How many global atomics does it make "
        "on the histogram?",
        4,
        "Every cell adds itself to its block's shared bins (100 shared atomics). All cells have the same "
        "fluorescence, so each block has a single non-empty bin and adds it to the global histogram once: "
        "ceil(100 / 32) = 4 blocks, 4 global atomics, against 100 with one global atomic per cell.",
        rel_tol=0.0,
    ),
})
