"""What :func:`course_lib.sim.profile` returns: counts per source line and for the whole kernel.

:class:`LineProfile` holds one line's counts and the ratios derived from them (sectors per
request, bank-conflict degree, SIMT efficiency); :class:`ProfileReport` one launch's lines and
total, shown as a table (text, or HTML in a notebook). How the counts are made:
:mod:`course_lib.sim._profile`.
"""

from __future__ import annotations

import html
from dataclasses import asdict, dataclass, field, fields

__all__ = ["LineProfile", "ProfileReport"]


def _volume(dims):
    """Threads in a block (or blocks in a grid) of dimensions ``dims``."""
    n = 1
    for d in dims:
        n *= int(d)
    return n


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
        Atomic operations (one per lane), on global and shared arrays.
    global_atomics : int
        Those of them on global arrays (the ones that travel to the memory system).
    shuffles : int
        Warp-level shuffle instructions (``shfl_*_sync``; one per warp and execution).
    float64_ops, float32_ops : int
        Warp-level floating-point operations (arithmetic and ``math`` calls) in float64 and
        in float32, as numba types the kernel for a GPU (:mod:`course_lib.sim._typing`): the
        line's executions times its operations of that precision. Lines of the kernel itself
        (device functions are not typed on their own).
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
    global_atomics: int = 0
    shuffles: int = 0
    float64_ops: int = 0
    float32_ops: int = 0

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
    ("fp64 ops", "float64_ops", "{}"),
    ("fp32 ops", "float32_ops", "{}"),
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
    blocks : int
        Blocks that ran.
    threads : int
        Threads launched (blocks x threads per block), those that exit early included.
    max_thread_instructions : int
        The most statements (line executions) one thread ran: the serial path of the launch.
    max_warp_instructions : int
        The most warp-level instructions one warp issued.
    barriers : int
        Block-wide barriers (``syncthreads`` and its ``_count/_and/_or`` forms) completed, all
        blocks together; ``max_block_barriers`` the most in one block.
    syncwarps : int
        Warp-level ``syncwarp`` completed (one per warp and execution).
    warp_share : float
        Over the blocks that ran, the median of (the block's busiest warp's instructions over the
        mean per warp of that block, a partial last warp counted whole): about 1 when a block's warps
        share its work, up to its number of warps when one warp does the block's work while the
        others wait (nan if nothing ran).
    worst_warp_share : float
        The same ratio in the worst block that ran, each block's mean per warp taken over its own
        instructions or, where that is less, over those of the launch's median block (the upper one of
        an even count): a partial last block's idle warps do not raise it, and one warp doing the
        block's work raises it in any one block that ran, where the median can hide it (nan if nothing
        ran). What the graders judge.
    sampled : bool
        Only a sample of the grid's blocks ran (``profile(..., blocks=...)``): the counts are those
        of the sample, ``blocks`` its size.
    shared_bytes_per_block : int
        Bytes of shared memory a block allocates: the static ``cuda.shared.array`` the kernel
        declared (each source line once, as the compiler allocates them) plus ``sharedmem``.
    arms : frozenset of (str, int, int, int, int)
        ``(file, line, column, end line, end column)`` of every arm of a conditional expression
        (``a if c else b``, an operand of ``and``/``or`` after the first) that some thread evaluated, in
        the kernel and its device functions (:func:`course_lib.sim._lines.arm_key`; empty where the source could not be read).
    """

    kernel: str
    griddim: tuple
    blockdim: tuple
    total: LineProfile
    lines: list
    blocks: int = 0
    threads: int = 0
    max_thread_instructions: int = 0
    max_warp_instructions: int = 0
    barriers: int = 0
    max_block_barriers: int = 0
    syncwarps: int = 0
    warp_share: float = float("nan")
    worst_warp_share: float = float("nan")
    sampled: bool = False
    shared_bytes_per_block: int = 0
    arms: frozenset = field(default_factory=frozenset, repr=False)

    @property
    def thread_span(self) -> float:
        """The busiest thread's statements over the mean per launched thread: about 1 when the
        work is spread evenly, up to the number of threads when one thread does it all (nan if
        nothing ran)."""
        total = self.total.active_lanes
        return self.max_thread_instructions * self.threads / total if total else float("nan")

    @property
    def warp_span(self) -> float:
        """The busiest warp's instructions over the mean per warp (warps of the launch, partial ones
        counted whole): about 1 when warps share the work evenly (nan if nothing ran)."""
        total = self.total.warp_instructions
        return self.max_warp_instructions * self.warps / total if total else float("nan")

    @property
    def warps(self) -> int:
        """Warps launched (a partial last warp of a block counts as one)."""
        per_block = -(-_volume(self.blockdim) // 32)
        return self.blocks * per_block

    @property
    def barriers_per_block(self) -> float:
        """Block-wide barriers per block (nan if no block ran)."""
        return self.barriers / self.blocks if self.blocks else float("nan")

    def launch_metrics(self) -> dict:
        """The launch-wide counts and ratios (span, barriers, shared bytes) as a plain dict."""
        out = {f.name: getattr(self, f.name) for f in fields(self)[5:] if f.name != "arms"}
        for name in ("thread_span", "warp_span", "warps", "barriers_per_block"):  # warp_share is a field
            out[name] = getattr(self, name)
        out["threads_per_block"] = _volume(self.blockdim)
        return out

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
