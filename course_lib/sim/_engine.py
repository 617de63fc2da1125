"""A block scheduler for Numba's CUDA simulator, with warp-level primitives.

The stock simulator starts one OS thread per CUDA thread and lets them all run at
once; a polling loop releases ``syncthreads`` when every live thread waits there.
This module replaces its ``BlockManager`` with one that runs exactly one simulated
thread at a time (a baton is passed from thread to thread), which gives:

* warp collectives (``shfl_*_sync``, ``ballot_sync``, ``syncwarp``...) with lockstep
  semantics among the lanes named in the mask: each lane waits until every lane of
  the mask has arrived, then all get their results;
* the CUDA rule for exited lanes: only the non-exited lanes named in a mask take part
  in a warp operation (a partial last warp's missing lanes count as exited), and an
  error instead of a hang when an *alive* lane named in the mask never arrives (it
  waits at a ``syncthreads`` or at another warp operation);
* fairness: a thread that goes round a loop (or does atomics) for a while without
  reaching a barrier gives the baton to the next runnable thread, as warps progress
  independently on a GPU; a thread spinning on a flag that another warp sets ends
  (see :func:`tick`);
* blocks that interleave (:func:`run_grid`): a block whose threads make no progress
  (none exits, none passes a barrier) for a while gives way to the other blocks, so a
  block spinning on a flag that another block sets ends; one that no block can ever
  release is stopped with :class:`HangError` naming the blocks and lines;
* ``cuda.cg.this_grid().sync()`` as a cooperative launch defines it: every block of
  the grid reaches it before any passes; a grid larger than
  :func:`max_cooperative_grid_blocks` is refused, as ``cuLaunchCooperativeKernel`` does;
* a start order a GPU could use, not always index order: blocks, and the warps of a
  block, start in an order drawn from a seeded generator (:func:`set_seed`, or the
  ``COURSE_SIM_SEED`` environment variable), so a run repeats and order-dependent
  results show; :mod:`course_lib.sim` can shuffle every thread with a seed of its own;
* a place to observe barriers and thread exits for the race checker.

Simulated threads run on pooled OS threads (:class:`Carrier`): a kernel without
barriers runs a whole block on one, which makes launches several times faster than
the stock simulator. Nothing here changes what a correct kernel computes. The hooks
are installed by :func:`course_lib.sim.install` (``import course_lib`` in simulator mode).

Semantics, where the hardware leaves a choice:

* shuffles have width 32, as Numba's ``shfl_*_sync`` (which take no width argument);
  a source lane past the warp's edge gives the caller's own value; a source lane
  outside the mask, or exited, is undefined on a GPU: the caller gets its own value and
  :func:`course_lib.sim.check` reports it;
* ``ballot_sync``, ``match_any_sync`` and ``match_all_sync`` return lane masks as int32,
  as Numba types them on a GPU (negative when lane 31 is set); ``activemask()`` and
  ``lanemask_lt()`` return uint32;
* ``activemask()`` waits until no thread can run, then returns the lanes of the warp
  that reached that same call: the lanes a converged warp would have active there.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections import deque

import numpy as np

from numba.cuda.simulator.kernelapi import Dim3

from ._marks import _FAIR, REWRITTEN

FULL_MASK = 0xFFFFFFFF
WARP_SIZE = 32
#: Loop iterations (and atomics) a simulated thread runs before it gives the baton to
#: the next runnable thread of its block. Large enough that ordinary loops rarely pay
#: for a switch, small enough that a spinning thread lets the others finish quickly.
TIME_SLICE = 512
#: Time slices a block runs without progress (no thread exits, no barrier is passed)
#: before it gives way to the other blocks of the grid.
BLOCK_SLICES = 4
#: Seconds without progress in any block (see :func:`run_grid`) after which a launch is stopped as a hang.
HANG_SECONDS = 5.0
#: The simulated GPU, for residency: blocks of a grid that are started at once (and, for a
#: cooperative launch, the largest grid). One SM on purpose: every resident thread waiting at
#: a barrier holds an OS thread of this process (2048 of them fit the grader's address-space
#: limit, with course_lib.grading.confine.THREAD_STACK each).
SIM_SM_COUNT = 1
MAX_THREADS_PER_SM = 2048
MAX_BLOCKS_PER_SM = 32

__all__ = ["FULL_MASK", "WARP_SIZE", "BarrierError", "Carrier", "CooperativeLaunchError", "HangError",
           "ScheduledBlockManager", "VThread", "WarpError", "get_seed", "max_cooperative_grid_blocks", "run_grid",
           "set_seed"]


class WarpError(RuntimeError):
    """A warp-level primitive was used in a way that would hang or be undefined on a GPU."""


class BarrierError(RuntimeError):
    """Threads of a block (or blocks of a grid) wait at barriers that can never all be reached."""


class CooperativeLaunchError(RuntimeError):
    """A grid that synchronises (``cuda.cg.this_grid().sync()``) has more blocks than can be resident at once."""


class HangError(RuntimeError):
    """No block of a launch has made progress for :data:`HANG_SECONDS`: on a GPU it would hang."""


def max_cooperative_grid_blocks(blockdim):
    """Largest grid of a cooperative launch with this block size on the simulated GPU.

    As ``kernel.overloads[sig].max_cooperative_grid_blocks(blockdim)`` on a GPU: the blocks
    that fit on the device at once (per SM, by threads and by blocks), times its SMs.

    Parameters
    ----------
    blockdim : int or tuple of int
    """
    dims = blockdim if isinstance(blockdim, tuple) else (blockdim,)
    threads = math.prod(int(d) for d in dims)
    if threads <= 0:
        raise ValueError(f"block dimensions must be positive, got {blockdim!r}")
    return min(MAX_BLOCKS_PER_SM, MAX_THREADS_PER_SM // threads) * SIM_SM_COUNT


#: The observer of the running launch (a check or profile session), or None.
#: Set only by course_lib.sim's own launcher; ordinary launches run unobserved.
observer = None
#: Optional random generator shuffling the order in which every thread starts (check(seed=...)).
thread_order_rng = None


def _env_seed():
    text = os.environ.get("COURSE_SIM_SEED", "").strip()
    if not text:
        return 0
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"COURSE_SIM_SEED must be an integer, got {text!r}") from None


_seed = _env_seed()
#: The generator of the start order of blocks and warps (see :func:`set_seed`).
order_rng = np.random.default_rng(_seed)


def set_seed(seed: int) -> None:
    """Seed the order in which blocks, and the warps of each block, start.

    A GPU promises no order; the simulator draws one per launch from a generator
    seeded here (default: ``COURSE_SIM_SEED``, else 0), so a run repeats and a
    result that depends on the order shows. The grader draws a seed per grading run.

    Parameters
    ----------
    seed : int
        A non-negative integer.
    """
    global _seed, order_rng
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"the simulator's order seed must be a non-negative integer, got {seed!r}")
    _seed = int(seed)
    order_rng = np.random.default_rng(_seed)


def get_seed() -> int:
    """The seed last given to :func:`set_seed` (or taken from ``COURSE_SIM_SEED``)."""
    return _seed
#: Held by every simulated launch, plain or observed: the simulator keeps a launch's state in
#: module globals (its kernel context, the observer above, the time slice), so launches from
#: several host threads (a grader judging submissions in threads) run one after another.
launch_lock = threading.RLock()


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


class _Collective:
    """One warp-level operation in progress: the lanes of ``mask`` meet here."""

    __slots__ = ("kind", "mask", "line", "values", "waiting", "arrived")

    def __init__(self, kind, mask, line):
        self.kind = kind
        self.mask = mask
        self.line = line
        self.values = {}
        self.waiting = []
        self.arrived = 0  # bits of the lanes that have arrived


def _lanes(mask):
    return [lane for lane in range(WARP_SIZE) if mask >> lane & 1]


def _bits(lanes):
    out = 0
    for lane in lanes:
        out |= 1 << lane
    return out


def _int32_mask(bits):
    """A 32-bit lane mask as the int32 Numba gives on a GPU (negative when lane 31 is set)."""
    return np.uint32(bits).view(np.int32)


def _bit_pattern(value):
    """What ``match.sync`` compares: the value's bits (0.0 and -0.0 differ, a NaN matches its own bits)."""
    if isinstance(value, (float, np.floating)):
        return "f", np.float64(value).tobytes()
    return "i", int(value) & 0xFFFFFFFFFFFFFFFF


def _shuffle_source(kind, lane, operand):
    """Source lane of a shuffle (width 32, as Numba's shfl_*_sync), or None for 'keep own value'."""
    if kind == "shfl_sync":
        return int(operand) % WARP_SIZE
    if kind == "shfl_up_sync":
        src = lane - int(operand)
        return src if src >= 0 else None
    if kind == "shfl_down_sync":
        src = lane + int(operand)
        return src if src < WARP_SIZE else None
    if kind == "shfl_xor_sync":
        src = lane ^ int(operand)  # a lane mask of 32 or more points past the warp: keep own value
        return src if src < WARP_SIZE else None
    raise AssertionError(kind)


def _complete(coll, undefined=None):
    """Results of a collective for each lane, once every non-exited lane of its mask has arrived.

    ``undefined(lane, src)`` is called for each shuffle that reads a lane which does
    not take part (outside the mask, or exited): undefined on a GPU.
    """
    kind, values = coll.kind, coll.values
    if kind.startswith("shfl"):
        out = {}
        for lane, (value, operand) in values.items():
            src = _shuffle_source(kind, lane, operand)
            if src is not None and src in values:
                out[lane] = values[src][0]
            else:
                # Past the warp's edge the hardware keeps the caller's value; from a lane
                # not taking part the value is undefined: the caller's own is as good as any.
                out[lane] = value
                if src is not None and undefined is not None:
                    undefined(lane, src)
        return out
    if kind == "syncwarp":
        return dict.fromkeys(values, None)
    if kind == "match_any_sync":
        keys = {lane: _bit_pattern(v) for lane, v in values.items()}
        return {lane: _int32_mask(_bits(other for other, k in keys.items() if k == key)) for lane, key in keys.items()}
    if kind == "match_all_sync":
        same = len({_bit_pattern(v) for v in values.values()}) == 1
        result = (_int32_mask(coll.arrived), True) if same else (np.int32(0), False)
        return dict.fromkeys(values, result)
    preds = {lane: bool(v) for lane, v in values.items()}
    if kind == "ballot_sync":
        result = _int32_mask(_bits(lane for lane, p in preds.items() if p))
    elif kind == "all_sync":
        result = all(preds.values())
    elif kind == "any_sync":
        result = any(preds.values())
    elif kind == "eq_sync":
        result = len(set(preds.values())) == 1
    else:
        raise AssertionError(kind)
    return dict.fromkeys(values, result)


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

    @property
    def threadIdx(self):
        return self.v.threadIdx

    @property
    def blockIdx(self):
        return self.v.blockIdx

    @property
    def thread_id(self):
        return self.v.thread_id

    def run(self):
        while True:
            self._go.acquire()
            self.manager._carry(self)

    def syncthreads(self):
        self.manager.barrier(self, None, _caller_line(3))

    def syncthreads_count(self, value):
        return self.manager.barrier(self, ("count", value), _caller_line(3))

    def syncthreads_and(self, value):
        return self.manager.barrier(self, ("and", value), _caller_line(3))

    def syncthreads_or(self, value):
        return self.manager.barrier(self, ("or", value), _caller_line(3))

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


class ScheduledBlockManager:
    """Runs the threads of one block, one at a time (drop-in for the simulator's BlockManager)."""

    def __init__(self, f, grid_dim, block_dim, debug):
        self._grid_dim = grid_dim
        self._block_dim = block_dim
        self._f = fair(f)
        self._debug = debug
        self._back = threading.Lock()
        self._back.acquire()
        self.ready = deque()
        self.collectives = {}
        self.active_groups = {}
        self.threads = []
        self.barrier_waiting = []
        self.live = 0
        self.live_lanes = {}  # warp -> bits of its lanes that exist and have not exited
        self.failure = None
        self.aborting = False
        self.observer = None
        self.grid_point = None
        self.shared = None  # this block's cuda.shared allocator (see run_grid)
        self.stalled = 0  # time slices since a thread of this block last exited or passed a barrier
        self.yielded = False  # a thread gave way to the other blocks (see _preempt)
        self.working = False  # ... and its variables had changed since its previous yield
        self.spinning = False  # ... or had not

    # Bookkeeping, always done by whoever holds the baton ----------------------
    def activemask(self, carrier, line):
        """Converged lanes: the lane waits until no thread can run, then gets the mask of
        the lanes of its warp waiting at the same call. Lanes that exit, or wait at a
        barrier or another call, are not converged with it."""
        v = carrier.v
        self.active_groups.setdefault((v.warp, line), []).append(v)
        return self._pause(carrier, "warp", line)

    def _resolve_activemasks(self):
        for group in self.active_groups.values():
            mask = np.uint32(_bits(v.lane for v in group))
            for v in group:
                v.result = mask
            self.ready.extend(group)
        self.active_groups = {}

    def _carry(self, carrier):
        """Body of a carrier: run its simulated thread, then new ones while they are next in line."""
        global _steps, _progress
        obs = self.observer
        # debug=True launches raise on division by zero, as the stock simulator's threads
        # do; the setting is per OS thread, and carriers are pooled: restore it on leaving.
        saved_err = np.seterr(divide="raise") if self._debug else None
        try:
            while True:
                v = carrier.v
                tracer = None
                if obs is not None:
                    obs.resumed(v)
                    tracer = obs.thread_tracer(v)
                if tracer is not None:
                    sys.settrace(tracer)
                try:
                    self._f(*self._args)
                except _Abort:
                    carrier.v = None
                    _idle_carriers.append(carrier)
                    return
                except Exception as e:  # reported like the stock simulator: tid, ctaid, message
                    msg = f"tid={list(v.threadIdx)} ctaid={list(v.blockIdx)}"
                    msg = f"{msg}: {e}" if str(e) else msg
                    try:
                        err = type(e)(msg)
                    except Exception:
                        err = RuntimeError(msg)
                    self.failure = (err, sys.exc_info()[2])
                finally:
                    if tracer is not None:
                        sys.settrace(None)
                v.state = "done"
                self.live -= 1
                self.stalled = 0
                _progress += 1
                self._exited(v)
                if obs is not None:
                    obs.thread_exited(v)
                if self.failure is None and self.ready and self.ready[0].state == "new":
                    nxt = self.ready.popleft()
                    nxt.state = "running"
                    nxt.carrier = carrier
                    carrier.v = nxt
                    _steps = TIME_SLICE
                    continue
                carrier.v = None
                _idle_carriers.append(carrier)
                if not self.aborting:
                    self._back.release()
                return
        finally:
            if saved_err is not None:
                np.seterr(**saved_err)

    def _pause(self, carrier, state, line):
        """Give the baton back to the scheduler and wait until it is handed over again."""
        v = carrier.v
        if self.aborting:  # the launch was abandoned (e.g. interrupted) while this thread ran
            raise _Abort
        v.state = state
        v.wait_line = line
        self._back.release()
        carrier._go.acquire()
        if self.aborting:
            raise _Abort
        v.state = "running"
        if self.observer is not None:
            self.observer.resumed(v)
        return v.result

    def barrier(self, carrier, value, line):
        v = carrier.v
        v.wait_value = value
        self.barrier_waiting.append(v)
        return self._pause(carrier, "barrier", line)

    def warp_collective(self, carrier, kind, mask, value, line):
        v = carrier.v
        mask = int(mask) & FULL_MASK
        if not mask >> v.lane & 1:
            raise WarpError(
                f"{kind} at {_where(line)}: lane {v.lane} of warp {v.warp} ({v}) calls it with mask {mask:#010x}, "
                "which does not name the lane itself; on a GPU the result is undefined."
            )
        colls = self.collectives.setdefault(v.warp, {})
        coll = colls.get(mask)
        if coll is None:
            coll = colls[mask] = _Collective(kind, mask, line)
        elif coll.kind != kind:
            raise WarpError(
                f"lanes of warp {v.warp} in block {tuple(v.blockIdx)} meet different warp operations with the same "
                f"mask {mask:#010x}: {coll.kind} at {_where(coll.line)} and {kind} at {_where(line)}."
            )
        coll.values[v.lane] = value
        coll.arrived |= 1 << v.lane
        # Only the non-exited lanes of the mask take part (CUDA guide, warp vote and
        # shuffle functions); a partial last warp's missing lanes count as exited.
        if mask & self.live_lanes[v.warp] & ~coll.arrived:
            coll.waiting.append(v)
            v.collective = coll
            result = self._pause(carrier, "warp", line)
            v.collective = None
            return result
        # Last lane in: everyone gets the result and becomes runnable again.
        results = self._finish(v.warp, coll)
        return results[v.lane]

    def _finish(self, warp, coll):
        """Complete a collective whose non-exited lanes have all arrived; wake the waiting ones."""
        colls = self.collectives[warp]
        del colls[coll.mask]
        if not colls:
            del self.collectives[warp]
        obs = self.observer
        undefined = None
        if obs is not None and coll.kind.startswith("shfl"):
            lanes = {v.lane: v for v in self.threads[warp * WARP_SIZE:(warp + 1) * WARP_SIZE]}

            def undefined(lane, src):
                obs.warp_undefined(coll, lanes[lane], src, bool(coll.mask >> src & 1))

        results = _complete(coll, undefined)
        if obs is not None:
            obs.warp_operation(coll)
        if coll.kind == "syncwarp":
            self._syncwarp(warp, coll)
        for other in coll.waiting:
            other.result = results[other.lane]
            self.ready.append(other)
        return results

    def _syncwarp(self, warp, coll):
        """Vector clocks: the lanes of a syncwarp see each other's accesses up to now."""
        if self.observer is None:
            return
        members = [v for v in self.threads[warp * WARP_SIZE:(warp + 1) * WARP_SIZE] if coll.arrived >> v.lane & 1]
        joined = {}
        for v in members:
            for lane, c in v.seen.items():
                if c > joined.get(lane, 0):
                    joined[lane] = c
        for v in members:
            if v.clock > joined.get(v.lane, 0):
                joined[v.lane] = v.clock
        for v in members:
            v.seen = dict(joined)
            v.clock += 1

    def _exited(self, v):
        """A lane exits: warp operations waiting only for it complete without it."""
        live = self.live_lanes[v.warp] = self.live_lanes[v.warp] & ~(1 << v.lane)
        colls = self.collectives.get(v.warp)
        if colls:
            for coll in list(colls.values()):
                if coll.mask >> v.lane & 1 and not coll.mask & live & ~coll.arrived:
                    self._finish(v.warp, coll)

    # The scheduler (runs in the launching thread) ------------------------------
    def run(self, grid_point, *args):
        """The stock simulator's per-block call: blocks are collected, then run together by :func:`run_grid`.

        ``FakeCUDAKernel.__call__`` makes a manager and calls ``run`` for every block in
        turn; the last call runs the whole grid, so blocks can interleave and meet at
        grid barriers.
        """
        global _collecting
        from numba.cuda.simulator import kernel

        context = kernel._get_kernel_context()
        if _collecting is None or _collecting[0] is not context:
            _collecting = (context, [])
        points = _collecting[1]
        points.append(grid_point)
        if len(points) == math.prod(self._grid_dim):
            _collecting = None
            run_grid(self._f, self._grid_dim, self._block_dim, self._debug, args, context, order=None)

    def start(self, grid_point, args, shared):
        """Make the threads of block ``grid_point``, in a start order a GPU could use."""
        self._args = args
        self.grid_point = grid_point
        self.shared = shared
        self.observer = obs = observer
        threads = [VThread(grid_point, p, self._block_dim) for p in np.ndindex(*self._block_dim)]
        # np.ndindex walks x slowest; order by linear thread id (x fastest), as a GPU numbers lanes.
        threads.sort(key=lambda v: v.thread_id)
        self.threads = threads
        self.live = len(threads)
        for v in threads:
            self.live_lanes[v.warp] = self.live_lanes.get(v.warp, 0) | 1 << v.lane
        if thread_order_rng is not None:
            order = list(threads)
            thread_order_rng.shuffle(order)
        elif order_rng is not None and len(threads) > WARP_SIZE:
            # Warps start in any order on a GPU; the lanes of a warp run together.
            warps = order_rng.permutation(-(-len(threads) // WARP_SIZE))
            order = [v for w in warps for v in threads[w * WARP_SIZE:(w + 1) * WARP_SIZE]]
        else:
            order = list(threads)
        if obs is not None:
            obs.block_started(grid_point, threads)
        self.ready = deque(order)

    def step(self):
        """Run the block until it ends ("done"), until all its live threads wait at a grid
        barrier ("grid"), or until it gives way to the other blocks ("yield")."""
        global _steps
        obs = self.observer
        finished = False
        try:
            while True:
                while self.ready:
                    _steps = TIME_SLICE
                    self._resume(self.ready.popleft())
                    self._back.acquire()
                    if self.failure is not None:
                        err, tb = self.failure
                        raise err.with_traceback(tb)
                    if self.yielded:
                        self.yielded = False
                        return "yield"
                if self.active_groups:
                    self._resolve_activemasks()
                    continue
                waiting = self.barrier_waiting
                if waiting and len(waiting) == self.live and not self.collectives:
                    at_grid = [v for v in waiting if v.wait_value is _GRID]
                    if at_grid:
                        if len(at_grid) != len(waiting):
                            others = sorted({_where(v.wait_line) for v in waiting if v.wait_value is not _GRID})
                            raise BarrierError(
                                f"block {tuple(self.threads[0].blockIdx)}: threads wait at grid.sync "
                                f"({_where(at_grid[0].wait_line)}) while others wait at syncthreads "
                                f"({', '.join(others)}), which they can never all reach."
                            )
                        return "grid"
                    self.barrier_waiting = []
                    self._release_barrier(waiting, obs)
                    continue
                if waiting or self.collectives:
                    self._deadlock(waiting, obs)
                finished = True
                return "done"
        except BaseException:
            finished = True
            self._abort()
            raise
        finally:
            if finished and obs is not None:
                obs.block_finished(self.grid_point)

    def release_grid(self):
        """Every block reached the grid barrier: this block's threads pass it."""
        waiting, self.barrier_waiting = self.barrier_waiting, []
        for v in waiting:
            v.grid_epoch += 1
        self._release_barrier(waiting, self.observer)

    def waits(self):
        """{line: [thread, ...]} of the threads of this block that have not exited, for a hang report."""
        out = {}
        for v in self.threads:
            if v.state != "done":
                out.setdefault(v.wait_line, []).append(v)
        return out

    def _resume(self, v):
        carrier = v.carrier
        if carrier is None:
            carrier = _idle_carriers.pop() if _idle_carriers else None
            if carrier is None:
                carrier = Carrier()
            carrier.manager = self
            carrier.v = v
            v.carrier = carrier
            v.state = "running"
            if carrier.ident is None:
                carrier.start()
        carrier._go.release()

    def _release_barrier(self, waiting, obs):
        global _progress
        self.stalled = 0
        _progress += 1
        if obs is not None:
            obs.barrier(waiting, self.threads)
        kinds = {v.wait_value[0] for v in waiting if v.wait_value is not None and v.wait_value is not _GRID}
        result = None
        if kinds:
            kind = kinds.pop()
            preds = [bool(v.wait_value[1]) for v in waiting if v.wait_value is not None and v.wait_value is not _GRID]
            if kind == "count":
                result = sum(preds)
            elif kind == "and":
                result = int(all(preds))
            else:
                result = int(any(preds))
        for v in waiting:
            v.epoch += 1
            v.result = result
        # Threads leave the barrier in thread order (or a shuffled order).
        order = sorted(waiting, key=lambda v: v.thread_id)
        if thread_order_rng is not None:
            thread_order_rng.shuffle(order)
        self.ready.extend(order)

    def _deadlock(self, waiting, obs):
        """No thread can run: report which alive lanes (or threads) never arrive."""
        for warp, colls in sorted(self.collectives.items()):
            for mask, coll in colls.items():
                by_lane = {v.lane: v for v in self.threads[warp * WARP_SIZE : (warp + 1) * WARP_SIZE]}
                missing = [lane for lane in _lanes(mask & self.live_lanes[warp]) if lane not in coll.values]
                reasons = []
                for lane in missing:
                    v = by_lane[lane]
                    if v.state == "barrier":
                        reasons.append(f"lane {lane} waits at syncthreads at {_where(v.wait_line)}")
                    else:
                        what = v.collective.kind if v.collective else "activemask" if v.state == "warp" else "?"
                        reasons.append(f"lane {lane} waits at {what} at {_where(v.wait_line)}")
                block = tuple(self.threads[0].blockIdx)
                err = WarpError(
                    f"{coll.kind} at {_where(coll.line)} in block {block}, warp {warp}, mask {mask:#010x}: lanes "
                    f"named in the mask that have not exited never arrive ({'; '.join(reasons)}). On a GPU this "
                    "hangs or gives undefined results."
                )
                if obs is not None:
                    obs.warp_deadlock(coll, missing, err)
                raise err
        lines = sorted({v.wait_line for v in waiting})
        raise BarrierError(
            f"block {tuple(self.threads[0].blockIdx)}: {len(waiting)} threads wait at syncthreads "
            f"({', '.join(map(_where, lines))}) that the others can never reach."
        )

    def _abort(self):
        """Unwind every suspended simulated thread (their carriers go back to the pool); once."""
        if self.aborting:
            return
        self.aborting = True
        for v in self.threads:
            if v.state in ("barrier", "warp", "ready") and v.carrier is not None:
                v.carrier._go.release()


#: (kernel context, grid points seen) of the stock launch whose blocks are being collected.
_collecting = None


def _uses_grid_sync(fn):
    """True if the code of ``fn`` (or a function nested in it) names ``this_grid``."""
    codes = [getattr(fn, "__code__", None)]
    while codes:
        code = codes.pop()
        if code is None:
            continue
        if "this_grid" in code.co_names:
            return True
        codes.extend(c for c in code.co_consts if hasattr(c, "co_names"))
    return False


def _block_shared(module):
    """A fresh ``cuda.shared`` allocator for one block (shared memory belongs to a block)."""
    shared = module._shared
    if hasattr(shared, "for_block"):
        return shared.for_block()
    from numba.cuda.simulator.kernelapi import FakeCUDAShared

    return FakeCUDAShared(shared._dynshared_size)


def _too_large(total, block_dim, limit):
    return CooperativeLaunchError(
        f"cooperative launch too large (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE): the kernel synchronises its "
        f"grid (cuda.cg.this_grid().sync()), which needs every block resident at once, but the grid has {total} "
        f"blocks of {math.prod(block_dim)} threads and the simulated GPU holds at most {limit}. Launch at most "
        "kernel.overloads[sig].max_cooperative_grid_blocks(blockdim) blocks (a grid-stride loop covers the rest)."
    )


def run_grid(f, grid_dim, block_dim, debug, args, module, order=None):
    """Run every block of a launch, interleaving blocks that wait for each other.

    Blocks start in ``order`` (default: drawn from :data:`order_rng`); one runs until it
    ends, until all its threads wait at ``cuda.cg.this_grid().sync()``, or until it makes
    no progress for :data:`BLOCK_SLICES` time slices (it spins: the next block starts, or
    the next resident block resumes). At most :func:`max_cooperative_grid_blocks` blocks
    are resident at once, as on a GPU. The grid barrier opens when every block waits
    there.

    Raises
    ------
    CooperativeLaunchError
        The kernel syncs its grid and the grid is larger than the resident limit.
    BarrierError
        Some blocks wait at a grid barrier that others, which have ended, never reached.
    HangError
        No block has made progress for :data:`HANG_SECONDS` (no thread exited or passed a
        barrier, and every thread that gave way to other blocks stood at the same line with
        the same variables as the time before: it spins on something no resident block will
        do); the report names the blocks and the lines. A loop that changes a variable on
        every turn counts as work and is never stopped.
    """
    points = list(np.ndindex(*grid_dim)) if order is None else list(order)
    total = len(points)
    limit = max(1, max_cooperative_grid_blocks(tuple(block_dim)))
    if total > limit and _uses_grid_sync(getattr(f, "__course_rewritten__", f)):
        raise _too_large(total, block_dim, limit)
    if order is None and thread_order_rng is None and order_rng is not None and total > 1:
        points = [points[i] for i in order_rng.permutation(total)]
    pending = deque(points)
    runnable = deque()  # resident blocks that can run
    at_grid = []  # resident blocks whose live threads all wait at the grid barrier
    ended = []  # grid points of the blocks that have ended
    seen, since = _progress, time.monotonic()
    bm = None
    try:
        while True:
            if pending and len(runnable) + len(at_grid) < limit:
                bm = ScheduledBlockManager(f, grid_dim, block_dim, debug)
                bm.start(pending.popleft(), args, _block_shared(module))
            elif runnable:
                bm = runnable.popleft()
            elif at_grid:
                if pending:  # reached only by a grid barrier in a device function (not seen statically)
                    raise _too_large(total, block_dim, limit)
                if ended:
                    lines = sorted({_where(v.wait_line) for b in at_grid for v in b.barrier_waiting})
                    raise BarrierError(
                        f"grid.sync ({', '.join(lines)}) reached by {len(at_grid)} of the {total} blocks: blocks "
                        f"{', '.join(str(p) for p in ended[:4])}{'...' if len(ended) > 4 else ''} ended without "
                        "reaching it (every thread of every block must reach a grid barrier; on a GPU this hangs)."
                    )
                for b in at_grid:
                    b.release_grid()
                runnable.extend(at_grid)
                at_grid = []
                continue
            else:
                return
            outcome = bm.step()
            if outcome == "done":
                ended.append(bm.grid_point)
            elif outcome == "grid":
                if total > limit:
                    raise _too_large(total, block_dim, limit)
                at_grid.append(bm)
            else:
                runnable.append(bm)
                now = time.monotonic()
                if _progress != seen or bm.working:
                    seen, since = _progress, now
                elif bm.spinning and now - since > HANG_SECONDS:
                    raise _hang(list(runnable) + at_grid, len(pending), limit)
            bm = None
    except BaseException:
        for b in [bm, *runnable, *at_grid]:
            if b is not None:
                b._abort()  # unwinds its suspended threads (a block that raised has done so already)
        raise


def _hang(resident, not_started, limit):
    parts = []
    for b in resident:
        waits = b.waits()
        where = "; ".join(f"{len(vs)} thread{'s' if len(vs) > 1 else ''} at {_where(line)}"
                          for line, vs in sorted(waits.items(), key=lambda kv: -len(kv[1]))[:3])
        parts.append(f"block {tuple(b.threads[0].blockIdx)}: {where}")
    tail = (f" {not_started} more blocks have not started: the simulated GPU holds at most {limit} blocks of this "
            "size at once, and blocks wait for blocks that are not resident hang on a GPU too."
            if not_started else "")
    return HangError(
        f"no thread of any block has exited or passed a barrier for {HANG_SECONDS:g} s: the blocks spin waiting for "
        f"something no running block will do (on a GPU this kernel hangs). {' | '.join(parts)}.{tail}"
    )
