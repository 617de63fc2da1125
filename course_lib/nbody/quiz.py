"""The source's quiz questions on all-pairs N-body, as self-check cells of the lesson."""

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
