"""The GPU's side of :func:`course_lib.sim.record`: numba-cuda's own calls, hooked where every form goes.

* Copies: the driver object's ``cuMemcpyHtoD``/``DtoH``/``DtoD`` (and their ``Async`` forms). Every copy
  numba-cuda makes goes through them: ``host_to_device``/``device_to_host``/``device_to_device``
  (``to_device``, ``copy_to_host``, ``copy_to_device``, ``__array__``, element reads), and the launch's
  argument code (``args.py`` and ``_to_strided_memory_view``, which call the driver directly).
* Waits: the driver object's ``cuCtxSynchronize`` (``"device"``), ``cuStreamSynchronize``
  (``"stream"``) and ``cuEventSynchronize`` (``"event"``).
* Allocations: ``Context.memalloc`` (``"device"``), ``memhostalloc`` (``"pinned"``, or ``"mapped"``
  with ``mapped=True``), ``mempin`` (``"pinned"``), ``memallocmanaged`` (``"managed"``), and a NumPy
  argument's buffer, which numba-cuda 0.30.4 allocates through cuda-core in ``_to_strided_memory_view``.
* Launches: ``CUDADispatcher.call`` (the outermost, once); numba-cuda's assignment kernel (an element
  write from the host) is logged as ``Launch("setitem", None, None)``, as in the simulator.

The driver binds its functions lazily (``Driver.__getattr__`` sets them on the instance): the hooks are
set on the instance and bind the real function at their first call, so installing them needs no GPU.
"""

from __future__ import annotations

from ._record_log import Launch, Transfer, Wait, _local, dims, log, log_allocation, logging_launch, patch

_COPIES = {"cuMemcpyHtoD": "HtoD", "cuMemcpyHtoDAsync": "HtoD", "cuMemcpyDtoH": "DtoH",
           "cuMemcpyDtoHAsync": "DtoH", "cuMemcpyDtoD": "DtoD", "cuMemcpyDtoDAsync": "DtoD"}
_WAITS = {"cuCtxSynchronize": "device", "cuStreamSynchronize": "stream", "cuEventSynchronize": "event"}
#: The names hooked on numba-cuda's driver object (checked without a GPU by tests/sim/test_record.py).
DRIVER_FUNCTIONS = tuple(_COPIES) + tuple(_WAITS)


def _hook_driver(driver, name, before):
    """Set ``driver.name`` to a function that calls ``before(args)`` then the real driver function."""
    from ._record_log import _restore

    saved = driver.__dict__.get(name)
    real = [saved]

    def hooked(*args):
        if real[0] is None:  # first call: let the driver bind it (it sets the instance attribute), then re-hook
            real[0] = type(driver).__getattr__(driver, name)
            setattr(driver, name, hooked)
        before(args)
        return real[0](*args)

    setattr(driver, name, hooked)

    def restore():
        if saved is None:
            driver.__dict__.pop(name, None)
        else:
            setattr(driver, name, saved)

    _restore.append(restore)


def install():
    from numba.cuda.cudadrv import devicearray, driver as drv
    from numba.cuda.dispatcher import CUDADispatcher

    driver = drv.driver
    for name, direction in _COPIES.items():
        _hook_driver(driver, name, lambda args, d=direction: log(Transfer(d, int(args[2]))))
    for name, on in _WAITS.items():
        _hook_driver(driver, name, lambda args, w=on: log(Wait(w)))

    def allocating(kind):
        def wrapper(original):
            def allocate(self, size, *args, **kwargs):
                mapped = kwargs.get("mapped", args[0] if args else False)
                log_allocation(int(size), "mapped" if kind == "pinned" and mapped else kind)
                return original(self, size, *args, **kwargs)

            return allocate

        return wrapper

    patch(drv.Context, "memalloc", allocating("device"))
    patch(drv.Context, "memhostalloc", allocating("pinned"))
    patch(drv.Context, "memallocmanaged", allocating("managed"))

    def wrap_mempin(original):
        def mempin(self, owner, pointer, size, mapped=False):
            log_allocation(int(size), "mapped" if mapped else "pinned")
            return original(self, owner, pointer, size, mapped)

        return mempin

    patch(drv.Context, "mempin", wrap_mempin)

    def wrap_strided(original):
        def _to_strided_memory_view(obj, stream=0, copy=True, user_explicit=False):
            view, converted = original(obj, stream=stream, copy=copy, user_explicit=user_explicit)
            if converted and not drv.is_device_memory(obj):
                nbytes = int(view.size) * int(view.dtype.itemsize)
                if nbytes:  # numba-cuda allocates a NumPy argument's device copy through cuda-core
                    log_allocation(nbytes)
            return view, converted

        return _to_strided_memory_view

    patch(devicearray, "_to_strided_memory_view", wrap_strided)

    def wrap_call(original):
        def call(self, args, launch_config):
            # CUDADispatcher.call may forward to another dispatcher: log the outermost call once.
            depth = getattr(_local, "depth", 0)
            _local.depth = depth + 1
            try:
                if depth == 0:
                    if getattr(self.py_func, "__qualname__", "").startswith("_assign_kernel."):
                        event = Launch("setitem", None, None)  # numba-cuda's own kernel for d[i] = v
                    else:
                        event = Launch(self.py_func.__name__, dims(launch_config.griddim),
                                       dims(launch_config.blockdim))
                    return logging_launch(event, lambda: original(self, args, launch_config))
                return original(self, args, launch_config)
            finally:
                _local.depth = depth

        return call

    patch(CUDADispatcher, "call", wrap_call)
