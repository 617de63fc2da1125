"""The filter in one pass, without the quadruplet flag matrix (``mine(..., filter="fused")``), and the
refine's neighbour search once per row (``mine(..., search="once")``).

The lesson's filter (:func:`~course_lib.colocation.kernels.quadruplet_filter_kernel`, then
:func:`~course_lib.colocation.kernels.candidate_bound_kernel`) writes one int32 flag per
(candidate, quadruplet), C x n_quads of them (397 MB for a million instances), and reads them
back. Here each thread takes one cell for one candidate and decides there whether one of the (up
to four) quadruplets containing the cell holds every feature of the candidate, from the CountMap
itself: the flags are never stored. The counted instances go into ``sums[c * k + j]``; the host
divides by the feature totals (:func:`bounds_from_sums`), as ``candidate_bound_kernel`` does.

The lesson's refine searches every row's neighbourhood twice: once to count its extensions
(:func:`~course_lib.colocation.kernels.extend_count_kernel`), once more, after the prefix sum, to
write them (:func:`~course_lib.colocation.kernels.extend_fill_kernel`). Here the counting pass keeps
up to :data:`KEPT` extensions of each row in a scratch buffer (:func:`extend_keep_kernel`); after
the prefix sum :func:`place_kept_kernel` copies them to their place, and searches again only the rows
with more than :data:`KEPT` extensions.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int32

from ..registry import course_kernel
from ._types import MAX_PATTERN
from .kernels import _EXTEND_SIG, ALL_EXTENSIONS, LESSON, _example_extend, _I, _row_extensions_device, _small

__all__ = ["KEPT", "bounds_from_sums", "extend_keep_kernel", "fused_filter_kernel", "place_kept_kernel"]

#: Extensions per row the counting pass keeps (a row with more is searched again when placed).
KEPT = 4


def _example_fused():
    _, grid, _, counts, *_ = _small()
    candidates = np.array([0, 1, 0, 2, 1, 2], np.int32)
    blocks = -(-grid.n_cells // 32)
    return (blocks, 3), 32, (counts, np.int32(3), np.int32(grid.n_cols), np.int32(grid.n_rows), candidates,
                             np.int32(2), np.zeros(6, np.int32))


@course_kernel("void(int32[::1], int32, int32, int32, int32[::1], int32, int32[::1])", lesson=LESSON,
               example=_example_fused)
def fused_filter_kernel(count_map, n_features, n_cols, n_rows, candidates, k, sums):
    """Add to ``sums[c * k + j]`` the instances of candidate c's j-th feature in the cells of the
    quadruplets that hold every feature of c.

    Grid ``(ceil(n_cells / blockDim.x), C)``, 1-D blocks: thread t of block (b, c) takes cell
    ``b * blockDim.x + t`` for candidate c. The quadruplets containing cell (cx, cy) are anchored
    at (qx, qy) in {cx - 1, cx} x {cy - 1, cy}, those inside the quadruplet grid (as
    :func:`~course_lib.colocation.kernels.quadruplet_filter_kernel` numbers them: a missing cell of
    a single row or column holds nothing). A block adds its counts in shared memory, then one
    global atomic per feature. ``sums`` must start at 0.
    """
    part = cuda.shared.array(MAX_PATTERN, int32)
    t = cuda.threadIdx.x
    if t < MAX_PATTERN:
        part[t] = 0
    cuda.syncthreads()
    c = cuda.blockIdx.y
    cell = cuda.blockIdx.x * cuda.blockDim.x + t
    if cell < n_cols * n_rows:
        cx = cell % n_cols
        cy = cell // n_cols
        quad_cols = max(n_cols - 1, 1)
        quad_rows = max(n_rows - 1, 1)
        alive = 0  # bit b: quadruplet (cx - 1 + (b & 1), cy - 1 + (b >> 1)) may still hold every feature
        for b in range(4):
            qx = cx - 1 + (b & 1)
            qy = cy - 1 + (b >> 1)
            if 0 <= qx < quad_cols and 0 <= qy < quad_rows:
                alive |= 1 << b
        for j in range(k):
            if alive == 0:
                break
            f = candidates[c * k + j]
            for b in range(4):
                if alive & (1 << b):
                    qx = cx - 1 + (b & 1)
                    qy = cy - 1 + (b >> 1)
                    n = 0
                    for dy in range(2):
                        for dx in range(2):
                            if qx + dx < n_cols and qy + dy < n_rows:
                                n += count_map[((qy + dy) * n_cols + qx + dx) * n_features + f]
                    if n == 0:
                        alive &= ~(1 << b)
        if alive != 0:
            for j in range(k):
                v = count_map[cell * n_features + candidates[c * k + j]]
                if v > 0:
                    cuda.atomic.add(part, j, v)
    cuda.syncthreads()
    if t < k and part[t] > 0:
        cuda.atomic.add(sums, c * k + t, part[t])


def bounds_from_sums(sums, candidates, feature_count) -> np.ndarray:
    """Upper bounds of PI from the fused filter's sums, as ``candidate_bound_kernel`` computes them.

    Parameters
    ----------
    sums : int array of shape (C * k,)
    candidates : int array of shape (C, k)
    feature_count : int array of shape (F,)

    Returns
    -------
    float64 array of shape (C,)
        ``min(1, min_j sums[c, j] / feature_count[f_j])``, a ratio 0 where the feature has no instance.
    """
    candidates = np.asarray(candidates, np.int64)
    totals = np.asarray(feature_count, np.int64)[candidates]
    sums = np.asarray(sums, np.int64).reshape(candidates.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(totals > 0, sums / np.where(totals > 0, totals, 1), 0.0)
    return np.minimum(1.0, ratios.min(axis=1)) if len(candidates) else np.zeros(0)


def _example_keep():
    griddim, blockdim, args = _example_extend(False)
    rows = args[-1].shape[0]
    return griddim, blockdim, args + (np.zeros(rows * KEPT * 3, np.int32),)


@course_kernel(f"void({_EXTEND_SIG}, {_I}, {_I})", lesson=LESSON, example=_example_keep)
def extend_keep_kernel(table, k, child_of, n_features, x, y, features, cell_of, cell_start, order, n_cols, n_rows,
                       r2, counts, kept):
    """Refine, pass 1 of the search-once refine: each row's extension count, and its first :data:`KEPT`
    extensions in ``kept`` (int32, rows * KEPT * (k + 2)). Arguments as ``extend_count_kernel``."""
    row = cuda.grid(1)
    if row < counts.shape[0]:
        counts[row] = _row_extensions_device(table, row, k, child_of, n_features, x, y, features, cell_of,
                                             cell_start, order, n_cols, n_rows, r2, KEPT, row * KEPT, kept)


def _example_place():
    griddim, blockdim, args = _example_extend(True)
    offsets, new_table = args[-2], args[-1]
    counts = np.diff(np.append(offsets, new_table.size // 3)).astype(np.int32)
    return griddim, blockdim, args[:-2] + (counts, offsets, np.zeros(counts.size * KEPT * 3, np.int32), new_table)


@course_kernel(f"void({_EXTEND_SIG}, {_I}, {_I}, {_I}, {_I})", lesson=LESSON, example=_example_place)
def place_kept_kernel(table, k, child_of, n_features, x, y, features, cell_of, cell_start, order, n_cols, n_rows,
                      r2, counts, offsets, kept, new_table):
    """Refine, pass 2 of the search-once refine: row r's extensions go to rows ``offsets[r], ...`` of
    ``new_table``, copied from ``kept`` when ``counts[r] <= KEPT``, found by a second search (as
    ``extend_fill_kernel``) otherwise. The rows come out in the lesson's order."""
    row = cuda.grid(1)
    if row < offsets.shape[0]:
        n = counts[row]
        if n > KEPT:
            _row_extensions_device(table, row, k, child_of, n_features, x, y, features, cell_of, cell_start, order,
                                   n_cols, n_rows, r2, ALL_EXTENSIONS, offsets[row], new_table)
        else:
            width = k + 2
            for e in range(n):
                for m in range(width):
                    new_table[(offsets[row] + e) * width + m] = kept[(row * KEPT + e) * width + m]
