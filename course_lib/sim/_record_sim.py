"""The simulator's side of :func:`course_lib.sim.record`: its device arrays and functions log what
numba-cuda 0.30.4 does for the same call on a GPU (the forms and counts are listed in ``_record``'s
docstring and checked form by form in ``tests/sim/test_record.py``, on both backends).

The simulator's module functions (``to_device``, ``device_array``, ``mapped_array``, ``pinned_array``,
``managed_array``, ``pinned``, ``auto_device``, ``synchronize``) are hooked by swapping their code
objects, so a name imported before the ``with record()`` still runs the hook; the device-array class
(``FakeCUDAArray``), streams and events are hooked on the class.
"""

from __future__ import annotations

import inspect
import os
import sys

import numpy as np

from . import _engine
from ._record_log import (Launch, Transfer, Wait, _local, hushed, log, log_allocation, logging_launch, patch, quiet,
                      swap_code)

#: Set on a simulated device array whose memory the host reads and writes directly (a mapped array).
HOST_MEMORY = "_course_host_memory"


class ManagedArray(np.ndarray):
    """``managed_array``'s result while a record is open: host memory a kernel uses in place (as a GPU's
    managed memory), so a launch copies nothing for it."""


def _originals():
    """Copies of the simulator functions, to call from the hooks (set by :func:`install`)."""
    return _ORIGINALS


_ORIGINALS: dict = {}
_HERE = os.path.dirname(os.path.abspath(__file__))


def _extent(array) -> int:
    """Bytes a GPU copies for a device array (its ``alloc_size``: the span of a strided view)."""
    a = array._ary
    if a.size == 0:
        return 0
    low, high = np.lib.array_utils.byte_bounds(a)
    return int(high - low)


def _caller_is_internal(depth=2) -> bool:
    """True when the frame ``depth`` up is the simulator's or course_lib.sim's own code."""
    filename = sys._getframe(depth).f_code.co_filename
    return "numba" in filename and "simulator" in filename or filename.startswith(_HERE)


# --- module functions (their code objects are swapped: the bodies below reach this module by name) ---

def _hook_to_device(ary, stream=0, copy=True, to=None):
    return __import__("course_lib.sim._record_sim", fromlist=["_"]).to_device(ary, stream, copy, to)


def _hook_device_array(*args, **kwargs):
    return __import__("course_lib.sim._record_sim", fromlist=["_"]).allocate("device_array", "device", args, kwargs)


def _hook_mapped_array(*args, **kwargs):
    return __import__("course_lib.sim._record_sim", fromlist=["_"]).allocate("mapped_array", "mapped", args, kwargs)


def _hook_pinned_array(shape, dtype=np.float64, strides=None, order="C"):
    return __import__("course_lib.sim._record_sim", fromlist=["_"]).allocate(
        "pinned_array", "pinned", (shape, dtype, strides, order), {})


def _hook_managed_array(shape, dtype=np.float64, strides=None, order="C"):
    return __import__("course_lib.sim._record_sim", fromlist=["_"]).allocate(
        "managed_array", "managed", (shape, dtype, strides, order), {})


def _hook_pinned(arg):
    __import__("course_lib.sim._record_sim", fromlist=["_"]).log_allocation(getattr(arg, "nbytes", 0), "pinned")
    yield


def _hook_auto_device(ary, stream=0, copy=True):
    return __import__("course_lib.sim._record_sim", fromlist=["_"]).auto_device(ary, stream, copy)


def _hook_synchronize():
    __import__("course_lib.sim._record_sim", fromlist=["_"]).log(
        __import__("course_lib.sim._record_log", fromlist=["_"]).Wait("device"))


def to_device(ary, stream, copy, to):
    original = _ORIGINALS["to_device"]
    if to is not None:  # a copy into an existing array: its copy_to_device logs it
        return original(ary, stream, copy, to)
    with hushed():
        result = original(ary, stream, copy, to)
    nbytes = int(result.nbytes)
    if nbytes:  # numba-cuda allocates nothing for an empty array, and copies nothing into it
        log_allocation(nbytes)
        if copy:
            log(Transfer("HtoD", nbytes))
    return result


def allocate(name, kind, args, kwargs):
    with hushed():
        result = _ORIGINALS[name](*args, **kwargs)
    nbytes = int(result.nbytes)
    if nbytes:
        log_allocation(nbytes, kind)
    if kind == "mapped":
        result.__dict__[HOST_MEMORY] = True
    elif kind == "managed":
        result = result.view(ManagedArray)
    return result


def auto_device(ary, stream, copy):
    """A launch's argument (``args.py``): a NumPy array is allocated and copied in (``copy``) as numba-cuda's
    ``_to_strided_memory_view`` does (the copy is made for an empty array too); device, mapped and managed
    memory is used in place."""
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    if isinstance(ary, FakeCUDAArray):
        return ary, False
    if isinstance(ary, ManagedArray):
        return FakeCUDAArray(ary, stream=stream), False
    with hushed():
        result, converted = _ORIGINALS["auto_device"](ary, stream, copy)
    nbytes = int(result.nbytes)
    if nbytes:
        log_allocation(nbytes)
    if copy:
        log(Transfer("HtoD", nbytes))
    return result, converted


# --- the device-array class, streams, events and launches ---

def _getitem(original):
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    def __getitem__(self, idx):
        result = original(self, idx)
        host_memory = self.__dict__.get(HOST_MEMORY)
        if isinstance(result, FakeCUDAArray):  # a slice (or a record): a view, no copy
            if host_memory:
                result.__dict__[HOST_MEMORY] = True
        elif not host_memory and not quiet() and not _engine.on_carrier():
            log(Transfer("DtoH", int(self._ary.itemsize)))  # an element read: a one-element copy
        return result

    return __getitem__


def _setitem(original):
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    def __setitem__(self, idx, value):
        if self.__dict__.get(HOST_MEMORY) or quiet() or _engine.on_carrier():
            return original(self, idx, value)
        # numba-cuda: the value goes to the device (allocated and copied unless it is device memory),
        # then its own assignment kernel runs, then (array without a stream) the host waits for it.
        if not isinstance(value, FakeCUDAArray):
            nbytes = int(np.asanyarray(value).nbytes)
            if nbytes:
                log_allocation(nbytes)
            log(Transfer("HtoD", nbytes))
        with hushed():
            result = original(self, idx, value)
        log(Launch("setitem", None, None))
        if not self.stream:
            log(Wait("stream"))
        return result

    return __setitem__


def _log_copy_to_host(array):
    """Log the copy of a device array's extent to the host; an empty array's copy moves nothing and is not logged.

    Parameters
    ----------
    array : FakeCUDAArray
        The array copied (or a view of it: only the bytes it spans count).
    """
    nbytes = _extent(array)
    if nbytes:
        log(Transfer("DtoH", nbytes))


def _copy_to_host(original):
    def copy_to_host(self, ary=None, stream=0):
        implicit = sys._getframe(1).f_code.co_filename.endswith(os.path.join("simulator", "args.py"))
        with hushed():
            result = original(self, ary, stream)
        if implicit:  # a NumPy argument copied back after its launch: numba-cuda copies, then waits (stream 0)
            log(Transfer("DtoH", int(self.nbytes)))
            if not getattr(_local, "launch_stream", 0):  # the simulator passes no stream: the launch's
                log(Wait("stream"))
        else:
            _log_copy_to_host(self)
        return result

    return copy_to_host


def _copy_to_device(original):
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    def copy_to_device(self, ary, stream=0):
        with hushed():
            result = original(self, ary, stream)
        if np.size(ary._ary if isinstance(ary, FakeCUDAArray) else ary):
            log(Transfer("DtoD" if isinstance(ary, FakeCUDAArray) else "HtoD", _extent(self)))
        return result

    return copy_to_device


def _getattr(original):
    def __getattr__(self, name):
        result = original(self, name)
        # np.asarray(d) / np.array(d): numba-cuda's __array__ copies the array to the host.
        if (name in ("__array_struct__", "__array_interface__") and not self.__dict__.get(HOST_MEMORY)
                and not quiet() and not _engine.on_carrier() and not _caller_is_internal()):
            _log_copy_to_host(self)
        return result

    return __getattr__


def _waiting(on):
    def wrapper(original):
        def synchronize(self, *args, **kwargs):
            log(Wait(on))
            return original(self, *args, **kwargs)

        return synchronize

    return wrapper


def _launch(original):
    def __call__(self, *args):
        if not self._device and not _engine.on_carrier():  # a launch, not a call from kernel code
            from ._record_log import dims

            event = Launch(self.fn.__name__, dims(self.grid_dim), dims(self.block_dim))
            saved, _local.launch_stream = getattr(_local, "launch_stream", 0), self.stream
            try:
                return logging_launch(event, lambda: original(self, *args))
            finally:
                _local.launch_stream = saved
        return original(self, *args)

    return __call__


def _configure(original):
    def __getitem__(self, configuration):
        kernel = original(self, configuration)
        if isinstance(configuration, tuple) and len(configuration) >= 3:
            kernel.stream = configuration[2]  # the stock simulator drops it; a launch's copies back depend on it
        return kernel

    return __getitem__


def install():
    from numba.cuda.simulator import api
    from numba.cuda.simulator import kernel as sim_kernel
    from numba.cuda.simulator.cudadrv import devicearray

    hooks = {"to_device": _hook_to_device, "device_array": _hook_device_array, "mapped_array": _hook_mapped_array,
             "pinned_array": _hook_pinned_array, "managed_array": _hook_managed_array,
             "auto_device": _hook_auto_device}
    for name, hook in hooks.items():  # the simulator's own function (course_lib.sim's wrappers call it)
        _ORIGINALS[name] = swap_code(inspect.unwrap(getattr(devicearray, name)), hook)
    swap_code(devicearray.pinned.__wrapped__, _hook_pinned)
    swap_code(api.synchronize, _hook_synchronize)
    array = devicearray.FakeCUDAArray
    patch(array, "__getitem__", _getitem)
    patch(array, "__setitem__", _setitem)
    patch(array, "copy_to_host", _copy_to_host)
    patch(array, "copy_to_device", _copy_to_device)
    patch(array, "__getattr__", _getattr)
    patch(api.stream, "synchronize", _waiting("stream"))
    patch(api.Event, "synchronize", _waiting("event"))
    patch(sim_kernel.FakeCUDAKernel, "__call__", _launch)
    patch(sim_kernel.FakeCUDAKernel, "__getitem__", _configure)
