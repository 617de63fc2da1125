"""The source's quiz questions on all-pairs N-body, as self-check cells of the lesson."""

from ..predict import Prediction, prediction_dict
from ..quiz import Quiz, quiz_dict

QUIZ = quiz_dict({
    "work": Quiz(
        "For N objects, what is the work complexity of computing all-pairs N-body?",
        ("N", "N log N", "N^2", "N^3"), 2,
        "Each of the N bodies computes N - 1 forces: N(N - 1) interactions. Barnes-Hut (N log N) and the "
        "fast multipole method (N) approximate distant groups instead.",
    ),
    "naive_fetches": Quiz(
        "If all N^2 forces run in parallel and each reads its two bodies from global memory, how many "
        "times is each body fetched?",
        ("N", "2N (or 2N - 2)", "N^2", "2"), 1,
        "Each body is fetched N times as a source and N times as a destination (N - 1 each without "
        "self-interaction).",
    ),
    "tile_fetches": Quiz(
        "With P x P tiles, each computed by one block that shares data, how many fetches does a tile need?",
        ("2P^2", "P^2", "2P", "P"), 2,
        "P sources and P destinations, each fetched once per tile, instead of 2P^2.",
    ),
    "share": Quiz(
        "With P^2 threads per tile, across how many threads must each source's (and each destination's) "
        "parameters be distributed?",
        ("1", "P", "P^2", "N"), 1,
        "Each source is used by the P threads of its column, each destination by the P threads of its row.",
    ),
    "bigger_tile": Quiz(
        "Does a larger tile size P mean more or less total global memory bandwidth?",
        ("more", "less"), 1,
        "Each source is loaded once per tile; larger tiles mean fewer tiles and fewer loads.",
    ),
    "too_big": Quiz(
        "When can't we use shared memory to share a source body across all destination threads of a tile: "
        "when P is too big or too small?",
        ("too big", "too small"), 0,
        "A tile larger than the maximum block size must span several blocks, and blocks cannot share "
        "shared memory. Also keep at least as many blocks as SMs.",
    ),
})

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
