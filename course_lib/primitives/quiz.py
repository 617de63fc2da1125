"""The primitives lesson's quiz questions and predictions, as self-check cells of the lesson."""

from ..predict import Prediction, prediction_dict
from ..quiz import quiz_file

#: The lesson's multiple-choice questions, written as prose in quiz.md.
QUIZ = quiz_file(__package__)

#: The lesson's "predict, then measure" exercises (see :mod:`course_lib.predict`).
PREDICTIONS = prediction_dict({
    "hillis_steele_adds": Prediction(
        "Hillis-Steele scan of one tile of 64 values: how many additions does the block do?",
        321,
        "At step d (offset 2**d) every element from index 2**d on adds one value: 64 - 1, 64 - 2, 64 - 4, ..., "
        "64 - 32, six steps: 6 x 64 - 63 = 321, against 63 for a serial loop: five times the work.",
    ),
    "blelloch_adds": Prediction(
        "Blelloch scan of one tile of 64 values: how many additions does the block do?",
        126,
        "The up-sweep is a tree reduction (63 adds); the down-sweep goes back down the same tree (63 more): "
        "2 x (64 - 1) = 126, about twice the serial loop, whatever the tile.",
    ),
    "blelloch_barriers": Prediction(
        "How many syncthreads does each block of the Blelloch scan pass, for a tile of 64 values?",
        13,
        "One per level of each sweep: log2(64) = 6 on the way up, 6 on the way down, and one before the results "
        "are written: 13. Hillis-Steele passes 7 for the same tile, half as many: it trades work for steps.",
    ),
    "worst_conflict": Prediction(
        "Blelloch without padding, tile of 64 (32 threads): the most wavefronts one warp-wide shared access "
        "needs (the worst bank conflict)?",
        2,
        "At stride s the active lanes read s (2t + 1) - 1: 2s words apart. With 32 active lanes (s = 1) that is "
        "every second word, two words per bank: 2 wavefronts. At larger strides fewer lanes are active, and a "
        "tile of 64 has only one full warp level; with tiles of 512 the worst access needs 16.",
    ),
})
