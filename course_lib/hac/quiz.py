"""Self-check questions of the lesson on average-linkage clustering."""

from ..predict import Prediction, prediction_dict
from ..quiz import Quiz, quiz_dict

QUIZ = quiz_dict({
    "linkage": Quiz(
        "Two clusters A (2 elements) and B (3 elements) have 6 pairs of elements with affinities 1, 1, 1, 1, 4 and "
        "4. Which affinity does average linkage give the pair (A, B)?",
        ("1", "4", "2", "3"), 2,
        "Average linkage takes the mean over all |A| |B| = 6 pairs: (4 * 1 + 2 * 4) / 6 = 2. Single linkage "
        "would take the most similar pair (4), complete linkage the least similar (1).",
    ),
    "merges": Quiz(
        "A graph of 10 elements has 3 connected components. How many merges does the algorithm make, and how long "
        "are parent and height?",
        ("9 and 19", "7 and 17", "10 and 20", "7 and 20"), 1,
        "Components are never merged: N - nC = 7 merges, and 2N - nC = 17 nodes (10 leaves, 7 merges).",
    ),
    "coalescing": Quiz(
        "A warp reads the values of 32 consecutive {float value; int index} structs. How many 32-byte sectors does "
        "that load touch, compared with 32 consecutive floats of a struct-of-arrays layout?",
        ("the same: 4", "8 instead of 4", "32 instead of 4", "2 instead of 4"), 1,
        "The 32 structs span 256 bytes, 8 sectors, of which the load uses half; 32 floats are 128 bytes, 4 "
        "sectors. The profiler's sectors per request show exactly this.",
    ),
    "race": Quiz(
        "After relabelling, cluster k has entries (k, 5) coming from i and from j. If one thread per entry does "
        "weights[first] += weights[e] without atomics, what can go wrong?",
        ("nothing: each thread writes a different entry", "two read-modify-writes of the same location can "
         "interleave and one addition is lost", "the kernel deadlocks"), 1,
        "Several threads update the same accumulator: a scatter-add race. The thesis sorted on the CPU and "
        "summed each run in one thread; atomics or a segmented reduction over sorted keys are the GPU's ways.",
    ),
    "amdahl": Quiz(
        "In the thesis 77.6% of the CUDA version's 24.77 s was in kernels. If the kernels became infinitely fast, "
        "how much faster than those 24.77 s would the CUDA run be at most?",
        ("77.6 times", "4.47 times", "1.29 times", "no limit"), 1,
        "Amdahl: 1 / (1 - 0.776) = 4.47, about 5.5 s. The other 22.4% (the CPU sort, transfers, the host loop) "
        "stays. This is a ceiling on further speed-up of a version already 11.85x faster than C.",
    ),
})

#: The lesson's "predict, then measure" exercises (see :mod:`course_lib.predict`).
PREDICTIONS = prediction_dict({
    "aos_float64_sectors": Prediction(
        "With float64 weights the argmax's struct {double value; long index} is 16 bytes. How many 32-byte sectors "
        "does each of its load requests touch (the profiler's sectors per request)?",
        16,
        "At each load the 32 lanes read fields 16 bytes apart: the request spans 32 x 16 = 512 bytes, 16 sectors, "
        "and uses half of every sector (the value load skips the indices, the index load skips the values). In "
        "float32 the struct is 8 bytes and a request touches 8 sectors; 32 consecutive doubles of a struct-of-arrays "
        "layout would need 8.",
        rel_tol=0.0,
    ),
    "forest_nodes": Prediction(
        "hac.components_graph((5, 4, 3), n_isolated=2) has 14 elements: connected components of 5, 4 and 3 "
        "elements, and 2 elements joined to nothing. How long are the dendrogram's parent and height vectors?",
        23,
        "Every element is a leaf node and every merge adds one node. Components never merge, and an element joined "
        "to nothing is a component of its own: nC = 5, so N - nC = 9 merges and 2N - nC = 14 + 9 = 23 nodes, "
        "5 of them roots.",
        rel_tol=0.0,
    ),
    "missing_pairs_height": Prediction(
        "Four elements have affinities 9 (0-1), 8 (2-3), 6 (0-2) and 3 (1-3), and no other pair. At which affinity "
        "does average linkage make its last merge?",
        2.25,
        "0 and 1 merge at 9, then 2 and 3 at 8. The last merge joins {0, 1} and {2, 3}: the mean over all "
        "2 x 2 = 4 pairs, the two missing pairs (0-3 and 1-2) counting 0: (6 + 3 + 0 + 0) / 4 = 2.25. The mean of "
        "the pairs that exist (4.5) ignores the missing ones; 6 would be single linkage.",
        rel_tol=0.01,
    ),
})
