"""Measurements of the unit's kernels with the course's tools.

* :func:`transfers` runs a simulation inside :func:`course_lib.sim.record` and returns
  the copies and launches: the fixed-slot tree copies every level back to the host
  (the thesis's per-level ``cudaMemcpy``); compaction copies the histogram and the
  per-generation counts once at the end (each batch's total reaches the host through a
  mapped counter, without a copy).
* :func:`phase_breakdown`: where a compacting run's time goes: device seconds per phase
  (init, fate, scan, scatter, and the host's waits for totals) against the launches,
  copies, allocations and synchronisations it made (the bench's phase table).
* :func:`histogram_atomics` profiles one launch of the fate kernel with
  :func:`course_lib.sim.profile` and counts atomics per line: shared-memory bins take
  one atomic per recorded cell, global memory one per non-empty bin per block.
* :func:`level_populations` counts, per level of the fixed-slot tree, the slots and the
  live cells in them, and the bytes copied back.
"""

from __future__ import annotations

import numpy as np

from .api import prepare_problem, simulate

__all__ = ["MEASURE_BLOCK", "cells_case", "histogram_atomics", "level_populations", "measure_case",
           "phase_breakdown", "transfers"]


def transfers(histogram, types, *, tau_max, phi_min, seed=0, method="compact", **options) -> dict:
    """Run one simulation under :func:`course_lib.sim.record`.

    Returns
    -------
    dict
        ``result`` (SimulationResult), ``record`` (the Record), ``summary`` (its counts),
        ``dtoh_copies`` / ``dtoh_bytes`` (device to host), ``launches``.
    """
    from ..sim import record

    with record() as log:
        result = simulate(histogram, types, tau_max=tau_max, phi_min=phi_min, seed=seed, method=method, **options)
    summary = log.summary()
    return {"result": result, "record": log, "summary": summary, "dtoh_copies": summary["DtoH_count"],
            "dtoh_bytes": summary["DtoH_bytes"], "launches": summary["launches"]}


def phase_breakdown(histogram, types, *, tau_max, phi_min, seed=0, block=None, memory_budget=None) -> dict:
    """Where the time of one ``method="compact"`` run goes: device work per phase against host costs.

    Two runs of the same simulation: one under :func:`course_lib.sim.record` (launches per
    kernel and copies), one timed per phase (CUDA events on a GPU; in the simulator the wall
    clock, which says nothing about a GPU).

    Returns
    -------
    dict
        ``wall_seconds`` (the timed run, end to end), ``phase_seconds`` (dict over
        :data:`~course_lib.cellsim.api.PHASES`), ``device_seconds`` (their sum without
        ``wait``), ``launches`` (total) and ``launches_per_kernel`` (dict), ``htod_copies``,
        ``dtoh_copies``, ``frames_allocated`` (batch buffers, one per generation reached),
        ``allocated_bytes``, ``synchronisations`` (one per batch), ``batches``, ``result``.
    """
    import time
    from collections import Counter

    from .. import device
    from ..sim import record
    from .api import PhaseClock, _run_compact, default_block, default_memory_budget

    problem = prepare_problem(histogram, types, tau_max=tau_max, phi_min=phi_min, seed=seed)
    block = default_block() if block is None else block
    budget = default_memory_budget() if memory_budget is None else memory_budget
    with record() as log:
        counted = _run_compact(problem, block, budget)
    clock = PhaseClock()
    start = time.perf_counter()
    result = _run_compact(problem, block, budget, clock)
    if device.is_gpu():
        from numba import cuda

        cuda.synchronize()
    wall = time.perf_counter() - start
    if not result.same_as(counted):  # same seed, same bits: anything else is a bug
        raise RuntimeError("the timed run and the counted run of the same simulation differ")
    phases = result.stats["phase_seconds"]
    summary = log.summary()
    return {"wall_seconds": wall, "phase_seconds": phases,
            "device_seconds": sum(v for k, v in phases.items() if k != "wait"),
            "launches": summary["launches"], "launches_per_kernel": dict(Counter(e.kernel for e in log.launches)),
            "htod_copies": summary["HtoD_count"], "dtoh_copies": summary["DtoH_count"],
            "frames_allocated": result.stats["frames_allocated"], "allocated_bytes": result.stats["peak_device_bytes"],
            "synchronisations": result.stats["synchronisations"], "batches": result.stats["batches"],
            "result": result}


def histogram_atomics(histogram, types, *, tau_max, phi_min, seed=0, generation=0, block=32, bins=None) -> dict:
    """Profile one launch of the fate kernel of :mod:`course_lib.cellsim.kernels` on the initial cells.

    Returns
    -------
    dict
        ``cells``, ``blocks``, ``recorded`` (cells recorded by this launch),
        ``shared_atomics`` (atomics on the blocks' shared bins), ``global_atomics`` (on the
        global histogram), ``nonempty_bins`` (summed over blocks, recomputed on the host
        from the kernel's outputs) and ``report`` (the profiler's report).
    """
    from ..sim import profile
    from . import kernels
    from ._result import bin_counts

    problem = prepare_problem(histogram, types, tau_max=tau_max, phi_min=phi_min, seed=seed, bins=bins)
    n = problem.n_cells
    ids, phis, taus, cell_types = np.zeros(n, np.int64), np.zeros(n), np.zeros(n), np.zeros(n, np.int32)
    k0, k1 = np.uint64(problem.k0), np.uint64(problem.k1)
    grid = -(-n // block)
    kernels.init_cells_kernel[grid, block](problem.histogram.cumulative, problem.histogram.fluorescence,
                                           problem.params, k0, k1, 0, n, ids, phis, taus, cell_types)
    hist = np.zeros(problem.n_slots, np.int64)
    level_counts = np.zeros((problem.depth + 1, problem.types.n_types), np.int64)
    children, times = np.zeros(n, np.int32), np.zeros(n)
    report = profile(kernels.fate_histogram_kernel(problem.n_slots), grid, block, ids, phis, taus, cell_types, n,
                     generation, problem.params, problem.table, k0, k1, problem.tau_max, problem.phi_min,
                     problem.edges, children, times, hist, level_counts)
    recorded = times > problem.tau_max  # recorded cells: no division before tau_max
    nonempty = 0
    for b in range(grid):
        part = slice(b * block, min(n, (b + 1) * block))
        counts, outside = bin_counts(phis[part][recorded[part]], problem.edges)
        nonempty += int(np.count_nonzero(counts)) + int(outside > 0)
    return {"cells": n, "blocks": grid, "recorded": int(hist.sum()),
            "shared_atomics": int(report.line("cuda.atomic.add(bins,").atomics),
            "global_atomics": int(report.line("cuda.atomic.add(hist,").atomics),
            "nonempty_bins": nonempty, "report": report}


def level_populations(histogram, types, *, tau_max, phi_min, seed=0, block=None) -> dict:
    """The fixed-slot tree level by level: slots, live cells and bytes copied back to the host.

    Returns
    -------
    dict
        ``slots`` (L * 2**g for each level g the run allocated), ``alive`` (cells alive in
        each), ``dtoh_bytes`` (each device-to-host copy, in order), ``result``.
    """
    out = transfers(histogram, types, tau_max=tau_max, phi_min=phi_min, seed=seed, method="tree", block=block)
    result = out["result"]
    alive = result.stats["alive_per_level"]
    n0 = alive[0]
    return {"slots": [n0 * 2**g for g in range(len(alive))], "alive": alive,
            "dtoh_bytes": [t.nbytes for t in out["record"].transfers if t.direction == "DtoH"], "result": result}


# ----------------------------------------------------------------------------- the problems of problem set 7
def cells_case(n, p_recorded, block, seed):
    """``inputs`` data: n cells, each recorded (flag 1) with probability p, their fluorescence, and the block."""
    rng = np.random.default_rng(seed)
    flags = (rng.random(n) < p_recorded).astype(np.int32)
    phis = np.round(rng.uniform(11.0, 2000.0, n), 3)
    return {"flags": flags, "phis": phis, "block": int(block)}


#: Threads per block of the q2 measurement.
MEASURE_BLOCK = 64


def measure_case(n):
    """The cells the q2 measurement profiles for n cells: about half recorded, seeded by n, blocks of 64.

    Returns
    -------
    dict
        ``flags`` int32 (n,), ``phis`` float64 (n,) and ``block`` (64), as :func:`cells_case` gives them.
    """
    return cells_case(int(n), 0.5, MEASURE_BLOCK, seed=int(n))
