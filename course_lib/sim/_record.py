"""A log of host<->device transfers and kernel launches: :func:`record`.

Taught in ``lessons/00_seeing_the_gpu.ipynb`` and used by the lessons on transfer
costs. Inside ``with record() as log:`` every copy between host and device (explicit,
with ``cuda.to_device`` / ``copy_to_host``, or implicit, when a NumPy array is passed
to a kernel and copied back after it), every copy from one device array to another
(``DtoD``) and every kernel launch is appended to ``log``, in the order a GPU sees
them: a launch comes after the copies of its own NumPy arguments and before their
copies back. A log holds what the thread that opened it does: records open in other
threads (a grader measuring several submissions at once) do not see each other's copies.

It works on both backends. In the simulator it wraps ``to_device`` and the copy
methods of the simulator's device arrays, and ``FakeCUDAKernel.__call__``; on a GPU it
wraps numba-cuda's ``driver.host_to_device`` / ``device_to_host`` (through which all
copies go) and ``CUDADispatcher.call``. Everything is restored when the last open
``record()`` closes.
"""

from __future__ import annotations

import html
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = ["Launch", "Record", "Transfer", "record"]


@dataclass(frozen=True)
class Transfer:
    """One copy: ``direction`` is ``"HtoD"``, ``"DtoH"`` or ``"DtoD"``, ``nbytes`` its size."""

    direction: str
    nbytes: int


@dataclass(frozen=True)
class Launch:
    """One kernel launch: kernel name, grid and block dimensions (3-tuples)."""

    kernel: str
    griddim: tuple
    blockdim: tuple


@dataclass(eq=False)
class Record:
    """What happened inside one ``with record()`` block, in order.

    Attributes
    ----------
    events : list of Transfer or Launch
    allocations : list of int
        Bytes of each device allocation (``to_device``, ``device_array``, a NumPy argument's copy).
    """

    events: list = field(default_factory=list)
    allocations: list = field(default_factory=list)

    @property
    def transfers(self) -> list:
        return [e for e in self.events if isinstance(e, Transfer)]

    @property
    def launches(self) -> list:
        return [e for e in self.events if isinstance(e, Launch)]

    def summary(self) -> dict:
        """Counts and bytes per direction between host and device, and the number of launches
        (plus ``DtoD_count`` and ``DtoD_bytes`` when device-to-device copies happened)."""
        out = {"HtoD_count": 0, "HtoD_bytes": 0, "DtoH_count": 0, "DtoH_bytes": 0, "launches": len(self.launches)}
        for t in self.transfers:
            out[f"{t.direction}_count"] = out.get(f"{t.direction}_count", 0) + 1
            out[f"{t.direction}_bytes"] = out.get(f"{t.direction}_bytes", 0) + t.nbytes
        return out

    def per_call(self, calls: int = 1, costs=None) -> dict:
        """Launches, copies and allocations per call of the recorded block, and the host time they
        cost at the committed per-launch and per-copy costs (a model, labelled so).

        Parameters
        ----------
        calls : int
            How many public calls the block made.
        costs : course_lib.bench.costs.HostCosts, optional
            Default: :func:`course_lib.bench.costs.committed_costs` (the committed GPU runs).

        Returns
        -------
        dict
            ``launches``, ``copies``, ``copy_bytes``, ``allocations`` (per call),
            ``modelled_host_seconds`` (None without a committed run) and ``modelled_from`` (its device).
        """
        if costs is None:
            from ..bench.costs import committed_costs

            costs = committed_costs()
        calls = max(1, int(calls))
        launches = len(self.launches) / calls
        copies = len(self.transfers) / calls
        copy_bytes = sum(t.nbytes for t in self.transfers if t.direction != "DtoD") / calls
        allocations = len(self.allocations) / calls
        return {"launches": launches, "copies": copies, "copy_bytes": copy_bytes, "allocations": allocations,
                "modelled_host_seconds": costs.modelled_host_seconds(launches, copies, copy_bytes, allocations),
                "modelled_from": costs.device}

    def cost_line(self, calls: int = 1, costs=None) -> str:
        """One line: launches, copies, allocations per call and the modelled host time."""
        c = self.per_call(calls, costs)
        line = (f"per call: {c['launches']:g} launch(es), {c['copies']:g} copies, {c['allocations']:g} allocation(s)")
        if c["modelled_host_seconds"] is None:
            return line + "; no committed GPU run to model the host time from"
        from ..bench.costs import committed_costs

        k = committed_costs() if costs is None else costs
        return (line + f"; modelled host time {1e3 * c['modelled_host_seconds']:.3g} ms (model: "
                f"{1e6 * k.launch_seconds:.0f} us per launch, {1e6 * (k.copy_seconds or 0):.0f} us per small copy, "
                f"measured on {c['modelled_from']}; allocations not costed)")

    def __str__(self):
        s = self.summary()
        head = (f"{s['launches']} kernel launch(es); host->device: {s['HtoD_count']} copies, {s['HtoD_bytes']} bytes; "
                f"device->host: {s['DtoH_count']} copies, {s['DtoH_bytes']} bytes")
        if "DtoD_count" in s:
            head += f"; device->device: {s['DtoD_count']} copies, {s['DtoD_bytes']} bytes"
        lines = [head, self.cost_line()]
        for e in self.events:
            if isinstance(e, Launch):
                lines.append(f"  launch {e.kernel}[{e.griddim}, {e.blockdim}]")
            else:
                lines.append(f"  copy {e.direction} {e.nbytes} bytes")
        return "\n".join(lines)

    def _repr_html_(self):
        rows = "".join(
            f"<tr><td>launch</td><td>{html.escape(e.kernel)}[{e.griddim}, {e.blockdim}]</td></tr>"
            if isinstance(e, Launch)
            else f"<tr><td>copy {e.direction}</td><td>{e.nbytes} bytes</td></tr>"
            for e in self.events
        )
        head = html.escape(str(self).splitlines()[0])
        return f"<p>{head}</p><table>{rows}</table>"


#: Open records of all threads (the wrappers are installed while there is one).
_open_count = 0
_restore: list = []
_lock = threading.Lock()
#: Per host thread: ``records``, the open records of that thread, which log only what that
#: thread does (a grader measuring submissions in threads gets each thread's own copies);
#: ``depth``, nesting of dispatcher calls (GPU).
_local = threading.local()


def _records():
    return getattr(_local, "records", ())


def _log(event):
    for rec in _records():
        rec.events.append(event)


def _log_allocation(nbytes):
    for rec in _records():
        rec.allocations.append(nbytes)


def _logging_launch(event, run):
    """Run a launch, logging ``event`` after the copies of its arguments (the HtoD copies it
    made first) and before the copies back (its DtoH copies)."""
    starts = [(rec, len(rec.events)) for rec in _records()]
    try:
        return run()
    finally:
        for rec, start in starts:
            at = start
            while at < len(rec.events) and isinstance(rec.events[at], Transfer) and rec.events[at].direction == "HtoD":
                at += 1
            rec.events.insert(at, event)


def _dims(d):
    d = tuple(d) if isinstance(d, (tuple, list)) else (d,)
    return tuple(int(x) for x in d) + (1,) * (3 - len(d))


def _patch(owner, name, wrapper):
    original = getattr(owner, name)
    setattr(owner, name, wrapper(original))
    _restore.append((owner, name, original))


def _install_sim():
    import numba.cuda
    from numba.cuda.simulator import kernel as sim_kernel

    from . import _engine
    from numba.cuda.simulator.cudadrv import devicearray

    def wrap_to_device(original):
        def to_device(ary, stream=0, copy=True, to=None):
            result = original(ary, stream, copy, to)
            if to is None:  # with to=, the copy is logged by copy_to_device
                _log_allocation(int(result.nbytes))
                _log(Transfer("HtoD", int(result.nbytes)))
            return result

        return to_device

    original_to_device = devicearray.to_device
    for owner in (numba.cuda, devicearray):  # numba.cuda re-exports the simulator's function
        if getattr(owner, "to_device", None) is original_to_device:
            _patch(owner, "to_device", wrap_to_device)

    def wrap_copy_to_host(original):
        def copy_to_host(self, ary=None, stream=0):
            _log(Transfer("DtoH", int(self.nbytes)))
            return original(self, ary, stream)

        return copy_to_host

    def wrap_copy_to_device(original):
        def copy_to_device(self, ary, stream=0):
            direction = "DtoD" if isinstance(ary, devicearray.FakeCUDAArray) else "HtoD"
            _log(Transfer(direction, int(self.nbytes)))
            return original(self, ary, stream)

        return copy_to_device

    def wrap_device_array(original):
        def device_array(*args, **kwargs):
            result = original(*args, **kwargs)
            _log_allocation(int(result.nbytes))
            return result

        return device_array

    # numba.cuda's device_array may be another wrapper of the simulator's (course_lib.sim's initcheck):
    # wrap both, numba.cuda's for user code and the module's for device_array_like and NumPy arguments.
    for owner in (numba.cuda, devicearray):
        if getattr(getattr(owner, "device_array", None), "__module__", "").endswith("devicearray"):
            _patch(owner, "device_array", wrap_device_array)

    _patch(devicearray.FakeCUDAArray, "copy_to_host", wrap_copy_to_host)
    _patch(devicearray.FakeCUDAArray, "copy_to_device", wrap_copy_to_device)

    def wrap_call(original):
        def __call__(self, *args):
            if not self._device and not _engine.on_carrier():  # a launch, not a call from kernel code
                event = Launch(self.fn.__name__, _dims(self.grid_dim), _dims(self.block_dim))
                return _logging_launch(event, lambda: original(self, *args))
            return original(self, *args)

        return __call__

    _patch(sim_kernel.FakeCUDAKernel, "__call__", wrap_call)


def _install_gpu():
    from numba.cuda.cudadrv import driver
    from numba.cuda.dispatcher import CUDADispatcher

    def wrap_copy(direction):
        def wrapper(original):
            def copy(dst, src, size, stream=0):
                _log(Transfer(direction, int(size)))
                return original(dst, src, size, stream)

            return copy

        return wrapper

    def wrap_memalloc(original):
        def memalloc(self, size):
            _log_allocation(int(size))
            return original(self, size)

        return memalloc

    _patch(driver.Context, "memalloc", wrap_memalloc)
    _patch(driver, "host_to_device", wrap_copy("HtoD"))
    _patch(driver, "device_to_host", wrap_copy("DtoH"))
    _patch(driver, "device_to_device", wrap_copy("DtoD"))

    def wrap_call(original):
        def call(self, args, launch_config):
            # CUDADispatcher.call may forward to another dispatcher: log the outermost call once.
            depth = getattr(_local, "depth", 0)
            _local.depth = depth + 1
            try:
                if depth == 0:
                    event = Launch(self.py_func.__name__, _dims(launch_config.griddim), _dims(launch_config.blockdim))
                    return _logging_launch(event, lambda: original(self, args, launch_config))
                return original(self, args, launch_config)
            finally:
                _local.depth = depth

        return call

    _patch(CUDADispatcher, "call", wrap_call)


@contextmanager
def record():
    """Log host<->device transfers and kernel launches of this thread inside a ``with`` block.

    Yields
    ------
    Record
        Filled as the block runs: ``.transfers``, ``.launches``, ``.summary()``.

    Examples
    --------
    >>> with record() as log:                       # doctest: +SKIP
    ...     d_x = cuda.to_device(x)
    ...     kernel[4, 256](d_x)
    ...     x = d_x.copy_to_host()
    >>> log.summary()["HtoD_count"], len(log.launches)  # doctest: +SKIP
    (1, 1)
    """
    from .. import device

    global _open_count
    rec = Record()
    with _lock:
        if not _open_count:
            (_install_sim if device.is_simulator() else _install_gpu)()
        _open_count += 1
    _local.records = _records() + (rec,)
    try:
        yield rec
    finally:
        _local.records = tuple(r for r in _records() if r is not rec)
        with _lock:
            _open_count -= 1
            if not _open_count:
                while _restore:
                    owner, name, original = _restore.pop()
                    setattr(owner, name, original)
