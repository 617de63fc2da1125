"""Where the wall time of a host-driven public call goes: device time, launches, copies, allocations.

``with split() as s: call()`` (GPU only) counts, and times on the host, every kernel launch (numba's
``CUDADispatcher.call``), every copy (``driver.host_to_device`` / ``device_to_host`` /
``device_to_device``) and every device allocation (``Context.memalloc``) the call makes, and puts CUDA
events around each launch's driver call (``cuda.core``'s ``launch`` as numba-cuda's dispatcher module
calls it, after the arguments are marshalled), so that the sum of those intervals is the kernels'
device time. :meth:`Split.report` divides the call's wall time into

- ``device_seconds``: the kernels' time on the GPU (event intervals summed);
- ``launch_host_seconds``: the host inside launches (argument marshalling, the driver call);
- ``copy_host_seconds``: the host inside copies, including the waits for the GPU a blocking copy makes;
- ``alloc_host_seconds``: the host inside allocations;
- ``other_host_seconds``: the rest of the wall time (Python, NumPy, synchronisation outside copies).

The host parts add up to the wall time; the device time overlaps them (the GPU runs while the host
launches the next kernel), so it is reported beside them, not added.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = ["Split", "split"]


@dataclass
class Split:
    """Counts and host seconds per kind of operation, and the kernels' event intervals."""

    launches: int = 0
    copies: int = 0
    copy_bytes: int = 0
    allocations: int = 0
    alloc_bytes: int = 0
    launch_host_seconds: float = 0.0
    copy_host_seconds: float = 0.0
    alloc_host_seconds: float = 0.0
    #: (start, stop) event pairs around each kernel's driver launch, read in :meth:`report`.
    events: list = field(default_factory=list)
    #: Seconds between two events (``numba.cuda.event_elapsed_time`` / 1e3 on a GPU).
    elapsed: object = None

    def device_seconds(self) -> float:
        if not self.events:
            return 0.0
        self.events[-1][1].synchronize()
        return float(sum(self.elapsed(a, b) for a, b in self.events))

    def report(self, wall_seconds: float, calls: int = 1) -> dict:
        """The split of ``wall_seconds`` (the wall time of ``calls`` public calls), per call.

        Returns
        -------
        dict
            ``wall_seconds``, ``device_seconds``, ``launch_host_seconds``, ``copy_host_seconds``,
            ``alloc_host_seconds``, ``other_host_seconds``, ``launches``, ``copies``, ``copy_bytes``,
            ``allocations``, ``alloc_bytes`` (all per call), ``scope`` ("end_to_end").
        """
        host = self.launch_host_seconds + self.copy_host_seconds + self.alloc_host_seconds
        per = float(calls)
        return {"scope": "end_to_end", "wall_seconds": wall_seconds / per, "device_seconds": self.device_seconds() / per,
                "launch_host_seconds": self.launch_host_seconds / per, "copy_host_seconds": self.copy_host_seconds / per,
                "alloc_host_seconds": self.alloc_host_seconds / per,
                "other_host_seconds": max(0.0, wall_seconds - host) / per,
                "launches": self.launches / per, "copies": self.copies / per, "copy_bytes": self.copy_bytes / per,
                "allocations": self.allocations / per, "alloc_bytes": self.alloc_bytes / per}


def _timed(split: Split, counter: str, seconds: str, nbytes: str | None, size_of=None):
    def wrapper(original):
        def call(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                setattr(split, seconds, getattr(split, seconds) + time.perf_counter() - t0)
                setattr(split, counter, getattr(split, counter) + 1)
                if nbytes is not None:
                    setattr(split, nbytes, getattr(split, nbytes) + int(size_of(args, kwargs)))

        return call

    return wrapper


@contextmanager
def split():
    """Profile a host-driven call on the GPU: ``with split() as s: ...; s.report(wall)`` (see the module)."""
    from numba import cuda
    from numba.cuda import dispatcher
    from numba.cuda.cudadrv import driver
    from numba.cuda.dispatcher import CUDADispatcher

    from .. import device

    if not device.is_gpu():
        raise RuntimeError("split() needs a GPU: the simulator's launches and copies take no GPU time")
    s = Split(elapsed=lambda a, b: cuda.event_elapsed_time(a, b) / 1e3)
    restore = []

    def patch(owner, name, wrapper):
        original = getattr(owner, name)
        setattr(owner, name, wrapper(original))
        restore.append((owner, name, original))

    depth = [0]

    def launch_wrapper(original):
        def call(self, *args, **kwargs):
            depth[0] += 1
            t0 = time.perf_counter()
            try:
                return original(self, *args, **kwargs)
            finally:
                depth[0] -= 1
                if depth[0] == 0:  # a dispatcher may forward to another: count the outermost call
                    s.launch_host_seconds += time.perf_counter() - t0
                    s.launches += 1

        return call

    def kernel_events(original):
        def launch(*args, **kwargs):
            start, stop = cuda.event(), cuda.event()
            start.record()
            try:
                return original(*args, **kwargs)
            finally:
                stop.record()
                s.events.append((start, stop))

        return launch

    patch(CUDADispatcher, "call", launch_wrapper)
    patch(dispatcher, "launch", kernel_events)
    for name in ("host_to_device", "device_to_host", "device_to_device"):
        patch(driver, name, _timed(s, "copies", "copy_host_seconds", "copy_bytes", lambda a, k: a[2]))
    patch(driver.Context, "memalloc", _timed(s, "allocations", "alloc_host_seconds", "alloc_bytes", lambda a, k: a[1]))
    try:
        yield s
    finally:
        while restore:
            owner, name, original = restore.pop()
            setattr(owner, name, original)
