"""The source's quiz questions on SpMV, as self-check cells of the lesson."""

from ..predict import Prediction, prediction_dict
from ..quiz import quiz_file

#: The lesson's multiple-choice questions, written as prose in quiz.md.
QUIZ = quiz_file(__package__)

#: The lesson's "predict, then measure" exercises (see :mod:`course_lib.predict`).
PREDICTIONS = prediction_dict({
    "triangle_rows_simt": Prediction(
        "Thread per row on 32 rows of 1, 2, ..., 32 non-zeros, one warp: what SIMT efficiency does the loop over "
        "a row's entries have?",
        0.516,
        "The warp runs as long as its longest row: 32 steps x 32 lanes = 1,024 lane-steps issued, for "
        "1 + 2 + ... + 32 = 528 non-zeros: 528 / 1,024 = 0.52. Half the lanes' time is spent waiting.",
    ),
    "ell_sectors": Prediction(
        "ELL, 5-point stencil of a 16 x 16 grid: how many 32-byte sectors does a warp-level load of the matrix "
        "need?",
        4,
        "ELL stores slot k of consecutive rows side by side, so 32 lanes (32 consecutive rows) read 32 consecutive "
        "4-byte values: 128 bytes, 4 sectors, the minimum (the measured average is a hair above 4 where a load "
        "does not start on a sector boundary).",
    ),
})
