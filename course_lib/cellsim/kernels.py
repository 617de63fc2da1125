"""Reference CUDA kernels of Unit 7 (stochastic cell proliferation), taught in ``lessons/07_cellsim.ipynb``.

One thread per cell. A cell is (id, generation, fluorescence phi, birth time tau, type);
its fate comes from the device function ``fate`` of :mod:`course_lib.cellsim._core`,
whose random numbers are keyed by (cell id, generation), so any thread may compute any
cell. Fates: DIVIDE (two daughters with phi / 2, born at tau + timer), RECORD (alive at
tau_max: counted in the output histogram), DISCARD (daughters below phi_min).

Two ways to go from one generation to the next:

* the thesis's **fixed-slot binary tree** (:func:`tree_level_kernel`): level g has
  L * 2**g slots and slot i's daughters go to slots 2i and 2i + 1 of level g + 1 - no
  atomics, no scan, but the arrays double every level whether the slots hold cells or
  not, and recorded cells are found by copying each level back to the host;
* **stream compaction** (:func:`fate_histogram_kernel`, the prefix sum
  :func:`scan_block_kernel` + :func:`add_block_offsets_kernel`, then
  :func:`scatter_daughters_kernel`): only dividing cells get daughters, written at
  offsets given by an exclusive prefix sum of the daughter counts, and recorded cells
  go straight into a histogram kept on the device (per-block bins in shared memory,
  merged into global memory with one atomic per non-empty bin per block).

Arrays: ids int64, phis and taus float64, types int32 (values 0 .. T - 1), daughter
counts and offsets int32; ``type_params`` float64 (T, 4) from
:meth:`~course_lib.cellsim.CellTypes.params`; ``table`` the float64 inverse normal CDF of
:func:`~course_lib.cellsim._core.normal_table`; ``edges`` float64 (B + 1,) sorted bin
edges; ``hist`` int64 (B + 1,): B bins and, last, the cells outside the edges;
``level_counts`` int64 (G + 1, T): recorded cells per generation and type.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import cuda, int32

from ..registry import course_kernel, register_kernel
from . import _core
from ._inputs import MAX_TYPES

__all__ = [
    "ALIVE",
    "STREAM_TIMER",
    "STREAM_TYPE",
    "INACTIVE",
    "MAX_TYPES",
    "REMOVE",
    "add_block_offsets_kernel",
    "cell_rules",
    "fate_histogram_kernel",
    "init_cells_kernel",
    "normal_table",
    "scan_block_kernel",
    "scatter_daughters_kernel",
    "tree_init_kernel",
    "tree_level_kernel",
]

LESSON = "lessons/07_cellsim.ipynb"

#: Slot states of the fixed-slot tree (the thesis's sigma): empty, a live cell, a recorded cell.
REMOVE, ALIVE, INACTIVE = 0, 1, 2

#: Which random number of a cell is drawn (third Philox counter word): the division timer or the initial type.
STREAM_TIMER, STREAM_TYPE = _core.STREAM_TIMER, _core.STREAM_TYPE
#: The inverse normal CDF table the division timers read (float64, ``size + 1`` values).
normal_table = _core.normal_table


def cell_rules(target: str):
    """The per-cell rules the kernels call, compiled for ``target``: ``"python"`` (the
    reference), ``"cpu"`` (``numba.njit``, the CPU version) or ``"cuda"`` (device functions).

    The same arithmetic on every target, so the same bits: see :mod:`course_lib.cellsim._core`.

    Returns
    -------
    types.SimpleNamespace
        ``philox``, ``uniform``, ``cell_uniform``, ``division_timer``, ``initial_type``,
        ``initial_cell``, ``fate``, ``bin_index`` and ``mul``.

    >>> rules = cell_rules("python")
    >>> bool(0.0 < rules.cell_uniform(12345, 3, STREAM_TIMER, 7, 0) < 1.0)
    True
    """
    from .._validate import check_choice

    return _core.build(check_choice(target, "target", ("python", "cpu", "cuda")))


_dev = _core.build("cuda")
fate = _dev.fate
initial_cell = _dev.initial_cell
bin_index = _dev.bin_index

_PARAMS = "float64[:, ::1], float64[::1], uint64, uint64"  # type_params, table, key words
_CELLS = "int64[::1], float64[::1], float64[::1], int32[::1]"  # ids, phis, taus, types


# ----------------------------------------------------------------------------------------------
# Small example launches for the race and barrier checker (awkward sizes on purpose).
# ----------------------------------------------------------------------------------------------


def _example_inputs():
    from ._inputs import CellTypes

    types = CellTypes.from_text("0.5 30 8\n0.3 50 20\n0.2 -1 -1")
    return types.params(), _core.normal_table()


def _example_cells(n, seed=3):
    rng = np.random.default_rng(seed)
    ids = rng.permutation(4 * n)[:n].astype(np.int64)
    phis = rng.uniform(10.0, 400.0, n)
    taus = rng.uniform(0.0, 60.0, n)
    types = rng.integers(0, 3, n).astype(np.int32)
    return ids, phis, taus, types


def _example_init():
    params, _ = _example_inputs()
    cumulative = np.array([5, 5, 17, 40], dtype=np.int64)
    fluorescence = np.array([100.0, 150.0, 220.0, 300.0])
    n = 37
    return 2, 32, (cumulative, fluorescence, params, np.uint64(7), np.uint64(0), 0, n,
                   np.zeros(n, np.int64), np.zeros(n), np.zeros(n), np.zeros(n, np.int32))


def _example_fate(n_slots):
    params, table = _example_inputs()
    n = 45
    edges = np.geomspace(8.0, 512.0, n_slots)
    return 2, 32, (*_example_cells(n), n, 1, params, table, np.uint64(7), np.uint64(0), 70.0, 11.0, edges,
                   np.zeros(n, np.int32), np.zeros(n), np.zeros(n_slots, np.int64), np.zeros((3, 3), np.int64))


def _example_scan(block):
    n = block + 37  # two blocks, the second partly idle
    values = np.random.default_rng(1).integers(0, 2, n).astype(np.int32) * 2
    return 2, block, (values, n, np.zeros_like(values), np.zeros(2, np.int32))


def _example_add():
    return 3, 32, (np.arange(70, dtype=np.int32), 70, np.array([0, 5, 9], np.int32))


def _example_scatter():
    cells = _example_cells(37)
    children = np.where(np.arange(37) % 3 == 0, 0, 2).astype(np.int32)
    offsets = (np.cumsum(children) - children).astype(np.int32)
    out = (np.zeros(40, np.int64), np.zeros(40), np.zeros(40), np.zeros(40, np.int32))
    return 2, 32, (*cells, children, offsets, np.full(37, 5.0), 37, 10, 50, *out)


def _example_tree_init():
    params, _ = _example_inputs()
    cumulative = np.array([5, 5, 17, 40], dtype=np.int64)
    n = 40
    return 2, 32, (cumulative, np.array([100.0, 150.0, 220.0, 300.0]), params, np.uint64(7), np.uint64(0),
                   np.zeros(n, np.int32), np.zeros(n), np.zeros(n), np.zeros(n, np.int32))


def _example_tree_level():
    params, table = _example_inputs()
    n = 37
    _, phis, taus, types = _example_cells(n)
    states = np.where(np.arange(n) % 5 == 0, REMOVE, ALIVE).astype(np.int32)
    out = (np.zeros(2 * n, np.int32), np.zeros(2 * n), np.zeros(2 * n), np.zeros(2 * n, np.int32))
    return 2, 32, (states, phis, taus, types, n, 1, params, table, np.uint64(7), np.uint64(0), 70.0, 11.0, *out)


# ----------------------------------------------------------------------------------------------
# The initial population
# ----------------------------------------------------------------------------------------------


@cuda.jit(device=True, inline=True)
def write_initial_cell(j, first_id, cumulative, fluorescence, type_params, k0, k1, ids, phis, taus, types):
    """Write initial cell ``first_id + j`` into slot j of ``ids``, ``phis``, ``taus`` and ``types`` (born at 0)."""
    cell = first_id + j
    phi, cell_type = initial_cell(cell, cumulative, fluorescence, type_params, k0, k1)
    ids[j] = cell
    phis[j] = phi
    taus[j] = 0.0
    types[j] = cell_type


@course_kernel("void(int64[::1], float64[::1], float64[:, ::1], uint64, uint64, int64, int64, " + _CELLS + ")",
               lesson=LESSON, example=_example_init)
def init_cells_kernel(cumulative, fluorescence, type_params, k0, k1, first_id, n, ids, phis, taus, types):
    """Create initial cells ``first_id .. first_id + n - 1`` (one batch of X_0).

    Thread j makes cell ``first_id + j``: fluorescence from the histogram bin its id falls
    in (binary search over the cumulative counts), type from its own random number, birth
    time 0. Any 1-D grid covering n threads.
    """
    j = cuda.grid(1)
    if j < n:
        write_initial_cell(j, first_id, cumulative, fluorescence, type_params, k0, k1, ids, phis, taus, types)


# ----------------------------------------------------------------------------------------------
# Compaction: fate + device histogram, prefix sum, scatter
# ----------------------------------------------------------------------------------------------


@lru_cache(maxsize=None)
def fate_histogram_kernel(n_slots: int):
    """Decide every cell's fate; count recorded cells in a histogram built on the device.

    Parameters
    ----------
    n_slots : int
        Histogram bins + 1 (the last slot counts cells outside the edges); the kernel keeps
        one int32 per slot in shared memory, so ``4 * n_slots`` bytes per block.

    Returns
    -------
    numba.cuda kernel
        ``kernel[grid, block](ids, phis, taus, types, n, generation, type_params, table,
        k0, k1, tau_max, phi_min, edges, children, division_times, hist, level_counts)``
        with ``edges.size == n_slots``. Writes ``children[i]`` (2 if cell i divides, else
        0) and ``division_times[i]``; adds the block's recorded cells to ``hist`` and to
        ``level_counts[generation]``.

    Each block first counts in shared memory (atomics there are cheap and contend only
    within the block), then adds its non-empty bins to global memory: one global atomic
    per non-empty bin per block instead of one per recorded cell.
    """
    n_slots = _check_slots(n_slots)

    def fate_histogram(ids, phis, taus, types, n, generation, type_params, table, k0, k1, tau_max, phi_min,
                       edges, children, division_times, hist, level_counts):
        bins = cuda.shared.array(n_slots, int32)
        per_type = cuda.shared.array(MAX_TYPES, int32)
        t = cuda.threadIdx.x
        for b in range(t, n_slots, cuda.blockDim.x):
            bins[b] = 0
        for b in range(t, MAX_TYPES, cuda.blockDim.x):
            per_type[b] = 0
        cuda.syncthreads()

        i = cuda.grid(1)
        if i < n:
            what, when = fate(ids[i], generation, phis[i], taus[i], types[i], type_params, table, k0, k1,
                              tau_max, phi_min)
            children[i] = 2 if what == 0 else 0
            division_times[i] = when
            if what == 1:  # alive at tau_max: recorded with its current fluorescence
                cuda.atomic.add(bins, bin_index(phis[i], edges), 1)
                cuda.atomic.add(per_type, types[i], 1)
        cuda.syncthreads()

        for b in range(t, n_slots, cuda.blockDim.x):
            if bins[b] > 0:
                cuda.atomic.add(hist, b, bins[b])
        for b in range(t, type_params.shape[0], cuda.blockDim.x):
            if per_type[b] > 0:
                cuda.atomic.add(level_counts, (generation, b), per_type[b])

    fate_histogram.__name__ = f"fate_histogram_{n_slots}"
    return cuda.jit(fate_histogram)


@lru_cache(maxsize=None)
def scan_block_kernel(block: int):
    """Exclusive prefix sum of int32 values within each block, and each block's total.

    Parameters
    ----------
    block : int
        Threads per block (2 .. 1024): the shared scratch holds ``block`` int32.

    Returns
    -------
    numba.cuda kernel
        ``kernel[ceil(n / block), block](values, n, out, block_sums)``: ``out[i]`` = sum of
        the values before i in its block, ``block_sums[b]`` = sum of block b's values.

    Hillis-Steele: log2(block) steps, in step k every thread adds the partial sum
    ``2**k`` places to its left. Two barriers per step: all reads of a step happen before
    any write. Scanning the block sums (recursively) and adding them back
    (:func:`add_block_offsets_kernel`) gives the prefix sum of the whole array.
    """
    if isinstance(block, bool) or int(block) != block or not 2 <= block <= 1024:
        raise ValueError(f"block must be an integer between 2 and 1024 (threads per block), got {block!r}")
    block = int(block)

    def scan_block(values, n, out, block_sums):
        partial = cuda.shared.array(block, int32)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * block + t
        mine = values[i] if i < n else 0
        partial[t] = mine
        cuda.syncthreads()
        offset = 1
        while offset < block:  # the same steps in every thread: the barriers are uniform
            left = partial[t - offset] if t >= offset else 0
            cuda.syncthreads()
            partial[t] += left
            cuda.syncthreads()
            offset *= 2
        if i < n:
            out[i] = partial[t] - mine  # inclusive -> exclusive
        if t == block - 1:
            block_sums[cuda.blockIdx.x] = partial[t]

    scan_block.__name__ = f"scan_block_{block}"
    return cuda.jit(scan_block)


@course_kernel("void(int32[::1], int64, int32[::1])", lesson=LESSON, example=_example_add)
def add_block_offsets_kernel(out, n, block_offsets):
    """Add to every element the exclusive prefix sum of the block totals before its block.

    Launch with the grid and block of the :func:`scan_block_kernel` launch it completes.
    """
    i = cuda.grid(1)
    if i < n:
        out[i] += block_offsets[cuda.blockIdx.x]


@course_kernel("void(" + _CELLS + ", int32[::1], int32[::1], float64[::1], int64, int64, int64, " + _CELLS + ")",
               lesson=LESSON, example=_example_scatter)
def scatter_daughters_kernel(ids, phis, taus, types, children, offsets, division_times, n, window_start,
                             window_stop, out_ids, out_phis, out_taus, out_types):
    """Write the daughters of the dividing cells, compacted, for one window of the next level.

    Cell p's daughters are daughters ``offsets[p]`` and ``offsets[p] + 1`` of the next
    level (an exclusive prefix sum of ``children``); those in ``[window_start,
    window_stop)`` are written at their position minus ``window_start`` (a batch, when
    the next level does not fit at once). Daughter d of cell id k gets id 2k + d,
    fluorescence phi / 2, birth time = the mother's division time, the same type.
    """
    p = cuda.grid(1)
    if p < n and children[p] == 2:
        for d in range(2):
            position = offsets[p] + d
            if window_start <= position < window_stop:
                slot = position - window_start
                out_ids[slot] = 2 * ids[p] + d
                out_phis[slot] = phis[p] * 0.5
                out_taus[slot] = division_times[p]
                out_types[slot] = types[p]


# ----------------------------------------------------------------------------------------------
# The thesis's fixed-slot binary tree
# ----------------------------------------------------------------------------------------------


@course_kernel("void(int64[::1], float64[::1], float64[:, ::1], uint64, uint64, int32[::1], float64[::1], "
               "float64[::1], int32[::1])", lesson=LESSON, example=_example_tree_init)
def tree_init_kernel(cumulative, fluorescence, type_params, k0, k1, states, phis, taus, types):
    """Level 0 of the fixed-slot tree: slot j holds initial cell j (alive, born at 0)."""
    j = cuda.grid(1)
    if j < states.shape[0]:
        phi, cell_type = initial_cell(j, cumulative, fluorescence, type_params, k0, k1)
        states[j] = ALIVE
        phis[j] = phi
        taus[j] = 0.0
        types[j] = cell_type


@course_kernel("void(int32[::1], float64[::1], float64[::1], int32[::1], int64, int64, " + _PARAMS
               + ", float64, float64, int32[::1], float64[::1], float64[::1], int32[::1])",
               lesson=LESSON, example=_example_tree_level)
def tree_level_kernel(states, phis, taus, types, n, generation, type_params, table, k0, k1, tau_max, phi_min,
                      out_states, out_phis, out_taus, out_types):
    """One level of the fixed-slot binary tree: slot i writes slots 2i and 2i + 1 of the next level.

    As in the thesis: a dividing cell puts its two daughters (ALIVE) there; a cell alive
    at tau_max is copied to slot 2i as INACTIVE (to be recorded by the host) and slot
    2i + 1 stays REMOVE (empty); a discarded cell, or an empty slot, leaves both empty.
    The slot index is the cell id, so no id is stored. Launch over all n slots of the
    level: threads of empty slots do nothing useful, and the next level has 2n slots.
    """
    i = cuda.grid(1)
    if i >= n:
        return
    left = 2 * i
    right = left + 1
    out_states[left] = REMOVE
    out_states[right] = REMOVE
    if states[i] != ALIVE:
        return
    what, when = fate(i, generation, phis[i], taus[i], types[i], type_params, table, k0, k1, tau_max, phi_min)
    if what == 0:
        for slot in (left, right):
            out_states[slot] = ALIVE
            out_phis[slot] = phis[i] * 0.5
            out_taus[slot] = when
            out_types[slot] = types[i]
    elif what == 1:
        out_states[left] = INACTIVE
        out_phis[left] = phis[i]
        out_taus[left] = taus[i]
        out_types[left] = types[i]


def _check_slots(n_slots):
    if isinstance(n_slots, bool) or int(n_slots) != n_slots or not 2 <= n_slots <= 8192:
        raise ValueError(f"n_slots (histogram bins + 1) must be an integer between 2 and 8192, got {n_slots!r}")
    return int(n_slots)


#: Sizes registered for the compile check (the defaults on a GPU).
COMPILE_BLOCK = 256
COMPILE_SLOTS = 129

register_kernel(f"cellsim.fate_histogram_kernel[slots={COMPILE_SLOTS}]",
                "void(" + _CELLS + ", int64, int64, " + _PARAMS + ", float64, float64, float64[::1], int32[::1], "
                "float64[::1], int64[::1], int64[:, ::1])",
                lambda: fate_histogram_kernel(COMPILE_SLOTS).py_func, LESSON,
                example=lambda: _example_fate(COMPILE_SLOTS))
register_kernel(f"cellsim.scan_block_kernel[block={COMPILE_BLOCK}]", "void(int32[::1], int64, int32[::1], int32[::1])",
                lambda: scan_block_kernel(COMPILE_BLOCK).py_func, LESSON,
                example=lambda: _example_scan(COMPILE_BLOCK))

# The pooled simulator's kernels register themselves beside these (the registry imports this module).
