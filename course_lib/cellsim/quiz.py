"""Self-check questions of the lesson on stochastic cell proliferation."""

from ..predict import Prediction, prediction_dict
from ..quiz import quiz_file
from ._core import FATE_RULE

#: The lesson's multiple-choice questions, written as prose in quiz.md.
QUIZ = quiz_file(__package__, FATE_RULE=FATE_RULE)

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
