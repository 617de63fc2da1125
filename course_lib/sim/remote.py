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

The pickling lives in :mod:`course_lib.sim._transport`; the child runs
``python -m course_lib.sim._remote_child`` (reads the request on stdin).
"""

from __future__ import annotations

import linecache
import os
import pickle
import subprocess
import sys

import numpy as np

from ._transport import _by_name, _dumps

__all__ = ["RemoteError", "run_remote"]


class RemoteError(RuntimeError):
    """The child process running the simulator failed."""


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
    proc = subprocess.run([sys.executable, "-m", "course_lib.sim._remote_child"], input=request, capture_output=True,
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
