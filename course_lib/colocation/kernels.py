"""Reference CUDA kernels of Unit 8 (co-location mining), taught in ``lessons/08_colocation.ipynb``.

Data layout on the device (all int32 unless stated):

- ``x``, ``y``: float64 coordinates of the N instances (structure of arrays, so consecutive
  threads read consecutive addresses); ``features``: the feature of each instance.
- The grid (see :mod:`course_lib.colocation.model`): ``cell_of[i]`` the cell of instance i;
  ``count_map[cell * F + f]`` the CountMap (instances of feature f in the cell); the
  cell-to-instance index ``order[cell_start[c]:cell_start[c + 1]]`` (instances of cell c);
  ``feature_local[i]`` a number in ``[0, n_f)`` unique among the instances of i's feature.
- An *instance table* of patterns of size k is a flat array of rows of width ``k + 1``: the k
  instances of a row instance (features in increasing order), then the id of its pattern.
- A level's *plan*: ``candidates`` (C rows of k + 1 features), ``child_of[p * F + h]`` (the
  candidate that extends pattern p by feature h, or -1) and ``seg_start`` (where the
  participation flags of candidate c, position j begin).

Preprocessing: :func:`grid_count_kernel`, then a prefix sum of the cell counts, then
:func:`scatter_by_cell_kernel`. Filter (all candidates of one size in two launches):
:func:`quadruplet_filter_kernel` then :func:`candidate_bound_kernel`. Refine:
:func:`extend_count_kernel`, a prefix sum, :func:`extend_fill_kernel` (both around the same
search, :func:`row_extensions`), then :func:`participation_kernel`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import cuda, int32

from ..registry import course_kernel
from ._types import MAX_PATTERN

__all__ = ["ALL_EXTENSIONS", "BOUND_BLOCK", "MAX_PATTERN", "candidate_bound_kernel", "extend_count_kernel",
           "extend_fill_kernel", "fill_kernel", "grid_count_kernel", "participation_kernel",
           "quadruplet_filter_kernel", "row_extensions", "scatter_by_cell_kernel", "singleton_table_kernel"]

LESSON = "lessons/08_colocation.ipynb"
#: ``most`` of :func:`row_extensions` that writes every extension of a row (more than a row can have).
ALL_EXTENSIONS = 2**31 - 1
#: Threads per block of :func:`candidate_bound_kernel` (a power of two: tree reduction).
BOUND_BLOCK = 128

_I = "int32[::1]"
_F = "float64[::1]"


@lru_cache(maxsize=1)
def _small():
    """A small prepared data set for the example launches of the race checker."""
    from .data import planted_colocations
    from .model import cell_index, count_map, feature_local_ids, grid_for

    data = planted_colocations(45, 3, groups=((0, 1),), r=1.0, extent=4.0, seed=3)
    grid = grid_for(data.points, 1.0, 3)
    cells, start, order = cell_index(grid, data.points)
    local = feature_local_ids(data.features, 3)
    return data, grid, cells, count_map(grid, data.points, data.features, 3).reshape(-1), start, order, local


def _example_grid_count():
    data, grid, *_ = _small()
    n = len(data)
    return 2, 32, (np.ascontiguousarray(data.points[:, 0]), np.ascontiguousarray(data.points[:, 1]), data.features,
                   grid.x0, grid.y0, grid.cell, np.int32(grid.n_cols), np.int32(3), np.zeros(n, np.int32),
                   np.zeros(grid.n_cells * 3, np.int32), np.zeros(grid.n_cells, np.int32), np.zeros(3, np.int32),
                   np.zeros(n, np.int32))


@course_kernel(f"void({_F}, {_F}, {_I}, float64, float64, float64, int32, int32, {_I}, {_I}, {_I}, {_I}, {_I})",
               lesson=LESSON, example=_example_grid_count)
def grid_count_kernel(x, y, features, x0, y0, cell, n_cols, n_features, cell_of, count_map, cell_count,
                      feature_count, feature_local):
    """Preprocessing, one thread per instance: its cell, the CountMap and per-cell/per-feature counts.

    Parameters
    ----------
    x, y : float64 arrays of shape (N,)
    features : int32 array of shape (N,)
    x0, y0, cell : float64
        Grid origin and cell side.
    n_cols, n_features : int32
    cell_of : int32 array of shape (N,)
        Output: the cell of each instance.
    count_map : int32 array of shape (n_cells * F,)
        Zeroed on entry; counts added with atomics.
    cell_count : int32 array of shape (n_cells,)
        Zeroed on entry; instances per cell.
    feature_count : int32 array of shape (F,)
        Zeroed on entry; instances per feature.
    feature_local : int32 array of shape (N,)
        Output: the instance's number among its feature's instances (arrival order).
    """
    i = cuda.grid(1)
    if i >= x.shape[0]:
        return
    cx = int32((x[i] - x0) / cell)  # coordinates are >= the origin: truncation is floor
    cy = int32((y[i] - y0) / cell)
    c = cy * n_cols + cx
    f = features[i]
    cell_of[i] = c
    cuda.atomic.add(count_map, c * n_features + f, 1)
    cuda.atomic.add(cell_count, c, 1)
    feature_local[i] = cuda.atomic.add(feature_count, f, 1)


def _example_scatter():
    data, grid, cells, _, start, _, _ = _small()
    return 2, 32, (cells, start, np.zeros(grid.n_cells, np.int32), np.full(len(cells), -1, np.int32))


@course_kernel(f"void({_I}, {_I}, {_I}, {_I})", lesson=LESSON, example=_example_scatter)
def scatter_by_cell_kernel(cell_of, cell_start, cell_fill, order):
    """The cell-to-instance index: instance i goes to a free slot of its cell's segment.

    Parameters
    ----------
    cell_of : int32 array of shape (N,)
    cell_start : int32 array of shape (>= n_cells,)
        Exclusive prefix sum of the instances per cell.
    cell_fill : int32 array of shape (n_cells,)
        Zeroed on entry: slots taken so far in each cell.
    order : int32 array of shape (N,)
        Output: instances grouped by cell (any order inside a cell).
    """
    i = cuda.grid(1)
    if i >= cell_of.shape[0]:
        return
    c = cell_of[i]
    order[cell_start[c] + cuda.atomic.add(cell_fill, c, 1)] = i


def _example_fill():
    return 3, 32, (np.ones(70, np.int32), np.int32(0))


@course_kernel(f"void({_I}, int32)", lesson=LESSON, example=_example_fill)
def fill_kernel(values, value):
    """``values[:] = value`` (device buffers are not zeroed when allocated)."""
    i = cuda.grid(1)
    if i < values.shape[0]:
        values[i] = value


def _example_singleton():
    data = _small()[0]
    return 2, 32, (data.features, np.zeros(2 * len(data), np.int32))


@course_kernel(f"void({_I}, {_I})", lesson=LESSON, example=_example_singleton)
def singleton_table_kernel(features, table):
    """The instance table of size 1: row i is ``(i, features[i])`` (pattern id = the feature)."""
    i = cuda.grid(1)
    if i < features.shape[0]:
        table[2 * i] = i
        table[2 * i + 1] = features[i]


def _example_quadruplet():
    data, grid, _, counts, *_ = _small()
    candidates = np.array([0, 1, 0, 2, 1, 2], np.int32)
    return (grid.n_quads, 3), (2, 2, 2), (counts, np.int32(3), np.int32(grid.n_cols), np.int32(grid.n_rows),
                                          candidates, np.int32(2), np.zeros(3 * grid.n_quads, np.int32))


@course_kernel(f"void({_I}, int32, int32, int32, {_I}, int32, {_I})", lesson=LESSON, example=_example_quadruplet)
def quadruplet_filter_kernel(count_map, n_features, n_cols, n_rows, candidates, k, qualifies):
    """Filter, step 1: does a 2 x 2 quadruplet of cells hold every feature of a candidate?

    One block per (quadruplet, candidate): ``blockIdx.x`` is the quadruplet (anchored at its
    lower-left cell), ``blockIdx.y`` the candidate. Block shape ``(k, 2, 2)``: thread
    ``(j, dx, dy)`` reads the count of the candidate's j-th feature in cell ``(qx + dx, qy + dy)``
    into shared memory; after the barrier, thread 0 checks that every feature has a non-zero count.

    Parameters
    ----------
    count_map : int32 array of shape (n_cells * F,)
    n_features, n_cols, n_rows : int32
    candidates : int32 array of shape (C * k,)
        Candidate c's features are ``candidates[c * k:(c + 1) * k]``.
    k : int32
        Pattern size (<= MAX_PATTERN).
    qualifies : int32 array of shape (C * n_quads,)
        Output: 1 if quadruplet q holds every feature of candidate c (at ``c * n_quads + q``).
    """
    counts = cuda.shared.array((MAX_PATTERN, 2, 2), int32)
    q = cuda.blockIdx.x
    c = cuda.blockIdx.y
    j = cuda.threadIdx.x
    dx = cuda.threadIdx.y
    dy = cuda.threadIdx.z
    quad_cols = max(n_cols - 1, 1)
    cx = q % quad_cols + dx
    cy = q // quad_cols + dy
    n = 0
    if cx < n_cols and cy < n_rows:  # a missing cell (single row or column) holds nothing
        n = count_map[(cy * n_cols + cx) * n_features + candidates[c * k + j]]
    counts[j, dx, dy] = n
    cuda.syncthreads()
    if j == 0 and dx == 0 and dy == 0:
        every = 1
        for jj in range(k):
            if counts[jj, 0, 0] + counts[jj, 1, 0] + counts[jj, 0, 1] + counts[jj, 1, 1] == 0:
                every = 0
        qualifies[c * cuda.gridDim.x + q] = every


def _example_bound():
    data, grid, _, counts, *_ = _small()
    candidates = np.array([0, 1, 0, 2, 1, 2], np.int32)
    qualifies = np.ones(3 * grid.n_quads, np.int32)
    fc = np.bincount(data.features, minlength=3).astype(np.int32)
    return 3, BOUND_BLOCK, (counts, np.int32(3), np.int32(grid.n_cols), np.int32(grid.n_rows), candidates, np.int32(2),
                            qualifies, fc, np.zeros(3, np.float64))


@course_kernel(f"void({_I}, int32, int32, int32, {_I}, int32, {_I}, {_I}, {_F})", lesson=LESSON,
               example=_example_bound)
def candidate_bound_kernel(count_map, n_features, n_cols, n_rows, candidates, k, qualifies, feature_count, bounds):
    """Filter, step 2: the upper bound of each candidate's participation index.

    One block of :data:`BOUND_BLOCK` threads per candidate. A cell counts if one of the (up to
    four) quadruplets containing it qualified in step 1; each thread sums, over its cells, the
    counts of the candidate's features, then a tree reduction in shared memory adds the threads'
    sums and thread 0 divides by the feature totals and takes the minimum.

    Parameters
    ----------
    count_map, n_features, n_cols, n_rows, candidates, k
        As for :func:`quadruplet_filter_kernel`.
    qualifies : int32 array of shape (C * n_quads,)
        Step 1's output.
    feature_count : int32 array of shape (F,)
    bounds : float64 array of shape (C,)
        Output: the upper bound of PI for each candidate.
    """
    sums = cuda.shared.array((MAX_PATTERN, BOUND_BLOCK), int32)
    mine = cuda.local.array(MAX_PATTERN, int32)
    c = cuda.blockIdx.x
    t = cuda.threadIdx.x
    quad_cols = max(n_cols - 1, 1)
    quad_rows = max(n_rows - 1, 1)
    n_quads = quad_cols * quad_rows
    for j in range(MAX_PATTERN):
        mine[j] = 0
    for cell in range(t, n_cols * n_rows, BOUND_BLOCK):
        cx = cell % n_cols
        cy = cell // n_cols
        counted = False
        for qy in range(cy - 1, cy + 1):
            for qx in range(cx - 1, cx + 1):
                if 0 <= qx < quad_cols and 0 <= qy < quad_rows and qualifies[c * n_quads + qy * quad_cols + qx]:
                    counted = True
        if counted:
            for j in range(k):
                mine[j] += count_map[cell * n_features + candidates[c * k + j]]
    for j in range(MAX_PATTERN):
        sums[j, t] = mine[j]
    cuda.syncthreads()
    stride = BOUND_BLOCK // 2
    while stride > 0:
        if t < stride:
            for j in range(k):
                sums[j, t] += sums[j, t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        bound = 1.0
        for j in range(k):
            total = feature_count[candidates[c * k + j]]
            ratio = sums[j, 0] / total if total > 0 else 0.0
            bound = min(bound, ratio)
        bounds[c] = bound


def row_extensions(table, row, k, child_of, n_features, x, y, features, cell_of, cell_start, order, n_cols, n_rows,
                   r2, most, out, new_table):
    """The neighbour search of both refine passes: the extensions of one row of size k.

    The candidates that extend the row's pattern p by a feature h are ``child_of[p * F + h]``
    (features above the row's last one only: rows stay sorted by feature). An instance j of such
    a feature in the 3 x 3 cells around the row's first instance extends the row if it is within
    r of every member (squared distances, no square root). A pattern with no candidate above its
    last feature (one that was not prevalent, say) is not searched at all.

    Returns how many extensions the row has, and writes the first ``most`` of them (none when
    counting, :data:`ALL_EXTENSIONS` when filling) as rows ``out``, ``out + 1``, ... of
    ``new_table`` (width k + 2: the members, j, the candidate).
    """
    p = table[row * (k + 1) + k]
    last_feature = features[table[row * (k + 1) + k - 1]]
    extendable = False
    for h in range(last_feature + 1, n_features):
        if child_of[p * n_features + h] >= 0:
            extendable = True
            break
    if not extendable:
        return 0
    first = table[row * (k + 1)]
    cx = cell_of[first] % n_cols
    cy = cell_of[first] // n_cols
    found = 0
    for ny in range(max(cy - 1, 0), min(cy + 2, n_rows)):
        for nx in range(max(cx - 1, 0), min(cx + 2, n_cols)):
            cell = ny * n_cols + nx
            for s in range(cell_start[cell], cell_start[cell + 1]):
                j = order[s]
                h = features[j]
                if h > last_feature and child_of[p * n_features + h] >= 0:
                    near = True
                    for m in range(k):
                        member = table[row * (k + 1) + m]
                        dx = x[member] - x[j]
                        dy = y[member] - y[j]
                        if dx * dx + dy * dy > r2:
                            near = False
                            break
                    if near:
                        if found < most:
                            for m in range(k):
                                new_table[(out + found) * (k + 2) + m] = table[row * (k + 1) + m]
                            new_table[(out + found) * (k + 2) + k] = j
                            new_table[(out + found) * (k + 2) + k + 1] = child_of[p * n_features + h]
                        found += 1
    return found


# Written once as plain Python: inlined into the refine kernels here and in ._fused_kernels, and
# compiled for the CPU miner (course_lib.colocation.cpu), so every version searches alike. Inlined
# at Numba IR level: a separately compiled device function asks the driver for the current GPU, so
# compile_ptx (and the compile check) fails without one.
_row_extensions_device = cuda.jit(device=True, inline="always")(row_extensions)


def _example_extend(fill):
    data, grid, cells, _, start, order, _ = _small()
    n = len(data)
    table = np.empty(2 * n, np.int32)
    table[0::2], table[1::2] = np.arange(n), data.features
    child_of = np.full(3 * 3, -1, np.int32)
    child_of[0 * 3 + 1], child_of[0 * 3 + 2], child_of[1 * 3 + 2] = 0, 1, 2
    x, y = np.ascontiguousarray(data.points[:, 0]), np.ascontiguousarray(data.points[:, 1])
    common = (table, np.int32(1), child_of, np.int32(3), x, y, data.features, cells, start, order,
              np.int32(grid.n_cols), np.int32(grid.n_rows), 1.0)
    if not fill:
        return 2, 32, common + (np.zeros(n, np.int32),)
    from .reference import neighbour_pairs_reference

    pairs = neighbour_pairs_reference(data.points, 1.0)
    counts = np.zeros(n, np.int64)
    for i, j in pairs:  # the same rule as the kernel: the partner has the larger feature
        a, b = (i, j) if data.features[i] < data.features[j] else (j, i)
        counts[a] += data.features[a] != data.features[b]
    offsets = np.zeros(n, np.int32)
    np.cumsum(counts[:-1], out=offsets[1:])
    return 2, 32, common + (offsets, np.zeros(3 * max(int(counts.sum()), 1), np.int32))


_EXTEND_SIG = f"{_I}, int32, {_I}, int32, {_F}, {_F}, {_I}, {_I}, {_I}, {_I}, int32, int32, float64"


@course_kernel(f"void({_EXTEND_SIG}, {_I})", lesson=LESSON, example=lambda: _example_extend(False))
def extend_count_kernel(table, k, child_of, n_features, x, y, features, cell_of, cell_start, order, n_cols, n_rows,
                        r2, counts):
    """Refine, pass 1: how many rows of size k + 1 each row of size k grows into.

    One thread per row. The candidates (from all patterns of the level at once) that extend
    the row's pattern p by a feature h are ``child_of[p * F + h]``; an instance j of such a
    feature in the 3 x 3 cells around the row's first instance extends the row if it is
    within r of every member.

    Parameters
    ----------
    table : int32 array of shape (rows * (k + 1),)
        Instance table of size k (the pattern id last in each row).
    k : int32
    child_of : int32 array of shape (P * F,)
    n_features : int32
    x, y : float64 arrays of shape (N,)
    features, cell_of : int32 arrays of shape (N,)
    cell_start : int32 array of shape (n_cells + 1,)
    order : int32 array of shape (N,)
    n_cols, n_rows : int32
    r2 : float64
        The squared neighbour distance.
    counts : int32 array of shape (rows,)
        Output.
    """
    row = cuda.grid(1)
    if row < counts.shape[0]:  # counts[:0]: nothing is written when counting
        counts[row] = _row_extensions_device(table, row, k, child_of, n_features, x, y, features, cell_of,
                                             cell_start, order, n_cols, n_rows, r2, 0, 0, counts[:0])


@course_kernel(f"void({_EXTEND_SIG}, {_I}, {_I})", lesson=LESSON, example=lambda: _example_extend(True))
def extend_fill_kernel(table, k, child_of, n_features, x, y, features, cell_of, cell_start, order, n_cols, n_rows,
                       r2, offsets, new_table):
    """Refine, pass 2: write the rows of size k + 1 (same search as :func:`extend_count_kernel`).

    Parameters
    ----------
    table, k, child_of, n_features, x, y, features, cell_of, cell_start, order, n_cols, n_rows, r2
        As for :func:`extend_count_kernel`.
    offsets : int32 array of shape (rows,)
        Exclusive prefix sum of pass 1's counts: where each row's extensions go.
    new_table : int32 array of shape (total * (k + 2),)
        Output: the instance table of size k + 1 (the candidate id last in each row).
    """
    row = cuda.grid(1)
    if row < offsets.shape[0]:
        _row_extensions_device(table, row, k, child_of, n_features, x, y, features, cell_of, cell_start, order,
                               n_cols, n_rows, r2, ALL_EXTENSIONS, offsets[row], new_table)


def _example_participation():
    data, *_, local = _small()
    n_features = 3
    fc = np.bincount(data.features, minlength=n_features)
    pairs = np.array([(i, j) for i in np.flatnonzero(data.features == 0)[:4] for j in
                      np.flatnonzero(data.features == 1)[:3]], np.int32)
    table = np.column_stack([pairs, np.zeros(len(pairs), np.int32)]).astype(np.int32).reshape(-1)
    seg_start = np.array([0, fc[0]], np.int32)
    return 1, 32, (table, np.int32(2), seg_start, local, np.zeros(fc[0] + fc[1], np.int32), np.zeros(2, np.int32))


@course_kernel(f"void({_I}, int32, {_I}, {_I}, {_I}, {_I})", lesson=LESSON, example=_example_participation)
def participation_kernel(table, k, seg_start, feature_local, flags, part_count):
    """Refine, pass 3: count the distinct instances taking part in each candidate, per position.

    One thread per row of a table of size k (rows of width k + 1, candidate id last). Instance
    ``i`` at position j of candidate c owns the flag ``seg_start[c * k + j] + feature_local[i]``;
    the first thread to raise it (``atomic.max`` returns the old value) counts the instance.

    Parameters
    ----------
    table : int32 array of shape (rows * (k + 1),)
    k : int32
    seg_start : int32 array of shape (C * k,)
    feature_local : int32 array of shape (N,)
    flags : int32 array
        Zeroed on entry.
    part_count : int32 array of shape (C * k,)
        Zeroed on entry; output: distinct participating instances per (candidate, position).
    """
    row = cuda.grid(1)
    if row * (k + 1) >= table.shape[0]:
        return
    c = table[row * (k + 1) + k]
    for j in range(k):
        slot = seg_start[c * k + j] + feature_local[table[row * (k + 1) + j]]
        if cuda.atomic.max(flags, slot, 1) == 0:
            cuda.atomic.add(part_count, c * k + j, 1)



# The one-pass filter registers itself beside these (the registry imports this module).
