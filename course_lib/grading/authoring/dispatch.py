"""What a submitted kernel launches: the dispatcher classes that launch, and fresh copies of them.

The profiler and the checker read a kernel's Python function; a launch runs what the dispatcher
holds. An object of the student's own class can carry the right function as ``py_func`` and launch
another one from ``__getitem__``, so :func:`launched_function` accepts only the dispatchers numba
(or its simulator) makes, exactly those classes, and returns the function their launches run.

:func:`handed` gives a measuring function (``measure(kernel, ...)``) a fresh object for every call,
made by the same code for the student's kernel and for the grader's decoys: a new dispatcher around
a new copy of the function, so that identity (``is``, ``id``, the function or its code object) cannot
tell the student's kernel from a decoy.
"""

from __future__ import annotations

import functools
import types

from .buffers import fail

__all__ = ["handed", "is_dispatcher", "launched_function", "release_handed"]


def _dispatcher_types():
    """The classes whose instances launch kernels: the simulator's and numba-cuda's (when importable)."""
    from numba.cuda.simulator.kernel import FakeCUDAKernel

    kinds = [FakeCUDAKernel]
    try:
        from numba.cuda.dispatcher import CUDADispatcher
    except Exception:  # no CUDA toolkit: only the simulator's kernels exist
        pass
    else:
        kinds.append(CUDADispatcher)
    return tuple(kinds)


def is_dispatcher(obj) -> bool:
    """Whether ``obj`` is exactly a kernel dispatcher of numba-cuda or of its simulator (not a subclass)."""
    return type(obj) in _dispatcher_types()


def _simulated(kernel) -> bool:
    from numba.cuda.simulator.kernel import FakeCUDAKernel

    return type(kernel) is FakeCUDAKernel


def launched_function(kernel, what: str = "kernel"):
    """The Python function a launch of ``kernel`` runs.

    The simulator's ``FakeCUDAKernel`` launches ``fn`` (its ``py_func`` is a read-only property giving
    ``fn``); numba-cuda's ``CUDADispatcher`` compiles ``py_func`` when first launched with new types, so every
    overload compiled so far must come from it too.

    Raises
    ------
    TestFailure
        Cause ``"answer"``: not exactly one of those classes (a subclass or an object of another class
        that only looks like one can launch something other than what it shows), or compiled from
        another function than the one it shows.
    """
    if not is_dispatcher(kernel):
        raise fail(f"the {what} must be the kernel @cuda.jit returns, got an object of type "
                   f"{type(kernel).__name__} (the grader launches and profiles the dispatcher itself)", "answer")
    if _simulated(kernel):
        function = vars(kernel).get("fn")
        if not isinstance(function, types.FunctionType):
            raise fail(f"the {what} does not wrap a Python function", "answer")
        return function
    function = kernel.py_func
    overloads = getattr(kernel, "overloads", {}) or {}
    for compiled in list(overloads.values()):
        source = getattr(compiled, "py_func", function)
        if source is not function:
            raise fail(f"the {what} launches code compiled from another function than its py_func", "answer")
    return function


def _copied_function(function):
    """A new function object with a new (equal) code object, the same globals, closure and defaults."""
    copy = types.FunctionType(function.__code__.replace(), function.__globals__, function.__name__,
                              function.__defaults__, function.__closure__)
    copy.__kwdefaults__ = function.__kwdefaults__
    copy.__dict__.update(function.__dict__)
    # The same names for every kernel handed out: a name or a module does not say whose kernel it is.
    copy.__name__ = copy.__qualname__ = "kernel"
    copy.__module__ = None
    return copy


def _fresh_kernel(kernel):
    """A new dispatcher of the same class and options launching a copy of ``kernel``'s function."""
    function = _copied_function(launched_function(kernel))
    if _simulated(kernel):  # the simulator's: the same options, the explicit signature kept
        fresh = type(kernel)(function, kernel._device, fastmath=kernel._fastmath,
                             extensions=list(kernel.extensions), debug=kernel._debug)
        for key, value in vars(kernel).items():
            if key.startswith("_course_"):
                fresh.__dict__[key] = value
        return fresh
    try:  # numba-cuda's: a dispatcher of the same target options (compiled at its first launch)
        return type(kernel)(function, dict(kernel.targetoptions))
    except Exception:  # another numba-cuda layout: the kernel itself
        return kernel


#: What each handed factory calls, by token: the factory's closure holds only the token, so the object a
#: measuring function receives does not carry the target it stands for.
_targets: dict = {}
#: Every object handed out until :func:`release_handed`: kept alive, so that no two share an ``id``.
_handed: list = []


def handed(target):
    """What a measuring function receives for ``target`` (a kernel or a kernel factory): a fresh object.

    A kernel becomes a new dispatcher around a copy of its function; a factory becomes a new function
    (the same code for every target) whose kernels are fresh dispatchers in turn.
    """
    if is_dispatcher(target):
        fresh = _fresh_kernel(target)
        _handed.append(fresh)
        return fresh
    token = object()
    _targets[id(token)] = (token, target)

    def make_kernel(*args, **kwargs):
        made = _targets[id(token)][1](*args, **kwargs)
        fresh = _fresh_kernel(made) if is_dispatcher(made) else made
        _handed.append(fresh)
        return fresh

    _handed.append(make_kernel)
    return make_kernel


def release_handed():
    """Forget the factories handed so far (after a measuring test)."""
    _targets.clear()
    _handed.clear()
