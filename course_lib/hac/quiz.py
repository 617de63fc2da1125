"""Self-check questions of the lesson on average-linkage clustering."""

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
        "In the thesis 77.6% of the CUDA version's time was in kernels. If the kernels became infinitely fast, "
        "how much faster would the whole run be at most?",
        ("77.6 times", "4.47 times", "1.29 times", "no limit"), 1,
        "Amdahl: 1 / (1 - 0.776) = 4.47. The other 22.4% (the CPU sort, transfers, the host loop) stays.",
    ),
})
