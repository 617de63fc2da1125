"""The source's quiz questions on SpMV, as self-check cells of the lesson."""

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
