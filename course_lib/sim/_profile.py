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
* atomics: operations, per line;
* shuffles: warp-level ``shfl_*_sync`` instructions (one per warp, whatever the lanes taking part);
* SIMT efficiency: active lanes per warp-level instruction / 32.

Shared arrays are assumed to start on bank 0 (any 128-byte alignment gives the same
conflicts). The counts do not depend on the order in which threads run.
"""

from __future__ import annotations

import html
import linecache
import os
import threading
from collections import defaultdict
from dataclasses import asdict, dataclass, fields

from . import _engine
from ._instrument import Observer, is_kernel_code, launch, py_function
from ._lines import LineCounter, counted

__all__ = ["LineProfile", "ProfileReport", "profile"]

SECTOR_BYTES = 32
BANKS = 32
BANK_BYTES = 4
#: Bytes the 32 banks deliver in one pass.
WAVEFRONT_BYTES = BANKS * BANK_BYTES
_current_thread = threading.current_thread


@dataclass
class LineProfile:
    """Counts of one source line (or, for :attr:`ProfileReport.total`, of the whole kernel).

    Attributes
    ----------
    file : str
    line : int
        0 for the kernel total.
    source : str
    warp_instructions : int
        Warp-level executions of the line.
    active_lanes : int
        Sum over those executions of the lanes taking part.
    global_load_requests, global_load_sectors : int
    global_store_requests, global_store_sectors : int
    global_load_bytes, global_store_bytes : int
        Bytes the threads asked for (each lane's access counted on its own, as a
        count of loads written in the code would), whatever the sectors moved.
    shared_requests, shared_wavefronts : int
        Loads and stores to shared memory, and the passes the banks need for them.
    shared_ideal_wavefronts : int
        The fewest passes those requests could take: one per 128 distinct bytes each
        (1 for 32 float32, 2 for 32 float64).
    atomics : int
        Atomic operations (one per lane).
    shuffles : int
        Warp-level shuffle instructions (``shfl_*_sync``; one per warp and execution).
    """

    file: str
    line: int
    source: str
    warp_instructions: int = 0
    active_lanes: int = 0
    global_load_requests: int = 0
    global_load_sectors: int = 0
    global_store_requests: int = 0
    global_store_sectors: int = 0
    global_load_bytes: int = 0
    global_store_bytes: int = 0
    shared_requests: int = 0
    shared_wavefronts: int = 0
    shared_ideal_wavefronts: int = 0
    atomics: int = 0
    shuffles: int = 0

    @property
    def simt_efficiency(self) -> float:
        """Active lanes per warp-level instruction / 32 (nan if the line never ran)."""
        return self.active_lanes / (32 * self.warp_instructions) if self.warp_instructions else float("nan")

    @property
    def global_requests(self) -> int:
        return self.global_load_requests + self.global_store_requests

    @property
    def global_sectors(self) -> int:
        return self.global_load_sectors + self.global_store_sectors

    @property
    def sectors_per_request(self) -> float:
        """Global sectors per request, loads and stores together (4 is ideal for float32)."""
        return self.global_sectors / self.global_requests if self.global_requests else float("nan")

    @property
    def load_sectors_per_request(self) -> float:
        r = self.global_load_requests
        return self.global_load_sectors / r if r else float("nan")

    @property
    def store_sectors_per_request(self) -> float:
        r = self.global_store_requests
        return self.global_store_sectors / r if r else float("nan")

    @property
    def shared_wavefronts_per_request(self) -> float:
        """Shared-memory wavefronts per request (2 for conflict-free float64 requests)."""
        return self.shared_wavefronts / self.shared_requests if self.shared_requests else float("nan")

    @property
    def bank_conflict_degree(self) -> float:
        """Wavefronts over the fewest the requests could take: 1 = no conflict, 32 = fully
        serialised (for any element size)."""
        return self.shared_wavefronts / self.shared_ideal_wavefronts if self.shared_ideal_wavefronts else float("nan")

    def add(self, other: "LineProfile"):
        for f in fields(self)[3:]:
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def as_dict(self) -> dict:
        """The counts and the derived ratios as a plain dict."""
        out = asdict(self)
        for name in ("simt_efficiency", "sectors_per_request", "load_sectors_per_request",
                     "store_sectors_per_request", "shared_wavefronts_per_request", "bank_conflict_degree"):
            out[name] = getattr(self, name)
        return out


_COLUMNS = (
    ("line", "line", "{}"),
    ("warp instr", "warp_instructions", "{}"),
    ("SIMT eff", "simt_efficiency", "{:.2f}"),
    ("gld req", "global_load_requests", "{}"),
    ("gld sect/req", "load_sectors_per_request", "{:.1f}"),
    ("gst req", "global_store_requests", "{}"),
    ("gst sect/req", "store_sectors_per_request", "{:.1f}"),
    ("shared req", "shared_requests", "{}"),
    ("shd wavefr/req", "shared_wavefronts_per_request", "{:.1f}"),
    ("bank confl (x ideal)", "bank_conflict_degree", "{:.1f}"),
    ("atomics", "atomics", "{}"),
    ("shuffles", "shuffles", "{}"),
)


def _cell(row, attr, fmt):
    value = getattr(row, attr)
    if isinstance(value, float) and value != value:
        return "-"
    return fmt.format(value)


@dataclass
class ProfileReport:
    """What :func:`profile` measured in one launch.

    Attributes
    ----------
    kernel : str
    griddim, blockdim : tuple of int
    total : LineProfile
        The whole kernel.
    lines : list of LineProfile
        One per source line that ran, in file and line order.
    """

    kernel: str
    griddim: tuple
    blockdim: tuple
    total: LineProfile
    lines: list

    def line(self, text: str) -> LineProfile:
        """The profile of the first executed statement line whose source contains ``text``.

        Only lines of statements that ran are searched (never a docstring or a comment).

        Raises
        ------
        ValueError
            If no line that ran contains it.
        """
        for row in self.lines:
            ran = row.warp_instructions or row.global_requests or row.shared_requests or row.atomics or row.shuffles
            if ran and text in row.source:
                return row
        raise ValueError(f"no executed line of {self.kernel} contains {text!r}")

    def rows(self) -> list:
        """Every line (then the total) as dicts, for tables and plots."""
        return [row.as_dict() for row in self.lines] + [self.total.as_dict()]

    def __str__(self):
        header = [name for name, _, _ in _COLUMNS] + ["source"]
        table = [header]
        for row in self.lines + [self.total]:
            cells = [_cell(row, attr, fmt) for _, attr, fmt in _COLUMNS]
            cells[0] = str(row.line) if row.line else "total"
            table.append(cells + [row.source])
        widths = [max(len(r[k]) for r in table) for k in range(len(header) - 1)]
        text = [f"profile {self.kernel}[{self.griddim}, {self.blockdim}]"]
        for r in table:
            text.append("  ".join(c.rjust(w) for c, w in zip(r, widths)) + "  " + r[-1])
        return "\n".join(text)

    def _repr_html_(self):
        head = "".join(f"<th>{html.escape(name)}</th>" for name, _, _ in _COLUMNS) + "<th>source</th>"
        body = ""
        for row in self.lines + [self.total]:
            cells = [_cell(row, attr, fmt) for _, attr, fmt in _COLUMNS]
            cells[0] = str(row.line) if row.line else "<b>total</b>"
            body += "<tr>" + "".join(f"<td>{c}</td>" for c in cells)
            body += f"<td style='text-align:left'><code>{html.escape(row.source)}</code></td></tr>"
        title = html.escape(f"profile {self.kernel}[{self.griddim}, {self.blockdim}]")
        return f"<p>{title}</p><table><tr>{head}</tr>{body}</table>"


class _Profiler(Observer):
    def __init__(self):
        super().__init__()
        self.counter = LineCounter()
        self.use_tracer = False
        self.threads = []
        self.mem = {}  # (space, store?, alloc, itemsize, warp, (file, line), occurrence, ordinal) -> [byte offsets]
        self.atomic_counts = {}  # (filename, line) -> count
        self.shuffle_counts = defaultdict(int)  # (filename, line) -> warp-level shuffles
        self.stats = {}  # (filename, line) -> LineProfile

    # Observation ----------------------------------------------------------------
    def resumed(self, v):
        self.current = v
        self.counter.d = v.line_count

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

    def warp_operation(self, coll):
        if coll.kind.startswith("shfl"):
            self.shuffle_counts[coll.line] += 1

    def block_started(self, grid_point, threads):
        for v in threads:
            v.line_count = defaultdict(int)
        self.threads = threads
        self.mem = {}

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
        per_warp = {}
        for v in self.threads:
            for key, n in v.line_count.items():
                slot = per_warp.setdefault((v.warp, key), [0, 0])
                slot[0] = max(slot[0], n)
                slot[1] += n
        for (_warp, (filename, lineno)), (instructions, lanes) in per_warp.items():
            row = self._row(filename, lineno)
            row.warp_instructions += instructions
            row.active_lanes += lanes
        for (space, write, _alloc, size, _warp, line, _occ, _ordinal), offsets in self.mem.items():
            row = self._row(*line)
            if space == "shared":
                row.shared_requests += 1
                row.shared_wavefronts += _wavefronts(offsets, size)
                row.shared_ideal_wavefronts += -(-len(set(offsets)) * size // WAVEFRONT_BYTES)
                continue
            sectors = {s for off in offsets for s in range(off // SECTOR_BYTES, (off + size - 1) // SECTOR_BYTES + 1)}
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

    def report(self, name, grid, block):
        for (filename, lineno), n in self.atomic_counts.items():
            key = (filename, lineno)
            if key not in self.stats:
                self.stats[key] = LineProfile(filename, lineno, linecache.getline(filename, lineno).strip())
            self.stats[key].atomics += n
        for key, n in self.shuffle_counts.items():
            self._row(*key).shuffles += n
        lines = sorted(self.stats.values(), key=lambda r: (r.file, r.line))
        total = LineProfile(os.path.basename(lines[0].file) if lines else "", 0, "(whole kernel)")
        for row in lines:
            total.add(row)
        return ProfileReport(name, tuple(grid), tuple(block), total, lines)


def _wavefronts(offsets, size):
    """Passes the 32 banks need to serve one warp-level shared access of ``size``-byte elements."""
    words_per_bank = {}
    for off in offsets:
        for word in range(off // BANK_BYTES, (off + size - 1) // BANK_BYTES + 1):
            words_per_bank.setdefault(word % BANKS, set()).add(word)
    return max(map(len, words_per_bank.values()), default=0)


def profile(kernel, griddim, blockdim, *args, sharedmem=0):
    """Run one launch in the simulator and count what a GPU profiler would show.

    Parameters
    ----------
    kernel : @cuda.jit kernel (simulator or GPU) or its Python function
    griddim, blockdim : int or tuple of int
    *args
        The kernel arguments (NumPy arrays are copied in and back, as in a launch).
    sharedmem : int
        Bytes of dynamic shared memory.

    Returns
    -------
    ProfileReport
        ``.total`` for the kernel, ``.lines`` per source line, ``.line(text)`` to find
        one: global requests and sectors per request, shared requests and bank-conflict
        degree, atomics, shuffles, SIMT efficiency.

    Examples
    --------
    >>> report = profile(copy_kernel, 1, 32, x, out)          # doctest: +SKIP
    >>> report.line("out[i] = x[i]").load_sectors_per_request  # doctest: +SKIP
    4.0
    """
    from .. import device

    if device.is_gpu():
        from .remote import run_remote

        return run_remote("profile", kernel, griddim, blockdim, args, dict(sharedmem=sharedmem))
    profiler = _Profiler()
    fn = py_function(kernel)
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
            grid, block = launch(counted_kernel, griddim, blockdim, args, profiler, sharedmem=sharedmem)
        finally:
            for dev, original in originals.items():
                dev.fn = original
    return profiler.report(fn.__name__, grid, block)


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
