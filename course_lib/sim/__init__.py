"""Seeing the GPU without one: warp primitives, a race and barrier checker, a profiler.

In simulator mode ``import course_lib`` calls :func:`install`, after which ordinary
``@cuda.jit`` kernels launched as usual can use the warp-level primitives
(``cuda.shfl_down_sync``, ``cuda.ballot_sync``...) with lockstep semantics among
the lanes of their mask. Taught in ``lessons/00_seeing_the_gpu.ipynb``.
"""

from ._engine import FULL_MASK, WARP_SIZE, BarrierError, WarpError
from ._hooks import HookError, install, installed, uninstall, verify
from .check import CheckReport, Problem, check
from .profile import LineProfile, ProfileReport, profile
from .record import Launch, Record, Transfer, record

__all__ = [
    "FULL_MASK",
    "WARP_SIZE",
    "BarrierError",
    "CheckReport",
    "Problem",
    "Record",
    "Transfer",
    "check",
    "HookError",
    "Launch",
    "LineProfile",
    "ProfileReport",
    "WarpError",
    "install",
    "profile",
    "record",
    "installed",
    "uninstall",
    "verify",
]
