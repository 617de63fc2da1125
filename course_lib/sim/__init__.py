"""Seeing the GPU without one: warp primitives, a race and barrier checker, a profiler.

Taught in ``lessons/00_seeing_the_gpu.ipynb``.

* **Warp primitives.** In simulator mode ``import course_lib`` calls :func:`install`:
  every launch then runs on course_lib's block scheduler (one simulated thread at a
  time, baton passing; faster than the stock one) and ordinary ``@cuda.jit`` kernels can
  use ``cuda.shfl_sync``, ``shfl_up_sync``, ``shfl_down_sync``, ``shfl_xor_sync``,
  ``ballot_sync``, ``all_sync``, ``any_sync``, ``eq_sync``, ``match_any_sync``,
  ``match_all_sync``, ``syncwarp``, ``activemask`` and ``lanemask_lt`` with lockstep
  semantics among the non-exited lanes of the mask (as the CUDA guide defines them:
  lanes that returned, or are missing from a partial last warp, do not take part). An
  alive lane named in a mask that never arrives raises :class:`WarpError` (never a
  hang). The scheduler is fair: a thread spinning on a flag that another warp sets lets
  it run, so every kernel that ends on a GPU ends here.
* **Blocks as a GPU runs them.** Blocks interleave: a block spinning on a flag that
  another block sets lets it run, and a launch in which no block can make progress is
  stopped within :data:`~course_lib.sim._engine.HANG_SECONDS` with :class:`HangError`
  naming the blocks and lines. ``cuda.cg.this_grid().sync()`` is a grid barrier, as in a
  cooperative launch; a grid over :func:`max_cooperative_grid_blocks` raises
  :class:`CooperativeLaunchError`. Blocks, and the warps of a block, start in an order
  drawn from a seeded generator (:func:`set_seed`, environment variable
  ``COURSE_SIM_SEED``; the grader draws a seed per grading run), not always in index order.
* **Intrinsics as compiled.** ``cuda.fma`` rounds once, ``cuda.cbrt`` of a negative
  number is negative, ``brev``/``clz``/``ffs``/``popc`` follow the argument's bit width,
  ``max``/``min`` ignore a NaN operand (PTX ``max.f32``), ``match_*_sync`` compare bit
  patterns, and ``cuda.event`` timestamps give ``elapsed_time`` in milliseconds of
  simulation (see :mod:`course_lib.sim._intrinsics`).
* **Numba's types.** Before a launch the kernel is typed by numba-cuda as for a GPU
  (:mod:`course_lib.sim._typing`): what would not compile is refused with Numba's
  message before any thread runs, and arithmetic runs in the types Numba gives it (a ``0.0``
  accumulator summing float32 is float64, ``int32 * int32`` is int64, ``math.sqrt`` of a
  float32 is float32, a variable merged from an int and a float is float64), wrapping
  silently as on a GPU.
* **What a GPU refuses, and computes.** A launch a GPU refuses raises
  :class:`~course_lib.sim._launch.LaunchError` naming the limit (1,024 threads per block,
  48 KB of shared memory, zero sizes, NumPy integer sizes, list arguments, calls matching no listed
  signature, a synchronising grid too large to be resident); the
  globals a kernel reads are frozen at its first launch (:mod:`course_lib.sim._launch`).
  Conversions, stores, comparisons, ``print`` (:mod:`course_lib.sim._convert`), integer
  corner cases, contraction into fused multiply-adds and ``fastmath`` flushing
  (:mod:`course_lib.sim._typed_ops`) follow the PTX numba-cuda emits.
* :func:`check` reports races (shared and global memory, byte by byte where views of several widths
  or record fields meet; a plain access and an atomic
  race too; a ``cuda.threadfence()`` then an atomic releases earlier writes to the block
  whose atomic observes it, as in the PTX memory model), barriers not reached by the whole block, out-of-bounds indices, negative
  indices (which Numba wraps, on a GPU too), reads of never-written device memory and
  warp misuse and float64 arithmetic in a kernel whose arrays are float32, optionally with
  a seeded shuffle of the order of blocks and threads.
* :func:`profile` counts what a profiler shows, per kernel and per source line: global
  requests and 32-byte sectors, shared-memory bank conflicts, atomics, SIMT efficiency,
  float64 and float32 operations.
* :func:`record` logs host<->device (and device<->device) copies and kernel launches.

``check`` and ``profile`` also work on a GPU machine: the launch runs under the
simulator in a child process (:mod:`course_lib.sim.remote`). The hooks rely on
internals of the pinned numba-cuda release (:mod:`course_lib.sim._hooks`).

Examples
--------
>>> import course_lib                                       # doctest: +SKIP
>>> from course_lib.sim import check, profile
>>> check(kernel, 4, 256, x, out).ok                        # doctest: +SKIP
True
>>> profile(kernel, 4, 256, x, out).total.sectors_per_request  # doctest: +SKIP
4.0
"""

from ._check import CheckReport, Problem, check
from ._engine import (FULL_MASK, WARP_SIZE, BarrierError, CooperativeLaunchError, HangError, WarpError, get_seed,
                      max_cooperative_grid_blocks, set_seed)
from ._hooks import HookError, install, installed, uninstall, verify
from ._profile import LineProfile, ProfileReport, profile
from ._record import Launch, Record, Transfer, record

__all__ = [
    "FULL_MASK",
    "WARP_SIZE",
    "BarrierError",
    "CheckReport",
    "CooperativeLaunchError",
    "HangError",
    "HookError",
    "Launch",
    "LineProfile",
    "Problem",
    "ProfileReport",
    "Record",
    "Transfer",
    "WarpError",
    "check",
    "get_seed",
    "install",
    "installed",
    "max_cooperative_grid_blocks",
    "profile",
    "record",
    "set_seed",
    "uninstall",
    "verify",
]
