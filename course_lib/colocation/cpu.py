"""Fast CPU version of Unit 8: the grid-based miner compiled with Numba, on all cores.

The same algorithm as the GPU pipeline (grid, CountMap filter, instance tables grown by one
feature per level, participation counted with flags), written for a CPU: the extension of the
instance tables runs in parallel over rows (count pass, prefix sum, fill pass). This is the strong
baseline every GPU figure of the unit is compared with.
"""

from __future__ import annotations

from itertools import combinations

import numba
import numpy as np

from .kernels import ALL_EXTENSIONS, row_extensions
from .model import _count_map, cell_index, feature_local_ids

__all__ = ["mine_cpu"]


@numba.njit(cache=True)
def _quad_masks(counts, n_cols, n_rows, n_words):
    """Which features each 2 x 2 quadruplet holds: bit ``f`` of word ``f // 64`` of its row (uint64)."""
    quad_cols = max(n_cols - 1, 1)
    quad_rows = max(n_rows - 1, 1)
    masks = np.zeros((quad_rows * quad_cols, n_words), np.uint64)
    for qy in range(quad_rows):
        for qx in range(quad_cols):
            for cy in range(qy, min(qy + 2, n_rows)):  # a missing cell (single row or column) holds nothing
                for cx in range(qx, min(qx + 2, n_cols)):
                    for f in range(counts.shape[1]):
                        if counts[cy * n_cols + cx, f] > 0:
                            masks[qy * quad_cols + qx, f >> 6] |= np.uint64(1) << np.uint64(f & 63)
    return masks


@numba.njit(parallel=True, cache=True)
def _pi_upper_bounds(counts, n_cols, n_rows, quad_masks, cells_of_feature, feature_start, candidates, feature_count):
    """:func:`~course_lib.colocation.pi_upper_bound` of every candidate (rows of ``candidates``), in parallel.

    The same figure, bit for bit: for each feature f of a candidate, the instances of f in cells
    lying in a quadruplet that holds every feature of the candidate, over all instances of f. Only
    the cells holding f are visited (``cells_of_feature[feature_start[f]:feature_start[f + 1]]``).
    """
    quad_cols = max(n_cols - 1, 1)
    quad_rows = max(n_rows - 1, 1)
    n_words = quad_masks.shape[1]
    bounds = np.empty(candidates.shape[0])
    for c in numba.prange(candidates.shape[0]):
        wanted = np.zeros(n_words, np.uint64)
        for j in range(candidates.shape[1]):
            f = candidates[c, j]
            wanted[f >> 6] |= np.uint64(1) << np.uint64(f & 63)
        bound = np.inf
        for j in range(candidates.shape[1]):
            f = candidates[c, j]
            total = 0
            for s in range(feature_start[f], feature_start[f + 1]):
                cell = cells_of_feature[s]
                cx = cell % n_cols
                cy = cell // n_cols
                counted = False
                for qy in range(max(cy - 1, 0), min(cy + 1, quad_rows)):
                    for qx in range(max(cx - 1, 0), min(cx + 1, quad_cols)):
                        every = True
                        for w in range(n_words):
                            if quad_masks[qy * quad_cols + qx, w] & wanted[w] != wanted[w]:
                                every = False
                        counted = counted or every
                if counted:
                    total += counts[cell, f]
            bound = min(bound, total / feature_count[f] if feature_count[f] > 0 else 0.0)
        bounds[c] = bound
    return bounds


def _filter_index(grid, counts):
    """What :func:`_pi_upper_bounds` needs besides the CountMap: quadruplet masks, cells by feature."""
    quad_masks = _quad_masks(counts, grid.n_cols, grid.n_rows, (counts.shape[1] + 63) // 64)
    by_feature, cells = np.nonzero(counts.T)  # sorted by feature
    feature_start = np.searchsorted(by_feature, np.arange(counts.shape[1] + 1)).astype(np.int64)
    return quad_masks, cells.astype(np.int64), feature_start


# The kernels' own search (one plain Python function), compiled for the CPU.
_row_extensions_cpu = numba.njit(cache=True, inline="always")(row_extensions)


@numba.njit(parallel=True, cache=True)
def _extend(table, k, child_of, n_features, x, y, features, cell_of, cell_start, order, n_cols, n_rows, r2, fill,
            offsets, new_table):
    """Count (``fill=False``: into ``offsets``) or write (``fill=True``) the extensions of every row."""
    for row in numba.prange(len(table) // (k + 1)):
        found = _row_extensions_cpu(table, row, k, child_of, n_features, x, y, features, cell_of, cell_start, order,
                                    n_cols, n_rows, r2, ALL_EXTENSIONS if fill else 0, offsets[row] if fill else 0,
                                    new_table)
        if not fill:
            offsets[row] = found


@numba.njit(cache=True)
def _participation(table, k, seg_start, feature_local, n_flags, n_segments):
    flags = np.zeros(max(n_flags, 1), np.uint8)
    part = np.zeros(n_segments, np.int64)
    width = k + 1
    for row in range(len(table) // width):
        c = table[row * width + k]
        for j in range(k):
            slot = seg_start[c * k + j] + feature_local[table[row * width + j]]
            if flags[slot] == 0:
                flags[slot] = 1
                part[c * k + j] += 1
    return part


def mine_cpu(points, features, r, threshold, n_features=None, max_size=None, *, grid=None):
    """Prevalent patterns with the compiled grid-based miner.

    Parameters
    ----------
    points : array_like of shape (N, 2)
    features : array_like of shape (N,), integer ids in ``[0, n_features)``
    r : float
        Neighbour distance (> 0).
    threshold : float in (0, 1]
    n_features : int, optional
        F (default: the largest id + 1).
    max_size : int, optional
        Largest pattern size (default and at most 8).
    grid : Grid, optional
        The grid of :func:`~course_lib.colocation.grid_for` for these points and ``r`` (made here if None).

    Returns
    -------
    MiningResult
    """
    from ._checks import check_inputs
    from ._types import MiningResult
    from .model import _grid_for_checked

    points, features, r, threshold, n_features, max_size = check_inputs(points, features, r, threshold, n_features,
                                                                        max_size)
    if len(features) == 0:
        return MiningResult({}, [], "cpu")
    if grid is None:
        g = _grid_for_checked(points, r, n_features)
    else:
        from .model import check_grid

        g = check_grid(grid)
        if g.cell < r:
            raise ValueError(f"grid must have cells of side >= r = {r} (make it with grid_for), got {g.cell}")
    return _mine_cpu_checked(points, features, r, threshold, n_features, max_size, g)


def _mine_cpu_checked(points, features, r, threshold, n_features, max_size, g):
    """:func:`mine_cpu` of checked inputs (at least one instance) and their grid ``g``."""
    from ._types import LevelStats, MiningResult
    from .model import level_plan
    from .reference import apriori_candidates

    n = len(features)
    x = np.ascontiguousarray(points[:, 0])
    y = np.ascontiguousarray(points[:, 1])
    cells, cell_start, order = cell_index(g, points)
    fc = np.bincount(features, minlength=n_features).astype(np.int64)
    local = feature_local_ids(features, n_features)
    counts = _count_map(g, cells, features, n_features)  # of checked inputs: count_map would check them again
    filter_index = _filter_index(g, counts)
    table = np.empty(2 * n, np.int64)
    table[0::2], table[1::2] = np.arange(n), features
    ids = {(f,): f for f in range(n_features)}
    n_ids = n_features
    candidates = [c for c in combinations([f for f in range(n_features) if fc[f]], 2)]
    found, levels, k = {}, [], 2
    while candidates and k <= max_size:
        bounds = _pi_upper_bounds(counts, g.n_cols, g.n_rows, *filter_index, np.array(candidates, np.int64), fc)
        kept = [c for c, bound in zip(candidates, bounds) if bound >= threshold]
        prevalent, total = [], 0
        if kept:
            child_of, seg_start, n_flags = level_plan(kept, [ids[c[:-1]] for c in kept], n_ids, n_features, fc)
            child_of, seg_start = child_of.astype(np.int64), seg_start.astype(np.int64)
            rows = len(table) // k
            args = (table, k - 1, child_of, n_features, x, y, features, cells, cell_start, order, g.n_cols,
                    g.n_rows, r * r)
            extensions = np.zeros(rows, np.int64)
            _extend(*args, False, extensions, table[:0])
            offsets = np.zeros(rows, np.int64)
            np.cumsum(extensions[:-1], out=offsets[1:])
            total = int(extensions.sum())
            new_table = np.empty(total * (k + 1), np.int64)
            _extend(*args, True, offsets, new_table)
            part = _participation(new_table, k, seg_start, local, n_flags, len(seg_start)).reshape(len(kept), k)
            for cand, cnt in zip(kept, part):
                pi = min(cnt[j] / fc[f] for j, f in enumerate(cand))
                if pi >= threshold:
                    found[cand] = float(pi)
                    prevalent.append(cand)
            table, ids, n_ids = new_table, {c: i for i, c in enumerate(kept)}, len(kept)
        levels.append(LevelStats(k, len(candidates), len(kept), len(prevalent), total))
        candidates = apriori_candidates(prevalent, k)
        k += 1
    return MiningResult(dict(sorted(found.items())), levels, "cpu")
