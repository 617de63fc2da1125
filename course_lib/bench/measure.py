"""Timing and rates that measure what they name.

Rules, each with the function that applies it:

- **Device time of a kernel** (:func:`device_time`): CUDA events around K back-to-back launches,
  divided by K, where the K launches were queued *ahead of the GPU*: a spin kernel keeps the GPU busy
  while the host enqueues them, so the interval holds K kernels and the gaps the GPU itself leaves
  between them, not the host's launch cost. Events around one launch on an idle GPU time the host
  (about 50 us per numba launch with four array arguments on the H200 machine of the committed runs):
  K grows until the timed work is long (``min_seconds``), or a single launch is timed when it is long
  on its own.
- **Host cost per launch** (:attr:`DeviceTiming.host_seconds_per_launch`): wall time of enqueueing
  launches with no synchronisation, measured apart and stored beside the device time.
- **One long operation** (:func:`event_time`): events around one call (a large copy, a solve of many
  milliseconds); :data:`LONG_OPERATION` says when that is meaningful, and the result says if it was not.
- **End to end** (:func:`wall_time`): wall clock of the public call as a user makes it, allocations
  and copies included, the device synchronised before the clock stops.
- **Bandwidth** (:func:`dram_rate`): DRAM bytes with each array counted as it really moves, on a
  working set larger than the L2 (:data:`L2_BYTES`), or with the L2 flushed between repetitions
  (:func:`flush_l2`); a model's requested bytes may stand beside it, named ``requested_bytes``.
- **Graph searches** (:func:`teps_rates`): TEPS as Graph500 counts them (undirected edges of the searched
  component per second) and the arcs the search examined per second beside them.
- **One scope per row** (:func:`check_rows`): each row says what its time covers (:data:`SCOPES`);
  rows compared with each other share a scope and a problem.
- **Speed-ups** (:func:`speedup`): against the fastest CPU path measured on the same machine, the
  course's or a library's, named in the result.

The GPU is reached through a small object (:class:`NumbaGPU` on a real GPU); the tests drive the same
code with a simulated host clock and device queue.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field

import numpy as np

__all__ = ["L2_BYTES", "LONG_OPERATION", "SCOPES", "CupyGPU", "DeviceTiming", "NumbaGPU", "teps_rates", "check_rows",
           "device_time", "dram_rate", "event_time", "flush_l2", "speedup", "wall_time"]

#: L2 of the H100 and H200 (50 MB): a working set below it, repeated, is served from L2, not DRAM.
L2_BYTES = 50 * 10**6
#: Shortest interval events around a single operation may time: 20x the ~50 us host cost of a launch.
LONG_OPERATION = 1e-3
#: What a row's time covers: ``device`` (kernels on the GPU, per launch or per call), ``host_per_launch``
#: (the host's cost of one launch), ``end_to_end`` (the public call, wall clock), ``cpu_compute`` (the
#: compute part of a CPU path, inputs ready, as ``device`` is for the GPU).
SCOPES = ("device", "host_per_launch", "end_to_end", "cpu_compute")


class NumbaGPU:
    """The real GPU, through numba-cuda: host clock, events, synchronisation and a spin kernel."""

    def __init__(self):
        from numba import cuda

        from .. import device

        if not device.is_gpu():
            raise RuntimeError("timing on the device needs a GPU; the simulator has no meaningful timings")
        self._cuda = cuda
        self._spin_kernel = None

    @staticmethod
    def now() -> float:
        return time.perf_counter()

    def event(self):
        return self._cuda.event()

    @staticmethod
    def record(event):
        event.record()

    def elapsed(self, start, stop) -> float:
        stop.synchronize()
        return self._cuda.event_elapsed_time(start, stop) / 1e3

    def synchronize(self):
        self._cuda.synchronize()

    def spin(self, seconds: float):
        """Enqueue one single-thread kernel that sleeps about ``seconds`` on the GPU."""
        cuda = self._cuda
        if self._spin_kernel is None:
            from numba import uint32

            @cuda.jit
            def spin(microseconds):
                for _ in range(microseconds):
                    cuda.nanosleep(uint32(1000))

            self._spin_kernel = spin
        self._spin_kernel[1, 1](max(1, int(seconds * 1e6)))


class CupyGPU(NumbaGPU):
    """The real GPU through CuPy (its current stream and events), for the library peers."""

    _SPIN = r"""extern "C" __global__ void spin(unsigned int microseconds) {
        for (unsigned int i = 0; i < microseconds; ++i) __nanosleep(1000);
    }"""

    def __init__(self):
        import cupy

        self._cp = cupy
        self._spin_kernel = cupy.RawKernel(self._SPIN, "spin")

    def event(self):
        return self._cp.cuda.Event()

    def elapsed(self, start, stop) -> float:
        stop.synchronize()
        return self._cp.cuda.get_elapsed_time(start, stop) / 1e3

    def synchronize(self):
        self._cp.cuda.get_current_stream().synchronize()

    def spin(self, seconds: float):
        self._spin_kernel((1,), (1,), (self._cp.uint32(max(1, int(seconds * 1e6))),))


@dataclass
class DeviceTiming:
    """Device time per launch of one kernel (with its arguments) and the host's cost per launch.

    Attributes
    ----------
    device_seconds : float
        Median over samples of (event interval around K queued launches) / K.
    host_seconds_per_launch : float
        Wall time to enqueue one launch (no synchronisation), measured apart.
    launches : int
        K, launches per sample.
    queued : bool
        Whether every sample's launches were all enqueued before the GPU reached them. False: the
        interval may still contain host time, and ``device_seconds`` is an upper bound.
    samples : list of float
        Every sample's seconds per launch.
    """

    device_seconds: float
    host_seconds_per_launch: float
    launches: int
    queued: bool
    samples: list = field(default_factory=list)

    def fields(self) -> dict:
        """Fields a results row carries: ``seconds`` (device, per launch), ``scope`` and the rest beside it."""
        return {"scope": "device", "seconds": self.device_seconds,
                "host_seconds_per_launch": self.host_seconds_per_launch, "launches_per_sample": self.launches,
                "queued_ahead": self.queued, "repetitions": len(self.samples),
                "seconds_min": min(self.samples), "seconds_max": max(self.samples)}


def _host_cost(gpu, launch, count: int) -> float:
    start = gpu.now()
    for _ in range(count):
        launch()
    seconds = (gpu.now() - start) / count
    gpu.synchronize()
    return seconds


def _queued_sample(gpu, launch, k: int, host_per_launch: float) -> tuple[float, bool]:
    """(seconds per launch, queued) of one sample of ``k`` launches behind a spin kernel."""
    for attempt in range(4):
        # Long enough for the host to enqueue all k launches (twice over, doubled on a retry).
        spin = max(2e-4, 2.0 * k * host_per_launch) * 2**attempt
        before, start, stop = gpu.event(), gpu.event(), gpu.event()
        gpu.record(before)
        t0 = gpu.now()
        gpu.spin(spin)
        gpu.record(start)
        for _ in range(k):
            launch()
        gpu.record(stop)
        enqueued = gpu.now() - t0
        spun = gpu.elapsed(before, start)
        seconds = gpu.elapsed(start, stop) / k
        gpu.synchronize()
        if enqueued < spun:
            return seconds, True
    return seconds, False


def device_time(launch, *, repeat: int = 5, warmup: int = 1, launches: int | None = None, min_seconds: float = 2e-3,
                max_launches: int = 256, gpu=None) -> DeviceTiming:
    """Device time per launch of ``launch()`` and the host's cost per launch, measured apart.

    Parameters
    ----------
    launch : callable
        Enqueues the kernel(s) of one launch and nothing else: no copy back, no synchronisation
        (device arrays prepared beforehand).
    repeat : int
        Samples (the median is kept), >= 1.
    warmup : int
        Untimed launches first (compilation), >= 0.
    launches : int, optional
        K, launches per sample; default: enough for ``min_seconds`` of device time, at most
        ``max_launches`` (1 when one launch is that long).
    min_seconds : float
        Device time a sample should hold, far above the events' resolution and the GPU's own
        gap between kernels.
    max_launches : int
        Cap on K (the driver's launch queue holds about a thousand).
    gpu : object, optional
        :class:`NumbaGPU` (default) or an object with the same methods.

    Returns
    -------
    DeviceTiming
    """
    if int(repeat) < 1 or int(warmup) < 0:
        raise ValueError(f"repeat must be >= 1 and warmup >= 0, got {repeat}, {warmup}")
    gpu = NumbaGPU() if gpu is None else gpu
    for _ in range(int(warmup)):
        launch()
    gpu.synchronize()
    # Events around one launch: the device time plus the host's cost, an upper bound of both.
    start, stop = gpu.event(), gpu.event()
    gpu.record(start)
    launch()
    gpu.record(stop)
    rough = gpu.elapsed(start, stop)
    gpu.synchronize()
    if launches is None and rough >= min_seconds:
        launches = 1  # one launch is long on its own: few launches to measure the host cost with
        host = _host_cost(gpu, launch, 2)
    else:
        host = _host_cost(gpu, launch, 8)
    if launches is None:
        estimate, _ = _queued_sample(gpu, launch, 4, host)
        launches = min(max_launches, max(1, math.ceil(min_seconds / max(estimate, 1e-9))))
    k = int(launches)
    if k < 1:
        raise ValueError(f"launches must be >= 1, got {launches}")
    if k > 8:
        host = min(host, _host_cost(gpu, launch, k))
    samples, queued = [], True
    for _ in range(int(repeat)):
        seconds, ok = _queued_sample(gpu, launch, k, host)
        samples.append(seconds)
        queued &= ok
    return DeviceTiming(float(np.median(samples)), host, k, queued, samples)


def event_time(operation, *, repeat: int = 5, warmup: int = 1, gpu=None) -> dict:
    """Events around one call of ``operation`` (a large copy, a long kernel): median seconds.

    Returns
    -------
    dict
        ``seconds`` (median), ``seconds_min``, ``seconds_max``, ``repetitions``, ``scope`` ("device"),
        and ``long_enough``: whether the median is >= :data:`LONG_OPERATION`, below which the
        interval mostly holds the host's cost of issuing the call.
    """
    gpu = NumbaGPU() if gpu is None else gpu
    for _ in range(int(warmup)):
        operation()
    gpu.synchronize()
    samples = []
    for _ in range(max(1, int(repeat))):
        start, stop = gpu.event(), gpu.event()
        gpu.record(start)
        operation()
        gpu.record(stop)
        samples.append(gpu.elapsed(start, stop))
    median = float(np.median(samples))
    return {"scope": "device", "seconds": median, "seconds_min": min(samples), "seconds_max": max(samples),
            "repetitions": len(samples), "long_enough": median >= LONG_OPERATION}


def wall_time(call, *, repeat: int = 5, warmup: int = 1, synchronize=None, clock=time.perf_counter) -> dict:
    """End to end: wall clock of ``call()`` as a user makes it, the device synchronised before the clock stops.

    Parameters
    ----------
    call : callable
        The public call, inputs on the host, result back on the host.
    synchronize : callable, optional
        Waits for the device (``numba.cuda.synchronize`` on a GPU); None: nothing to wait for.
    clock : callable
        Seconds (a fake clock in the tests).

    Returns
    -------
    dict
        ``scope`` ("end_to_end"), ``seconds`` (median), ``seconds_min``, ``seconds_max``, ``repetitions``.
    """
    wait = synchronize or (lambda: None)
    for _ in range(int(warmup)):
        call()
        wait()
    samples = []
    for _ in range(max(1, int(repeat))):
        t0 = clock()
        call()
        wait()
        samples.append(clock() - t0)
    return {"scope": "end_to_end", "seconds": float(np.median(samples)), "seconds_min": min(samples),
            "seconds_max": max(samples), "repetitions": len(samples)}


def flush_l2(buffer=None, nbytes: int = 2 * L2_BYTES):
    """Evict the L2 by writing ``nbytes`` (twice the L2) on the device; returns the buffer to reuse (GPU only)."""
    from numba import cuda

    if buffer is None:
        buffer = cuda.device_array(nbytes // 4, dtype=np.float32)
    buffer[:] = 0.0  # a device-side fill: every line of the buffer passes through the L2
    return buffer


def dram_rate(dram_bytes: float, seconds: float, *, working_set: float, l2_flushed: bool = False,
              peak: float | None = None, requested_bytes: float | None = None, l2_bytes: float = L2_BYTES) -> dict:
    """Bandwidth from the bytes that really cross DRAM.

    Parameters
    ----------
    dram_bytes : float
        Each array counted as it moves: read once if it stays in L2 for the call (a sparse product's x),
        written once, read again only where the access pattern evicts it.
    seconds : float
        Device time of the call.
    working_set : float
        Bytes the repeated call touches; at most ``l2_bytes`` only counts with ``l2_flushed``.
    l2_flushed : bool
        Whether the L2 was flushed between repetitions (:func:`flush_l2`).
    peak : float, optional
        Datasheet bytes/s: adds ``fraction_of_peak``.
    requested_bytes : float, optional
        A model's figure (e.g. the CUSP model's x read per non-zero), stored beside, named so.

    Returns
    -------
    dict
        ``dram_bytes``, ``dram_bytes_per_s``, and ``fraction_of_peak`` / ``requested_bytes`` /
        ``requested_bytes_per_s`` where given.

    Raises
    ------
    ValueError
        A working set the L2 holds, not flushed: the rate would be the L2's.
    """
    if working_set <= l2_bytes and not l2_flushed:
        raise ValueError(f"a {working_set / 1e6:.1f} MB working set fits the {l2_bytes / 1e6:.0f} MB L2: repeated "
                         "calls read it from L2; use a larger problem or flush the L2 between repetitions")
    if not seconds > 0:
        raise ValueError(f"seconds must be positive, got {seconds}")
    out = {"dram_bytes": float(dram_bytes), "dram_bytes_per_s": dram_bytes / seconds}
    if peak:
        out["fraction_of_peak"] = dram_bytes / seconds / peak
    if requested_bytes is not None:
        out["requested_bytes"] = float(requested_bytes)
        out["requested_bytes_per_s"] = requested_bytes / seconds
    return out


def teps_rates(component_edges: int, arcs_examined: int, seconds: float) -> dict:
    """Graph500 TEPS and the arcs examined per second.

    Parameters
    ----------
    component_edges : int
        Undirected edges with both ends in the searched component (Graph500's count: one per edge,
        not one per direction).
    arcs_examined : int
        Adjacency entries the search read (a top-down search reads both arcs of an edge; a
        direction-optimising one fewer).
    seconds : float

    Returns
    -------
    dict
        ``teps``, ``arcs_examined``, ``arcs_per_s``.
    """
    if not seconds > 0:
        raise ValueError(f"seconds must be positive, got {seconds}")
    return {"teps": component_edges / seconds, "component_edges": int(component_edges),
            "arcs_examined": int(arcs_examined), "arcs_per_s": arcs_examined / seconds}


def check_rows(rows, *, compare_by=()) -> None:
    """Check that every row has one scope and that rows compared together measure the same thing.

    Parameters
    ----------
    rows : list of dict
    compare_by : sequence of str
        Keys naming the problem (e.g. ``("size", "pixels")``): rows with equal values of the first
        key are compared, so they must agree on every other key named.

    Raises
    ------
    ValueError
        A row without a known ``scope``, or two compared rows of different problems.
    """
    for row in rows:
        if row.get("scope") not in SCOPES:
            raise ValueError(f"row {row.get('variant', row)!r} has scope {row.get('scope')!r}, not one of {SCOPES}")
    if not compare_by:
        return
    key, *same = compare_by
    groups: dict = {}
    for row in rows:
        groups.setdefault(row.get(key), []).append(row)
    for value, group in groups.items():
        for name in same:
            seen = {row.get(name) for row in group}
            if len(seen) > 1:
                raise ValueError(f"rows of {key}={value!r} compare different {name}: {sorted(map(str, seen))}")


def speedup(gpu_seconds: float, cpu_rows) -> dict:
    """A GPU speed-up against the fastest CPU path measured on the same machine.

    Parameters
    ----------
    gpu_seconds : float
    cpu_rows : iterable of dict
        Rows with ``variant`` and ``seconds``: every CPU path measured, the course's and the libraries'.

    Returns
    -------
    dict
        ``speedup`` (fastest CPU seconds / GPU seconds), ``against`` (that path's variant), ``cpu_seconds``.
    """
    rows = [r for r in cpu_rows if r.get("seconds")]
    if not rows:
        raise ValueError("no CPU path was measured: a speed-up needs the fastest one")
    best = min(rows, key=lambda r: r["seconds"])
    return {"speedup": best["seconds"] / gpu_seconds, "against": best["variant"], "cpu_seconds": best["seconds"]}


def as_dict(timing: DeviceTiming) -> dict:
    """A :class:`DeviceTiming` as a plain dict (for JSON)."""
    return asdict(timing)
