"""The race, barrier and bounds checker: :func:`check`.

Taught in ``lessons/00_seeing_the_gpu.ipynb``. The launch runs in the simulator with
every array access observed (see :mod:`course_lib.sim._instrument`); the checker keeps,
for each memory element, the last write and the reads since, with the *barrier
interval* of each (the number of ``syncthreads`` the thread had passed) and the
thread's ``syncwarp`` vector clock. Two accesses to one element conflict when at least
one writes, they come from different threads, not both are atomics, and nothing
orders them:

* shared memory: same barrier interval of the block, and, for two lanes of one warp,
  no ``syncwarp`` whose mask names both between them (a partial-mask syncwarp orders
  only the lanes of its mask);
* global memory: the same, or different blocks (blocks are never ordered within a
  launch);
* an atomic is exempt only against other atomics: a plain access and an atomic to the
  same element in one barrier interval race (zeroing a shared histogram, then
  ``atomic.add`` into it without a barrier between).

All dynamic shared arrays (``cuda.shared.array(0, ...)``) are views of one buffer.
Besides races it reports barriers not reached by the whole block, indices outside an
array, negative indices (Numba wraps them, on a GPU too: ``x[i - 1]`` at ``i = 0``
silently reads the other end of the array, unlike CUDA C), reads of device memory that
was never written (``cuda.device_array`` content, as compute-sanitizer's initcheck),
and warp misuse (an alive lane that never reaches a warp operation of its mask, a
shuffle reading a lane that does not take part).
"""

from __future__ import annotations

import html
import linecache
import os
from dataclasses import dataclass, field

from . import _engine, _typing
from ._instrument import Observer, launch, py_function

__all__ = ["CheckReport", "Problem", "check"]

KINDS = ("race", "barrier", "out-of-bounds", "negative-index", "uninitialized", "warp")


def _where(filename, lineno):
    """'kernels.py:12', or for code typed in a notebook cell 'Cell In[3], line 5' as IPython's tracebacks say."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
        label = shell.compile.format_code_name(filename) if shell is not None else None
    except (ImportError, AttributeError):  # no IPython, or one without format_code_name
        label = None
    if label:
        return f"{label[0]} {label[1]}, line {lineno}"
    return f"{os.path.basename(filename)}:{lineno}"


def _source(line):
    """'file:line: code' for a (filename, lineno) pair."""
    if line is None:
        return "?"
    filename, lineno = line
    text = linecache.getline(filename, lineno).strip()
    return f"{_where(filename, lineno)}: {text}" if text else _where(filename, lineno)


def _thread(v):
    return tuple(v.blockIdx), tuple(v.threadIdx)


@dataclass
class Problem:
    """One kind of defect found by :func:`check`, with its first occurrence.

    Attributes
    ----------
    kind : {"race", "barrier", "out-of-bounds", "negative-index", "uninitialized", "warp", "float64"}
        ("float64" only in :attr:`CheckReport.performance`)
    message : str
        One sentence saying what happens.
    array : str or None
        The kernel parameter or shared array involved.
    space : {"global", "shared"} or None
    index : tuple of int or None
        The element (for a race or an out-of-bounds access).
    threads : list of ((int, int, int), (int, int, int))
        (blockIdx, threadIdx) of the threads involved (two for a race).
    lines : list of str
        The source lines involved, as ``file:line: code``.
    count : int
        How many times the same defect (same kind, array and lines) occurred.
    """

    kind: str
    message: str
    array: str | None = None
    space: str | None = None
    index: tuple | None = None
    threads: list = field(default_factory=list)
    lines: list = field(default_factory=list)
    count: int = 1

    def __str__(self):
        where = "\n".join(f"    {line}" for line in self.lines)
        times = f" ({self.count} occurrences)" if self.count > 1 else ""
        return f"[{self.kind}] {self.message}{times}\n{where}" if where else f"[{self.kind}] {self.message}{times}"


@dataclass
class CheckReport:
    """What :func:`check` found in one launch.

    Attributes
    ----------
    kernel : str
    griddim, blockdim : tuple of int
    problems : list of Problem
        One entry per distinct defect (kind, array, source lines), in order of discovery.
    seed : int or None
        The seed that shuffled the order of blocks and threads, if any.
    performance : list of Problem
        Lines that compute in float64 on a GPU in a kernel whose arrays are float32 (kind
        ``"float64"``, with the fix). They do not make the report fail: the results are what
        the GPU computes, only slower (float64 runs at 1/64 of the float32 rate on most GPUs).
    """

    kernel: str
    griddim: tuple
    blockdim: tuple
    problems: list
    seed: int | None = None
    performance: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems

    def kinds(self) -> set:
        """The kinds of the problems found."""
        return {p.kind for p in self.problems}

    def __bool__(self):
        return self.ok

    def __str__(self):
        head = f"check {self.kernel}[{self.griddim}, {self.blockdim}]"
        if self.seed is not None:
            head += f" (order shuffled, seed {self.seed})"
        slow = "".join(f"\nperformance: {p}" for p in self.performance)
        if self.ok:
            return f"{head}: no races, barrier, bounds, initialization or warp problems found.{slow}"
        body = "\n".join(str(p) for p in self.problems)
        return f"{head}: {len(self.problems)} problem(s)\n{body}{slow}"

    def _repr_html_(self):
        head = html.escape(str(self).splitlines()[0])
        slow = "".join(f"<p><b>performance</b> <pre>{html.escape(str(p))}</pre></p>" for p in self.performance)
        if self.ok:
            return f"<p><b>OK</b> {head}</p>{slow}"  # plain marks: emoji need a font students may lack
        rows = "".join(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td><pre>{}</pre></td><td>{}</td></tr>".format(
                html.escape(p.kind), html.escape(p.message), html.escape(str(p.array or "")),
                html.escape("\n".join(p.lines)), p.count,
            )
            for p in self.problems
        )
        return (
            f"<p><b>FAIL</b> {head}</p><table><tr><th>kind</th><th>what</th><th>array</th><th>lines</th>"
            f"<th>times</th></tr>{rows}</table>{slow}"
        )


class _Checker(Observer):
    initcheck = True  # track writes into never-written device memory (see _instrument.launch)

    def __init__(self):
        super().__init__()
        self.problems = {}
        self.global_shadow = {}
        self.shared_shadows = {}  # block -> shadow of its shared memory (blocks may interleave)
        self.exited = {}  # block -> its threads that have exited
        # The PTX memory model's release/acquire between threads (PTX ISA 8.x, "Memory Consistency Model":
        # a fence followed by a strong write is a release pattern; an atomic that reads what a release
        # wrote synchronises with it). Vector clocks, sparse: nothing is kept until a thread fences.
        self.sync_clock = {}  # thread -> its clock (bumped at each fence); accesses record it
        self.knows = {}  # thread -> {thread: clock}: accesses of others ordered before this thread's next ones
        self.fenced = {}  # thread -> (clock at its last fence, block or None for a GPU-scope fence, knows then)
        self.released = {}  # (alloc, offset) of an atomic location -> {thread: clock} released there

    def _add(self, key, make):
        problem = self.problems.get(key)
        if problem is None:
            self.problems[key] = make()
        else:
            problem.count += 1

    # Memory -------------------------------------------------------------------
    def access(self, array, offset, write, index, frame):
        v = self.current
        atomic = v.in_atomic
        if atomic is not None:
            frame = atomic  # the kernel's frame calling the atomic, not the simulator's
        line = self.sites.get((id(frame.f_code), frame.f_lasti)) or self.site_line(frame)
        if array.uninit is not None:
            self._initcheck(array, offset, write, index, line)
        key = (array.alloc, offset)
        knows = None
        if self.sync_clock:  # a thread has fenced in this launch: the memory model's orderings count
            clock = self.sync_clock.get(v, 0)
            if atomic is not None:
                fence = self.fenced.get(v)
                if fence is not None:
                    clock = fence[0]  # the atomic is the release's own write
                self._synchronise(v, key, fence)
            knows = self.knows.get(v)
        else:
            clock = 0
        rec = (v, v.epoch, v.clock, line, index, write, atomic is not None, v.grid_epoch, clock)
        shadow = self.shared_shadows[v.block] if array.space == "shared" else self.global_shadow
        if array.bytewise:  # views of several widths reach this memory: compared byte by byte
            self._access_bytes(array, offset, rec, shadow, knows)
            return
        state = shadow.get(key)
        if state is None:
            shadow[key] = [rec, {}] if write else [None, {v: rec}]
            return
        last_write, reads = state
        if last_write is not None:
            writer = last_write[0]
            # _unordered(last_write, rec), inlined: this runs at every access.
            if writer is not v and not (atomic is not None and last_write[6]) and ((
                    writer.block is not v.block and last_write[7] == rec[7]) or (writer.block is v.block and
                    last_write[1] == rec[1] and (writer.warp != v.warp or v.seen.get(writer.lane, 0) < last_write[2]))) \
                    and not (knows and knows.get(writer, -1) >= last_write[8]):
                self._race(array, last_write, rec)
        if write:
            for read in reads.values():
                if read[0] is not v and not (atomic is not None and read[6]) and _unordered(read, rec) \
                        and not (knows and knows.get(read[0], -1) >= read[8]):
                    self._race(array, read, rec)
            state[0] = rec
            state[1] = {}
        else:
            reads[v] = rec

    def _access_bytes(self, array, offset, rec, shadow, knows):
        """:meth:`access` of memory reached through views of several widths (dynamic shared memory, record
        fields): each byte of the access has its own history, keyed ``(alloc, byte, None)``, so a float32
        written at bytes 0-3 races with an int8 read of byte 2 and two fields of one record do not race.
        One report per access, whichever bytes conflict."""
        v, write, atomic = rec[0], rec[5], rec[6]
        raced = {}
        alloc = array.alloc
        for byte in range(offset, offset + array.itemsize):
            key = (alloc, byte, None)
            state = shadow.get(key)
            if state is None:
                shadow[key] = [rec, {}] if write else [None, {v: rec}]
                continue
            last_write, reads = state
            if last_write is not None and last_write[0] is not v and not (atomic and last_write[6]) \
                    and _unordered(last_write, rec) and not (knows and knows.get(last_write[0], -1) >= last_write[8]):
                raced.setdefault(last_write[3], last_write)
            if write:
                for read in reads.values():
                    if read[0] is not v and not (atomic and read[6]) and _unordered(read, rec) \
                            and not (knows and knows.get(read[0], -1) >= read[8]):
                        raced.setdefault(read[3], read)
                state[0] = rec
                state[1] = {}
            else:
                reads[v] = rec
        for first in raced.values():
            self._race(array, first, rec)

    # Memory model -------------------------------------------------------------
    def fence(self, scope_block=False):
        """Thread :attr:`current` executes ``cuda.threadfence()`` (or ``_block``/``_system``): its accesses
        so far are released by its later atomics (PTX ISA, "Memory Consistency Model", release pattern)."""
        v = self.current
        clock = self.sync_clock.get(v, 0)
        knows = self.knows.get(v)
        self.fenced[v] = (clock, v.block if scope_block else None, dict(knows) if knows else None)
        self.sync_clock[v] = clock + 1

    def _synchronise(self, v, key, fence):
        """An atomic of ``v`` on location ``key``: it acquires what was released there (an atomic reading a
        released value synchronises with the release; read-modify-writes continue the release sequence),
        then releases ``v``'s accesses up to its last fence."""
        released = self.released.get(key)
        if released:
            knows = self.knows.get(v)
            if knows is None:
                knows = self.knows[v] = {}
            for (thread, scope), clock in released.items():
                if thread is not v and (scope is None or scope is v.block) and knows.get(thread, -1) < clock:
                    knows[thread] = clock
        if fence is not None:
            clock, scope, known = fence
            released = self.released.setdefault(key, {})
            if known:
                for thread, c in known.items():
                    if released.get((thread, scope), -1) < c:
                        released[(thread, scope)] = c
            if released.get((v, scope), -1) < clock:
                released[(v, scope)] = clock

    def _initcheck(self, array, offset, write, index, line):
        written = array.uninit
        if write:
            written[offset:offset + array.itemsize] = True
            return
        if written[offset:offset + array.itemsize].all():
            return
        v = self.current
        index = tuple(int(i) for i in (index if isinstance(index, tuple) else (index,)))

        def make():
            return Problem(
                "uninitialized",
                f"thread {tuple(v.threadIdx)} of block {tuple(v.blockIdx)} reads {array.name}{list(index)}, device "
                "memory never written since it was allocated (cuda.device_array content is garbage on a GPU)",
                array.name, array.space, index, [_thread(v)], [_source(line)],
            )

        self._add(("uninitialized", array.name, line), make)

    def _race(self, array, first, second):
        what = {(True, True): "write-write", (True, False): "write-read", (False, True): "read-write"}[
            (first[5], second[5])
        ]
        lines = [first[3], second[3]]

        def make():
            t1, t2 = _thread(first[0]), _thread(second[0])
            index = second[4] if isinstance(second[4], tuple) else (second[4],)
            index = tuple(int(i) for i in index)
            if t1[0] != t2[0]:
                why = ("different blocks, which nothing orders (a grid barrier would, or a release that an atomic of "
                       "the other block observes: cuda.threadfence() between the write and an atomic)")
            elif first[0].warp == second[0].warp:
                why = ("the same barrier interval, and no syncwarp naming both lanes between them")
            else:
                why = "the same barrier interval (no syncthreads between them)"
            if first[6] or second[6]:
                why += "; one of them is an atomic, which is exempt only against other atomics"
            return Problem(
                "race",
                f"{what} race on {array.space} array {array.name}{list(index)}: thread {t1[1]} of block {t1[0]} "
                f"and thread {t2[1]} of block {t2[0]} in {why}",
                array.name, array.space, index, [t1, t2],
                [_source(line) for line in lines],
            )

        # One entry per pair of lines: a read-write race is the same defect as the
        # write-read race between the same two lines, seen in the other order.
        self._add(("race", array.alloc, frozenset(lines)), make)

    def out_of_bounds(self, array, index, write, frame):
        v = self.current
        line = self.site_line(frame)
        index = tuple(int(i) for i in index)

        def make():
            verb = "writes" if write else "reads"
            below = [i for i, n in zip(index, array.shape) if i < -n]
            why = " (a negative index below -size: wrapped, it still points outside the array)" if below else ""
            return Problem(
                "out-of-bounds",
                f"thread {tuple(v.threadIdx)} of block {tuple(v.blockIdx)} {verb} {array.name}{list(index)}, "
                f"outside its shape {tuple(array.shape)}{why}",
                array.name, array.space, index, [_thread(v)], [_source(line)],
            )

        self._add(("out-of-bounds", array.name, line), make)

    def negative_index(self, array, index, wrapped, write, frame):
        v = self.current
        line = self.site_line(frame)
        index = tuple(int(i) for i in index)
        wrapped = tuple(int(i) for i in wrapped)

        def make():
            verb = "writes" if write else "reads"
            return Problem(
                "negative-index",
                f"thread {tuple(v.threadIdx)} of block {tuple(v.blockIdx)} {verb} {array.name}{list(index)}: Numba "
                f"wraps a negative index, on a GPU too, so this {verb} {array.name}{list(wrapped)} at the other end "
                "of the array (in CUDA C it would be outside the array); likely a missing bounds check",
                array.name, array.space, index, [_thread(v)], [_source(line)],
            )

        self._add(("negative-index", array.name, line), make)

    def warp_undefined(self, coll, v, src, in_mask):
        why = "has exited" if in_mask else f"is not in the mask {coll.mask:#010x}"

        def make():
            return Problem(
                "warp",
                f"{coll.kind}: lane {v.lane} of warp {v.warp} ({v}) reads lane {src}, which {why}: the value it "
                "gets is undefined on a GPU",
                threads=[_thread(v)], lines=[_source(coll.line)],
            )

        self._add(("warp-undefined", coll.kind, coll.line), make)

    # Barriers -----------------------------------------------------------------
    def block_started(self, grid_point, threads):
        self.shared_shadows[threads[0].block] = {}
        self.exited[threads[0].block] = []

    def block_finished(self, grid_point):
        for block in [b for b in self.exited if b == grid_point]:
            del self.exited[block], self.shared_shadows[block]

    def thread_exited(self, v):
        self.exited[v.block].append(v)

    def barrier(self, waiting, threads):
        if self.knows:  # what one thread of the block acquired, all know after the barrier (bar.sync orders them)
            joined = {}
            for v in threads:
                for thread, clock in (self.knows.get(v) or {}).items():
                    if joined.get(thread, -1) < clock:
                        joined[thread] = clock
            if joined:
                for v in threads:
                    self.knows[v] = dict(joined)
        lines = sorted({v.wait_line for v in waiting})
        exited = self.exited.get(threads[0].block)
        if exited:
            gone = exited[0]
            key = ("barrier", "exit", tuple(lines))

            def make():
                return Problem(
                    "barrier",
                    f"syncthreads reached by {len(waiting)} of the {len(threads)} threads of block "
                    f"{tuple(gone.blockIdx)}: {len(exited)} had exited, e.g. thread {tuple(gone.threadIdx)} "
                    "(a barrier must be reached by every thread of the block)",
                    threads=[_thread(gone), _thread(waiting[0])], lines=[_source(line) for line in lines],
                )

            self._add(key, make)
        if len(lines) > 1:
            def make():
                return Problem(
                    "barrier",
                    f"threads of block {tuple(waiting[0].blockIdx)} wait at different syncthreads calls "
                    "(a divergent barrier)",
                    threads=[_thread(waiting[0]), _thread(waiting[-1])], lines=[_source(line) for line in lines],
                )

            self._add(("barrier", "divergent", tuple(lines)), make)

    def warp_deadlock(self, coll, missing, err):
        self._add(("warp", coll.kind, coll.line), lambda: Problem("warp", str(err), lines=[_source(coll.line)]))


def _unordered(a, b):
    """True if nothing orders access record a before record b (different threads, b now)."""
    va, vb = a[0], b[0]
    if va.block is not vb.block:
        return a[7] == b[7]  # a grid barrier between them orders them (a cooperative launch's grid.sync)
    if a[1] != b[1]:
        return False
    return va.warp != vb.warp or vb.seen.get(va.lane, 0) < a[2]


def check(kernel, griddim, blockdim, *args, seed=None, sharedmem=0):
    """Run one launch in the simulator and report races, barrier and bounds problems.

    Parameters
    ----------
    kernel : @cuda.jit kernel (simulator or GPU) or its Python function
    griddim, blockdim : int or tuple of int
        As in ``kernel[griddim, blockdim]``.
    *args
        The kernel arguments. NumPy arrays are copied in and back, as in a launch.
    seed : int, optional
        Shuffle the order in which blocks start, and threads start and leave barriers,
        with this seed (exposes results that depend on the order). By default the
        simulator's own order is kept: blocks and warps start in an order drawn from
        :func:`course_lib.sim.set_seed`'s generator, threads leave barriers in index order.
    sharedmem : int
        Bytes of dynamic shared memory.

    Returns
    -------
    CheckReport
        ``.ok`` is True when nothing was found; ``.problems`` lists each defect with
        its kind, array, index, the two threads and the source lines.

    Notes
    -----
    Indexing is what Numba compiles for a GPU: a negative index ``-size <= i < 0`` wraps
    around to ``i + size`` (reported as ``"negative-index"``); an index outside the
    array is reported (reads give 0, writes are dropped). A line that computes in float64 on a GPU
    in a kernel whose arrays are float32 (a ``0.0`` accumulator, a ``0.1`` literal) is listed in
    ``.performance`` (kind ``"float64"``, with the fix; the report stays ``ok``) (numba's typing: :mod:`course_lib.sim._typing`); a kernel a
    GPU would not compile raises :class:`~course_lib.sim._typing.GPUTypingError`. On a GPU machine
    the launch runs in a child process under the simulator (see
    :mod:`course_lib.sim.remote`); the arguments are then not modified.

    Examples
    --------
    >>> report = check(histogram_kernel, 4, 64, data, bins)   # doctest: +SKIP
    >>> report.ok, report.kinds()                             # doctest: +SKIP
    (False, {'race'})
    """
    from .. import device

    if device.is_gpu():
        from .remote import run_remote

        return run_remote("check", kernel, griddim, blockdim, args, dict(seed=seed, sharedmem=sharedmem))
    checker = _Checker()
    try:
        grid, block = launch(kernel, griddim, blockdim, args, checker, seed=seed, sharedmem=sharedmem)
    except (_engine.WarpError, _engine.BarrierError) as err:
        from numba.cuda.errors import normalize_kernel_dimensions

        grid, block = normalize_kernel_dimensions(griddim, blockdim)
        message, kind = str(err), "barrier" if isinstance(err, _engine.BarrierError) else "warp"
        if not any(key[0] == "warp" for key in checker.problems):
            checker._add(("deadlock", message), lambda: Problem(kind, message))
    fn = py_function(kernel)
    slow = [Problem("float64", f"{'; '.join(dict.fromkeys(what))}: this line {_typing.FLOAT64_FIX}.",
                    lines=[_source((fn.__code__.co_filename, lineno))], count=len(what))
            for lineno, what in _typing.float64_lines(fn, args)]  # the float64 pitfall (course_lib.sim._typing)
    return CheckReport(fn.__name__, tuple(grid), tuple(block), list(checker.problems.values()), seed, slow)
