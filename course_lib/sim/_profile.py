"""The memory and SIMT profiler: :func:`profile`.

Taught in ``lessons/00_seeing_the_gpu.ipynb``. The launch runs in the simulator with
every array access and every executed source line observed, and the observations are
grouped into *warp-level instructions* as a GPU would issue them: the accesses of the
lanes of one warp at the same source line, the same execution count of that line by
each lane, and the same position among the accesses of that line. From them:

* global memory: requests (one per warp-level load or store) and 32-byte *sectors*
  touched (offsets from the start of each allocation, which a GPU aligns to 256 bytes):
  32 lanes reading 32 consecutive float32 = 4 sectors, with a stride of 32 elements = 32;
* shared memory: requests and *wavefronts* (32 banks of 4 bytes; lanes reading the same
  word share it - a broadcast; distinct words in one bank are served one after another).
  A request needs at least one wavefront per 128 distinct bytes (2 for 32 float64), so
  the bank-conflict degree is wavefronts / that minimum: 1 when conflict-free, whatever
  the element size (2 wavefronts per float64 request are not a 2-way conflict);
* atomics: operations, per line, and those on global arrays apart (``global_atomics``);
* shuffles: warp-level ``shfl_*_sync`` instructions (one per warp, whatever the lanes taking part);
* SIMT efficiency: active lanes per warp-level instruction / 32;
* span: the most statements any one thread ran, and the most warp-level instructions
  any one warp issued, against the totals (work one thread does serially shows here);
* barriers: block-wide ``syncthreads`` completed (per block), and ``syncwarp``;
* shared memory allocated per block (the static arrays the kernel declares, plus the
  launch's dynamic bytes).

Shared arrays are assumed to start on bank 0 (any 128-byte alignment gives the same
conflicts). The counts do not depend on the order in which threads run.
"""

from __future__ import annotations

import linecache
import os
import threading
from collections import Counter, defaultdict

import numpy as np

from . import _engine, _typing
from ._instrument import Observer, is_kernel_code, launch, py_function
from ._lines import LineCounter, counted
from ._profile_report import LineProfile, ProfileReport, _volume

__all__ = ["LineProfile", "ProfileReport", "profile"]

SECTOR_BYTES = 32
BANKS = 32
BANK_BYTES = 4
#: Bytes the 32 banks deliver in one pass.
WAVEFRONT_BYTES = BANKS * BANK_BYTES
_current_thread = threading.current_thread


class _Profiler(Observer):
    def __init__(self):
        super().__init__()
        self.counter = LineCounter()
        self.use_tracer = False
        self.threads = []
        self.mem = {}  # (space, store?, alloc, itemsize, warp, (file, line), occurrence, ordinal) -> [byte offsets]
        self.atomic_counts = {}  # (filename, line) -> count
        self.global_atomic_counts = {}  # (filename, line) -> count of those on global arrays
        self.shuffle_counts = defaultdict(int)  # (filename, line) -> warp-level shuffles
        self.stats = {}  # (filename, line) -> LineProfile
        self.blocks = {}  # grid point -> (threads, mem) of a block in flight (blocks may interleave)
        self.finished_blocks = 0
        self.max_thread = 0
        self.max_warp = 0
        self.barriers = 0
        self.block_barriers = defaultdict(int)  # grid point -> barriers of a block in flight
        self.max_block_barriers = 0
        self.syncwarps = 0
        self.warp_shares = []  # per finished block: its busiest warp's instructions over its mean per warp
        self.block_warps = []  # per finished block: (its busiest warp's instructions, its warps, its instructions)
        self.shared_static = defaultdict(int)  # grid point -> static shared bytes the block declared

    # Observation ----------------------------------------------------------------
    def resumed(self, v):
        self.current = v
        self.counter.d = v.line_count
        if self.threads is not self.blocks[v.block][0]:  # another block's thread: its accesses go to its block
            self.threads, self.mem = self.blocks[v.block]

    def thread_tracer(self, v):
        """Line tracer, only for kernels whose source could not be recompiled with counters."""
        if not self.use_tracer:
            return None
        counts = v.line_count

        def line(frame, event, arg):
            if event == "line":
                counts[(frame.f_code.co_filename, frame.f_lineno)] += 1
            return line

        def call(frame, event, arg):
            return line if is_kernel_code(frame.f_code) else None

        return call

    def access(self, array, offset, write, index, frame):
        v = self.current
        if v.in_atomic is not None:
            return  # counted as atomics
        line = self.sites.get((id(frame.f_code), frame.f_lasti)) or self.site_line(frame)
        occurrence = v.line_count.get(self.counter.statement_of.get(line, line), 0)
        # Position among the accesses of this execution of the line. (The bytecode
        # offset is no substitute: CPython reports a different one once it has
        # specialised the instruction.)
        last = v.access_count.get(line)
        ordinal = last[1] + 1 if last is not None and last[0] == occurrence else 0
        v.access_count[line] = (occurrence, ordinal)
        inst = (array.space, write, array.alloc, array.itemsize, v.warp, line, occurrence, ordinal)
        offsets = self.mem.get(inst)
        if offsets is None:
            self.mem[inst] = [offset]
        else:
            offsets.append(offset)

    def atomic(self, array, frame):
        key = self.site_line(frame)
        self.atomic_counts[key] = self.atomic_counts.get(key, 0) + 1
        if getattr(array, "space", "global") == "global":
            self.global_atomic_counts[key] = self.global_atomic_counts.get(key, 0) + 1

    def warp_operation(self, coll):
        if coll.kind.startswith("shfl"):
            self.shuffle_counts[coll.line] += 1
        elif coll.kind == "syncwarp":
            self.syncwarps += 1

    def barrier(self, waiting, threads):
        self.barriers += 1
        self.block_barriers[threads[0].block] += 1

    def shared_allocated(self, nbytes, dynamic):
        if not dynamic:  # the dynamic buffer is the launch's sharedmem, counted once
            # Each block declares its own arrays (blocks may interleave): kept per block, the largest reported.
            current = getattr(self, "current", None)
            self.shared_static[current.block if current is not None else None] += nbytes

    def block_started(self, grid_point, threads):
        for v in threads:
            v.line_count = defaultdict(int)
        self.threads, self.mem = self.blocks[threads[0].block] = (threads, {})

    # Aggregation, once per block ----------------------------------------------------
    def _row(self, filename, lineno):
        key = (filename, lineno)
        row = self.stats.get(key)
        if row is None:
            text = linecache.getline(filename, lineno).strip()
            row = self.stats[key] = LineProfile(filename, lineno, text)
        return row

    def block_finished(self, grid_point):
        # Execution k of a line by a warp is one warp-level instruction, shared by the
        # lanes that ran the line at least k times: per warp and line, the instructions
        # are the largest count of a lane, the active lanes the sum of the counts.
        self.threads, self.mem = self.blocks.pop(grid_point)
        per_warp = {}
        for v in self.threads:
            statements = 0
            for key, n in v.line_count.items():
                slot = per_warp.setdefault((v.warp, key), [0, 0])
                slot[0] = max(slot[0], n)
                slot[1] += n
                statements += n
            self.max_thread = max(self.max_thread, statements)
        warp_totals = defaultdict(int)
        for (warp, (filename, lineno)), (instructions, lanes) in per_warp.items():
            row = self._row(filename, lineno)
            row.warp_instructions += instructions
            row.active_lanes += lanes
            warp_totals[warp] += instructions
        self.max_warp = max(self.max_warp, max(warp_totals.values(), default=0))
        warps_in_block = -(-len(self.threads) // 32)
        block_total = sum(warp_totals.values())
        if block_total:
            self.warp_shares.append(max(warp_totals.values()) * warps_in_block / block_total)
            self.block_warps.append((max(warp_totals.values()), warps_in_block, block_total))
        self.finished_blocks += 1
        self.max_block_barriers = max(self.max_block_barriers, self.block_barriers.pop(grid_point, 0))
        for (space, write, _alloc, size, _warp, line, _occ, _ordinal), offsets in self.mem.items():
            row = self._row(*line)
            if space == "shared":
                row.shared_requests += 1
                row.shared_wavefronts += _wavefronts(offsets, size)
                row.shared_ideal_wavefronts += -(-len(set(offsets)) * size // WAVEFRONT_BYTES)
                continue
            sectors = _sectors(offsets, size)
            nbytes = size * len(offsets)
            if write:
                row.global_store_requests += 1
                row.global_store_sectors += len(sectors)
                row.global_store_bytes += nbytes
            else:
                row.global_load_requests += 1
                row.global_load_sectors += len(sectors)
                row.global_load_bytes += nbytes
        self.threads = []
        self.mem = {}

    def report(self, name, grid, block, sharedmem=0, typing=None, kernel_file=None, sampled=False):
        if typing is not None:  # float64/float32 operations per execution of each kernel line
            for lineno, counts in typing.float_lines.items():
                row = self.stats.get((kernel_file, lineno))
                if row is not None:
                    row.float64_ops += row.warp_instructions * counts["float64"]
                    row.float32_ops += row.warp_instructions * counts["float32"]
        for (filename, lineno), n in self.atomic_counts.items():
            key = (filename, lineno)
            if key not in self.stats:
                self.stats[key] = LineProfile(filename, lineno, linecache.getline(filename, lineno).strip())
            self.stats[key].atomics += n
            self.stats[key].global_atomics += self.global_atomic_counts.get(key, 0)
        for key, n in self.shuffle_counts.items():
            self._row(*key).shuffles += n
        lines = sorted(self.stats.values(), key=lambda r: (r.file, r.line))
        total = LineProfile(os.path.basename(lines[0].file) if lines else "", 0, "(whole kernel)")
        for row in lines:
            total.add(row)
        return ProfileReport(name, tuple(grid), tuple(block), total, lines, blocks=self.finished_blocks,
                             threads=self.finished_blocks * _volume(block), max_thread_instructions=self.max_thread,
                             max_warp_instructions=self.max_warp, barriers=self.barriers,
                             max_block_barriers=self.max_block_barriers, syncwarps=self.syncwarps,
                             warp_share=float(np.median(self.warp_shares)) if self.warp_shares else float("nan"),
                             worst_warp_share=_worst_warp_share(self.block_warps),
                             sampled=sampled,
                             shared_bytes_per_block=max(self.shared_static.values(), default=0) + int(sharedmem),
                             arms=frozenset(self.counter.arms))


def _worst_warp_share(block_warps):
    """The largest over the blocks of (busiest warp's instructions) x (warps) / (the block's instructions, or the
    upper median block's where that is more): a block doing less than the median block's work (a partial last
    block, whose idle warps are no sign of one warp doing the others' work) is measured against the median one."""
    if not block_warps:
        return float("nan")
    totals = sorted(total for _, _, total in block_warps)
    median = totals[len(totals) // 2]
    return float(max(busiest * warps / max(total, median) for busiest, warps, total in block_warps))


def _sectors(offsets, size):
    """The 32-byte sectors that ``size``-byte elements at ``offsets`` touch."""
    sectors = {off // SECTOR_BYTES for off in offsets}
    if size > 1:
        last = size - 1
        if size <= SECTOR_BYTES + 1:  # each element's first and last sector are all it touches
            sectors.update([(off + last) // SECTOR_BYTES for off in offsets])
        else:
            for off in offsets:
                sectors.update(range(off // SECTOR_BYTES, (off + last) // SECTOR_BYTES + 1))
    return sectors


def _wavefronts(offsets, size):
    """Passes the 32 banks need to serve one warp-level shared access of ``size``-byte elements."""
    # The distinct words touched (each element's first and last, and any between), then how many fall in
    # each bank: the busiest bank sets the passes.
    last = size - 1
    firsts = [off // BANK_BYTES for off in offsets]
    words = set(firsts)
    if last:
        ends = [(off + last) // BANK_BYTES for off in offsets]
        words.update(ends)
        if size > BANK_BYTES + 1:  # an element may span more than two words
            for first, end in zip(firsts, ends):
                if end - first > 1:
                    words.update(range(first + 1, end))
    return max(Counter([word % BANKS for word in words]).values(), default=0)


def profile(kernel, griddim, blockdim, *args, sharedmem=0, blocks=None):
    """Run one launch in the simulator and count what a GPU profiler would show.

    Parameters
    ----------
    kernel : @cuda.jit kernel (simulator or GPU) or its Python function
    griddim, blockdim : int or tuple of int
    *args
        The kernel arguments (NumPy arrays are copied in and back, as in a launch).
    sharedmem : int
        Bytes of dynamic shared memory.
    blocks : sequence of int or tuple of int, optional
        Profile only these blocks of the grid (an int is the x index of a block of a 1-D grid, a
        tuple ``(x, y[, z])``): the others do not run, so a large launch costs only its sample. The
        per-block figures (barriers, shared bytes, sectors per request, warp share) are the sample's;
        the outputs are written only where the sampled blocks write. Refused for a kernel that syncs
        its grid (its blocks depend on each other).

    Returns
    -------
    ProfileReport
        ``.total`` for the kernel, ``.lines`` per source line, ``.line(text)`` to find
        one: global requests and sectors per request, shared requests and bank-conflict
        degree, atomics, shuffles, SIMT efficiency; for the launch, the span
        (``max_thread_instructions``, ``thread_span``...), barriers and shared bytes per block.

    Examples
    --------
    >>> report = profile(copy_kernel, 1, 32, x, out)          # doctest: +SKIP
    >>> report.line("out[i] = x[i]").load_sectors_per_request  # doctest: +SKIP
    4.0
    """
    from .. import device

    if device.is_gpu():
        from .remote import run_remote

        options = dict(sharedmem=sharedmem) if blocks is None else dict(sharedmem=sharedmem, blocks=blocks)
        return run_remote("profile", kernel, griddim, blockdim, args, options)
    profiler = _Profiler()
    fn = py_function(kernel)
    if blocks is not None:
        blocks = [b if isinstance(b, (int, np.integer)) else tuple(b) for b in blocks]
        if _engine._uses_grid_sync(fn):
            raise ValueError(f"{fn.__name__} syncs its grid (this_grid().sync()): its blocks depend on each other, "
                             "so a sample of them cannot be profiled alone; profile the whole grid")
    devices = _device_functions(fn)
    copies = {dev: counted(dev.fn, profiler.counter, _engine.tick) for dev in devices}
    counted_kernel = counted(fn, profiler.counter, _engine.tick)
    if counted_kernel is None or any(copy is None for copy in copies.values()):
        counted_kernel, copies, profiler.use_tracer = fn, {}, True  # source unavailable: trace lines instead
    originals = {dev: dev.fn for dev in copies}
    with _engine.launch_lock:  # no other host thread's launch may call the counting copies
        try:
            for dev, copy in copies.items():
                dev.fn = copy
            grid, block = launch(counted_kernel, griddim, blockdim, args, profiler, sharedmem=sharedmem, blocks=blocks)
        finally:
            for dev, original in originals.items():
                dev.fn = original
    return profiler.report(fn.__name__, grid, block, sharedmem, _typing.float_ops(fn, args), fn.__code__.co_filename,
                           sampled=blocks is not None)


def _device_functions(fn):
    """The simulator device functions ``fn`` can call, directly or through other ones."""
    from numba.cuda.simulator.kernel import FakeCUDAKernel

    found, todo = [], [fn]
    while todo:
        f = todo.pop()
        code = f.__code__
        names = [f.__globals__.get(name) for name in code.co_names]
        names += [cell.cell_contents for cell in (f.__closure__ or ()) if _has_contents(cell)]
        for obj in names:
            if isinstance(obj, FakeCUDAKernel) and obj._device and obj not in found:
                found.append(obj)
                todo.append(obj.fn)
    return found


def _has_contents(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True
