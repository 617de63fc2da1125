"""The compacting simulator with its device buffers pooled: ``simulate(method="compact_pooled")``.

The same depth-first walk over batches as ``"compact"`` (:func:`course_lib.cellsim.api._run_compact`,
the version the lesson teaches), with the host's costs taken out:

* **buffers sized once per problem, reused across batches and calls.** A :class:`CompactWorkspace`
  holds every generation's batch buffers, the counters and the uploaded constants. The pool (one per
  host thread) keeps the workspace of the last problem shape (block, depth, bins, types): a second call of the same
  shape allocates nothing and uploads nothing that did not change. A generation's buffers grow
  (to at least :data:`HEADROOM` times what is needed, at least doubling, never beyond the batch
  size the memory budget allows) only when a batch does not fit;
* **no synchronisation per batch.** The live count of a batch stays on the device
  (``live[generation]``, written by the kernel that made the batch); the host launches over an
  upper bound of it and waits (one synchronisation, then it reads the mapped counter the prefix
  sum wrote: no copy) only when that bound outgrows the next generation's buffers, to cut the
  daughters into batches or to grow them;
* **every count on the device**: histogram, per generation and type, divisions, discarded cells and
  the deepest generation reached live in one int64 buffer, zeroed by one launch and downloaded
  once at the end of the call.

:func:`release_workspaces` frees the pool.
"""

from __future__ import annotations

import threading

import numpy as np

from . import _pooled_kernels as pk
from ._device_batches import _grid
from ._problem import Problem
from ._result import SimulationResult
from .model import compact_batch_cells

__all__ = ["HEADROOM", "CompactWorkspace", "release_workspaces", "run_compact_pooled", "workspace_bytes"]

#: A generation's buffers grow to this many times the cells they must hold (fewer waits on later calls).
HEADROOM = 4

#: Per host thread (a grader simulates in threads): problem shape -> workspace.
_LOCAL = threading.local()


def _pool() -> dict:
    pool = getattr(_LOCAL, "pool", None)
    if pool is None:
        pool = _LOCAL.pool = {}
    return pool


class CompactWorkspace:
    """Device buffers of the pooled compacting simulator for one problem shape.

    Parameters
    ----------
    block : int
        Threads per block.
    depth : int
        Deepest generation (frames 0 .. depth).
    n_slots, n_types : int
        Histogram slots (bins + 1) and cell types.

    Attributes
    ----------
    frames : list of BatchArrays or None
        One per generation, allocated when first needed and grown when too small.
    counts : device array of int64
        ``[hist (n_slots) | level_counts ((depth + 1) * n_types) | totals (3)]``.
    live : device array of shape (depth + 2,), int32
        Live cells of each generation's current batch.
    total : mapped array of shape (1,), int32
        Daughters of the last batch scanned, as the prefix sum wrote it (read after a wait).
    allocations : int
        Device allocations made so far (all calls).
    """

    def __init__(self, block, depth, n_slots, n_types):
        from numba import cuda

        self.block, self.depth, self.n_slots, self.n_types = block, depth, n_slots, n_types
        self.frames = [None] * (depth + 1)
        n_counts = n_slots + (depth + 1) * n_types + pk.N_COUNTERS
        self.counts = cuda.device_array(n_counts, np.int64)
        self.hist = self.counts[:n_slots]
        self.level_counts = self.counts[n_slots: n_slots + (depth + 1) * n_types].reshape(depth + 1, n_types)
        self.totals = self.counts[n_slots + (depth + 1) * n_types:]
        self.live = cuda.device_array(depth + 2, np.int32)
        self.total = cuda.mapped_array(1, np.int32)
        self.allocations = 3
        #: A waiting pass sized every generation's buffers (the next call may sweep without waiting).
        self.sized = False
        #: Some generation needed more than one batch: sweeping without waiting would overflow.
        self.windowed = False
        self.nbytes = self.counts.nbytes + self.live.nbytes + 4
        self._constants: dict = {}

    def frame(self, generation, cells, limit):
        """The buffers of ``generation``, holding at least ``cells`` cells: grown, when too small, to
        :data:`HEADROOM` times that (at least doubling), but never beyond ``limit`` cells (the batch
        size of the budget, or the most cells the generation can have)."""
        from ._device_batches import BatchArrays

        current = self.frames[generation]
        if current is not None and current.capacity >= cells:
            return current
        old = 0 if current is None else current.capacity
        capacity = min(limit, max(cells * HEADROOM, 2 * old))
        if current is not None:
            self.nbytes -= current.nbytes
        self.frames[generation] = current = BatchArrays(max(capacity, cells), self.block)
        self.allocations += 7 + 2 * len(current.scan)
        self.nbytes += current.nbytes
        return current

    def fit(self, cap):
        """Drop the frames larger than ``cap`` cells (a smaller memory budget than the last call's)."""
        for g, f in enumerate(self.frames):
            if f is not None and f.capacity > cap:
                self.nbytes -= f.nbytes
                self.frames[g] = None
                self.sized = False

    def constant(self, name, host):
        """``host`` on the device: uploaded when it changed since the last call, into the same buffer
        when the shape allows."""
        from numba import cuda

        host = np.ascontiguousarray(host)
        cached = self._constants.get(name)
        if cached is not None:
            d, previous = cached
            if previous.shape == host.shape and previous.dtype == host.dtype:
                if not np.array_equal(previous, host):
                    d.copy_to_device(host)
                    self._constants[name] = (d, host.copy())
                return d
            self.nbytes -= d.nbytes
        d = cuda.to_device(host)
        self.allocations += 1
        self.nbytes += d.nbytes
        self._constants[name] = (d, host.copy())
        return d


def workspace_bytes() -> int:
    """Device bytes the pool holds."""
    return sum(ws.nbytes for ws in _pool().values())


def release_workspaces() -> None:
    """Free this thread's pooled workspaces (the next call allocates again)."""
    from ._device_batches import _release_freed_memory

    _pool().clear()
    _release_freed_memory()


def _workspace(block, depth, n_slots, n_types):
    key = (block, depth, n_slots, n_types)
    ws = _pool().get(key)
    if ws is None:
        release_workspaces()  # one problem shape at a time: the pool never holds two
        ws = _pool()[key] = CompactWorkspace(block, depth, n_slots, n_types)
    return ws


def run_compact_pooled(problem: Problem, block: int, budget: int) -> SimulationResult:
    """The pooled compacting simulator on a validated problem (see the module docstring).

    ``budget`` bounds the cells' buffers as in ``"compact"``: ``depth + 1`` batches of
    :func:`~course_lib.cellsim.model.compact_batch_cells` cells at most.
    """
    depth, n_cells = problem.depth, problem.n_cells
    cap = compact_batch_cells(budget, depth, block, n_cells)
    existing = _pool().get((block, depth, problem.n_slots, problem.types.n_types))
    allocations_before = 0 if existing is None else existing.allocations
    ws = _workspace(block, depth, problem.n_slots, problem.types.n_types)
    ws.fit(cap)
    run = _Run(problem, ws, block, cap)
    if ws.sized and n_cells <= ws.frames[0].capacity:
        counts = run.without_waiting()
        if counts[run.overflow_at]:  # a generation outgrew its buffers: the waiting pass sizes them
            run.retried = True
            counts = run.waiting()
    else:
        counts = run.waiting()
    hist = counts[:problem.n_slots]
    levels = counts[problem.n_slots: run.totals_at].reshape(depth + 1, ws.n_types)
    totals = counts[run.totals_at:]
    stats = {"block": block, "memory_budget": budget, "cells_per_batch": cap, "batches": run.batches,
             "peak_device_bytes": sum(f.nbytes for f in ws.frames if f is not None), "workspace_bytes": ws.nbytes,
             "deepest_generation": int(totals[pk.COUNTER_DEEPEST]),
             "depth_bound": depth, "device_allocations": ws.allocations - allocations_before,
             "synchronisations": run.synchronisations, "waited": not run.optimistic or run.retried,
             "retried": run.retried}
    return problem.result(hist, levels, int(totals[pk.COUNTER_DIVISIONS]), int(totals[pk.COUNTER_DISCARDED]),
                          "compact_pooled", stats)


class _Run:
    """One call of the pooled simulator: its two passes over the generations."""

    def __init__(self, problem, ws, block, cap):
        self.problem, self.ws, self.block, self.cap = problem, ws, block, cap
        self.fate_kernel = pk.fate_live_kernel(problem.n_slots)
        self.params, self.table = ws.constant("params", problem.params), ws.constant("table", problem.table)
        self.edges = ws.constant("edges", problem.edges)
        self.cumulative = ws.constant("cumulative", problem.histogram.cumulative)
        self.fluorescence = ws.constant("fluorescence", problem.histogram.fluorescence)
        self.k0, self.k1 = np.uint64(problem.k0), np.uint64(problem.k1)
        self.totals_at = problem.n_slots + (problem.depth + 1) * ws.n_types
        self.overflow_at = self.totals_at + pk.COUNTER_OVERFLOW
        self.root_capacity = min(cap, problem.n_cells)
        self.batches = self.synchronisations = 0
        self.optimistic = self.retried = False

    def _clear(self):
        ws = self.ws
        pk.clear_kernel[_grid(ws.counts.size, self.block), self.block](ws.counts)

    def _roots(self, first, n):
        roots = self.ws.frames[0]
        pk.init_live_kernel[_grid(n, self.block), self.block](self.cumulative, self.fluorescence, self.params,
                                                              self.k0, self.k1, first, n, *roots.cells, self.ws.live)

    def _fate(self, generation, bound):
        ws, p = self.ws, self.problem
        f = ws.frames[generation]
        self.batches += 1
        self.fate_kernel[_grid(bound, self.block), self.block](
            *f.cells, ws.live, generation, self.params, self.table, self.k0, self.k1, p.tau_max, p.phi_min,
            self.edges, f.children, f.division_times, ws.hist, ws.level_counts, ws.totals)

    def _scan(self, generation, bound):
        from ._device_batches import _exclusive_scan

        f = self.ws.frames[generation]
        _exclusive_scan(f.children, bound, f.offsets, f.scan, self.block, total_out=self.ws.total)

    def _scatter(self, generation, bound, window, size):
        ws = self.ws
        f, child = ws.frames[generation], ws.frames[generation + 1]
        pk.scatter_live_kernel[_grid(bound, self.block), self.block](
            *f.cells, f.children, f.offsets, f.division_times, ws.live, generation, bound, window, size,
            *child.cells, ws.totals)

    def without_waiting(self):
        """Every generation in one sweep over the buffers as they are: each launch covers its
        generation's whole buffer and reads the live count on the device; a generation whose
        daughters do not fit in the next buffer sets the overflow counter. No synchronisation
        before the one download of the counts."""
        self.optimistic = True
        ws, depth = self.ws, self.problem.depth
        self._clear()
        self._roots(0, self.problem.n_cells)
        for g in range(depth + 1):
            capacity = ws.frames[g].capacity
            self._fate(g, capacity)
            if g == depth:
                break  # by depth_bound, no cell of the deepest generation divides
            self._scan(g, capacity)
            self._scatter(g, capacity, 0, ws.frames[g + 1].capacity)
        return ws.counts.copy_to_host()

    def waiting(self):
        """Depth first over batches, as ``"compact"``: after each batch's prefix sum the host waits and
        reads its daughters from the mapped counter, cuts them into batches and sizes the buffers."""
        from numba import cuda

        ws, cap, depth = self.ws, self.cap, self.problem.depth

        def process(generation, n):
            self._fate(generation, n)
            if generation == depth:
                return
            self._scan(generation, n)
            cuda.synchronize()  # the host cuts the daughters into batches and sizes the buffers
            self.synchronisations += 1
            daughters = int(ws.total[0])
            limit = min(cap, self.root_capacity * 2**(generation + 1))
            ws.frame(generation + 1, max(1, min(cap, daughters)), limit)  # a later call's sweep needs it
            if daughters > cap:
                ws.windowed = True
            window = 0
            while window < daughters:
                size = min(cap, daughters - window)
                self._scatter(generation, n, window, size)
                process(generation + 1, size)
                window += size

        self._clear()
        ws.windowed = False
        ws.frame(0, self.root_capacity, self.root_capacity)
        for first in range(0, self.problem.n_cells, cap):
            n = min(cap, self.problem.n_cells - first)
            self._roots(first, n)
            process(0, n)
        for g in range(1, depth + 1):  # generations no cell reached: small buffers for a later sweep
            if ws.frames[g] is None:
                ws.frame(g, 1, min(cap, self.root_capacity * 2**g))
        ws.sized = not ws.windowed
        return ws.counts.copy_to_host()
