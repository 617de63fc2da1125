"""How :mod:`course_lib.sim.remote` and the typing child of :mod:`course_lib.sim._typing` send kernels
to another Python process: cloudpickle, with ``course_lib``'s own functions by name and code objects
as :mod:`marshal` data (see :mod:`course_lib.sim.remote`).
"""

from __future__ import annotations

import marshal
import pickle
import sys
import types


def _lookup(module, qualname):
    import importlib

    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _rebuild_kernel(py_func, device):
    from numba import cuda

    return cuda.jit(device=device)(py_func)


def _load_code(data):
    return marshal.loads(data)


def _by_name(obj):
    """(module, qualname) if ``obj`` is a course_lib module attribute, else None."""
    module = getattr(obj, "__module__", None) or getattr(getattr(obj, "py_func", None), "__module__", None)
    name = getattr(getattr(obj, "py_func", obj), "__qualname__", None)
    if not module or not name or not module.startswith("course_lib"):
        return None
    try:
        return (module, name) if _lookup(module, name) is obj else None
    except (ImportError, AttributeError):
        return None


def _dumps(payload, functions):
    import cloudpickle

    class Pickler(cloudpickle.CloudPickler):
        def reducer_override(self, obj):
            if isinstance(obj, types.CodeType):
                # Same interpreter on both sides (sys.executable): marshal is exact, file name and lines included.
                return _load_code, (marshal.dumps(obj),)
            py_func = getattr(obj, "py_func", None)
            if py_func is not None and type(obj).__module__.startswith("numba"):
                named = _by_name(obj)
                if named is not None:
                    return _lookup, named
                device = bool(getattr(obj, "targetoptions", {}).get("device", getattr(obj, "_device", False)))
                return _rebuild_kernel, (py_func, device)
            return super().reducer_override(obj)

    registered = []
    for fn in functions:
        module = sys.modules.get(fn.__module__)
        if (module is not None and module not in registered and fn.__module__ != "__main__"
                and not fn.__module__.startswith("course_lib")):
            cloudpickle.register_pickle_by_value(module)
            registered.append(module)
    try:
        import io

        buffer = io.BytesIO()
        Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(payload)
        return buffer.getvalue()
    finally:
        for module in registered:
            cloudpickle.unregister_pickle_by_value(module)
