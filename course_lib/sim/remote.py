"""``check`` and ``profile`` on a GPU machine: the launch runs under the simulator in a child process.

A process that runs kernels on a GPU cannot switch Numba to its simulator, so
:func:`run_remote` sends the kernel's Python function and the arguments (copied to
the host) to a fresh Python with ``COURSE_BACKEND=sim``, which runs
:func:`course_lib.sim.check` or :func:`course_lib.sim.profile` and sends the report
back. The kernel and its device functions travel with cloudpickle: those of
``course_lib`` by name (the child imports its own simulator versions), the others -
kernels written in a notebook - by value, with the source lines that reports quote.
Code objects travel as :mod:`marshal` data rather than through cloudpickle's own
reducer: the child is the same interpreter, and marshal keeps what reports rely on
(the file name and the line table), which cloudpickle 3.1.3 and later replace with
``<dynamic-code>``.
The arguments are updated with the child's results, as a launch would update them.

Run as ``python -m course_lib.sim.remote`` (reads the request on stdin).
"""

from __future__ import annotations

import linecache
import marshal
import os
import pickle
import subprocess
import sys
import types

import numpy as np

__all__ = ["RemoteError", "run_remote"]


class RemoteError(RuntimeError):
    """The child process running the simulator failed."""


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


def _host(arg):
    """A kernel argument as the child gets it: device arrays are copied to the host."""
    if hasattr(arg, "copy_to_host") and not isinstance(arg, np.ndarray):
        return arg.copy_to_host()
    return arg


def _source_lines(fn):
    filename = fn.__code__.co_filename
    return {filename: linecache.getlines(filename, fn.__globals__)}


def run_remote(mode, kernel, griddim, blockdim, args, options, *, timeout=600):
    """Run ``check`` or ``profile`` of one launch in a child process under the simulator.

    Parameters
    ----------
    mode : {"check", "profile"}
    kernel : @cuda.jit kernel or its Python function
    griddim, blockdim : int or tuple of int
    args : sequence
        Kernel arguments; NumPy arrays and device arrays are updated with the results.
    options : dict
        Keyword arguments of ``check`` / ``profile``.
    timeout : float
        Seconds before the child is stopped.

    Returns
    -------
    CheckReport or ProfileReport
    """
    from ._instrument import py_function

    if mode not in ("check", "profile"):
        raise ValueError(f"mode must be 'check' or 'profile', got {mode!r}")
    fn = py_function(kernel)
    named = _by_name(kernel) if kernel is not fn else None
    target = ("name", named) if named else ("function", fn)
    host_args = [_host(a) for a in args]
    request = _dumps({"mode": mode, "target": target, "griddim": griddim, "blockdim": blockdim,
                      "args": host_args, "options": options, "lines": _source_lines(fn)}, [fn])
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, COURSE_BACKEND="sim", NUMBA_ENABLE_CUDASIM="1")
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    proc = subprocess.run([sys.executable, "-m", "course_lib.sim.remote"], input=request, capture_output=True,
                          env=env, timeout=timeout)
    if proc.returncode != 0:
        raise RemoteError(f"the simulator process failed:\n{proc.stderr.decode(errors='replace')[-3000:]}")
    reply = pickle.loads(proc.stdout)
    if "error" in reply:
        raise reply["error"]
    for original, result in zip(args, reply["args"]):
        if isinstance(original, np.ndarray) and isinstance(result, np.ndarray):
            np.copyto(original, result)
        elif hasattr(original, "copy_to_device") and isinstance(result, np.ndarray):
            original.copy_to_device(result)
    return reply["report"]


def _serve():
    """Child side: read a request on stdin, answer on stdout."""
    import course_lib  # noqa: F401  (simulator mode, hooks installed)

    request = pickle.loads(sys.stdin.buffer.read())
    for filename, lines in request["lines"].items():
        if lines and not linecache.getlines(filename):
            linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)
    kind, target = request["target"]
    kernel = _lookup(*target) if kind == "name" else target
    from ._check import check
    from ._profile import profile

    run = check if request["mode"] == "check" else profile
    args = request["args"]
    try:
        report = run(kernel, request["griddim"], request["blockdim"], *args, **request["options"])
        reply = {"report": report, "args": [a if isinstance(a, np.ndarray) else None for a in args]}
    except Exception as err:  # sent back and raised in the parent
        reply = {"error": err}
    sys.stdout.buffer.write(pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL))


if __name__ == "__main__":
    _serve()
