"""What the lesson predicts with: the grid, the filter's upper bound, launches and bytes.

The grid has square cells of side (a hair more than) ``r``. Two neighbours then lie in the same
or adjacent cells, and a whole row instance (pairwise within ``r``, so its bounding box is at most
``r`` wide and tall) lies inside one 2 x 2 block of cells, a *quadruplet*. That gives the filter:
an instance of feature ``f`` can take part in pattern ``c`` only if some quadruplet around its cell
holds at least one instance of every feature of ``c``. Counting those instances per feature with
the CountMap (instances per cell and feature) bounds the participation index from above without
looking at a single pair of points.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np

from .._validate import check_array, check_flag, check_int
from ._checks import check_features, check_neighbour_distance, check_pattern, check_points

__all__ = ["MAX_CELLS_TIMES_FEATURES", "Grid", "cell_index", "count_map", "feature_local_ids", "filter_launches",
           "grid_for", "level_plan", "pi_upper_bound", "qualifying_cells"]

#: The CountMap holds one int32 per (cell, feature): refuse grids above 2**27 entries (512 MiB).
MAX_CELLS_TIMES_FEATURES = 1 << 27
#: Cells are this much wider than r, so rounding in ``floor((x - x0) / cell)`` can never put two
#: neighbours two cells apart.
CELL_MARGIN = 1.0 + 2.0**-20


@dataclass(frozen=True)
class Grid:
    """A uniform grid over the points.

    Attributes
    ----------
    x0, y0 : float
        Lower-left corner (the smallest coordinates).
    cell : float
        Side of a cell (``r`` times a margin of ``1 + 2**-20``).
    n_cols, n_rows : int
        Cells along x and y; cell ``(cx, cy)`` has id ``cy * n_cols + cx``.
    """

    x0: float
    y0: float
    cell: float
    n_cols: int
    n_rows: int

    @property
    def n_cells(self) -> int:
        return self.n_cols * self.n_rows

    @property
    def quad_cols(self) -> int:
        """Quadruplets along x: anchors ``0 .. n_cols - 2`` (one when there is a single column)."""
        return max(self.n_cols - 1, 1)

    @property
    def quad_rows(self) -> int:
        return max(self.n_rows - 1, 1)

    @property
    def n_quads(self) -> int:
        """Number of 2 x 2 quadruplets (anchored at their lower-left cell)."""
        return self.quad_cols * self.quad_rows

    def cells_of(self, points) -> np.ndarray:
        """Cell id of every point, int32 of shape (N,)."""
        points = np.asarray(points, np.float64)
        cx = np.floor((points[:, 0] - self.x0) / self.cell).astype(np.int64)
        cy = np.floor((points[:, 1] - self.y0) / self.cell).astype(np.int64)
        return (cy * self.n_cols + cx).astype(np.int32)


def check_grid(grid, name="grid"):
    """A :class:`~course_lib.colocation.model.Grid`."""
    if not isinstance(grid, Grid):
        raise ValueError(f"{name} must be a Grid (from grid_for), got {type(grid).__name__}")
    return grid


def grid_for(points, r, n_features=1) -> Grid:
    """The grid of cell side ``r`` (plus margin) covering ``points``.

    Raises
    ------
    ValueError
        If the CountMap (cells x features) would exceed :data:`MAX_CELLS_TIMES_FEATURES`
        entries: ``r`` is too small for the extent of the points.
    """
    return _grid_for_checked(check_points(points), check_neighbour_distance(r),
                             check_int(n_features, "n_features", minimum=1))


def _grid_for_checked(points, r, n_features) -> Grid:
    """:func:`grid_for` of checked inputs (:func:`~course_lib.colocation.check_inputs`'s output)."""
    cell = r * CELL_MARGIN
    if len(points) == 0:
        return Grid(0.0, 0.0, cell, 1, 1)
    lo, hi = points.min(axis=0), points.max(axis=0)
    n_cols = int(np.floor((hi[0] - lo[0]) / cell)) + 1
    n_rows = int(np.floor((hi[1] - lo[1]) / cell)) + 1
    if n_cols * n_rows * max(n_features, 1) > MAX_CELLS_TIMES_FEATURES:
        raise ValueError(f"r is too small for the extent of the points: the grid would have {n_cols} x {n_rows} "
                         f"cells and its CountMap {n_cols * n_rows * n_features:,} entries "
                         f"(limit {MAX_CELLS_TIMES_FEATURES:,}); use a larger r or split the area")
    return Grid(float(lo[0]), float(lo[1]), cell, n_cols, n_rows)


def count_map(grid: Grid, points, features, n_features) -> np.ndarray:
    """Instances per cell and feature (NumPy), int32 of shape (n_cells, F).

    Parameters
    ----------
    grid : Grid
        A grid covering the points (from :func:`grid_for`).
    points : array_like of shape (N, 2)
    features : array_like of shape (N,), integer ids in ``[0, n_features)``
    n_features : int
    """
    check_grid(grid)
    points = check_points(points)
    n_features = check_int(n_features, "n_features", minimum=1)
    features = check_features(features, len(points), n_features)
    cx = np.floor((points[:, 0] - grid.x0) / grid.cell)
    cy = np.floor((points[:, 1] - grid.y0) / grid.cell)
    if len(points) and (cx.min() < 0 or cy.min() < 0 or cx.max() >= grid.n_cols or cy.max() >= grid.n_rows):
        raise ValueError("points must lie inside the grid (make the grid with grid_for from the same points)")
    cells = grid.cells_of(points)
    return _count_map(grid, cells, features, n_features)


def _count_map(grid, cells, features, n_features):
    flat = np.bincount(cells.astype(np.int64) * n_features + np.asarray(features, np.int64),
                       minlength=grid.n_cells * n_features)
    return flat.reshape(grid.n_cells, n_features).astype(np.int32)


def cell_index(grid: Grid, points):
    """The cell of every point and the cell-to-instance index (NumPy, what the host version copies).

    Returns
    -------
    cells : int32 array of shape (N,)
    cell_start : int32 array of shape (n_cells + 1,)
        Instances of cell c are ``order[cell_start[c]:cell_start[c + 1]]``.
    order : int32 array of shape (N,)
        Instance ids sorted by cell (stable).
    """
    cells = grid.cells_of(points)
    order = np.argsort(cells, kind="stable").astype(np.int32)
    cell_start = np.zeros(grid.n_cells + 1, np.int32)
    np.cumsum(np.bincount(cells, minlength=grid.n_cells), out=cell_start[1:])
    return cells, cell_start, order


def feature_local_ids(features, n_features):
    """Each instance's number among the instances of its feature (0, 1, ... in id order).

    Returns
    -------
    int32 array of shape (N,)
    """
    features = np.asarray(features)
    counts = np.bincount(features, minlength=n_features)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    local = np.empty(len(features), np.int32)
    local[np.argsort(features, kind="stable")] = np.arange(len(features)) - np.repeat(first, counts)
    return local


def _check_counts(grid, counts):
    check_grid(grid)
    counts = check_array(counts, "counts", shape=(grid.n_cells, None), dtype="iu")
    if counts.shape[1] == 0:
        raise ValueError("counts must have one column per feature, got 0 columns")
    if counts.size and counts.min() < 0:
        raise ValueError(f"counts must be instance counts (>= 0), got {counts.min()}")
    return counts


def qualifying_cells(grid: Grid, counts, pattern) -> np.ndarray:
    """Cells lying in at least one quadruplet that holds every feature of ``pattern``.

    Parameters
    ----------
    grid : Grid
    counts : int array of shape (n_cells, F)
        The CountMap (:func:`count_map`).
    pattern : sequence of int
        Sorted distinct feature ids.

    Returns
    -------
    ndarray of shape (n_cells,), bool
    """
    counts = _check_counts(grid, counts)
    return _qualifying_cells(grid, counts, check_pattern(pattern, n_features=counts.shape[1]))


def _qualifying_cells(grid, counts, pattern):
    present = counts[:, list(pattern)].reshape(grid.n_rows, grid.n_cols, len(pattern)) > 0
    padded = np.zeros((grid.quad_rows + 1, grid.quad_cols + 1, len(pattern)), bool)
    padded[: grid.n_rows, : grid.n_cols] = present
    # A quadruplet anchored at (qx, qy) covers cells qx..qx+1, qy..qy+1 (missing cells are empty).
    quad_has = padded[:-1, :-1] | padded[1:, :-1] | padded[:-1, 1:] | padded[1:, 1:]
    quad_ok = quad_has.all(axis=2)
    cell_ok = np.zeros((grid.quad_rows + 1, grid.quad_cols + 1), bool)
    for dy in (0, 1):
        for dx in (0, 1):
            cell_ok[dy: dy + grid.quad_rows, dx: dx + grid.quad_cols] |= quad_ok
    return cell_ok[: grid.n_rows, : grid.n_cols].reshape(-1)


def pi_upper_bound(grid: Grid, counts, pattern, feature_count) -> float:
    """Upper bound of ``PI(pattern)`` from the CountMap alone (the filter's figure).

    For each feature of the pattern: instances in qualifying cells divided by all its
    instances; the bound is the smallest of these ratios. Never below the exact PI.

    Parameters
    ----------
    grid : Grid
    counts : int array of shape (n_cells, F)
        The CountMap.
    pattern : sequence of int
        Sorted distinct feature ids.
    feature_count : int array of shape (F,)
        Instances of each feature.

    Examples
    --------
    >>> import numpy as np
    >>> grid = grid_for(np.array([[0.0, 0.0], [0.5, 0.0], [5.0, 5.0]]), 1.0, 2)
    >>> counts = count_map(grid, [[0.0, 0.0], [0.5, 0.0], [5.0, 5.0]], [0, 1, 1], 2)
    >>> pi_upper_bound(grid, counts, (0, 1), np.array([1, 2]))
    0.5
    """
    counts = _check_counts(grid, counts)
    pattern = check_pattern(pattern, n_features=counts.shape[1])
    feature_count = check_array(feature_count, "feature_count", shape=(counts.shape[1],), dtype="iu")
    if feature_count.min() < 0:
        raise ValueError(f"feature_count must be instance counts (>= 0), got {feature_count.min()}")
    return _pi_upper_bound(grid, counts, pattern, feature_count)


def _pi_upper_bound(grid, counts, pattern, feature_count):
    cells = _qualifying_cells(grid, counts, pattern)
    ratios = [counts[cells, f].sum() / feature_count[f] if feature_count[f] else 0.0 for f in pattern]
    return float(min(ratios))


def filter_launches(n_features: int, size: int, *, batched: bool) -> int:
    """Kernel launches of the filter for all candidates of one size, at most ``C(F, size)`` of them.

    The per-candidate filter launches 2 kernels per candidate (the source's example: 13 features
    give 156 launches for size 2 and 572 for size 3); the batched filter launches 2 in all.

    >>> filter_launches(13, 3, batched=False), filter_launches(13, 3, batched=True)
    (572, 2)
    """
    n_features = check_int(n_features, "n_features", minimum=1)
    size = check_int(size, "size", minimum=2)
    batched = check_flag(batched, "batched")
    return 2 if batched else 2 * comb(n_features, size)


def level_plan(candidates, parents, n_parents, n_features, feature_count):
    """The host-made arrays of one level: candidates, who extends whom, and flag segments.

    Parameters
    ----------
    candidates : list of tuple of int, or int array of shape (C, k)
        The candidates of size k being refined.
    parents : list or array of int
        For each candidate, the id of the pattern of size k - 1 it extends (its rows' last column).
    n_parents : int
        Number of pattern ids of size k - 1.
    n_features : int
    feature_count : ndarray of shape (F,)

    Returns
    -------
    child_of : int32 array of shape (n_parents * F,)
    seg_start : int32 array of shape (C * k,)
    n_flags : int
    """
    # One NumPy pass over the level's candidates (no Python loop per candidate): candidate c extends its
    # parent by its last feature, and its k flag segments follow each other, one per feature, as long as
    # the feature has instances.
    cand = np.asarray(candidates, np.int64).reshape(len(candidates), -1) if len(candidates) else np.zeros((0, 1),
                                                                                                        np.int64)
    child_of = np.full(max(n_parents, 1) * n_features, -1, np.int32)
    if len(cand):
        child_of[np.asarray(parents, np.int64) * n_features + cand[:, -1]] = np.arange(len(cand), dtype=np.int32)
    sizes = np.asarray(feature_count, np.int64)[cand].reshape(-1)
    n_flags = int(sizes.sum())
    if n_flags >= 2**31:
        raise ValueError(f"too many participation flags for int32 indices ({n_flags:,}); mine fewer candidates")
    seg_start = np.zeros(len(sizes), np.int32)
    np.cumsum(sizes[:-1], out=seg_start[1:], dtype=np.int32)
    return child_of, seg_start, n_flags
