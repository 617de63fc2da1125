"""The tiles of the one-launch merge-path product, planned on the host once per matrix.

:func:`plan_merge_tiles` cuts the merge path of a CSR matrix (its R row ends and Z
non-zeros, R + Z steps) into tiles of about ``block * items`` steps, one per block of
:func:`course_lib.spmv.kernels.merge_path_tiles_kernel`, and moves a tile boundary that
falls inside a *short* row back to that row's start: a short row is then summed by the
one block that holds it, and needs no carry. Only rows longer than half a tile can still
be cut by a boundary; those few *split* rows are summed by atomics into an accumulator
each, and the last block to add its part writes the row (an arrival count), so no second
pass over the carries is needed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MergeTiles", "plan_merge_tiles"]


@dataclass(frozen=True)
class MergeTiles:
    """Where each tile of the merge path starts, and the rows that tile boundaries cut.

    Attributes
    ----------
    rows, nnz : ndarray of shape (T + 1,), int32
        Tile b covers the steps from (``rows[b]`` row ends, ``nnz[b]`` non-zeros) to
        (``rows[b + 1]``, ``nnz[b + 1]``); the last entry is (R, Z).
    split : ndarray of shape (T + 1,), int32
        For each boundary, the index of the split row it falls inside, or -1 when it falls
        at a row's start (or at the end).
    parts : ndarray of shape (S,), int32
        For each split row, how many tiles hold part of it (the boundaries inside it + 1).
    split_rows : ndarray of shape (S,), int32
        The split rows themselves.
    """

    rows: np.ndarray
    nnz: np.ndarray
    split: np.ndarray
    parts: np.ndarray
    split_rows: np.ndarray

    @property
    def n_tiles(self) -> int:
        return int(self.rows.size - 1)


def plan_merge_tiles(indptr, tile: int) -> MergeTiles:
    """Cut the merge path of a CSR matrix into tiles of ``tile`` steps, snapped to the starts of short rows.

    Parameters
    ----------
    indptr : ndarray of shape (R + 1,), integer
        CSR row pointers (validated by the caller).
    tile : int
        Steps (row ends + non-zeros) per tile before snapping, >= 2. A boundary inside a row of
        at most ``tile // 2`` non-zeros moves back to that row's start, so a tile holds between
        ``tile - tile // 2`` and ``tile + tile // 2`` steps.

    Returns
    -------
    MergeTiles
    """
    indptr = np.asarray(indptr, dtype=np.int64)
    n_rows = indptr.size - 1
    nnz = int(indptr[-1])
    total = n_rows + nnz
    n_tiles = max(1, -(-total // tile))
    diagonals = np.minimum(np.arange(n_tiles + 1, dtype=np.int64) * tile, total)
    diagonals[-1] = total
    # Row r's end is step indptr[r + 1] + r of the path: the rows finished before step d are the ends < d.
    rows = np.searchsorted(indptr[1:] + np.arange(n_rows), diagonals, side="left")
    consumed = diagonals - rows
    inside = rows < n_rows
    starts = indptr[np.minimum(rows, n_rows - 1)] if n_rows else np.zeros_like(rows)
    inside &= consumed > starts
    lengths = np.where(inside, indptr[np.minimum(rows + 1, n_rows)] - starts, 0)
    snap = inside & (lengths <= tile // 2)
    consumed = np.where(snap, starts, consumed)
    inside &= ~snap
    split_rows = np.unique(rows[inside])
    split = np.full(n_tiles + 1, -1, dtype=np.int64)
    split[inside] = np.searchsorted(split_rows, rows[inside])
    parts = np.bincount(split[inside], minlength=split_rows.size) + 1
    as32 = lambda a: np.ascontiguousarray(a, dtype=np.int32)  # noqa: E731
    return MergeTiles(as32(rows), as32(consumed), as32(split), as32(parts), as32(split_rows))
