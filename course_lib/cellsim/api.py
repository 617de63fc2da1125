"""Public entry point of Unit 7: :func:`simulate` (``method=`` picks the simulator)."""

from __future__ import annotations

import numpy as np

from .. import device
from ..clock import PhaseClock as _Clock
from .._validate import check_block, check_choice, check_int, check_positive_int
from . import _core
from ._inputs import simulation_inputs
from ._problem import Problem
from ._result import SimulationResult, bin_counts, resolve_edges
from ._device_batches import (BatchArrays, _exclusive_scan, _grid, _release_freed_memory,  # noqa: F401
                              exclusive_scan)
from .model import TREE_SLOT_BYTES, compact_batch_cells, depth_bound

__all__ = ["DEVICE_METHODS", "METHODS", "PHASES", "BatchArrays", "PhaseClock", "Problem", "default_block",
           "default_memory_budget", "exclusive_scan", "prepare_problem", "simulate"]

#: ``"compact"``: level by level with stream compaction, histogram on the device, batches
#: within a memory budget; ``"tree"``: the thesis's fixed-slot binary tree with per-level
#: copies to the host; ``"cpu"``: the compiled parallel CPU simulator; ``"reference"``: the
#: event-driven Python reference (same random streams); ``"compact_pooled"``: ``"compact"`` with its
#: device buffers pooled across batches and calls, the counts kept on the device and a wait only when
#: a batch outgrows its buffers (:mod:`course_lib.cellsim._pooled`).
METHODS = ("compact", "compact_pooled", "tree", "cpu", "reference")
DEVICE_METHODS = ("compact", "compact_pooled", "tree")


def default_block() -> int:
    """Threads per block when none is given: 256 on a GPU, 32 in the simulator."""
    return device.pick(sim=32, gpu=256)


def default_memory_budget() -> int:
    """Device bytes the simulators may use when no budget is given: half the free memory on a
    GPU, 64 MiB in the simulator."""
    if device.is_simulator():
        return 64 * 2**20
    from numba import cuda

    free, _total = cuda.current_context().get_memory_info()
    return int(free // 2)


_TABLE = None


def prepare_problem(histogram, types, *, tau_max, phi_min, seed=0, bins=None) -> Problem:
    """Validate the inputs of a simulation (see :func:`simulate`)."""
    global _TABLE
    hist, cell_types, tau_max, phi_min, seed = simulation_inputs(histogram, types, tau_max, phi_min, seed)
    if seed >= 2**64:
        raise ValueError(f"seed must be below 2**64 (it is the Philox key), got {seed}")
    edges = resolve_edges(bins, hist, phi_min)
    depth = depth_bound(hist.fluorescence.max(), phi_min)
    if hist.n_cells * 2.0**depth >= 2.0**63:
        raise ValueError(f"{hist.n_cells} initial cells and up to {depth} generations give cell ids beyond 63 bits; "
                         "raise phi_min or use fewer cells")
    if _TABLE is None:
        _TABLE = _core.normal_table()
    k0, k1 = _core.seed_words(seed)
    return Problem(hist, cell_types, tau_max, phi_min, seed, edges, depth, cell_types.params(), _TABLE, k0, k1)


def simulate(histogram, types, *, tau_max, phi_min, seed=0, method="compact", bins=None, block=None,
             memory_budget=None) -> SimulationResult:
    """Simulate the proliferation of a labelled cell population up to tau_max.

    Parameters
    ----------
    histogram : InitialHistogram, str, (fluorescence, counts) or array of shape (B0, 2)
        H(0): fluorescence values and how many initial cells have each (L cells in all).
    types : CellTypes, str or array of shape (T, 3)
        Rows (proportion, mean, std) of the division time in hours; ``-1 -1`` = quiescent.
    tau_max : float
        Hours simulated (>= 0).
    phi_min : float
        Smallest fluorescence a cell may have (> 0): a cell whose daughters would fall
        below it is discarded.
    seed : int
        Key of the counter-based random numbers. The same seed gives the same result with
        every method, block size, memory budget and backend.
    method : {"compact", "compact_pooled", "tree", "cpu", "reference"}
        See :data:`METHODS`.
    bins : None, int or array of float
        Output bin edges: None for 8 log2-spaced bins per octave, an int for that many
        bins per octave, or the increasing edges themselves (at most 4096 bins).
    block : int, optional
        Threads per block of the kernels (default :func:`default_block`; 2 .. 1024).
    memory_budget : int, optional
        Device bytes the cells may take (default :func:`default_memory_budget`).
        ``"compact"`` splits a level into batches so that it never exceeds it;
        ``"tree"`` stops with a ``ValueError`` when the next level does not fit.

    Returns
    -------
    SimulationResult

    Raises
    ------
    ValueError
        Invalid histogram or types (see :class:`InitialHistogram`, :class:`CellTypes`),
        tau_max < 0, phi_min <= 0, a bad seed, block, bins or budget, or a budget that
        cannot hold the simulation.

    Examples
    --------
    >>> from course_lib.cellsim import THESIS_TYPES, simulate, lognormal_histogram
    >>> h0 = lognormal_histogram(200, seed=1)
    >>> r = simulate(h0, THESIS_TYPES, tau_max=96.0, phi_min=11.0, method="cpu")
    >>> r.same_as(simulate(h0, THESIS_TYPES, tau_max=96.0, phi_min=11.0, method="reference"))
    True
    """
    method = check_choice(method, "method", METHODS)
    if method not in DEVICE_METHODS and (block is not None or memory_budget is not None):
        raise ValueError(f"block and memory_budget only apply to the device methods {DEVICE_METHODS}, not {method!r}")
    problem = prepare_problem(histogram, types, tau_max=tau_max, phi_min=phi_min, seed=seed, bins=bins)
    if method == "reference":
        from .reference import _simulate_checked

        result = _simulate_checked(problem.histogram, problem.types, problem.tau_max, problem.phi_min, problem.seed,
                                   problem.edges)
        return problem.result(np.append(result.counts, result.outside), result.level_counts, result.divisions,
                              result.discarded, "reference", result.stats)
    if method == "cpu":
        from .cpu import simulate_cpu

        return simulate_cpu(problem)
    block = check_block(default_block() if block is None else block, "block")
    if block < 2:
        raise ValueError("block must be at least 2 (the prefix sum needs two threads per block)")
    if memory_budget is not None:
        budget = check_positive_int(memory_budget, "memory_budget")
    elif method == "compact_pooled":
        from ._pooled import workspace_bytes

        # Half the free memory, counting the pool's own buffers as free: the same budget on every call.
        budget = default_memory_budget() + (workspace_bytes() // 2 if device.is_gpu() else 0)
    else:
        budget = default_memory_budget()
    if method == "compact_pooled":
        from ._pooled import run_compact_pooled

        return run_compact_pooled(problem, block, budget)
    if method == "tree":
        return _run_tree(problem, block, budget)
    return _run_compact(problem, block, budget)


#: Phases of the compacting simulator, as :class:`PhaseClock` times them.
PHASES = ("init", "fate", "scan", "scatter", "wait")


class PhaseClock(_Clock):
    """Device seconds per phase of :func:`_run_compact` (:class:`course_lib.clock.PhaseClock`).

    ``wait`` is the host waiting for a batch's total (a synchronisation, no copy).
    Disabled (the default in :func:`simulate`), it costs nothing. ``phases`` names the
    phases of another pipeline (the co-location miner times its own with this clock).
    """

    def __init__(self, enabled=True, phases=PHASES):
        super().__init__(phases, enabled)


def _run_compact(problem: Problem, block: int, budget: int, clock=None) -> SimulationResult:
    """The compacting simulator. Allocations happen once per run: each generation's batch buffers
    on first use, sized for the most cells a batch of that generation can hold
    (``min(cap, root batch * 2**generation)``: every cell has at most two daughters), and
    reused by every later batch. Each batch's daughter count is written by the scan into a
    mapped host counter: the host waits for it (one synchronisation) but copies nothing."""
    from numba import cuda

    from . import kernels

    clock = PhaseClock(False) if clock is None else clock
    depth, n_cells = problem.depth, problem.n_cells
    cap = compact_batch_cells(budget, depth, block, n_cells)
    root_capacity = min(cap, n_cells)
    fate_kernel = kernels.fate_histogram_kernel(problem.n_slots)
    params, table = cuda.to_device(problem.params), cuda.to_device(problem.table)
    edges = cuda.to_device(problem.edges)
    cumulative = cuda.to_device(problem.histogram.cumulative)
    fluorescence = cuda.to_device(problem.histogram.fluorescence)
    hist = cuda.to_device(np.zeros(problem.n_slots, np.int64))
    level_counts = cuda.to_device(np.zeros((depth + 1, problem.types.n_types), np.int64))
    total = cuda.mapped_array(1, np.int32)  # the daughters of the current batch, written by the scan
    k0, k1 = np.uint64(problem.k0), np.uint64(problem.k1)
    frames: dict = {}
    state = {"divisions": 0, "decided": 0, "batches": 0, "device_bytes": 0, "deepest": 0, "frames_allocated": 0,
             "synchronisations": 0}

    def frame(generation):
        """The batch buffers of a generation: allocated on first use, then reused."""
        current = frames.get(generation)
        if current is None:
            capacity = min(cap, root_capacity * 2**generation)
            frames[generation] = current = BatchArrays(capacity, block)
            state["device_bytes"] += current.nbytes
            state["frames_allocated"] += 1
        return current

    def process(generation, n):
        f = frames[generation]
        state["batches"] += 1
        state["decided"] += n
        state["deepest"] = max(state["deepest"], generation)
        mark = clock.start()
        fate_kernel[_grid(n, block), block](*f.cells, n, generation, params, table, k0, k1, problem.tau_max,
                                            problem.phi_min, edges, f.children, f.division_times, hist,
                                            level_counts)
        clock.stop("fate", mark)
        mark = clock.start()
        exclusive_scan(f.children, n, f.offsets, f.scan, block, total_out=total)
        clock.stop("scan", mark)
        mark = clock.start()
        cuda.synchronize()  # the host needs the total to cut the daughters into batches
        state["synchronisations"] += 1
        daughters = int(total[0])
        clock.stop("wait", mark)
        state["divisions"] += daughters // 2
        window = 0
        while window < daughters:
            size = min(cap, daughters - window)
            child = frame(generation + 1)
            mark = clock.start()
            kernels.scatter_daughters_kernel[_grid(n, block), block](
                *f.cells, f.children, f.offsets, f.division_times, n, window, window + size, *child.cells)
            clock.stop("scatter", mark)
            process(generation + 1, size)
            window += size

    for first in range(0, n_cells, cap):
        n = min(cap, n_cells - first)
        roots = frame(0)
        mark = clock.start()
        kernels.init_cells_kernel[_grid(n, block), block](cumulative, fluorescence, params, k0, k1, first, n,
                                                          *roots.cells)
        clock.stop("init", mark)
        process(0, n)

    hist_host = hist.copy_to_host()
    levels_host = level_counts.copy_to_host()
    recorded = int(levels_host.sum())
    stats = {"block": block, "memory_budget": budget, "cells_per_batch": cap, "batches": state["batches"],
             "peak_device_bytes": state["device_bytes"], "deepest_generation": state["deepest"],
             "depth_bound": depth, "frames_allocated": state["frames_allocated"],
             "synchronisations": state["synchronisations"]}
    if clock.enabled:
        stats["phase_seconds"] = clock.finish()
    return problem.result(hist_host, levels_host, state["divisions"], state["decided"] - state["divisions"] - recorded,
                          "compact", stats)


# ----------------------------------------------------------------------------------------------
# The thesis's fixed-slot binary tree
# ----------------------------------------------------------------------------------------------


def _run_tree(problem: Problem, block: int, budget: int) -> SimulationResult:
    from numba import cuda

    from . import kernels

    n = problem.n_cells
    if n * TREE_SLOT_BYTES > budget:
        raise ValueError(f"memory_budget of {budget} bytes cannot hold level 0 of the fixed-slot tree "
                         f"({n} slots of {TREE_SLOT_BYTES} bytes)")
    params, table = cuda.to_device(problem.params), cuda.to_device(problem.table)
    k0, k1 = np.uint64(problem.k0), np.uint64(problem.k1)
    states = cuda.device_array(n, np.int32)
    phis = cuda.device_array(n, np.float64)
    taus = cuda.device_array(n, np.float64)
    types = cuda.device_array(n, np.int32)
    kernels.tree_init_kernel[_grid(n, block), block](cuda.to_device(problem.histogram.cumulative),
                                                     cuda.to_device(problem.histogram.fluorescence), params, k0, k1,
                                                     states, phis, taus, types)
    hist = np.zeros(problem.n_slots, np.int64)
    level_counts = np.zeros((problem.depth + 1, problem.types.n_types), np.int64)
    divisions = discarded = 0
    alive = n
    alive_per_level = [n]
    generation = 0
    peak = 0
    while alive:
        need = 3 * n * TREE_SLOT_BYTES  # this level (n slots) and the next (2n slots)
        if need > budget:
            raise ValueError(f"the fixed-slot tree needs {need} bytes for levels {generation} and {generation + 1} "
                             f"({n} + {2 * n} slots of {TREE_SLOT_BYTES} bytes), more than memory_budget = {budget}:"
                             " the memory wall of the thesis; use method='compact', which batches")
        peak = max(peak, need)
        out = (cuda.device_array(2 * n, np.int32), cuda.device_array(2 * n, np.float64),
               cuda.device_array(2 * n, np.float64), cuda.device_array(2 * n, np.int32))
        kernels.tree_level_kernel[_grid(n, block), block](states, phis, taus, types, n, generation, params, table,
                                                          k0, k1, problem.tau_max, problem.phi_min, *out)
        # The thesis's host side: copy the new level back, collect the INACTIVE (recorded) cells.
        next_states = out[0].copy_to_host()
        next_phis = out[1].copy_to_host()
        next_types = out[3].copy_to_host()
        recorded = next_states == kernels.INACTIVE
        counts, outside = bin_counts(next_phis[recorded], problem.edges)
        hist[:-1] += counts
        hist[-1] += outside
        np.add.at(level_counts[generation], next_types[recorded], 1)
        born = int(np.count_nonzero(next_states == kernels.ALIVE))
        divisions += born // 2
        discarded += alive - born // 2 - int(np.count_nonzero(recorded))
        states, phis, taus, types = out
        alive = born
        alive_per_level.append(born)
        n *= 2
        generation += 1
        del out
        _release_freed_memory()
    stats = {"block": block, "memory_budget": budget, "levels": generation, "peak_device_bytes": peak,
             "final_level_slots": n, "alive_per_level": alive_per_level}
    return problem.result(hist, level_counts, divisions, discarded, "tree", stats)

