"""Device allocations never written since they were made, for the uninitialised-read check.

The hooks of :mod:`course_lib.sim._hooks` track and forget allocations as the simulator makes and
writes them; :mod:`course_lib.sim._instrument` consults them at every observed launch.
"""

from __future__ import annotations

import weakref

import numpy as np

__all__ = ["forget_uninitialized", "track_uninitialized"]

#: Device allocations never written since they were made (``cuda.device_array`` and
#: friends, whose content is garbage on a GPU): id(root ndarray) -> [weak reference, None
#: or a bool array of the bytes :func:`course_lib.sim.check` has seen written since].
#: Anything else that may write them (a copy, a host assignment, an unobserved launch)
#: forgets them.
_never_written = {}


def _root(a):
    """The ndarray owning the memory of the view ``a``."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def track_uninitialized(devary):
    """Remember that the device array ``devary`` (a new allocation) holds no written data yet."""
    ary = getattr(devary, "_ary", None)
    if isinstance(ary, np.ndarray) and ary.size:
        root = _root(ary)
        key = id(root)
        _never_written[key] = [weakref.ref(root, lambda _, key=key: _never_written.pop(key, None)), None]
    return devary


def _uninitialized_entry(root):
    entry = _never_written.get(id(root))
    return entry if entry is not None and entry[0]() is root else None


def forget_uninitialized(obj):
    """``obj`` (a device array, or an ndarray) may have been written: stop tracking its allocation."""
    if not _never_written:
        return
    ary = getattr(obj, "_ary", obj)
    if isinstance(ary, np.ndarray) and _uninitialized_entry(_root(ary)) is not None:
        del _never_written[id(_root(ary))]
