"""The layout problem set 4 grades on: one array per colour of the red-black ordering (packed along the rows), the
grids of its launches, and which threads and cells the profiler's sampled blocks cover. Shared by ``ps4.q1`` and
``ps4.q3`` (:mod:`course_lib.poisson.questions`, :mod:`course_lib.poisson._questions_q3`)."""

from __future__ import annotations

import math

import numpy as np


#: Blocks profiled in each drawn launch of a signature.
SAMPLED_BLOCKS = 3


def packed_width(width: int) -> int:
    """Cells per row of one colour's array for an image ``width`` pixels wide."""
    return (int(width) + 1) // 2


def colour_columns(height: int, width: int, colour: int) -> np.ndarray:
    """The image column of every cell of one colour.

    Returns
    -------
    ndarray
        int64 of shape (height, packed_width(width)): ``2k + (y + colour) % 2`` at (y, k), ``width`` or more
        at a padding cell.
    """
    rows, cells = np.indices((height, packed_width(width)))
    return 2 * cells + (rows + colour) % 2


def colour_cells(planes, colour: int, fill=0) -> np.ndarray:
    """The cells of one colour of an array, packed row by row.

    Parameters
    ----------
    planes : array_like
        Shape (..., H, W), any dtype (float32 planes, uint8 labels).
    colour : int
        0 (red, (y + x) even) or 1 (black).
    fill : scalar
        The value of the padding cells.

    Returns
    -------
    ndarray
        Shape (..., H, Wc) with Wc = (W + 1) // 2, the dtype of ``planes``: cell (y, k) holds pixel
        (y, 2k + (y + colour) % 2).
    """
    planes = np.asarray(planes)
    height, width = planes.shape[-2:]
    columns = colour_columns(height, width, colour)
    rows = np.broadcast_to(np.arange(height)[:, None], columns.shape)
    real = columns < width
    packed = np.full(planes.shape[:-2] + columns.shape, fill, planes.dtype)
    packed[..., real] = planes[..., rows[real], columns[real]]
    return packed


def merge_colours(red, black, width: int) -> np.ndarray:
    """The full array of two colour arrays (the inverse of :func:`colour_cells`).

    Parameters
    ----------
    red, black : array_like
        Shape (..., H, Wc): the cells of colour 0 and of colour 1.
    width : int
        W, the full array's width (Wc = (W + 1) // 2); padding cells are dropped.

    Returns
    -------
    ndarray
        Shape (..., H, W), the dtype of ``red``.
    """
    red, black = np.asarray(red), np.asarray(black)
    height = red.shape[-2]
    merged = np.zeros(red.shape[:-2] + (height, int(width)), red.dtype)
    for colour, cells in enumerate((red, black)):
        columns = colour_columns(height, width, colour)
        rows = np.broadcast_to(np.arange(height)[:, None], columns.shape)
        real = columns < width
        merged[..., rows[real], columns[real]] = cells[..., real]
    return merged


def packed_grid(height: int, width: int, block) -> tuple:
    """The grid of one thread per cell of a colour: ``(ceil(Wc / bx), ceil(H / by))``."""
    return (math.ceil(packed_width(width) / block[0]), math.ceil(height / block[1]))


def pixel_grid(height: int, width: int, block) -> tuple:
    """The grid of one thread per pixel: ``(ceil(W / bx), ceil(H / by))``."""
    return (math.ceil(width / block[0]), math.ceil(height / block[1]))


def ran_mask(shape, block, blocks) -> np.ndarray:
    """Which elements of a (rows, columns) array one thread each of the launched blocks covers.

    Parameters
    ----------
    shape : tuple of int
        (rows, columns) of the array the grid covers, one thread per element.
    block : tuple of int
        (bx, by).
    blocks : sequence of tuple or None
        The ``(block x, block y[, block z])`` indices that ran (a profiled sample), or None for the whole grid.

    Returns
    -------
    ndarray
        bool of ``shape``.
    """
    if blocks is None:
        return np.ones(shape, bool)
    mask = np.zeros(shape, bool)
    for index in blocks:
        bx, by = index[0], index[1]
        mask[by * block[1]:(by + 1) * block[1], bx * block[0]:(bx + 1) * block[0]] = True
    return mask


def threads_ran(grid, block, blocks) -> int:
    """Threads of the launched blocks (all, or the sample)."""
    count = grid[0] * grid[1] if blocks is None else len(blocks)
    return count * block[0] * block[1]


def sectors_per_row_of_lanes(block, item_bytes: int = 4) -> float:
    """The model's bound on sectors per warp request when consecutive lanes take consecutive elements of a row.

    A warp of a ``bx``-wide block covers ``32 / min(bx, 32)`` rows of ``min(bx, 32)`` consecutive elements; each
    row's bytes touch at most ``bytes / 32 + 1`` sectors (one more when they straddle a sector boundary).
    """
    lanes_per_row = min(int(block[0]), 32)
    rows = max(32 // lanes_per_row, 1)
    return rows * (math.ceil(lanes_per_row * item_bytes / 32) + 1)


def draw_block(rng):
    """A block shape drawn at grading time: one warp per row, or several rows of 32, 64 or 16 cells."""
    return ((32, 1), (32, 4), (64, 2), (16, 8))[int(rng.integers(4))]
