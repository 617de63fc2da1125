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

This module holds the launch: its settings (seed, observer, residency), the grid's scheduler
(:func:`run_grid`) and the stock simulator's entry point (:class:`ScheduledBlockManager`). The
pieces below it: one block's scheduler in :mod:`course_lib.sim._block`, simulated threads and the
baton they pass in :mod:`course_lib.sim._baton`, what warp operations return in
:mod:`course_lib.sim._warp`; their public names are re-exported here.

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

import inspect
import math
import os
import threading
import time
from collections import deque

import numpy as np

# The pieces, re-exported here: the scheduler's public names have always been read from this module.
from ._baton import (BLOCK_SLICES, TIME_SLICE, Carrier, VThread, _caller_line, _where, fair, on_carrier,  # noqa: F401
                     progress, tick)
from ._block import BarrierError, BlockScheduler
from ._warp import FULL_MASK, WARP_SIZE, WarpError  # noqa: F401

#: Seconds without progress in any block (see :func:`run_grid`) after which a launch is stopped as a hang.
HANG_SECONDS = 5.0
#: The simulated GPU, for residency: blocks of a grid that are started at once (and, for a
#: cooperative launch, the largest grid). One SM on purpose: every resident thread waiting at
#: a barrier holds an OS thread of this process (2048 of them fit the grader's address-space
#: limit, with course_lib.grading.running.confine.THREAD_STACK each).
SIM_SM_COUNT = 1
MAX_THREADS_PER_SM = 2048
MAX_BLOCKS_PER_SM = 32
#: Shared memory of the simulated SM, the most one block may use, and what the driver reserves per block
#: (compute capability 9.0: 228 KB per SM, 227 KB per block, 1 KB reserved).
MAX_SHARED_PER_SM = 228 * 1024
MAX_SHARED_PER_BLOCK = 227 * 1024
SHARED_RESERVED_PER_BLOCK = 1024

__all__ = ["FULL_MASK", "WARP_SIZE", "BarrierError", "Carrier", "CooperativeLaunchError", "HangError",
           "ScheduledBlockManager", "VThread", "WarpError", "get_seed", "max_cooperative_grid_blocks", "run_grid",
           "set_seed"]


class CooperativeLaunchError(RuntimeError):
    """A grid that synchronises (``cuda.cg.this_grid().sync()``) has more blocks than can be resident at once."""


class HangError(RuntimeError):
    """No block of a launch has made progress for :data:`HANG_SECONDS`: on a GPU it would hang."""


def max_cooperative_grid_blocks(blockdim, dynsmemsize=0):
    """Largest grid of a cooperative launch with this block size on the simulated GPU.

    As ``kernel.overloads[sig].max_cooperative_grid_blocks(blockdim, dynsmemsize)`` on a GPU
    (numba-cuda's ``_Kernel.max_cooperative_grid_blocks``): the blocks that fit on the device at
    once (per SM, by threads, by blocks and by shared memory), times its SMs.

    Parameters
    ----------
    blockdim : int or tuple of int
        Threads per block (a tuple for 2-D and 3-D blocks).
    dynsmemsize : int, optional
        Bytes of dynamic shared memory per block. A block holds it plus the 1 KB the driver
        reserves per block (CUDA C++ Programming Guide, "Technical Specifications per Compute
        Capability": 228 KB of shared memory per SM on compute capability 9.0, 1 KB reserved
        per block); more than :data:`MAX_SHARED_PER_BLOCK` fits no block at all (0).
    """
    dims = blockdim if isinstance(blockdim, tuple) else (blockdim,)
    threads = math.prod(int(d) for d in dims)
    if threads <= 0:
        raise ValueError(f"block dimensions must be positive, got {blockdim!r}")
    dynsmemsize = int(dynsmemsize)
    if dynsmemsize < 0:
        raise ValueError(f"dynamic shared memory must be a non-negative number of bytes, got {dynsmemsize!r}")
    if threads > MAX_THREADS_PER_SM or dynsmemsize > MAX_SHARED_PER_BLOCK:
        return 0
    by_shared = MAX_SHARED_PER_SM // (dynsmemsize + SHARED_RESERVED_PER_BLOCK)
    return min(MAX_BLOCKS_PER_SM, MAX_THREADS_PER_SM // threads, by_shared) * SIM_SM_COUNT


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




class ScheduledBlockManager(BlockScheduler):
    """Runs the threads of one block, one at a time (drop-in for the simulator's BlockManager)."""

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
        """Make the threads of block ``grid_point``, observed and ordered as this module's settings say."""
        super().start(grid_point, args, shared, observer, thread_order_rng, order_rng)


#: (kernel context, grid points seen) of the stock launch whose blocks are being collected.
_collecting = None


def _uses_grid_sync(fn):
    """True if the code of ``fn``, a function nested in it, or a device function it reaches (by a global or
    closure name, through a module attribute, from another device function) names ``this_grid``.

    numba-cuda launches a kernel cooperatively when its compiled code (device functions linked in)
    calls the grid-group intrinsic (``_Kernel.cooperative``); the launch of a grid too large to be
    co-resident is then refused before any block runs (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE).
    Cached per code object.
    """
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    found = _grid_sync_codes.get(code)
    if found is None:
        found = _reaches_grid_sync(fn, set())
        _grid_sync_codes[code] = found
    return found


#: Code object -> whether its function reaches ``this_grid`` (see :func:`_uses_grid_sync`).
_grid_sync_codes: dict = {}


def _reaches_grid_sync(fn, seen):
    from ._kernel_refs import _device_python, _global_names, _referenced

    code = getattr(fn, "__code__", None)
    if code is None or code in seen:
        return False
    seen.add(code)
    names = _global_names(code)
    if "this_grid" in names:
        return True
    for _, value in _referenced(fn):
        dev = _device_python(value)
        if dev is None and inspect.ismodule(value):  # `helpers.step(...)`: the module's device functions named
            for attr in names:
                inner = _device_python(getattr(value, attr, None))
                if inner is not None and _reaches_grid_sync(inner, seen):
                    return True
        elif dev is not None and _reaches_grid_sync(dev, seen):
            return True
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
    dynshared = getattr(getattr(module, "_shared", None), "_dynshared_size", 0) or 0
    limit = max(1, max_cooperative_grid_blocks(tuple(block_dim), min(dynshared, MAX_SHARED_PER_BLOCK)))
    if total > limit and _uses_grid_sync(getattr(f, "__course_rewritten__", f)):
        raise _too_large(total, block_dim, limit)  # before any block runs, as cuLaunchCooperativeKernel refuses
    if order is None and thread_order_rng is None and order_rng is not None and total > 1:
        points = [points[i] for i in order_rng.permutation(total)]
    pending = deque(points)
    runnable = deque()  # resident blocks that can run
    at_grid = []  # resident blocks whose live threads all wait at the grid barrier
    ended = []  # grid points of the blocks that have ended
    seen, since = progress(), time.monotonic()
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
                if progress() != seen or bm.working:
                    seen, since = progress(), now
                elif bm.spinning and now - since > HANG_SECONDS:
                    raise _hang(list(runnable) + at_grid, len(pending), limit)
            bm = None
    except BaseException:
        for b in [bm, *runnable, *at_grid]:
            if b is not None:
                b._abort()  # unwinds its suspended threads (a block that raised has done so already)
        raise
    finally:
        release_device_globals()


#: The simulated ``cuda`` module swapped into the globals of device functions called during the running
#: launch (see :func:`hold_device_globals`), put back when the launch ends.
_held_swaps: list = []


def hold_device_globals(fn, module) -> None:
    """Put the launch's simulated ``cuda`` module into ``fn``'s globals until the launch ends.

    The stock simulator swaps it in and back around every call of a device function, scanning the
    function's module each time: a kernel calling a device function of another module in its inner
    loop spent much of its time there. Within one launch the swapped module is the same, and no host
    code runs meanwhile (launches run one at a time under :data:`launch_lock`).
    """
    from numba.cuda.simulator.kernelapi import swapped_cuda_module

    swap = swapped_cuda_module(fn, module)
    swap.__enter__()
    _held_swaps.append(swap)


def release_device_globals() -> None:
    """Put back the globals :func:`hold_device_globals` swapped (the last held, first)."""
    while _held_swaps:
        _held_swaps.pop().__exit__(None, None, None)


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
