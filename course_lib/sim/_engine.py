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
* a deterministic execution order that :mod:`course_lib.sim` can shuffle with a seed;
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

import sys
import threading
from collections import deque

import numpy as np

from numba.cuda.simulator.kernelapi import Dim3

FULL_MASK = 0xFFFFFFFF
WARP_SIZE = 32
#: Loop iterations (and atomics) a simulated thread runs before it gives the baton to
#: the next runnable thread of its block. Large enough that ordinary loops rarely pay
#: for a switch, small enough that a spinning thread lets the others finish quickly.
TIME_SLICE = 512

__all__ = ["FULL_MASK", "WARP_SIZE", "BarrierError", "Carrier", "ScheduledBlockManager", "VThread", "WarpError"]


class WarpError(RuntimeError):
    """A warp-level primitive was used in a way that would hang or be undefined on a GPU."""


class BarrierError(RuntimeError):
    """Threads of a block wait at barriers that can never all be reached."""


#: The observer of the running launch (a check or profile session), or None.
#: Set only by course_lib.sim's own launcher; ordinary launches run unobserved.
observer = None
#: Optional random generator shuffling the order in which threads start.
thread_order_rng = None
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


def _preempt():
    global _steps
    _steps = TIME_SLICE
    carrier = threading.current_thread()
    if type(carrier) is not Carrier or carrier.v is None:
        return  # not a thread of this scheduler (e.g. the stock simulator's)
    manager = carrier.manager
    if manager.ready:  # someone else can run: go to the back of the queue
        v = carrier.v
        manager.ready.append(v)
        manager._pause(carrier, "ready", None)


_FAIR = "__course_fair__"


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
    from ._lines import REWRITTEN, with_ticks

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
        return {lane: _int32_mask(_bits(other for other, v in values.items() if v == value))
                for lane, value in values.items()}
    if kind == "match_all_sync":
        same = len({v for v in values.values()}) == 1
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
        "result", "epoch", "clock", "seen", "in_atomic", "collective", "line_count", "access_count",
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

    def warp_collective(self, kind, mask, value, line):
        return self.manager.warp_collective(self, kind, mask, value, line)

    def activemask(self):
        """Lanes of this warp that reach this same ``activemask()`` call together."""
        return self.manager.activemask(self, _caller_line(3))

    def __str__(self):
        return "Thread <<<%s, %s>>>" % (self.v.blockIdx, self.v.threadIdx) if self.v else "idle carrier"


_idle_carriers: list = []


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
        global _steps
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
        global _steps
        f = self._f
        self._args = args
        self.observer = obs = observer
        threads = [VThread(grid_point, p, self._block_dim) for p in np.ndindex(*self._block_dim)]
        # np.ndindex walks x slowest; order by linear thread id (x fastest), as a GPU numbers lanes.
        threads.sort(key=lambda v: v.thread_id)
        self.threads = threads
        self.live = len(threads)
        for v in threads:
            self.live_lanes[v.warp] = self.live_lanes.get(v.warp, 0) | 1 << v.lane
        order = list(threads)
        if thread_order_rng is not None:
            thread_order_rng.shuffle(order)
        if obs is not None:
            obs.block_started(grid_point, threads)
        self.ready = deque(order)
        del f
        try:
            while True:
                while self.ready:
                    _steps = TIME_SLICE
                    self._resume(self.ready.popleft())
                    self._back.acquire()
                    if self.failure is not None:
                        err, tb = self.failure
                        raise err.with_traceback(tb)
                if self.active_groups:
                    self._resolve_activemasks()
                    continue
                waiting = self.barrier_waiting
                if waiting and len(waiting) == self.live and not self.collectives:
                    self.barrier_waiting = []
                    self._release_barrier(waiting, obs)
                    continue
                if waiting or self.collectives:
                    self._deadlock(waiting, obs)
                break
        except BaseException:
            self._abort()
            raise
        finally:
            if obs is not None:
                obs.block_finished(grid_point)

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
        if obs is not None:
            obs.barrier(waiting, self.threads)
        kinds = {v.wait_value[0] for v in waiting if v.wait_value is not None}
        result = None
        if kinds:
            kind = kinds.pop()
            preds = [bool(v.wait_value[1]) for v in waiting if v.wait_value is not None]
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
        """Unwind every suspended simulated thread (their carriers go back to the pool)."""
        self.aborting = True
        for v in self.threads:
            if v.state in ("barrier", "warp", "ready") and v.carrier is not None:
                v.carrier._go.release()
