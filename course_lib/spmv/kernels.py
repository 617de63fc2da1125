"""Reference CUDA kernels of Unit 2 (sparse matrix-vector multiply), taught in ``lessons/02_spmv.ipynb``.

Every kernel computes ``y = A @ x`` (or adds to ``y``) for one storage format of A.
Values, ``x`` and ``y`` share one dtype, float32 or float64, and sums are accumulated
in that dtype (``y.dtype.type(0)`` makes the zero of the right type). Index arrays are
int32 and C-contiguous.

- CSR (``indptr``, ``indices``, ``data``): :func:`csr_scalar_kernel`, one thread per
  row; :func:`csr_vector_kernel`, one warp per row with a shuffle reduction.
- COO (``rows``, ``cols``, ``data``, sorted by row): :func:`coo_segmented_kernel`, one
  thread per non-zero and a segmented reduction in shared memory;
  :func:`coo_atomic_kernel`, one thread per non-zero and an atomic per non-zero.
- ELL (``ell_indices``, ``ell_data`` of shape (K, R), column-major: slot k of every row
  is contiguous, padding marked by column -1): :func:`ell_kernel`, one thread per row.
- HYB = ELL for the first K entries of each row + COO for the rest: launch
  :func:`ell_kernel` (writes y) then :func:`coo_segmented_kernel` (adds to y).
- Merge-path CSR (Merrill & Garland, SC16; CUB's ``DeviceSpmv``): :func:`merge_path_kernel`
  gives every thread an equal share of rows + non-zeros, whatever the row lengths, and
  :func:`merge_path_fixup_kernel` adds the one partial row each block leaves unfinished (the
  lesson's version); :func:`merge_path_tiles_kernel` (what ``method="merge_path"`` runs) does
  it in one launch, on tiles planned once per matrix whose boundaries avoid short rows.
"""

from __future__ import annotations

from functools import lru_cache

from numba import cuda, int32

from .._docs import fill_doc
from ..registry import course_kernel, register_kernel

__all__ = [
    "COO_SIG",
    "CSR_SIG",
    "ELL_SIG",
    "FULL_MASK",
    "WARP",
    "coo_atomic_kernel",
    "coo_segmented_kernel",
    "csr_scalar_kernel",
    "csr_vector_kernel",
    "ell_kernel",
    "merge_path_fixup_kernel",
    "merge_path_kernel",
    "merge_path_search",
    "merge_path_tiles_kernel",
    "zero_kernel",
]

LESSON = "lessons/02_spmv.ipynb"
WARP = 32
#: Every lane of a warp takes part in the shuffle.
FULL_MASK = 0xFFFFFFFF

#: Signatures used for the ahead-of-time (PTX) compile check; ``{v}`` is the value type.
CSR_SIG = "void(int32[::1], int32[::1], {v}[::1], {v}[::1], {v}[::1])"
COO_SIG = "void(int32[::1], int32[::1], {v}[::1], {v}[::1], {v}[::1])"
ELL_SIG = "void(int32[:, ::1], {v}[:, ::1], {v}[::1], {v}[::1])"


def _register_float64(name, signature, get_pyfunc):
    register_kernel(f"spmv.{name}[float64]", signature.format(v="float64"), get_pyfunc, LESSON)


@course_kernel(CSR_SIG.format(v="float32"), lesson=LESSON)
def csr_scalar_kernel(indptr, indices, data, x, y):
    """CSR, thread per row: thread ``row`` loops over its row's non-zeros.

    Parameters
    ----------
    indptr : int32 array of shape (R + 1,)
    indices : int32 array of shape (Z,)
    data : float array of shape (Z,)
    x : float array of shape (C,)
    y : float array of shape (R,)
        Output, overwritten.

    Launch with any 1-D grid covering R threads. A warp runs as long as its longest
    row: lanes with short rows sit idle (the load imbalance of the lesson).
    """
    row = cuda.grid(1)
    if row >= y.shape[0]:
        return
    total = y.dtype.type(0)
    for k in range(indptr[row], indptr[row + 1]):
        total += data[k] * x[indices[k]]
    y[row] = total


@course_kernel(CSR_SIG.format(v="float32"), lesson=LESSON)
def csr_vector_kernel(indptr, indices, data, x, y):
    """CSR, warp per row: the 32 lanes of a warp split one row, then reduce by shuffles.

    Parameters
    ----------
    indptr, indices, data, x, y
        As for :func:`csr_scalar_kernel`.

    Launch with a block size that is a multiple of 32 and a grid covering ``32 * R``
    threads. Lane ``l`` sums entries ``l, l + 32, ...`` of the row (consecutive lanes
    read consecutive entries: coalesced), then five ``shfl_down_sync`` steps add the
    32 partial sums in registers, and lane 0 writes the result. Whole warps leave
    together (all lanes share the row), so every shuffle has all 32 lanes.
    """
    thread = cuda.grid(1)
    row = thread // WARP
    lane = thread % WARP
    if row >= y.shape[0]:
        return
    total = y.dtype.type(0)
    for k in range(indptr[row] + lane, indptr[row + 1], WARP):
        total += data[k] * x[indices[k]]
    offset = WARP // 2
    while offset > 0:  # tree reduction through registers: 16, 8, 4, 2, 1
        total += cuda.shfl_down_sync(FULL_MASK, total, offset)
        offset //= 2
    if lane == 0:
        y[row] = total


@course_kernel(COO_SIG.format(v="float32"), lesson=LESSON)
def coo_atomic_kernel(rows, cols, data, x, y):
    """COO, thread per element, one atomic add per non-zero (the contrast case).

    Parameters
    ----------
    rows, cols : int32 arrays of shape (Z,)
    data : float array of shape (Z,)
    x : float array of shape (C,)
    y : float array of shape (R,)
        Accumulated into: zero it first.

    Run time depends only on Z, but threads of a long row all hit the same address,
    and the atomics serialise there.
    """
    k = cuda.grid(1)
    if k < data.shape[0]:
        cuda.atomic.add(y, rows[k], data[k] * x[cols[k]])


@lru_cache(maxsize=None)
def coo_segmented_kernel(block: int):
    """COO, thread per element, with a segmented reduction in shared memory.

    Each block takes ``block`` consecutive non-zeros (sorted by row). Every thread forms
    one product; an inclusive segmented scan (Hillis-Steele: log2(block) steps, each
    adding the partial sum ``offset`` places to the left when it belongs to the same
    row) leaves the sum of each row's run in its last thread, which adds it to ``y``.
    Only the first and last runs of a block can share a row with another block, but
    every run ends with an atomic add, which costs about a store when uncontended and
    lets the kernel add to ``y`` (the hybrid format relies on that).

    Parameters
    ----------
    block : int
        Threads per block (1 <= block <= 1024); the shared scratch is ``block`` values
        and ``block`` row indices.

    Returns
    -------
    numba.cuda kernel
        Launch as ``kernel[ceil(Z / block), block](rows, cols, data, x, y)`` with
        ``rows`` sorted; it adds ``A @ x`` to ``y`` (zero ``y`` first for a plain product).
    """
    if isinstance(block, bool) or int(block) != block or not 1 <= block <= 1024:
        raise ValueError(f"block must be an integer between 1 and 1024 (threads per block), got {block!r}")
    block = int(block)

    def coo_segmented(rows, cols, data, x, y):
        products = cuda.shared.array(block, y.dtype)
        segment = cuda.shared.array(block, int32)
        t = cuda.threadIdx.x
        k = cuda.blockIdx.x * block + t
        if k < data.shape[0]:
            products[t] = data[k] * x[cols[k]]
            segment[t] = rows[k]
        else:  # padding past the last non-zero: a run of its own that is never written
            products[t] = 0
            segment[t] = -1
        cuda.syncthreads()
        offset = 1
        while offset < block:  # every thread runs the same steps: the barriers are uniform
            carry = y.dtype.type(0)
            if t >= offset and segment[t - offset] == segment[t]:
                carry = products[t - offset]
            cuda.syncthreads()  # all reads of this step happen before any write
            products[t] += carry
            cuda.syncthreads()
            offset *= 2
        if segment[t] >= 0 and (t == block - 1 or segment[t + 1] != segment[t]):
            cuda.atomic.add(y, segment[t], products[t])

    coo_segmented.__name__ = f"coo_segmented_{block}"
    return cuda.jit(coo_segmented)


@course_kernel(ELL_SIG.format(v="float32"), lesson=LESSON)
def ell_kernel(ell_indices, ell_data, x, y):
    """ELL, thread per row, column-major storage: slot k of all rows is contiguous.

    Parameters
    ----------
    ell_indices : int32 array of shape (K, R)
        Column of slot k of row r, or -1 for padding.
    ell_data : float array of shape (K, R)
        Values (0 in padding).
    x : float array of shape (C,)
    y : float array of shape (R,)
        Output, overwritten.

    Consecutive threads read consecutive addresses in every step (coalesced), and
    every thread runs all K steps: padding costs time and bandwidth.
    """
    row = cuda.grid(1)
    if row >= y.shape[0]:
        return
    total = y.dtype.type(0)
    for slot in range(ell_indices.shape[0]):
        col = ell_indices[slot, row]
        if col >= 0:
            total += ell_data[slot, row] * x[col]
    y[row] = total


@cuda.jit(device=True, inline=True)
def merge_path_search(diagonal, indptr, n_rows, nnz):
    """Where diagonal ``diagonal`` crosses the merge path of row ends and non-zero indices.

    The merge path walks two sorted lists: the row ends ``indptr[1:]`` (R items) and the
    non-zero indices 0, 1, ..., Z - 1 (Z items). Step d of the path consumes a non-zero
    while it belongs to the current row, else the current row's end. A binary search on
    the diagonal x + y = d finds the point (x rows finished, y non-zeros consumed) in
    log2(min(R, Z)) steps, with no look at the other threads.

    Returns
    -------
    (int, int)
        Rows finished and non-zeros consumed before step ``diagonal``.
    """
    return _merge_path_bisect(diagonal, indptr, max(diagonal - nnz, 0), min(diagonal, n_rows))


@cuda.jit(device=True, inline=True)
def _merge_path_bisect(diagonal, indptr, lo, hi):
    """The binary search of :func:`merge_path_search`, the rows finished known to lie in ``[lo, hi]``."""
    while lo < hi:
        pivot = (lo + hi) // 2
        # Row ``pivot`` ends at or before non-zero ``diagonal - pivot - 1``: the path passed that row end.
        if indptr[pivot + 1] <= diagonal - pivot - 1:
            lo = pivot + 1
        else:
            hi = pivot
    return lo, diagonal - lo


@cuda.jit(device=True, inline=True)
def _walk_merge_path(steps, row, k, indptr, indices, data, x, y):
    """Take ``steps`` steps of the merge path from row ``row``, non-zero ``k``; write ``y`` at row ends but the first.

    The first row a thread finishes may have begun in earlier threads, so its sum is returned
    for the caller to complete after the scan of the carry-outs.

    Returns
    -------
    (int, value, bool, value)
        The row the thread stops inside (its carry-out row; R past the end), the sum of the
        first row finished, whether a row was finished, and the partial sum of the carry-out row.
    """
    first_value = y.dtype.type(0)
    finished_any = False
    running = y.dtype.type(0)
    for _ in range(steps):
        if k < indptr[row + 1]:  # the next step is a non-zero of the current row
            running += data[k] * x[indices[k]]
            k += 1
        else:  # the next step is the current row's end
            if finished_any:
                y[row] = running
            else:
                first_value = running
                finished_any = True
            running = y.dtype.type(0)
            row += 1
    return row, first_value, finished_any, running


@cuda.jit(device=True, inline=True)
def _scan_carry_outs(scan_rows, scan_values, t, row, running, first_value, finished_any):
    """Segmented inclusive scan by row of the block's carry-outs; the first row's sum completed.

    Every thread of the block must call it (it holds barriers). After it, ``scan_rows[t]`` and
    ``scan_values[t]`` hold thread ``t``'s carry-out row and its sum over threads ``0..t``.

    Returns
    -------
    value
        ``first_value`` plus the carry of the threads before ``t`` where the thread finished a row
        (thread t starts where thread t - 1 stopped: its carry-out row is the first row finished).
    """
    scan_rows[t] = row
    scan_values[t] = running
    cuda.syncthreads()
    offset = 1
    while offset < scan_rows.shape[0]:  # uniform barriers: every thread runs every round
        carry = scan_values.dtype.type(0)
        if t >= offset and scan_rows[t - offset] == scan_rows[t]:
            carry = scan_values[t - offset]
        cuda.syncthreads()
        scan_values[t] += carry
        cuda.syncthreads()
        offset *= 2
    if finished_any and t > 0:
        first_value += scan_values[t - 1]
    return first_value


#: The parameter and the kind of result of the merge-path kernel factories, documented once
#: (:func:`course_lib._docs.fill_doc`); each describes its launch below it.
_MERGE_FACTORY_DOC = """
Parameters
----------
block : int
    Threads per block (1 <= block <= 1024).

Returns
-------
numba.cuda kernel
"""


@lru_cache(maxsize=None)
@fill_doc(factory=_MERGE_FACTORY_DOC)
def merge_path_kernel(block: int):
    """CSR by merge path: every thread takes ``items_per_thread`` steps of rows + non-zeros.

    Thread-per-row CSR waits for its longest row, COO needs a second pass with atomics;
    here thread g owns steps ``[g * items, (g + 1) * items)`` of the merge path (see
    :func:`merge_path_search`), so one long row is split over many threads and a run of
    empty rows over few: the work per thread is equal by construction. A thread walks its
    steps, accumulating products and writing ``y`` at every row end it reaches; the row
    it is still inside at the end of its share is its *carry-out*. A segmented scan of
    the carry-outs in shared memory gives each thread's first finished row the partial
    sums of the threads before it in the block; the block's own last carry-out goes to
    ``carry_rows`` / ``carry_values`` for :func:`merge_path_fixup_kernel`.

    {factory}
        ``kernel[blocks, block](indptr, indices, data, x, y, items_per_thread, carry_rows,
        carry_values)`` with ``blocks = ceil((R + Z) / (block * items_per_thread))``,
        ``carry_rows`` (int32) and ``carry_values`` (the value dtype) of length ``blocks``.
        It overwrites every ``y[r]``, less the carries of earlier blocks, which
        :func:`merge_path_fixup_kernel` adds.
    """
    if isinstance(block, bool) or int(block) != block or not 1 <= block <= 1024:
        raise ValueError(f"block must be an integer between 1 and 1024 (threads per block), got {block!r}")
    block = int(block)

    def merge_path(indptr, indices, data, x, y, items_per_thread, carry_rows, carry_values):
        scan_rows = cuda.shared.array(block, int32)
        scan_values = cuda.shared.array(block, y.dtype)
        t = cuda.threadIdx.x
        n_rows = y.shape[0]
        nnz = data.shape[0]
        total_items = n_rows + nnz
        start = min((cuda.blockIdx.x * block + t) * items_per_thread, total_items)
        end = min(start + items_per_thread, total_items)
        first_row, k = merge_path_search(start, indptr, n_rows, nnz)
        row, first_value, finished_any, running = _walk_merge_path(end - start, first_row, k, indptr, indices,
                                                                   data, x, y)
        first_value = _scan_carry_outs(scan_rows, scan_values, t, row, running, first_value, finished_any)
        if finished_any:
            y[first_row] = first_value
        if t == block - 1:
            carry_rows[cuda.blockIdx.x] = scan_rows[t]
            carry_values[cuda.blockIdx.x] = scan_values[t]

    merge_path.__name__ = f"merge_path_{block}"
    return cuda.jit(merge_path)


@cuda.jit(device=True, inline=True)
def _merge_path_search_between(diagonal, indptr, row_lo, row_hi):
    """:func:`merge_path_search` with the rows finished known to lie in ``[row_lo, row_hi]`` (a tile's)."""
    return _merge_path_bisect(diagonal, indptr, max(row_lo, diagonal - indptr[indptr.shape[0] - 1]),
                              min(diagonal, row_hi))


@cuda.jit(device=True, inline=True)
def _add_part(split, row, value, sums, arrived, parts, y):
    """Add a tile's part of split row ``row`` (index ``split``); the tile adding the last part writes ``y[row]``.

    The part goes to ``sums[split]`` by an atomic; after a fence, an atomic count of the
    arrivals tells the last tile, which takes the sum and leaves both at zero for the next product.
    """
    cuda.atomic.add(sums, split, value)
    cuda.threadfence()  # the part is visible before the arrival is counted
    if cuda.atomic.add(arrived, split, 1) == parts[split] - 1:
        cuda.threadfence()
        y[row] = cuda.atomic.add(sums, split, y.dtype.type(0))  # read where the atomics landed (L2)
        sums[split] = 0  # every part has arrived: no other block touches the two in this launch
        arrived[split] = 0


@lru_cache(maxsize=None)
@fill_doc(factory=_MERGE_FACTORY_DOC)
def merge_path_tiles_kernel(block: int):
    """CSR by merge path in one launch: tiles planned once per matrix, no fix-up pass for short rows.

    :func:`merge_path_kernel` cuts the path every ``block * items`` steps wherever that falls,
    so every block leaves a partial row behind and a second launch
    (:func:`merge_path_fixup_kernel`) adds the carries. Here the host plans the tiles once per
    matrix (:func:`course_lib.spmv._merge_plan.plan_merge_tiles`): a boundary inside a short row
    moves back to its start, so a short row is summed by one block, and each thread searches
    only its tile's rows. The rows still cut (longer than half a tile) are added part by part
    into ``sums`` by atomics, and the last block to arrive writes the row (:func:`_add_part`).
    Inside a block the threads share the tile's steps equally and combine their carry-outs by
    the segmented scan of :func:`merge_path_kernel`.

    {factory}
        ``kernel[T, block](indptr, indices, data, x, y, tile_rows, tile_nnz, split, parts, sums,
        arrived)`` with the plan's arrays (:class:`~course_lib.spmv._merge_plan.MergeTiles`: int32
        ``tile_rows``, ``tile_nnz`` and ``split`` of length T + 1, ``parts`` of length S) and
        ``sums`` (the value dtype) and ``arrived`` (int32) of length S, zero before the first
        product and left at zero by each. It overwrites every ``y[r]``.
    """
    if isinstance(block, bool) or int(block) != block or not 1 <= block <= 1024:
        raise ValueError(f"block must be an integer between 1 and 1024 (threads per block), got {block!r}")
    block = int(block)

    def merge_path_tiles(indptr, indices, data, x, y, tile_rows, tile_nnz, split, parts, sums, arrived):
        scan_rows = cuda.shared.array(block, int32)
        scan_values = cuda.shared.array(block, y.dtype)
        t = cuda.threadIdx.x
        b = cuda.blockIdx.x
        tile_start = tile_rows[b] + tile_nnz[b]
        tile_end = tile_rows[b + 1] + tile_nnz[b + 1]
        items = (tile_end - tile_start + block - 1) // block
        start = min(tile_start + t * items, tile_end)
        end = min(start + items, tile_end)
        first_row, k = _merge_path_search_between(start, indptr, tile_rows[b], tile_rows[b + 1])
        row, first_value, finished_any, running = _walk_merge_path(end - start, first_row, k, indptr, indices,
                                                                   data, x, y)
        first_value = _scan_carry_outs(scan_rows, scan_values, t, row, running, first_value, finished_any)
        if finished_any:
            if first_row == tile_rows[b] and split[b] >= 0:  # a split row begun in an earlier tile
                _add_part(split[b], first_row, first_value, sums, arrived, parts, y)
            else:
                y[first_row] = first_value
        if t == block - 1 and split[b + 1] >= 0:  # the tile ends inside a split row: its part of it
            _add_part(split[b + 1], scan_rows[t], scan_values[t], sums, arrived, parts, y)

    merge_path_tiles.__name__ = f"merge_path_tiles_{block}"
    return cuda.jit(merge_path_tiles)


@course_kernel("void(int32[::1], float32[::1], float32[::1])", lesson=LESSON)
def merge_path_fixup_kernel(carry_rows, carry_values, y):
    """Add each block's carry-out of :func:`merge_path_kernel` to its row (one thread per block).

    A row longer than a block's share leaves carries in several blocks: they meet in the
    same ``y[r]``, hence the atomic add (one per block, not one per non-zero). Rows past
    the end (``carry_rows[b] == R``) are skipped.
    """
    b = cuda.grid(1)
    if b < carry_rows.shape[0] and carry_rows[b] < y.shape[0]:
        cuda.atomic.add(y, carry_rows[b], carry_values[b])


@course_kernel("void(float32[::1])", lesson=LESSON)
def zero_kernel(y):
    """Set ``y`` to zero (the COO kernels add into ``y``). Any grid covering ``y.size`` threads."""
    i = cuda.grid(1)
    if i < y.shape[0]:
        y[i] = 0


#: Block size registered for the compile check (the benchmark's choice on a GPU).
COO_BLOCK = 256

_register_float64("csr_scalar_kernel", CSR_SIG, lambda: csr_scalar_kernel.py_func)
_register_float64("csr_vector_kernel", CSR_SIG, lambda: csr_vector_kernel.py_func)
_register_float64("coo_atomic_kernel", COO_SIG, lambda: coo_atomic_kernel.py_func)
_register_float64("ell_kernel", ELL_SIG, lambda: ell_kernel.py_func)
_register_float64("merge_path_fixup_kernel", "void(int32[::1], {v}[::1], {v}[::1])",
                  lambda: merge_path_fixup_kernel.py_func)
#: Signature of the merge-path kernel: CSR arrays, x, y, items per thread, carry rows and values.
MERGE_SIG = "void(int32[::1], int32[::1], {v}[::1], {v}[::1], {v}[::1], int64, int32[::1], {v}[::1])"
register_kernel(f"spmv.merge_path_kernel[block={COO_BLOCK}]", MERGE_SIG.format(v="float32"),
                lambda: merge_path_kernel(COO_BLOCK).py_func, LESSON)
register_kernel("spmv.merge_path_kernel[block=8]", MERGE_SIG.format(v="float32"),
                lambda: merge_path_kernel(8).py_func, LESSON, example=lambda: _example_merge_path())
register_kernel(f"spmv.merge_path_kernel[block={COO_BLOCK},float64]", MERGE_SIG.format(v="float64"),
                lambda: merge_path_kernel(COO_BLOCK).py_func, LESSON)
#: Signature of the one-launch merge-path kernel: CSR arrays, x, y, then the tile plan and the split rows' sums.
MERGE_TILES_SIG = ("void(int32[::1], int32[::1], {v}[::1], {v}[::1], {v}[::1], int32[::1], int32[::1], int32[::1], "
                   "int32[::1], {v}[::1], int32[::1])")
for _v in ("float32", "float64"):
    register_kernel(f"spmv.merge_path_tiles_kernel[block={COO_BLOCK},{_v}]", MERGE_TILES_SIG.format(v=_v),
                    lambda: merge_path_tiles_kernel(COO_BLOCK).py_func, LESSON)
register_kernel("spmv.merge_path_tiles_kernel[block=8]", MERGE_TILES_SIG.format(v="float32"),
                lambda: merge_path_tiles_kernel(8).py_func, LESSON, example=lambda: _example_merge_path_tiles())
_register_float64("zero_kernel", "void({v}[::1])", lambda: zero_kernel.py_func)
register_kernel(f"spmv.coo_segmented_kernel[block={COO_BLOCK}]", COO_SIG.format(v="float32"),
                lambda: coo_segmented_kernel(COO_BLOCK).py_func, LESSON)
register_kernel(f"spmv.coo_segmented_kernel[block={COO_BLOCK},float64]", COO_SIG.format(v="float64"),
                lambda: coo_segmented_kernel(COO_BLOCK).py_func, LESSON)


def _example_merge_path():
    """A small irregular matrix for the checker: an empty row, a long row over several threads, short rows."""
    import numpy as np

    lengths = np.array([0, 3, 40, 0, 1, 2, 0, 5, 1, 1, 0], dtype=np.int32)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    nnz = int(indptr[-1])
    rng = np.random.default_rng(5)
    indices = rng.integers(0, 13, nnz).astype(np.int32)
    data = rng.random(nnz, dtype=np.float32)
    x = rng.random(13, dtype=np.float32)
    items, block = 3, 8
    blocks = -(-(lengths.size + nnz) // (items * block))
    return blocks, block, (indptr, indices, data, x, np.zeros(lengths.size, np.float32), np.int64(items),
                           np.zeros(blocks, np.int32), np.zeros(blocks, np.float32))


def _example_merge_path_tiles():
    """The matrix of :func:`_example_merge_path` in tiles of 16 steps: a row cut into three tiles, short rows snapped."""
    from ._merge_plan import plan_merge_tiles

    blocks, block, (indptr, indices, data, x, y, _, _, _) = _example_merge_path()
    plan = plan_merge_tiles(indptr, 16)
    import numpy as np

    sums = np.zeros(plan.parts.size, np.float32)
    return plan.n_tiles, block, (indptr, indices, data, x, y, plan.rows, plan.nnz, plan.split, plan.parts, sums,
                                 np.zeros(plan.parts.size, np.int32))
