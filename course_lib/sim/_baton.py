"""Simulated threads and the baton they pass: one runs at a time, each on a pooled OS thread.

A :class:`VThread` is one CUDA thread (its indices, and where it waits); a :class:`Carrier`
is the OS thread that runs it while it holds the baton. :func:`tick`, called at every loop
back-edge of a kernel (:func:`fair` makes the copy that calls it), hands the baton on after
:data:`TIME_SLICE` steps, so a thread spinning on a flag lets the others run. The block's
scheduler, which hands the baton out, is :class:`course_lib.sim._block.BlockScheduler`.
"""

from __future__ import annotations

import os
import sys
import threading

import numpy as np

from numba.cuda.simulator.kernelapi import Dim3

from ._forwarded import forwarded
from ._marks import _FAIR, REWRITTEN
from ._warp import WARP_SIZE

#: Loop iterations (and atomics) a simulated thread runs before it gives the baton to
#: the next runnable thread of its block. Large enough that ordinary loops rarely pay
#: for a switch, small enough that a spinning thread lets the others finish quickly.
TIME_SLICE = 512
#: Time slices a block runs without progress (no thread exits, no barrier is passed)
#: before it gives way to the other blocks of the grid.
BLOCK_SLICES = 4


def on_carrier():
    """True in a simulated kernel thread (a kernel calling a device function), False in host code."""
    return type(threading.current_thread()) is Carrier


_steps = TIME_SLICE


def tick():
    """One step of the running simulated thread (a loop back-edge, or an atomic).

    After :data:`TIME_SLICE` steps without a switch, the thread yields to the next
    runnable thread of its block: a thread spinning on a flag set by another warp lets
    that warp run, so every kernel that ends on a GPU ends here too.
    """
    global _steps
    _steps -= 1
    if _steps <= 0:
        _preempt()


#: Progress events (thread exits, barriers passed) of all launches: the hang watchdog watches it.
_progress = 0


def new_slice():
    """The running thread starts a fresh time slice (it was just handed the baton)."""
    global _steps
    _steps = TIME_SLICE


def progressed():
    """A thread exited or a barrier was passed: the hang watchdog sees progress."""
    global _progress
    _progress += 1


def progress():
    """Progress events so far (see :func:`progressed`)."""
    return _progress


def _kernel_frame(depth):
    """The nearest frame outside the simulator's own code (course_lib.sim's or numba's), or None."""
    from numba.cuda.simulator import kernelapi

    skip = (os.path.dirname(__file__), os.path.dirname(kernelapi.__file__))
    frame = sys._getframe(depth + 1)
    while frame is not None and frame.f_code.co_filename.startswith(skip):
        frame = frame.f_back
    return frame


def _kernel_line(depth):
    """(file, line) of the nearest frame outside the simulator's own code."""
    frame = _kernel_frame(depth + 1)
    return (frame.f_code.co_filename, frame.f_lineno) if frame is not None else None


def _frozen(value):
    if isinstance(value, np.generic):
        return type(value), value.tobytes()
    if isinstance(value, (bool, int, float, complex, str)):
        return type(value), repr(value)
    return id(value)


def _spin_state(frame):
    """Where a thread stands and what its local variables hold: unchanged between two of its yields,
    and nothing exited or passed a barrier meanwhile, the thread is spinning, not working."""
    if frame is None:
        return None
    return frame.f_code, frame.f_lineno, tuple((k, _frozen(v)) for k, v in frame.f_locals.items())


def _preempt():
    global _steps
    _steps = TIME_SLICE
    carrier = threading.current_thread()
    if type(carrier) is not Carrier or carrier.v is None:
        return  # not a thread of this scheduler (e.g. the stock simulator's)
    manager = carrier.manager
    manager.stalled += 1
    if manager.stalled >= BLOCK_SLICES:  # no progress in this block for a while: let other blocks run
        manager.stalled = 0
        manager.yielded = True
        v = carrier.v
        frame = _kernel_frame(2)
        state = _spin_state(frame)
        # A thread whose variables changed since its last yield is working (a long loop); one whose
        # variables did not is spinning; at its first yield, it is too early to tell.
        manager.working = v.spin_state is not None and state != v.spin_state
        manager.spinning = state is not None and state == v.spin_state
        v.spin_state = state
        manager.ready.append(v)
        manager._pause(carrier, "ready", (frame.f_code.co_filename, frame.f_lineno) if frame is not None else None)
    elif manager.ready:  # someone else can run: go to the back of the queue
        v = carrier.v
        manager.ready.append(v)
        manager._pause(carrier, "ready", _kernel_line(3))


def fair(fn):
    """``fn`` recompiled to call :func:`tick` at every loop back-edge (``fn`` itself when its
    source cannot be read, or when it already ticks).

    The copy is kept on ``fn`` itself: looked up at every device-function call, it must be
    cheap, and it goes when ``fn`` goes (a table keyed by ``fn`` would keep it alive, as the
    copy refers back to it).
    """
    out = getattr(fn, _FAIR, None)
    if out is not None:
        return out
    from ._lines import with_ticks

    out = fn if getattr(fn, REWRITTEN, None) is not None else (with_ticks(fn, tick) or fn)
    try:
        setattr(fn, _FAIR, out)
    except (AttributeError, TypeError):  # no attribute dict (a builtin, a method): not cached
        pass
    return out


def _caller_line(depth=2):
    """(filename, line) of the kernel code that called a primitive."""
    frame = sys._getframe(depth)
    return frame.f_code.co_filename, frame.f_lineno



def _block_predicate(value):
    """The predicate of ``syncthreads_count/and/or`` as numba-cuda passes it to ``bar.red``: an integer is
    truncated to its low 32 bits (``compile_ptx`` of ``syncthreads_count(int64)``: ``ld.global.u32``,
    ``setp.ne.u32``), so ``2**32`` counts as false; a bool is itself. (Warp votes test all 64 bits:
    ``setp.ne.s64`` before ``vote.sync``.)"""
    if type(value) is bool or isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return (int(value) & 0xFFFFFFFF) != 0
    return value


class _Abort(BaseException):
    """Unwinds a suspended simulated thread when its launch is abandoned."""


_NO_LANES = {}


class VThread:
    """One simulated CUDA thread: its indices and where it stands."""

    __slots__ = (
        "threadIdx", "blockIdx", "block", "thread_id", "warp", "lane", "carrier", "state", "wait_line", "wait_value",
        "result", "epoch", "grid_epoch", "clock", "seen", "spin_state", "in_atomic", "collective", "line_count",
        "access_count",
    )

    def __init__(self, block_point, thread_point, block_dim):
        self.threadIdx = Dim3(*thread_point)
        self.blockIdx = Dim3(*block_point)
        self.block = block_point  # one tuple object per block: identity tells blocks apart
        self.thread_id = thread_point[0] + block_dim[0] * (thread_point[1] + block_dim[1] * thread_point[2])
        self.warp, self.lane = divmod(self.thread_id, WARP_SIZE)
        self.carrier = None
        self.state = "new"  # new, running, barrier, warp, done
        self.wait_line = None  # (file, line) of the barrier or collective it waits at
        self.wait_value = None
        self.result = None
        self.epoch = 0  # block barriers passed (for the race checker)
        self.grid_epoch = 0  # grid barriers passed (for the race checker)
        self.spin_state = None  # (code, line, locals) at its last yield to other blocks (see _preempt)
        # Vector clock of the syncwarps (for the race checker): the thread's own clock,
        # and for other lanes of its warp the clock of theirs it has synchronised with.
        self.clock = 1
        self.seen = _NO_LANES
        self.in_atomic = None  # the kernel frame calling an atomic, while it runs
        self.collective = None
        self.line_count = {}  # profiler: executions of each line so far
        self.access_count = {}  # profiler: memory accesses in the current execution of a line

    def __str__(self):
        return f"block {tuple(self.blockIdx)} thread {tuple(self.threadIdx)}"


class Carrier(threading.Thread):
    """An OS thread that runs simulated threads, one after another, while it holds the baton.

    ``threading.current_thread()`` is what the simulator's ``cuda`` module asks for
    ``threadIdx`` and ``syncthreads``; a carrier answers for the simulated thread it
    runs now. Carriers are pooled: a kernel without barriers runs a whole block on one.
    """

    def __init__(self):
        super().__init__(daemon=True, name="course-sim-carrier")
        self._go = threading.Lock()
        self._go.acquire()
        self.v = None
        self.manager = None

    # The simulated thread it runs now answers.
    threadIdx = forwarded("v.threadIdx")
    blockIdx = forwarded("v.blockIdx")
    thread_id = forwarded("v.thread_id")

    def run(self):
        while True:
            self._go.acquire()
            self.manager._carry(self)

    def syncthreads(self):
        self.manager.barrier(self, None, _caller_line(3))

    def syncthreads_count(self, value):
        return self.manager.barrier(self, ("count", _block_predicate(value)), _caller_line(3))

    def syncthreads_and(self, value):
        return self.manager.barrier(self, ("and", _block_predicate(value)), _caller_line(3))

    def syncthreads_or(self, value):
        return self.manager.barrier(self, ("or", _block_predicate(value)), _caller_line(3))

    def grid_sync(self, line):
        """``cuda.cg.this_grid().sync()``: wait until every thread of every block arrives."""
        self.manager.barrier(self, _GRID, line)

    def warp_collective(self, kind, mask, value, line):
        return self.manager.warp_collective(self, kind, mask, value, line)

    def activemask(self):
        """Lanes of this warp that reach this same ``activemask()`` call together."""
        return self.manager.activemask(self, _caller_line(3))

    def __str__(self):
        return "Thread <<<%s, %s>>>" % (self.v.blockIdx, self.v.threadIdx) if self.v else "idle carrier"


_idle_carriers: list = []
#: wait_value of a thread waiting at a grid barrier.
_GRID = ("grid", None)


def _where(line):
    return f"{line[0]}:{line[1]}" if line else "?"
