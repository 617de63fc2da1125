"""The grader's answer keys of ps7 (``course_lib/cellsim/questions.py`` judges with them): read by
``course_lib.grading.resources.answer_key`` in the grader's process, never importable from the library."""

from course_lib.cellsim.model import FRAME_BYTES_PER_CELL, TREE_SLOT_BYTES


def peak_bytes_per_initial_cell(depth):
    """Bytes the "tree" method holds at its peak per initial cell: level 0 alone (one slot), then while level g makes
    g + 1 both (3 * 2**g slots), the most at the last step."""
    return TREE_SLOT_BYTES * (1 if depth == 0 else 3 * 2 ** (depth - 1))


def tree_population_key(depth, budget):
    """The grader's key of ``tree_largest_population``: the largest L whose peak fits."""
    return budget // peak_bytes_per_initial_cell(depth)


def batch_buffer_bytes(cells_per_batch, n_initial, depth):
    """Bytes of the compact method's batch buffers in q2's model: generation g's holds min(c, r 2**g) cells, r =
    min(c, L) the root batch, FRAME_BYTES_PER_CELL each (the prefix sum's block sums left out)."""
    root = min(cells_per_batch, n_initial)
    return FRAME_BYTES_PER_CELL * sum(min(cells_per_batch, root * 2**g) for g in range(depth + 1))


def cells_per_batch_key(n_initial, depth, budget):
    """The grader's key of ``cells_per_batch``: the largest c <= L 2**depth whose buffers fit (0 if c = 1 does not),
    by bisection on :func:`batch_buffer_bytes`, which grows with c."""
    low, high = 0, n_initial * 2**depth
    while low < high:
        middle = (low + high + 1) // 2
        if batch_buffer_bytes(middle, n_initial, depth) <= budget:
            low = middle
        else:
            high = middle - 1
    return low


def predicted_load_bytes(n, n_recorded):
    """The cost model of q1's kernel: every flag (int32) once, every recorded cell's fluorescence (float64) once."""
    return 4 * n + 8 * n_recorded
