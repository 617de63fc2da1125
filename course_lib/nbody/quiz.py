"""The source's quiz questions on all-pairs N-body, as self-check cells of the lesson."""

from ..predict import Prediction, prediction_dict
from ..quiz import quiz_file

#: The lesson's multiple-choice questions, written as prose in quiz.md.
QUIZ = quiz_file(__package__)

#: The lesson's "predict, then measure" exercises (see :mod:`course_lib.predict`).
PREDICTIONS = prediction_dict({
    "tiled_bytes": Prediction(
        "The tiled kernel with P = 16 runs on N = 48 bodies. How many bytes does it load from global memory?",
        2880,
        "48 destinations x 12 bytes = 576; each of the 3 blocks stages all 48 sources, 16 bytes each: "
        "3 x 48 x 16 = 2,304; 576 + 2,304 = 2,880 bytes, i.e. N x 12 + (N / P) x N x 16.",
    ),
    "pxp_atomics": Prediction(
        "The P x P kernel with P = 8 runs on N = 24 bodies. How many atomic operations does it perform?",
        216,
        "Each of the 3 x 3 blocks ends with one thread per destination row (tx == 0, 8 of them) adding its "
        "tile's partial sum with one atomic per component: 9 blocks x 8 rows x 3 components = 216, i.e. "
        "3N x N / P: every destination gets one atomic per tile of its row.",
        rel_tol=0.0,
    ),
    "register_residency": Prediction(
        "A kernel with 64 registers per thread runs blocks of 1024 threads on an H100 (64 K registers, "
        "2,048 threads per SM). How many blocks can be resident on one SM?",
        1,
        "A block of 1024 threads x 64 registers needs 65,536 registers: the whole register file. The thread "
        "limit would allow two blocks, the registers allow one, so the SM cannot hide one block's barriers "
        "behind another's work. At 32 registers per thread (the tiled kernel's), two fit.",
        rel_tol=0.0,
    ),
})
