"""Kernels of the pooled compacting simulator (``simulate(method="compact_pooled")``).

The same per-cell rules as the lesson's kernels (:mod:`course_lib.cellsim.kernels`), written for
a host that does not wait for every batch: the number of live cells of a batch stays on the
device, in ``live[generation]``, and each kernel reads it there. The host launches over an
upper bound of that number (twice the previous generation's bound: a cell has at most two
daughters) and waits only when the bound outgrows the buffers it has.

* :func:`init_live_kernel` makes a batch of initial cells and writes its size into ``live[0]``;
* :func:`fate_live_kernel` decides the fates of ``live[generation]`` cells, zeroes the daughter
  counts of the unused slots up to the launch's bound (so the prefix sum may run over the bound),
  and counts recorded cells (histogram and per generation and type), divisions, discarded cells
  and the deepest generation reached, all on the device, one global atomic per block and counter;
* :func:`scatter_live_kernel` writes one window of the daughters and the window's size into
  ``live[generation + 1]``: the total is the last exclusive prefix sum plus the last count;
* :func:`clear_kernel` zeroes the counters at the start of a call (no upload of zeros).

The lesson's kernels are kept as they are: they are the version the lesson teaches and prints.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import cuda, int32

from ..registry import register_kernel
from . import _core
from ._inputs import MAX_TYPES
from .kernels import LESSON, _check_slots, _example_cells, _example_inputs, write_initial_cell

__all__ = ["COUNTER_DEEPEST", "COUNTER_DISCARDED", "COUNTER_DIVISIONS", "COUNTER_OVERFLOW", "N_COUNTERS", "clear_kernel",
           "fate_live_kernel", "init_live_kernel", "scatter_live_kernel"]

_dev = _core.build("cuda")
fate = _dev.fate
bin_index = _dev.bin_index

#: Slots of ``totals`` (int64): divisions, discarded cells, deepest generation with a live cell, and
#: whether some generation's daughters did not all fit in their window (1) or did (0).
COUNTER_DIVISIONS, COUNTER_DISCARDED, COUNTER_DEEPEST, COUNTER_OVERFLOW = 0, 1, 2, 3
N_COUNTERS = 4

_CELLS = "int64[::1], float64[::1], float64[::1], int32[::1]"  # ids, phis, taus, types
_PARAMS = "float64[:, ::1], float64[::1], uint64, uint64"  # type_params, table, key words


@cuda.jit
def clear_kernel(values):
    """``values[:] = 0`` (int64), grid-stride: any grid."""
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, values.shape[0], stride):
        values[i] = 0


@cuda.jit
def init_live_kernel(cumulative, fluorescence, type_params, k0, k1, first_id, n, ids, phis, taus, types, live):
    """Initial cells ``first_id .. first_id + n - 1`` (as ``init_cells_kernel``), and ``live[0] = n``."""
    j = cuda.grid(1)
    if j == 0:
        live[0] = n
    if j < n:
        write_initial_cell(j, first_id, cumulative, fluorescence, type_params, k0, k1, ids, phis, taus, types)


@lru_cache(maxsize=None)
def fate_live_kernel(n_slots: int):
    """The fates of ``live[generation]`` cells, everything counted on the device.

    Parameters
    ----------
    n_slots : int
        Histogram bins + 1 (the last slot counts cells outside the edges).

    Returns
    -------
    numba.cuda kernel
        ``kernel[grid, block](ids, phis, taus, types, live, generation, type_params, table, k0, k1,
        tau_max, phi_min, edges, children, division_times, hist, level_counts, totals)``. Thread i
        below ``live[generation]`` decides cell i (``children[i]`` 2 or 0, ``division_times[i]``);
        a thread beyond it writes ``children[i] = 0`` (so a prefix sum over the whole launch adds
        nothing there). ``hist`` (int64, n_slots) and ``level_counts`` (int64, (G + 1, T)) as in
        ``fate_histogram_kernel``; ``totals`` (int64, :data:`N_COUNTERS`) gains the block's
        divisions and discarded cells, and its deepest slot the generation when any cell is live.
    """
    n_slots = _check_slots(n_slots)

    def fate_live(ids, phis, taus, types, live, generation, type_params, table, k0, k1, tau_max, phi_min,
                  edges, children, division_times, hist, level_counts, totals):
        bins = cuda.shared.array(n_slots, int32)
        per_type = cuda.shared.array(MAX_TYPES, int32)
        fates = cuda.shared.array(2, int32)  # divisions, discarded
        t = cuda.threadIdx.x
        for b in range(t, n_slots, cuda.blockDim.x):
            bins[b] = 0
        for b in range(t, MAX_TYPES, cuda.blockDim.x):
            per_type[b] = 0
        if t < 2:
            fates[t] = 0
        cuda.syncthreads()

        n = live[generation]
        i = cuda.grid(1)
        if i < n:
            what, when = fate(ids[i], generation, phis[i], taus[i], types[i], type_params, table, k0, k1,
                              tau_max, phi_min)
            children[i] = 2 if what == 0 else 0
            division_times[i] = when
            if what == 1:
                cuda.atomic.add(bins, bin_index(phis[i], edges), 1)
                cuda.atomic.add(per_type, types[i], 1)
            elif what == 0:
                cuda.atomic.add(fates, 0, 1)
            else:
                cuda.atomic.add(fates, 1, 1)
        elif i < children.shape[0]:
            children[i] = 0
        cuda.syncthreads()

        for b in range(t, n_slots, cuda.blockDim.x):
            if bins[b] > 0:
                cuda.atomic.add(hist, b, bins[b])
        for b in range(t, type_params.shape[0], cuda.blockDim.x):
            if per_type[b] > 0:
                cuda.atomic.add(level_counts, (generation, b), per_type[b])
        if t == 0:
            if fates[0] > 0:
                cuda.atomic.add(totals, 0, fates[0])
            if fates[1] > 0:
                cuda.atomic.add(totals, 1, fates[1])
            if cuda.blockIdx.x == 0 and n > 0:
                cuda.atomic.max(totals, 2, generation)

    fate_live.__name__ = f"fate_live_{n_slots}"
    return cuda.jit(fate_live)


@cuda.jit
def scatter_live_kernel(ids, phis, taus, types, children, offsets, division_times, live, generation, scanned,
                        window_start, window_size, out_ids, out_phis, out_taus, out_types, totals):
    """Daughters ``window_start .. window_start + window_size - 1`` of the next generation.

    ``offsets[:scanned]`` is the exclusive prefix sum of ``children[:scanned]`` (zero beyond
    ``live[generation]``), so the generation's daughters number ``offsets[scanned - 1] +
    children[scanned - 1]``; thread 0 writes how many of them fall in the window into
    ``live[generation + 1]``, and sets ``totals[COUNTER_OVERFLOW]`` when some fall beyond it.
    Daughters as ``scatter_daughters_kernel`` makes them.
    """
    p = cuda.grid(1)
    if p == 0:
        left = offsets[scanned - 1] + children[scanned - 1] - window_start
        live[generation + 1] = 0 if left < 0 else (window_size if left > window_size else left)
        if left > window_size:
            totals[3] = 1
    if p < live[generation] and children[p] == 2:
        for d in range(2):
            slot = offsets[p] + d - window_start
            if 0 <= slot < window_size:
                out_ids[slot] = 2 * ids[p] + d
                out_phis[slot] = phis[p] * 0.5
                out_taus[slot] = division_times[p]
                out_types[slot] = types[p]


# ----------------------------------------------------------------------------------------------
# Small launches for the compile check and the race checker (awkward sizes on purpose).
# ----------------------------------------------------------------------------------------------

_SLOTS = 17


def _example_fate_live():
    params, table = _example_inputs()
    n, bound = 45, 61
    cells = _example_cells(bound)
    live = np.array([0, n, 0], np.int32)
    return 2, 32, (*cells, live, 1, params, table, np.uint64(7), np.uint64(0), 70.0, 11.0,
                   np.geomspace(8.0, 512.0, _SLOTS), np.ones(bound, np.int32), np.zeros(bound),
                   np.zeros(_SLOTS, np.int64), np.zeros((3, 3), np.int64), np.zeros(N_COUNTERS, np.int64))


def _example_scatter_live():
    cells = _example_cells(37)
    children = np.where(np.arange(37) % 3 == 0, 0, 2).astype(np.int32)
    offsets = (np.cumsum(children) - children).astype(np.int32)
    out = (np.zeros(40, np.int64), np.zeros(40), np.zeros(40), np.zeros(40, np.int32))
    return 2, 32, (*cells, children, offsets, np.full(37, 5.0), np.array([37, 0], np.int32), 0, 37, 10, 40, *out,
                   np.zeros(N_COUNTERS, np.int64))


def _example_init_live():
    params, _ = _example_inputs()
    n = 37
    return 2, 32, (np.array([5, 5, 17, 40], np.int64), np.array([100.0, 150.0, 220.0, 300.0]), params,
                   np.uint64(7), np.uint64(0), 0, n, np.zeros(n, np.int64), np.zeros(n), np.zeros(n),
                   np.zeros(n, np.int32), np.zeros(3, np.int32))


register_kernel(f"cellsim.fate_live_kernel[slots={_SLOTS}]",
                "void(" + _CELLS + ", int32[::1], int64, " + _PARAMS + ", float64, float64, float64[::1], "
                "int32[::1], float64[::1], int64[::1], int64[:, ::1], int64[::1])",
                lambda: fate_live_kernel(_SLOTS).py_func, LESSON, example=_example_fate_live)
register_kernel("cellsim.scatter_live_kernel",
                "void(" + _CELLS + ", int32[::1], int32[::1], float64[::1], int32[::1], int64, int64, int64, int64, "
                + _CELLS + ", int64[::1])", lambda: scatter_live_kernel.py_func, LESSON, example=_example_scatter_live)
register_kernel("cellsim.init_live_kernel",
                "void(int64[::1], float64[::1], float64[:, ::1], uint64, uint64, int64, int64, " + _CELLS
                + ", int32[::1])", lambda: init_live_kernel.py_func, LESSON, example=_example_init_live)
register_kernel("cellsim.clear_kernel", "void(int64[::1])", lambda: clear_kernel.py_func, LESSON,
                example=lambda: (3, 32, (np.ones(70, np.int64),)))
