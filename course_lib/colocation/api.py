"""Public entry point of Unit 8: :func:`mine`, prevalent co-location patterns, and its GPU versions.

The GPU pipeline comes in the versions of the source's optimisation story, chosen by keyword
arguments of :func:`mine` (named in :data:`VERSIONS`):

- ``preprocess="host"``: the grid, CountMap and cell-to-instance index are built with NumPy and
  copied to the device; ``"device"``: kernels build them where they are used (no copy).
- ``batched=False``: two filter launches and two small copies per candidate, and one allocation
  per candidate's buffers; ``True``: every candidate of one size in a fixed number of launches,
  with one copy each way and buffers allocated once per level.
- ``host_memory``: where host arrays are staged before upload. ``"pinned_per_upload"``: a fresh
  page-locked array for every upload (the source's first versions: pinned memory everywhere,
  every allocation taken from the operating system); ``"pinned_reused"``: one page-locked
  staging buffer, allocated once, grown only when a larger upload comes, reused by every upload;
  ``"pageable"``: ordinary (pageable) NumPy memory, no pinning (the source's last version,
  which replaced its ``cudaMallocHost`` allocations by ``malloc``). The number of page-locked
  allocations is in ``MiningResult.stats``.
"""

from __future__ import annotations

from contextlib import contextmanager
from itertools import combinations

import numpy as np

from .. import device
from .._validate import check_block, check_choice, check_flag
from ._checks import check_inputs
from ._types import LevelStats, MiningResult
from .model import _grid_for_checked, level_plan
from .reference import apriori_candidates

__all__ = ["COPIES", "FILTERS", "HOST_MEMORY", "METHODS", "SEARCHES", "VERSIONS", "LevelStats", "MiningResult",
           "check_inputs", "default_block", "mine"]

#: ``"gpu"`` (kernels, on the GPU or in the simulator), ``"cpu"`` (compiled grid-based miner,
#: all cores) and ``"reference"`` (SciPy k-d tree and Python sets).
METHODS = ("gpu", "cpu", "reference")

#: The filters of :func:`mine` (``filter=``): the lesson's two launches, or one pass without the flag matrix.
FILTERS = ("two_step", "fused")
#: The refines of :func:`mine` (``search=``): the neighbour search twice per row (the lesson's), or once.
SEARCHES = ("twice", "once")
#: The copies of a batched level in :func:`mine` (``copies=``): each phase's own (the lesson's: the candidates
#: up and the bounds down, then the plan up and the counts down), or one copy each way per level.
COPIES = ("per_phase", "per_level")

#: Where :func:`mine` stages host arrays before upload (see the module docstring).
HOST_MEMORY = ("pageable", "pinned_per_upload", "pinned_reused")

#: The source's sequence of GPU versions, as keyword arguments of :func:`mine`; v3 is the course's
#: alternative to the source's last step (pin once and reuse, instead of not pinning), shown beside it.
VERSIONS = {
    "v0: host preprocessing, per-candidate, pinned": dict(preprocess="host", batched=False,
                                                          host_memory="pinned_per_upload"),
    "v1: device preprocessing": dict(preprocess="device", batched=False, host_memory="pinned_per_upload"),
    "v2: batched filter and refine": dict(preprocess="device", batched=True, host_memory="pinned_per_upload"),
    "v3: one pinned buffer, reused": dict(preprocess="device", batched=True, host_memory="pinned_reused"),
    "v4: pageable host memory": dict(preprocess="device", batched=True, host_memory="pageable"),
}


def default_block() -> int:
    """Threads per block of the one-thread-per-item kernels: 256 on a GPU, 32 in the simulator."""
    return device.pick(sim=32, gpu=256)


def mine(points, features, r, threshold, *, n_features=None, method="gpu", max_size=None, preprocess="device",
         batched=True, host_memory="pageable", block=None, filter="two_step", search="twice",
         copies="per_phase") -> MiningResult:
    """Every prevalent co-location pattern of size >= 2 and its participation index.

    Parameters
    ----------
    points : array_like of shape (N, 2)
        Coordinates (finite).
    features : array_like of shape (N,), integer
        The feature of each point, ids in ``[0, F)``.
    r : float
        Neighbour distance (> 0): instances at distance <= r are neighbours.
    threshold : float
        Prevalence threshold on the participation index, in (0, 1].
    n_features : int, optional
        F (default: the largest id + 1).
    method : {"gpu", "cpu", "reference"}
    max_size : int, optional
        Largest pattern size searched (at most 8, the default).
    preprocess : {"device", "host"}
        GPU only: where the grid is built (see the module docstring).
    batched : bool
        GPU only: all candidates of a size at once, or one at a time.
    host_memory : {"pageable", "pinned_per_upload", "pinned_reused"}
        GPU only: where host arrays are staged before upload (see the module docstring).
    block : int, optional
        GPU only: threads per block (default :func:`default_block`).
    filter : {"two_step", "fused"}
        GPU only: the lesson's filter (a flag per candidate and quadruplet, then the bounds: two
        launches), or :func:`~course_lib.colocation._fused_kernels.fused_filter_kernel` (one launch,
        no flag matrix; the host divides the counted instances by the feature totals).
    search : {"twice", "once"}
        GPU only: the lesson's refine (each row's neighbourhood searched to count its extensions, then
        again to write them), or :func:`~course_lib.colocation._fused_kernels.extend_keep_kernel` and
        :func:`~course_lib.colocation._fused_kernels.place_kept_kernel` (the first extensions of each
        row kept in a scratch buffer by the counting search and copied to their place; only rows with
        more are searched again). Same table, same order.
    copies : {"per_phase", "per_level"}
        GPU, batched only: the lesson's copies (the filter's candidates up and bounds down, then the
        refine's plan up and participation counts down: two each way per level), or one each way per
        level (:mod:`~course_lib.colocation._per_level`: the refine planned for every candidate before
        the filter, the filter applied on the device, the survivors and their counts downloaded together,
        every participation index of the level computed with NumPy). Same kernels, same patterns.

    Returns
    -------
    MiningResult

    Examples
    --------
    >>> from course_lib import colocation
    >>> data = colocation.planted_colocations(300, 4, groups=((0, 1),), seed=1)
    >>> result = colocation.mine(data.points, data.features, 1.0, 0.5, method="cpu")
    >>> {pattern: round(pi, 3) for pattern, pi in result.patterns.items()}
    {(0, 1): 0.667}
    >>> [(level.size, level.candidates, level.after_filter, level.prevalent) for level in result.levels]
    [(2, 6, 6, 1)]
    >>> result.patterns == colocation.mine(data.points, data.features, 1.0, 0.5, method="reference").patterns
    True
    """
    points, features, r, threshold, n_features, max_size = check_inputs(points, features, r, threshold, n_features,
                                                                        max_size)
    check_choice(method, "method", METHODS)
    check_choice(preprocess, "preprocess", ("device", "host"))
    batched = check_flag(batched, "batched")
    check_choice(host_memory, "host_memory", HOST_MEMORY)
    block = default_block() if block is None else check_block(block)
    check_choice(filter, "filter", FILTERS)
    check_choice(search, "search", SEARCHES)
    check_choice(copies, "copies", COPIES)
    if copies == "per_level" and not batched:
        raise ValueError("copies='per_level' needs batched=True: one candidate at a time, every candidate has its "
                         "own copies")
    if len(features) == 0:
        return MiningResult({}, [], method)  # no instance, no pattern (and no grid to build)
    # The inputs are checked once, here: the methods below take them through their private entry points.
    if method == "reference":
        from .reference import _mine_reference_checked

        return MiningResult(_mine_reference_checked(points, features, r, threshold, n_features, max_size), [],
                            "reference")
    grid = _grid_for_checked(points, r, n_features)  # raises for a grid too fine, before any work
    if method == "cpu":
        from .cpu import _mine_cpu_checked

        return _mine_cpu_checked(points, features, r, threshold, n_features, max_size, grid)
    return _DeviceMiner(points, features, r, n_features, grid, block=block, preprocess=preprocess,
                        batched=batched, host_memory=host_memory, filter=filter, search=search,
                        copies=copies).run(threshold, max_size)


def _blocks(n, block):
    return max((n + block - 1) // block, 1)


class _DeviceMiner:
    """The GPU pipeline (also runs in the simulator). See :func:`mine` for the options."""

    def __init__(self, points, features, r, n_features, grid, *, block, preprocess, batched, host_memory,
                 filter="two_step", search="twice", copies="per_phase"):
        self.filter, self.search, self.copies = filter, search, copies
        self.points, self.features, self.r = points, features, r
        self.n_features, self.grid, self.block = n_features, grid, block
        self.preprocess, self.batched, self.host_memory = preprocess, batched, host_memory
        self.stats = {"uploads": 0, "pinned_allocations": 0, "pinned_bytes": 0, "device_requests": 0,
                      "device_allocations": 0, "device_bytes": 0, "synchronisations": 0}
        self._staging = None  # the reused page-locked buffer (bytes)
        self._buffers = {}  # name -> device buffer reused across levels (batched)
        self._total = None  # mapped counter: a scan's total, read by the host without a copy
        #: None, or phase name -> list of ``record()`` logs (set by ``profiling.phase_traffic``).
        self.phase_logs = None
        #: None, or a :class:`~course_lib.cellsim.api.PhaseClock` timing the phases (``profiling.phase_breakdown``).
        self.clock = None

    # -- helpers -------------------------------------------------------------------------------
    def _pinned(self, nbytes):
        from numba import cuda

        self.stats["pinned_allocations"] += 1
        self.stats["pinned_bytes"] += nbytes
        return cuda.pinned_array(nbytes, np.uint8)

    def _upload(self, array, into=None):
        """Copy ``array`` to the device, staged as ``host_memory`` says. Batched, ``into`` names a
        reused device buffer (1-D arrays) to copy into instead of a new allocation."""
        from numba import cuda

        array = np.ascontiguousarray(array)
        self.stats["uploads"] += 1
        if into is not None and self.batched and array.ndim == 1 and array.nbytes:
            target = self._alloc(into, array.size, array.dtype)
            target.copy_to_device(self._staged(array))
            return target
        self.stats["device_allocations"] += 1
        self.stats["device_bytes"] += array.nbytes
        return cuda.to_device(self._staged(array) if array.nbytes else array)

    def _staged(self, array):
        """``array`` itself (pageable), or a copy of it in page-locked memory."""
        if self.host_memory == "pageable":
            return array
        if self.host_memory == "pinned_per_upload":
            buffer = self._pinned(array.nbytes)
        else:  # "pinned_reused"
            if self._staging is None or self._staging.size < array.nbytes:
                # Grow (at least doubling) when an upload does not fit. The first uploads, the
                # coordinates, are about the largest, so after them this rarely happens.
                grown = 0 if self._staging is None else 2 * self._staging.size
                self._staging = self._pinned(max(array.nbytes, grown))
            buffer = self._staging
        staged = buffer[:array.nbytes].view(array.dtype).reshape(array.shape)
        staged[...] = array
        # A copy on the default stream returns once it is done, so a reused buffer is free again.
        return staged

    @contextmanager
    def _phase(self, name):
        """Time this phase (``self.clock``) and log its copies and launches in its own ``record()``
        when profiling asks for either."""
        mark = self.clock.start() if self.clock is not None else None
        if self.phase_logs is None:
            yield
        else:
            from ..sim import record

            with record() as log:
                yield
            self.phase_logs.setdefault(name, []).append(log)
        if self.clock is not None:
            self.clock.stop(name, mark)

    def _alloc(self, name, n, dtype=np.int32):
        """A device array of ``max(n, 1)`` elements. Batched, it is a view of a buffer named
        ``name`` that later levels reuse (reallocated, at least doubling, only when too small);
        one at a time, a fresh allocation, as the source's first versions made them."""
        from numba import cuda

        n = max(int(n), 1)
        self.stats["device_requests"] += 1
        current = self._buffers.get(name) if self.batched else None
        if current is None or current.size < n or current.dtype != np.dtype(dtype):
            size = max(n, 2 * current.size) if current is not None and current.dtype == np.dtype(dtype) else n
            current = cuda.device_array(size, dtype=dtype)
            self.stats["device_allocations"] += 1
            self.stats["device_bytes"] += current.nbytes
            if self.batched:
                self._buffers[name] = current
        return current[:n]

    def _zeros(self, n, dtype=np.int32, name="zeros"):
        from .kernels import fill_kernel

        d = self._alloc(name, n, dtype)
        if dtype == np.int32:
            fill_kernel[_blocks(len(d), self.block), self.block](d, np.int32(0))
        return d

    def _scan(self, d_values, n, name):
        """Exclusive prefix sum of ``d_values[:n]`` into a reused buffer, and the total.

        The last level of the scan writes the total into a mapped host counter: the host waits
        for the device (one synchronisation) and reads it, with no copy and no allocation."""
        from numba import cuda

        from ..cellsim.api import exclusive_scan

        if self._total is None:
            self._total = cuda.mapped_array(1, np.int32)
            self.stats["device_allocations"] += 1
        scan_block = max(2, self.block)
        d_out = self._alloc(f"{name}.out", n)
        if n == 0:
            return d_out, 0
        scratch, level, remaining = [], 0, n
        while True:  # block sums and their offsets, per recursion level of the scan
            remaining = _blocks(remaining, scan_block)
            scratch.append((self._alloc(f"scan.sums{level}", remaining),
                            self._alloc(f"scan.offsets{level}", remaining)))
            level += 1
            if remaining <= 1:
                break
        exclusive_scan(d_values, n, d_out, scratch, scan_block, total_out=self._total)
        cuda.synchronize()
        self.stats["synchronisations"] += 1
        return d_out, int(self._total[0])

    # -- preprocessing ---------------------------------------------------------------------------
    def _preprocess(self):
        """Device arrays of the grid; ``self.feature_count`` on the host."""
        from numba import cuda

        from . import kernels
        from .model import _count_map, cell_index, feature_local_ids

        g, n, nf = self.grid, len(self.features), self.n_features
        self.d_x = self._upload(self.points[:, 0])
        self.d_y = self._upload(self.points[:, 1])
        self.d_features = self._upload(self.features)
        if self.preprocess == "host":
            cells, start, order = cell_index(g, self.points)
            self.feature_count = np.bincount(self.features, minlength=nf).astype(np.int32)
            local = feature_local_ids(self.features, nf)
            self.d_cell_of = self._upload(cells)
            self.d_count_map = self._upload(_count_map(g, cells, self.features, nf).reshape(-1))
            self.d_cell_start = self._upload(start)
            self.d_order = self._upload(order)
            self.d_local = self._upload(local)
            return
        # One zeroed buffer for every counter: one launch instead of three.
        counters = self._zeros(g.n_cells * nf + (g.n_cells + 1) + nf + g.n_cells)
        a = g.n_cells * nf
        self.d_count_map = counters[:a]
        d_cell_count = counters[a: a + g.n_cells + 1]  # one extra zero: the scan's last entry is the total
        d_feature_count = counters[a + g.n_cells + 1: a + g.n_cells + 1 + nf]
        d_cell_fill = counters[a + g.n_cells + 1 + nf:]
        self.d_cell_of = cuda.device_array(max(n, 1), np.int32)
        self.d_local = cuda.device_array(max(n, 1), np.int32)
        self.d_order = cuda.device_array(max(n, 1), np.int32)
        if n:
            kernels.grid_count_kernel[_blocks(n, self.block), self.block](
                self.d_x, self.d_y, self.d_features, g.x0, g.y0, g.cell, np.int32(g.n_cols), np.int32(nf),
                self.d_cell_of, self.d_count_map, d_cell_count, d_feature_count, self.d_local)
        self.d_cell_start, _ = self._scan(d_cell_count, g.n_cells + 1, "cell_start")
        if n:
            kernels.scatter_by_cell_kernel[_blocks(n, self.block), self.block](
                self.d_cell_of, self.d_cell_start, d_cell_fill, self.d_order)
        self.feature_count = d_feature_count.copy_to_host()

    def _singleton_tables(self):
        """Level-1 tables: one for all features (batched) or one per feature."""
        from .kernels import singleton_table_kernel

        n = len(self.features)
        if self.batched:
            d_table = self._alloc("table1", 2 * n)
            if n:
                singleton_table_kernel[_blocks(n, self.block), self.block](self.d_features, d_table)
            return {"all": (d_table, n)}
        tables = {}
        for f in range(self.n_features):
            ids = np.flatnonzero(self.features == f).astype(np.int32)
            tables[(f,)] = (self._upload(np.column_stack([ids, np.full(len(ids), f, np.int32)]).reshape(-1)),
                            len(ids))
        return tables

    # -- filter -----------------------------------------------------------------------------------
    def _filter(self, candidates, k):
        """Upper bounds of PI, float64 of shape (C,)."""
        from . import kernels

        g, nf = self.grid, np.int32(self.n_features)
        shape = (np.int32(g.n_cols), np.int32(g.n_rows))
        groups = [candidates] if self.batched else [[c] for c in candidates]
        if self.filter == "fused":
            return np.concatenate([self._fused_filter(group, k) for group in groups])
        bounds = []
        for group in groups:
            d_cand = self._upload(np.array(group, np.int32).reshape(-1), into="candidates")
            d_qualifies = self._alloc("qualifies", len(group) * g.n_quads)
            d_bounds = self._alloc("bounds", len(group), np.float64)
            kernels.quadruplet_filter_kernel[(g.n_quads, len(group)), (k, 2, 2)](
                self.d_count_map, nf, *shape, d_cand, np.int32(k), d_qualifies)
            kernels.candidate_bound_kernel[len(group), kernels.BOUND_BLOCK](
                self.d_count_map, nf, *shape, d_cand, np.int32(k), d_qualifies, self._d_feature_count, d_bounds)
            bounds.append(d_bounds.copy_to_host())
        return np.concatenate(bounds)

    def _fused_filter(self, group, k):
        """Upper bounds of PI of one group by :func:`~course_lib.colocation._fused_kernels.fused_filter_kernel`:
        the candidates and the zeroed sums go up in one copy, the sums come back in one."""
        from ._fused_kernels import bounds_from_sums, fused_filter_kernel

        g = self.grid
        cand = np.array(group, np.int32).reshape(len(group), k)
        staged = np.concatenate([cand.reshape(-1), np.zeros(cand.size, np.int32)])
        d_staged = self._upload(staged, into="candidates")
        d_cand, d_sums = d_staged[:cand.size], d_staged[cand.size:]
        fused_filter_kernel[(_blocks(g.n_cells, self.block), len(group)), self.block](
            self.d_count_map, np.int32(self.n_features), np.int32(g.n_cols), np.int32(g.n_rows), d_cand, np.int32(k),
            d_sums)
        return bounds_from_sums(d_sums.copy_to_host(), cand, self.feature_count)

    # -- refine -----------------------------------------------------------------------------------
    def _refine(self, d_table, rows, k, candidates, parents, n_parents):
        """Extend a table of size k - 1 by the candidates; distinct participants per position.

        Returns
        -------
        d_new : device array (the table of size k, candidate ids last), its row count, and
        part_count : int32 array of shape (C, k)
        """
        from . import kernels

        common, d_seg_start, n_flags = self._level_inputs(d_table, k, candidates, parents, n_parents)
        d_counts = self._alloc("counts", rows)
        if rows:
            kernels.extend_count_kernel[_blocks(rows, self.block), self.block](*common, d_counts[:rows])
        d_offsets, total = self._scan(d_counts, rows, "offsets")
        if total * (k + 1) >= 2**31:
            raise ValueError(f"the instance table of size {k} would have {total:,} rows, too many for int32 "
                             "indices; use a smaller r or fewer instances")
        d_new = self._alloc(f"table{k % 2}", total * (k + 1))  # the level k - 1 table is the other one
        if rows:
            kernels.extend_fill_kernel[_blocks(rows, self.block), self.block](*common, d_offsets[:rows], d_new)
        return d_new, total, self._participation(d_new, total, k, d_seg_start, n_flags)

    def _refine_once(self, d_table, rows, k, candidates, parents, n_parents):
        """:meth:`_refine` (the lesson's, which it prints) with the neighbour search once per row
        (:meth:`_extend` with ``search="once"``)."""
        common, d_seg_start, n_flags = self._level_inputs(d_table, k, candidates, parents, n_parents)
        d_new, total = self._extend(common, rows, k)
        return d_new, total, self._participation(d_new, total, k, d_seg_start, n_flags)

    def _level_inputs(self, d_table, k, candidates, parents, n_parents):
        """The level's plan uploaded in one copy, and the neighbour search's arguments (the table first).

        Returns
        -------
        common : tuple
            The arguments the extension kernels share.
        d_seg_start : device int32 array of shape (C * k,)
            Where the participation flags of each candidate's positions start.
        n_flags : int
            Participation flags of the level.
        """
        g, nf = self.grid, self.n_features
        child_of, seg_start, n_flags = level_plan(candidates, parents, n_parents, nf, self.feature_count)
        plan = self._upload(np.concatenate([child_of, seg_start]), into="plan")  # one copy for the level's small arrays
        d_child_of, d_seg_start = plan[: len(child_of)], plan[len(child_of):]
        common = (d_table, np.int32(k - 1), d_child_of, np.int32(nf), self.d_x, self.d_y, self.d_features,
                  self.d_cell_of, self.d_cell_start, self.d_order, np.int32(g.n_cols), np.int32(g.n_rows),
                  self.r * self.r)
        return common, d_seg_start, n_flags

    def _participation(self, d_new, total, k, d_seg_start, n_flags):
        """The distinct participants of each candidate at each position, from the new table: int32 (C, k)."""
        from . import kernels

        n_segments = d_seg_start.shape[0]
        counters = self._zeros(n_flags + n_segments, name="participation")
        d_flags, d_part = counters[: max(n_flags, 1)], counters[n_flags: n_flags + n_segments]
        if total:
            kernels.participation_kernel[_blocks(total, self.block), self.block](
                d_new[: total * (k + 1)], np.int32(k), d_seg_start, self.d_local, d_flags, d_part)
        return d_part.copy_to_host().reshape(-1, k)

    def _extend(self, common, rows, k):
        """The instance table of size k from the one of size k - 1 (``common``: the neighbour search's
        arguments, the table first): each row's extensions counted, a prefix sum, then written, the
        neighbour search twice per row (the lesson's) or once (``search="once"``:
        :func:`~course_lib.colocation._fused_kernels.extend_keep_kernel` counts each row's extensions and
        keeps the first ones, :func:`~course_lib.colocation._fused_kernels.place_kept_kernel` copies them to
        their place after the prefix sum, searching again only rows with more).

        Returns
        -------
        d_new : device array (the table of size k, candidate ids last), and its row count
        """
        from . import kernels
        from ._fused_kernels import KEPT, extend_keep_kernel, place_kept_kernel

        once, blocks = self.search == "once", _blocks(rows, self.block)
        d_counts = self._alloc("counts", rows)
        d_kept = self._alloc("kept", rows * KEPT * (k + 1)) if once else None
        if rows and once:
            extend_keep_kernel[blocks, self.block](*common, d_counts[:rows], d_kept)
        elif rows:
            kernels.extend_count_kernel[blocks, self.block](*common, d_counts[:rows])
        d_offsets, total = self._scan(d_counts, rows, "offsets")
        if total * (k + 1) >= 2**31:
            raise ValueError(f"the instance table of size {k} would have {total:,} rows, too many for int32 "
                             "indices; use a smaller r or fewer instances")
        d_new = self._alloc(f"table{k % 2}", total * (k + 1))  # the level k - 1 table is the other one
        if rows and once:
            place_kept_kernel[blocks, self.block](*common, d_counts[:rows], d_offsets[:rows], d_kept, d_new)
        elif rows:
            kernels.extend_fill_kernel[blocks, self.block](*common, d_offsets[:rows], d_new)
        return d_new, total

    # -- the search -------------------------------------------------------------------------------
    def run(self, threshold, max_size) -> MiningResult:
        if self.copies == "per_level":
            from ._per_level import mine_per_level

            return mine_per_level(self, threshold, max_size)
        with self._phase("preprocess"):
            self._preprocess()
            self._d_feature_count = self._upload(self.feature_count.astype(np.int32))
            tables = self._singleton_tables()
        fc = self.feature_count
        present = [f for f in range(self.n_features) if fc[f] > 0]
        ids = {(f,): f for f in range(self.n_features)}  # pattern -> id in its table's last column
        n_ids = self.n_features
        candidates = [tuple(c) for c in combinations(present, 2)]
        found, levels, k = {}, [], 2
        refine = self._refine_once if self.search == "once" else self._refine
        while candidates and k <= max_size:
            with self._phase("filter"):
                bounds = self._filter(candidates, k)
            kept = [c for c, b in zip(candidates, bounds) if b >= threshold]
            prevalent, new_tables, new_ids, rows_found = [], {}, {}, 0
            if kept and self.batched:
                d_table, rows = tables["all"]
                with self._phase("refine"):
                    d_new, total, part = refine(d_table, rows, k, kept, [ids[c[:-1]] for c in kept], n_ids)
                new_tables["all"], rows_found = (d_new, total), total
                new_ids = {c: i for i, c in enumerate(kept)}
                results = zip(kept, part)
            else:
                results = []
                for cand in kept:
                    d_table, rows = tables[cand[:-1]]
                    with self._phase("refine"):
                        d_new, total, part = refine(d_table, rows, k, [cand], [ids[cand[:-1]]], n_ids)
                    new_tables[cand], new_ids[cand] = (d_new, total), 0
                    rows_found += total
                    results.append((cand, part[0]))
            for cand, counts in results:
                pi = min(counts[j] / fc[f] for j, f in enumerate(cand))
                if pi >= threshold:
                    found[cand] = float(pi)
                    prevalent.append(cand)
            levels.append(LevelStats(k, len(candidates), len(kept), len(prevalent), rows_found))
            tables, ids = new_tables, new_ids
            n_ids = len(kept) if self.batched else 1
            candidates = apriori_candidates(prevalent, k)
            k += 1
        return MiningResult(dict(sorted(found.items())), levels, "gpu", dict(self.stats))
