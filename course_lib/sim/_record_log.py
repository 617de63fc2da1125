"""The log behind :func:`course_lib.sim.record`: its events, the open records, and the helpers the backends'
hooks log through (:mod:`course_lib.sim._record_sim`, :mod:`course_lib.sim._record_gpu`). The module says what is
logged, and how, in :mod:`course_lib.sim._record`."""

from __future__ import annotations

import html
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = ["Launch", "Record", "Transfer", "Wait", "dims", "hushed", "log", "log_allocation", "logging_launch", "patch",
           "quiet", "swap_code"]


@dataclass(frozen=True)
class Transfer:
    """One copy: ``direction`` is ``"HtoD"``, ``"DtoH"`` or ``"DtoD"``, ``nbytes`` its size."""

    direction: str
    nbytes: int


@dataclass(frozen=True)
class Launch:
    """One kernel launch: kernel name, grid and block dimensions (3-tuples; None for numba-cuda's own
    ``setitem`` kernel, whose configuration numba-cuda chooses)."""

    kernel: str
    griddim: tuple
    blockdim: tuple


@dataclass(frozen=True)
class Wait:
    """The host waited for the device: ``on`` is ``"device"`` (``cuda.synchronize()``), ``"stream"``
    or ``"event"``."""

    on: str


@dataclass(eq=False)
class Record:
    """What happened inside one ``with record()`` block, in order.

    Attributes
    ----------
    events : list of Transfer, Launch or Wait
    allocations : list of int
        Bytes of each allocation (device, pinned, mapped or managed memory), in order.
    allocation_kinds : list of str
        The kind of each allocation (``"device"``, ``"pinned"``, ``"mapped"``, ``"managed"``).
    """

    events: list = field(default_factory=list)
    allocations: list = field(default_factory=list)
    allocation_kinds: list = field(default_factory=list)

    @property
    def transfers(self) -> list:
        return [e for e in self.events if isinstance(e, Transfer)]

    @property
    def launches(self) -> list:
        return [e for e in self.events if isinstance(e, Launch)]

    @property
    def waits(self) -> list:
        return [e for e in self.events if isinstance(e, Wait)]

    def summary(self) -> dict:
        """Counts and bytes per direction between host and device, and the number of launches
        (plus ``DtoD_count`` and ``DtoD_bytes`` when device-to-device copies happened)."""
        out = {"HtoD_count": 0, "HtoD_bytes": 0, "DtoH_count": 0, "DtoH_bytes": 0, "launches": len(self.launches)}
        for t in self.transfers:
            out[f"{t.direction}_count"] = out.get(f"{t.direction}_count", 0) + 1
            out[f"{t.direction}_bytes"] = out.get(f"{t.direction}_bytes", 0) + t.nbytes
        return out

    def counts(self) -> dict:
        """Everything counted, as ints: :meth:`summary`'s keys (``DtoD_count``/``DtoD_bytes`` always),
        ``copies`` (all directions), ``waits``, ``allocations`` and ``allocation_bytes`` (every kind)
        and ``<kind>_allocations`` for each kind."""
        out = {"DtoD_count": 0, "DtoD_bytes": 0, **self.summary()}
        out["copies"] = out["HtoD_count"] + out["DtoH_count"] + out["DtoD_count"]
        out["waits"] = len(self.waits)
        out["allocations"] = len(self.allocations)
        out["allocation_bytes"] = sum(self.allocations)
        for kind in ("device", "pinned", "mapped", "managed"):
            out[f"{kind}_allocations"] = self.allocation_kinds.count(kind)
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
        if self.waits:
            head += f"; {len(self.waits)} wait(s)"
        lines = [head, self.cost_line()]
        for e in self.events:
            lines.append("  " + _line(e))
        return "\n".join(lines)

    def _repr_html_(self):
        rows = "".join(f"<tr><td>{html.escape(a)}</td><td>{html.escape(b)}</td></tr>"
                       for a, b in (_line(e).split(" ", 1) for e in self.events))
        head = html.escape(str(self).splitlines()[0])
        return f"<p>{head}</p><table>{rows}</table>"


def _line(event) -> str:
    if isinstance(event, Launch):
        if event.griddim is None:
            return f"launch {event.kernel} (numba-cuda's own kernel)"
        return f"launch {event.kernel}[{event.griddim}, {event.blockdim}]"
    if isinstance(event, Wait):
        return f"wait {event.on}"
    return f"copy {event.direction} {event.nbytes} bytes"


#: Open records of all threads (the hooks are installed while there is one).
_open: list = []
_restore: list = []
_lock = threading.RLock()
#: Per host thread: ``records``, the records that thread opened; ``quiet``, nesting of the hooks'
#: own calls (what a hooked operation does inside is not logged twice); ``depth``, dispatcher calls (GPU).
_local = threading.local()
#: Attribute set on a thread started while its starting thread had records open.
_PARENT = "_course_record_parent"


def _records():
    """The records this thread's traffic goes to."""
    own = getattr(_local, "records", None)
    if own:
        return own
    parent = getattr(threading.current_thread(), _PARENT, None)
    if parent:
        live = tuple(r for r in parent if r in _open)
        if live:
            return live
    return tuple(_open)


def quiet():
    """True inside a hooked operation (its inner calls are not logged)."""
    return getattr(_local, "quiet", 0) > 0


@contextmanager
def hushed():
    """Run the original of a hooked operation: nothing it does inside is logged again."""
    _local.quiet = getattr(_local, "quiet", 0) + 1
    try:
        yield
    finally:
        _local.quiet -= 1


def log(event):
    if not _open or quiet():
        return
    with _lock:
        for rec in _records():
            rec.events.append(event)


def log_allocation(nbytes, kind="device"):
    if not _open or quiet():
        return
    with _lock:
        for rec in _records():
            rec.allocations.append(int(nbytes))
            rec.allocation_kinds.append(kind)


def logging_launch(event, run):
    """Run a launch, logging ``event`` after the copies of its arguments (the HtoD copies it
    made first) and before the copies back and the wait for them."""
    if not _open or quiet():
        return run()
    with _lock:
        starts = [(rec, len(rec.events)) for rec in _records()]
    try:
        return run()
    finally:
        with _lock:
            for rec, start in starts:
                at = start
                while (at < len(rec.events) and isinstance(rec.events[at], Transfer)
                       and rec.events[at].direction == "HtoD"):
                    at += 1
                rec.events.insert(at, event)


def dims(d):
    d = tuple(d) if isinstance(d, (tuple, list)) else (d,)
    return tuple(int(x) for x in d) + (1,) * (3 - len(d))


def patch(owner, name, wrapper):
    """Replace ``owner.name`` by ``wrapper(original)`` until the last record closes."""
    original = owner.__dict__.get(name, _MISSING) if isinstance(owner, type) else getattr(owner, name)
    current = getattr(owner, name)
    setattr(owner, name, wrapper(current))
    _restore.append(lambda: delattr(owner, name) if original is _MISSING else setattr(owner, name, original))


def swap_code(function, replacement):
    """Run ``replacement``'s code under ``function``'s name and globals until the last record closes: every
    reference to the function object (any name it was imported under) runs the replacement. Returns a
    copy of the original function to call."""
    import types

    original_code = function.__code__
    clone = types.FunctionType(original_code, function.__globals__, function.__name__, function.__defaults__,
                               function.__closure__)
    clone.__kwdefaults__ = function.__kwdefaults__
    function.__code__ = replacement.__code__

    def restore():
        function.__code__ = original_code

    _restore.append(restore)
    return clone


def _thread_start(original):
    def start(self, *args, **kwargs):
        records = getattr(_local, "records", None) or getattr(threading.current_thread(), _PARENT, None)
        if records:
            setattr(self, _PARENT, tuple(records))
        return original(self, *args, **kwargs)

    return start


_MISSING = object()
