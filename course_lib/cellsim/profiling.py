"""Measurements of the unit's kernels with the course's tools.

* :func:`transfers` runs a simulation inside :func:`course_lib.sim.record` and returns
  the copies and launches: the fixed-slot tree copies every level back to the host
  (the thesis's per-level ``cudaMemcpy``), compaction copies one 4-byte total per batch
  and the histogram once at the end.
* :func:`histogram_atomics` profiles one launch of the fate kernel with
  :func:`course_lib.sim.profile` and counts atomics per line: shared-memory bins take
  one atomic per recorded cell, global memory one per non-empty bin per block.
* :func:`level_populations` counts, per level of the fixed-slot tree, the slots and the
  live cells in them, and the bytes copied back.
"""

from __future__ import annotations

import numpy as np

from .api import prepare_problem, simulate

__all__ = ["histogram_atomics", "level_populations", "transfers"]


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
