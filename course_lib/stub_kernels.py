"""An untouched stub kernel raises on a GPU as it does in the simulator.

A problem set's stub kernel is ``raise NotImplementedError()`` (after its docstring and a comment). In the
simulator launching it raises ``NotImplementedError``: the grader marks the question "not answered" and the
notebooks' own ``except NotImplementedError`` say so. On a GPU numba-cuda compiles the raise into an error code
that only ``debug=True`` kernels check, so the launch does nothing, silently, and a grader's test whose
expected output equals the untouched output would pass. :func:`install` (called by :func:`course_lib.device.
configure` on the GPU backend) makes numba-cuda's launch refuse such a kernel with the simulator's error.

A stub is recognised from its bytecode: the kernel's body reaches ``raise NotImplementedError`` before any
branch, loop or return (so a kernel that raises it only on some path is not a stub).

>>> def stub(x):
...     '''Doubles x.'''
...     # YOUR CODE HERE
...     raise NotImplementedError()
>>> def answered(x):
...     if x.size == 0:
...         raise NotImplementedError("empty input")
...     x[0] = 1
>>> is_stub(stub), is_stub(answered)
(True, False)
"""

from __future__ import annotations

import dis

__all__ = ["install", "is_stub"]

_ENDS = ("JUMP", "RETURN", "FOR_ITER", "YIELD", "SEND")
_cache: dict = {}


def is_stub(function) -> bool:
    """True if ``function`` (a Python function) raises ``NotImplementedError`` unconditionally."""
    code = getattr(function, "__code__", None)
    if code is None:
        return False
    found = _cache.get(code)
    if found is None:
        found = _cache[code] = _raises_first(code)
    return found


def _raises_first(code) -> bool:
    pending = False  # NotImplementedError loaded, its raise not yet reached
    for ins in dis.get_instructions(code):
        if any(end in ins.opname for end in _ENDS):
            return False
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and ins.argval == "NotImplementedError":
            pending = True
        elif ins.opname == "RAISE_VARARGS":
            return pending
    return False


_installed = False


def install():
    """Make numba-cuda refuse to launch a stub kernel, raising ``NotImplementedError`` (GPU backend only)."""
    global _installed
    if _installed:
        return
    from numba.cuda.dispatcher import CUDADispatcher

    original = CUDADispatcher.call

    def call(self, args, launch_config):
        if is_stub(self.py_func):
            raise NotImplementedError(f"{self.py_func.__name__} is the problem set's stub (raise "
                                      "NotImplementedError()): write the kernel")
        return original(self, args, launch_config)

    call.__doc__ = original.__doc__
    CUDADispatcher.call = call
    _installed = True
