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

from .model import _pi_upper_bound, cell_index, count_map, feature_local_ids

__all__ = ["mine_cpu"]


@numba.njit(cache=False, inline="always")
def _matches(table, row, width, k, j, x, y, r2):
    for m in range(k):
        member = table[row * width + m]
        dx = x[member] - x[j]
        dy = y[member] - y[j]
        if dx * dx + dy * dy > r2:
            return False
    return True


@numba.njit(parallel=True, cache=False)
def _extend(table, k, child_of, n_features, x, y, features, cell_of, cell_start, order, n_cols, n_rows, r2, fill,
            offsets, new_table):
    """Count (``fill=False``: into ``offsets``) or write (``fill=True``) the extensions of every row."""
    width = k + 1
    rows = len(table) // width
    for row in numba.prange(rows):
        p = table[row * width + k]
        last_feature = features[table[row * width + k - 1]]
        cx = cell_of[table[row * width]] % n_cols
        cy = cell_of[table[row * width]] // n_cols
        out = offsets[row] if fill else 0
        found = 0
        for ny in range(max(cy - 1, 0), min(cy + 2, n_rows)):
            for nx in range(max(cx - 1, 0), min(cx + 2, n_cols)):
                cell = ny * n_cols + nx
                for s in range(cell_start[cell], cell_start[cell + 1]):
                    j = order[s]
                    h = features[j]
                    if h > last_feature:
                        child = child_of[p * n_features + h]
                        if child >= 0 and _matches(table, row, width, k, j, x, y, r2):
                            if fill:
                                for m in range(k):
                                    new_table[out * (k + 2) + m] = table[row * width + m]
                                new_table[out * (k + 2) + k] = j
                                new_table[out * (k + 2) + k + 1] = child
                                out += 1
                            else:
                                found += 1
        if not fill:
            offsets[row] = found


@numba.njit(cache=False)
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
    from .api import LevelStats, MiningResult, check_inputs, level_plan
    from .model import grid_for
    from .reference import apriori_candidates

    points, features, r, threshold, n_features, max_size = check_inputs(points, features, r, threshold, n_features,
                                                                        max_size)
    if len(features) == 0:
        return MiningResult({}, [], "cpu")
    if grid is None:
        g = grid_for(points, r, n_features)
    else:
        from ._checks import check_grid

        g = check_grid(grid)
        if g.cell < r:
            raise ValueError(f"grid must have cells of side >= r = {r} (make it with grid_for), got {g.cell}")
    n = len(features)
    x = np.ascontiguousarray(points[:, 0])
    y = np.ascontiguousarray(points[:, 1])
    cells, cell_start, order = cell_index(g, points)
    fc = np.bincount(features, minlength=n_features).astype(np.int64)
    local = feature_local_ids(features, n_features)
    counts = count_map(g, points, features, n_features)
    table = np.empty(2 * n, np.int64)
    table[0::2], table[1::2] = np.arange(n), features
    ids = {(f,): f for f in range(n_features)}
    n_ids = n_features
    candidates = [c for c in combinations([f for f in range(n_features) if fc[f]], 2)]
    found, levels, k = {}, [], 2
    while candidates and k <= max_size:
        kept = [c for c in candidates if _pi_upper_bound(g, counts, c, fc) >= threshold]
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
