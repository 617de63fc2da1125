"""The scheduler of one block: it hands the baton to one simulated thread at a time.

A :class:`BlockScheduler` runs the threads of a block until they end, all wait at a grid
barrier, or the block gives way to the others (see :func:`course_lib.sim._engine.run_grid`,
which interleaves blocks). It releases ``syncthreads`` barriers, completes warp operations
among the lanes of their masks (:mod:`course_lib.sim._warp`), resolves ``activemask()``,
and reports a barrier or warp operation that can never complete.
"""

from __future__ import annotations

import sys
import threading
from collections import deque

import numpy as np

from ._baton import _GRID, Carrier, VThread, _Abort, _idle_carriers, _where, fair, new_slice, progressed
from ._warp import FULL_MASK, WARP_SIZE, WarpError, _bits, _Collective, _complete, _lanes


class BarrierError(RuntimeError):
    """Threads of a block (or blocks of a grid) wait at barriers that can never all be reached."""


class BlockScheduler:
    """Runs the threads of one block, one at a time (the stock entry point, ``run``, is added by
    :class:`course_lib.sim._engine.ScheduledBlockManager`)."""

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
        self.thread_order_rng = None  # shuffles every thread (check(seed=...)), or None
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
                progressed()
                self._exited(v)
                if obs is not None:
                    obs.thread_exited(v)
                if self.failure is None and self.ready and self.ready[0].state == "new":
                    nxt = self.ready.popleft()
                    nxt.state = "running"
                    nxt.carrier = carrier
                    carrier.v = nxt
                    new_slice()
                    continue
                carrier.v = None
                _idle_carriers.append(carrier)
                if not self.aborting:
                    self._hand_on()
                return
        finally:
            if saved_err is not None:
                np.seterr(**saved_err)

    def _hand_on(self):
        """Pass the baton on from a thread that pauses or exits: straight to the next ready thread while the
        scheduler has nothing to decide (no failure, no yield to other blocks), else back to the scheduler.

        Each hand-over through the scheduler woke two OS threads (the scheduler, then the next carrier); a
        block whose threads meet a barrier paid that for every thread, twice. The scheduler's loop in
        :meth:`step` still sees every failure, yield, barrier release and exit: the chain of hand-overs it
        started ends with exactly one release of its lock."""
        if self.ready and self.failure is None and not self.yielded:
            new_slice()
            self._resume(self.ready.popleft())
        else:
            self._back.release()

    def _pause(self, carrier, state, line):
        """Give the baton back to the scheduler and wait until it is handed over again."""
        v = carrier.v
        if self.aborting:  # the launch was abandoned (e.g. interrupted) while this thread ran
            raise _Abort
        v.state = state
        v.wait_line = line
        self._hand_on()
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
    def start(self, grid_point, args, shared, observer=None, thread_order_rng=None, order_rng=None):
        """Make the threads of block ``grid_point``, in a start order a GPU could use.

        Parameters
        ----------
        grid_point : tuple of int
        args : tuple
            The kernel's arguments.
        shared : object
            This block's ``cuda.shared`` allocator.
        observer : object, optional
            The launch's observer (a check or profile session).
        thread_order_rng : numpy.random.Generator, optional
            Shuffles the start of every thread, and the order threads leave a barrier.
        order_rng : numpy.random.Generator, optional
            Draws the start order of the block's warps (without ``thread_order_rng``).
        """
        self._args = args
        self.grid_point = grid_point
        self.shared = shared
        self.observer = obs = observer
        self.thread_order_rng = thread_order_rng
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
        obs = self.observer
        finished = False
        try:
            while True:
                while self.ready:
                    new_slice()
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
        self.stalled = 0
        progressed()
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
        if self.thread_order_rng is not None:
            self.thread_order_rng.shuffle(order)
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
