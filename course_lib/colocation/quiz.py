"""Self-check questions of lesson 08 (co-location mining)."""

from ..quiz import Quiz, quiz_dict

QUIZ = quiz_dict({
    "quadruplet": Quiz(
        "Cells have side r. Why does every row instance of a pattern fit inside one 2 x 2 block of cells?",
        ("Because the grid is aligned with the points",
         "Its instances are pairwise within r, so its bounding box is at most r wide and tall: it spans at most "
         "two columns and two rows of cells",
         "Because patterns have at most four features",
         "It does not: a row instance can span a 3 x 3 block"),
        1,
        "A box at most r wide overlaps at most two consecutive columns of width r (and likewise rows), so one "
        "quadruplet of cells holds the whole row instance. That is what makes the CountMap filter safe.",
    ),
    "launches": Quiz(
        "The per-candidate filter launches 2 kernels per candidate. With 13 features, how many launches does it "
        "make for all size-3 candidates (before any are pruned)?",
        ("6", "286", "572", "2"),
        2,
        "C(13, 3) = 286 candidates, 2 launches each: 572 (the source's figure). The batched filter needs 2.",
    ),
    "bound": Quiz(
        "The filter's figure for a candidate is 0.4 and the threshold is 0.5. What can we conclude?",
        ("The candidate is prevalent",
         "The candidate is not prevalent: the figure is an upper bound of its participation index",
         "Nothing until the refine step runs",
         "The threshold must be lowered"),
        1,
        "The CountMap counts every instance that could take part; the exact PI can only be smaller. Below the "
        "threshold, the candidate is pruned without building a single row instance.",
    ),
    "pinned": Quiz(
        "Why not allocate every host buffer, including multi-GB instance tables, in pinned memory?",
        ("Pinned memory is slower to copy",
         "Page-locked memory cannot be swapped out: it is taken from the operating system and other programs, "
         "and pinning a lot degrades the whole machine",
         "The GPU cannot read pinned memory",
         "Numba does not support it"),
        1,
        "Pinned transfers are faster and can overlap with kernels, but the memory is locked in RAM. Pin the "
        "buffers that are copied often, not everything.",
    ),
})
