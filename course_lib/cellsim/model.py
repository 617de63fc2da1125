"""What the lesson predicts with: depth of the division tree and memory per level.

* Label dilution bounds the depth: a generation-g cell has fluorescence phi_0 / 2**g and
  exists only while that is >= phi_min, so g <= log2(max phi_0 / phi_min)
  (:func:`depth_bound`), whatever tau_max is. The thesis instead *estimated* the depth
  from the mean division time of the most frequent type (:func:`depth_estimate`).
* The thesis's fixed-slot tree stores level g in L * 2**g slots (daughters of slot i at
  2i and 2i + 1), used or not (:func:`tree_level_bytes`).
* Compaction stores only the cells alive at a level, and batching caps each level's
  batch so that the whole depth fits in a memory budget (:func:`batch_cells`).
"""

from __future__ import annotations

import math

from .._validate import check_float, check_int

__all__ = ["CELL_BYTES", "FRAME_BYTES_PER_CELL", "SCRATCH_BYTES", "TREE_SLOT_BYTES", "batch_cells",
           "compact_batch_cells", "depth_bound", "depth_estimate", "frame_bytes", "scan_scratch_elements",
           "thesis_memory_example", "tree_level_bytes", "tree_peak_bytes"]

#: Bytes of one cell in the compacted arrays: id (int64), fluorescence and birth time (float64), type (int32).
CELL_BYTES = 8 + 8 + 8 + 4
#: Per-cell scratch of one level: number of daughters (int32), their offset (int32), division time (float64).
SCRATCH_BYTES = 4 + 4 + 8
#: Bytes per cell of a batch ("frame") of the compacting simulator, scan partial sums aside.
FRAME_BYTES_PER_CELL = CELL_BYTES + SCRATCH_BYTES
#: Bytes of one slot of the fixed-slot tree: state (int32), fluorescence and time (float64), type (int32).
#: No id: the slot index is the cell's id.
TREE_SLOT_BYTES = 4 + 8 + 8 + 4


def depth_bound(max_fluorescence, phi_min) -> int:
    """Largest generation that can exist: the largest g with max_fluorescence / 2**g >= phi_min (0 if none).

    Halving a float64 is exact, so this is computed by halving, as the simulators do.
    """
    phi = check_float(max_fluorescence, "max_fluorescence", minimum=0, min_inclusive=False)
    phi_min = check_float(phi_min, "phi_min", minimum=0, min_inclusive=False)
    g = 0
    while phi * 0.5 >= phi_min:
        phi *= 0.5
        g += 1
    return g


def depth_estimate(tau_max, mean_division_time) -> int:
    """The thesis's depth inference eta: the smallest eta with eta * mu >= tau_max.

    ``mean_division_time`` is mu of the most frequent type. A stochastic run can go
    deeper (short timers) or stop earlier (phi_min); :func:`depth_bound` is a true bound.
    """
    tau_max = check_float(tau_max, "tau_max", minimum=0)
    mu = check_float(mean_division_time, "mean_division_time", minimum=0, min_inclusive=False)
    return max(1, math.ceil(tau_max / mu))


def tree_level_bytes(n_initial, level, slot_bytes=TREE_SLOT_BYTES) -> int:
    """Bytes of level ``level`` of the fixed-slot tree: L * 2**level slots."""
    n_initial = check_int(n_initial, "n_initial", minimum=0)
    level = check_int(level, "level", minimum=0)
    return n_initial * 2**level * int(slot_bytes)


def tree_peak_bytes(n_initial, levels, slot_bytes=TREE_SLOT_BYTES, keep_all=False) -> int:
    """Device bytes of the fixed-slot tree after ``levels`` levels (0 .. levels).

    ``keep_all=False``: only the last two levels are kept (the course's ``"tree"`` method);
    ``keep_all=True``: every level stays on the device (the thesis's final version), the
    sum L * (2**(levels + 1) - 1) slots.
    """
    levels = check_int(levels, "levels", minimum=0)
    if keep_all:
        return sum(tree_level_bytes(n_initial, g, slot_bytes) for g in range(levels + 1))
    if levels == 0:
        return tree_level_bytes(n_initial, 0, slot_bytes)
    return tree_level_bytes(n_initial, levels - 1, slot_bytes) + tree_level_bytes(n_initial, levels, slot_bytes)


def thesis_memory_example() -> dict:
    """An illustration of the thesis's memory wall: every level kept, ~5e4 initial cells (its section 3.4),
    10 levels (what its version allocated when memory allowed) and an assumed 40-byte cell.

    The thesis shows the growth in a figure without a byte count: the 40 bytes and the total are
    the course's, not the thesis's.
    """
    n, levels, cell = 50_000, 10, 40
    total = tree_peak_bytes(n, levels, cell, keep_all=True)
    return {"n_initial": n, "levels": levels, "cell_bytes": cell, "bytes": total}


def scan_scratch_elements(n, block) -> int:
    """int32 partial sums the recursive prefix sum of n values keeps: one per block, then one per
    block of those, ... down to a single block (0 for n = 0)."""
    n = check_int(n, "n", minimum=0)
    block = check_int(block, "block", minimum=2)
    total = 0
    while n > 0:
        n = -(-n // block)
        total += n
        if n == 1:
            break
    return total


def frame_bytes(n, block) -> int:
    """Device bytes of one batch of n cells in the compacting simulator: the cells, their scratch
    (:data:`FRAME_BYTES_PER_CELL` per cell) and the prefix sum's block sums and their offsets
    (two int32 per block, recursively)."""
    return check_int(n, "n", minimum=0) * FRAME_BYTES_PER_CELL + 8 * scan_scratch_elements(n, block)


def batch_cells(memory_budget, depth, block, largest=None) -> int:
    """Largest batch size such that ``depth + 1`` batches (one per generation 0 .. depth) fit in the budget.

    The compacting simulator processes the tree depth first, one batch per generation
    at a time, so at most ``depth + 1`` batches live at once.

    Parameters
    ----------
    memory_budget : int
        Bytes.
    depth : int
        Deepest generation (:func:`depth_bound`).
    block : int
        Threads per block of the prefix sum.
    largest : int, optional
        No point going beyond this many cells.

    Returns
    -------
    int
        0 when not even one cell per generation fits.
    """
    budget = check_int(memory_budget, "memory_budget", minimum=0)
    depth = check_int(depth, "depth", minimum=0)
    per_level = budget // (depth + 1)
    n = per_level // FRAME_BYTES_PER_CELL
    while n > 0 and frame_bytes(n, block) > per_level:  # the scan partials take a little more
        n -= max(1, n // 64)
    if largest is not None:
        n = min(n, int(largest))
    return max(n, 0)


def compact_batch_cells(memory_budget, depth, block, n_cells) -> int:
    """:func:`batch_cells` for the compacting simulators, starting from ``n_cells`` cells.

    Parameters
    ----------
    memory_budget, depth, block
        As for :func:`batch_cells`.
    n_cells : int
        Initial cells: no batch holds more than their ``2**depth`` descendants.

    Returns
    -------
    int
        Cells per batch, at least 1.

    Raises
    ------
    ValueError
        If the budget cannot hold one cell per generation.
    """
    cap = batch_cells(memory_budget, depth, block, largest=n_cells * 2**depth)
    if cap < 1:
        need = (depth + 1) * frame_bytes(1, block)
        raise ValueError(f"memory_budget of {memory_budget} bytes cannot hold one cell per generation for "
                         f"{depth + 1} generations; it needs at least {need} bytes")
    return cap
