"""Fast CPU baseline: the division trees of the initial cells, compiled by Numba, spread over the cores.

Each initial cell's tree is independent of the others, so the initial cells are split
into chunks run by ``numba.prange``; a chunk walks each of its trees depth first with a
small explicit stack (never more than depth + 2 cells: no memory wall) and counts into
its own histogram, and the per-chunk histograms are summed at the end. The per-cell
rules and random numbers are the kernels' own (:mod:`course_lib.cellsim._core`,
compiled for the CPU), so the result equals the kernels' exactly.

This is the CPU side of every "GPU vs CPU" figure of the unit. Its machine code is cached
on disk (``cache=True``): a second process loads it instead of compiling again.
"""

from __future__ import annotations

import hashlib
import marshal
from pathlib import Path

import numba
import numpy as np

from .._validate import check_flag
from . import _core
from ._problem import Problem

__all__ = ["simulate_cpu", "simulate_cpu_arrays"]


def _core_version() -> int:
    """A number that changes whenever :mod:`course_lib.cellsim._core` (the rules) changes.

    Numba invalidates a cached function when its own file changes, not when a function it
    calls from another file does; the drivers below carry this number as a closure constant,
    which Numba puts into the cache's key, so new rules never run old machine code.
    """
    try:
        source = Path(_core.__file__).read_bytes()
    except OSError:  # no source next to the module: fall back to its compiled code
        source = marshal.dumps(_core.build.__code__)
    return int(hashlib.sha256(source).hexdigest()[:15], 16)


# The rules compiled for the CPU, as module globals: a compiled function resolves globals
# at compile time, and they are not part of its cache key (closure variables are, pickled:
# a dispatcher pickles with a fresh id in every process, so a closure over one never hits).
_CORE = _core.build("cpu")
_fate, _initial_cell, _bin_index = _CORE.fate, _CORE.initial_cell, _CORE.bin_index
_CORE_VERSION = _core_version()


def _make_run_chunk(core_version):
    """One chunk of initial cells, depth first (closure over ``core_version``: see :func:`_core_version`)."""

    def run_chunk(first, stop, cumulative, fluorescence, type_params, table, k0, k1, tau_max, phi_min, edges,
                  hist, level_counts, totals, stack_ids, stack_gen, stack_phi, stack_tau, stack_type):
        if core_version < 0:  # never true; keeps the rules' version in the cache key
            return
        divisions = 0
        discarded = 0
        for root in range(first, stop):
            phi0, type0 = _initial_cell(root, cumulative, fluorescence, type_params, k0, k1)
            stack_ids[0] = root
            stack_gen[0] = 0
            stack_phi[0] = phi0
            stack_tau[0] = 0.0
            stack_type[0] = type0
            top = 1
            while top > 0:
                top -= 1
                cell = stack_ids[top]
                gen = stack_gen[top]
                phi = stack_phi[top]
                tau = stack_tau[top]
                kind = stack_type[top]
                what, when = _fate(cell, gen, phi, tau, kind, type_params, table, k0, k1, tau_max, phi_min)
                if what == 1:
                    hist[_bin_index(phi, edges)] += 1
                    level_counts[gen, kind] += 1
                elif what == 2:
                    discarded += 1
                else:
                    divisions += 1
                    for d in range(2):
                        stack_ids[top] = 2 * cell + d
                        stack_gen[top] = gen + 1
                        stack_phi[top] = phi * 0.5
                        stack_tau[top] = when
                        stack_type[top] = kind
                        top += 1
        totals[0] += divisions
        totals[1] += discarded

    return numba.njit(nogil=True, cache=True)(run_chunk)


_run_chunk = _make_run_chunk(_CORE_VERSION)


def _make_run_all(core_version, parallel):
    """The driver over all chunks, compiled serial or parallel.

    Both come from this one function, so they share one cache index; ``parallel`` is a
    closure constant, part of the key, so each finds its own machine code there.
    """

    def run_all(n_cells, n_chunks, cumulative, fluorescence, type_params, table, k0, k1, tau_max, phi_min, edges,
                depth, n_types):
        if core_version < 0 or parallel is None:  # never true; keeps both in the cache key
            n_chunks = 0
        hist = np.zeros((n_chunks, edges.shape[0]), dtype=np.int64)
        level_counts = np.zeros((n_chunks, depth + 1, n_types), dtype=np.int64)
        totals = np.zeros((n_chunks, 2), dtype=np.int64)
        for c in numba.prange(n_chunks):  # a plain range when compiled without parallel=True
            first = n_cells * c // n_chunks
            stop = n_cells * (c + 1) // n_chunks
            stack = depth + 3  # depth first: one cell per level plus the second daughter
            _run_chunk(first, stop, cumulative, fluorescence, type_params, table, k0, k1, tau_max, phi_min, edges,
                       hist[c], level_counts[c], totals[c], np.empty(stack, np.int64), np.empty(stack, np.int64),
                       np.empty(stack, np.float64), np.empty(stack, np.float64), np.empty(stack, np.int64))
        return hist.sum(axis=0), level_counts.sum(axis=0), totals.sum(axis=0)

    return numba.njit(parallel=parallel, cache=True)(run_all)


_DRIVERS = {"parallel": _make_run_all(_CORE_VERSION, True), "serial": _make_run_all(_CORE_VERSION, False)}


def simulate_cpu_arrays(cumulative, fluorescence, type_params, table, k0, k1, tau_max, phi_min, edges, depth,
                        parallel=True, chunks_per_thread=16):
    """Run the compiled simulator on validated arrays (use :func:`~course_lib.cellsim.simulate`).

    Parameters
    ----------
    cumulative : ndarray of shape (B0,), int64
        Cumulative counts of the initial histogram.
    fluorescence : ndarray of shape (B0,), float64
    type_params : ndarray of shape (T, 4), float64
    table : ndarray, float64
        Inverse normal CDF table.
    k0, k1 : int
        Key words of the seed.
    tau_max, phi_min : float
    edges : ndarray of shape (B + 1,), float64
    depth : int
        Deepest generation possible (:func:`~course_lib.cellsim.model.depth_bound`).
    parallel : bool
        Use every Numba thread (``numba.prange``) or one.
    chunks_per_thread : int
        Chunks of initial cells per thread (trees differ in size: more chunks balance the load).

    Returns
    -------
    hist : ndarray of shape (B + 1,), int64
        Bins, then the cells outside the edges.
    level_counts : ndarray of shape (depth + 1, T), int64
    totals : ndarray of shape (2,), int64
        Divisions and discarded cells.
    """
    n_cells = int(cumulative[-1])
    threads = numba.get_num_threads() if parallel else 1
    n_chunks = max(1, min(n_cells, threads * chunks_per_thread))
    run = _DRIVERS["parallel" if parallel else "serial"]
    return run(n_cells, n_chunks, cumulative, fluorescence, type_params, table, np.uint64(k0), np.uint64(k1),
               float(tau_max), float(phi_min), edges, int(depth), type_params.shape[0])


def simulate_cpu(problem, *, parallel=True):
    """Run the compiled CPU simulator on a prepared problem (what ``simulate(..., method="cpu")`` does).

    Parameters
    ----------
    problem : Problem
        From :func:`~course_lib.cellsim.prepare_problem` (validated inputs).
    parallel : bool
        Use every Numba thread (the baseline of the benchmark) or one.

    Returns
    -------
    SimulationResult
        Equal to the kernels' result for the same problem (same random numbers, same rules).
    """
    if not isinstance(problem, Problem):
        raise ValueError(f"problem must be a Problem from prepare_problem, got {type(problem).__name__}")
    parallel = check_flag(parallel, "parallel")
    hist, level_counts, totals = simulate_cpu_arrays(
        problem.histogram.cumulative, problem.histogram.fluorescence, problem.params, problem.table, problem.k0,
        problem.k1, problem.tau_max, problem.phi_min, problem.edges, problem.depth, parallel=parallel)
    return problem.result(hist, level_counts, totals[0], totals[1], "cpu", {"parallel": parallel})
