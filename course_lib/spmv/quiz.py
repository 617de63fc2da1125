"""The source's quiz questions on SpMV, as self-check cells of the lesson."""

from ..predict import Prediction, prediction_dict
from ..quiz import Quiz, quiz_dict

QUIZ = quiz_dict({
    "more_threads": Quiz(
        "For the same matrix, which approach launches more threads?",
        ("thread per row", "thread per element"), 1,
        "One thread per non-zero instead of one per row: Z threads against R.",
    ),
    "communication": Quiz(
        "Which approach requires communication between threads?",
        ("thread per row", "thread per element"), 1,
        "The products of one row live in different threads and must be summed: a segmented reduction (or "
        "atomics). A thread that owns its row sums it in a register.",
    ),
    "work_per_thread": Quiz(
        "Which approach does more work per thread?",
        ("thread per row", "thread per element"), 0,
        "A thread per row does as many multiply-adds as its row has non-zeros; a thread per element does one.",
    ),
    "warp_runtime": Quiz(
        "32 adjacent threads of a warp each process one row (thread per row). The rows have different "
        "lengths. The run time of the warp depends on the...",
        ("shortest row", "average row", "longest row"), 2,
        "The lanes advance together; lanes with short rows sit idle until the longest row is done.",
    ),
    "element_runtime": Quiz(
        "32 adjacent threads each process one non-zero (thread per element). Their run time is...",
        ("proportional to the longest row", "proportional to the shortest row",
         "insensitive to the distribution of the rows"), 2,
        "The products and the segmented reduction depend only on the number of non-zeros.",
    ),
    "balanced": Quiz(
        "Which approach is better on a matrix whose rows all have about the same length?",
        ("thread per row", "thread per element"), 0,
        "No lane waits, and no thread needs another's result: Bell and Garland measured thread per row about "
        "3x faster there.",
    ),
    "varying": Quiz(
        "Which approach is better when the row lengths vary wildly?",
        ("thread per row", "thread per element"), 1,
        "Thread per row wastes most lanes waiting for the longest row; thread per element does not care.",
    ),
    "too_left": Quiz(
        "In the hybrid, drawing the line (K) too far to the left causes...",
        ("poor peak performance", "load imbalance"), 0,
        "Regular entries that thread per row would process fast go to the slower thread-per-element part.",
    ),
    "too_right": Quiz(
        "Drawing the line (K) too far to the right causes...",
        ("poor peak performance", "load imbalance"), 1,
        "Thread per row then runs on irregular row lengths: padding, idle lanes, load imbalance.",
    ),
})

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
