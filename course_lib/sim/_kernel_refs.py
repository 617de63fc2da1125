"""What a kernel's code reaches: the globals, closure variables and attributes it reads.

The static typing (:mod:`course_lib.sim._typing`) keys its cache on the simple values a kernel
reads (:func:`_globals_fingerprint`), sends to the typing process only kernels whose globals
that process can see as this one does (:func:`unreproducible_global`), and, when grading,
refuses a kernel that reads what only the simulator has (:func:`graded_refusal`).
"""

from __future__ import annotations

import inspect

import numpy as np


def _globals_fingerprint(fn, _seen=None):
    """Simple values the kernel reads from its globals/closure, and the source of every device function it
    reaches (by name, through a module attribute, or from another device function): they change its typing."""
    seen = set() if _seen is None else _seen
    seen.add(fn.__code__)
    out = []
    code = fn.__code__
    names = _global_names(code)
    for name in sorted(names):
        value = fn.__globals__.get(name)
        if isinstance(value, (bool, int, float, str, tuple, np.dtype, np.number)) or isinstance(value, type):
            out.append((name, repr(value)))
        elif _device_python(value) is not None:
            out.extend(_device_fingerprint(name, _device_python(value), seen))
        elif inspect.ismodule(value):  # `kernels.helper(...)`: the module's device functions the code names
            for attr in sorted(names):
                dev = _device_python(getattr(value, attr, None))
                if dev is not None:
                    out.extend(_device_fingerprint(f"{name}.{attr}", dev, seen))
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        if name.startswith("__course_"):  # the simulator's own helpers in a recompiled copy's closure: their repr
            continue  # names an address, which would make the key of every closure kernel differ per process
        try:
            out.append((name, repr(cell.cell_contents)))
        except ValueError:
            pass
    return out


def _device_python(value):
    """The Python function of a device function (a ``@cuda.jit(device=True)`` object), else None."""
    if not (hasattr(value, "py_func") or hasattr(value, "fn")):
        return None
    dev = getattr(value, "py_func", None) or getattr(value, "fn", None)
    return dev if inspect.isfunction(dev) else None


def _device_fingerprint(name, dev, seen):
    """A device function's source and, once each, what it reaches in turn."""
    try:
        entry = [(name, inspect.getsource(dev))]
    except (OSError, TypeError):
        entry = [(name, repr(dev))]
    if dev.__code__ not in seen:
        entry.extend(_globals_fingerprint(dev, seen))
    return entry


def _global_names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, type(code)):
            names |= _global_names(const)
    return names


def _referenced(fn):
    """(name, value) of the globals and closure variables the function's code reads."""
    out = [(name, fn.__globals__.get(name)) for name in sorted(_global_names(fn.__code__))]
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            out.append((name, cell.cell_contents))
        except ValueError:  # a cell not filled yet
            pass
    return out


def _registered_overloads():
    """Ids of the Python functions given a numba implementation with ``overload`` in this process."""
    from numba.core.typing import templates as core_templates

    ids = set()
    registries = [core_templates.builtin_registry]
    try:
        from numba.cuda.typing import templates as cuda_templates

        registries.append(cuda_templates.builtin_registry)
    except ImportError:
        pass
    for registry in registries:
        ids.update(id(value) for value, _ in getattr(registry, "globals", ()))
    return ids


def unreproducible_global(fn, _seen=None):
    """The name of a global (or closure variable) the typing process cannot see as this process does, or None.

    The typing process compiles with the real CUDA target, so it cannot type what exists
    only in this one: a function given a numba implementation here with ``overload``, or an
    object of the simulator itself (its vector types, say). Such a kernel runs with the
    runtime typing only, rather than being refused for what a GPU would compile.
    """
    seen = set() if _seen is None else _seen
    if id(fn) in seen:
        return None
    seen.add(id(fn))
    overloads = None
    for name, value in _referenced(fn):
        if value is None or isinstance(value, (bool, int, float, str, np.number)):
            continue
        kind = type(value).__name__
        owner = value.__module__ if isinstance(value, type) else type(value).__module__
        simulated = isinstance(owner, str) and owner.startswith("numba.cuda.simulator")
        if simulated and kind not in ("FakeCUDAKernel", "FakeCUDAModule"):
            return name
        dev = getattr(value, "py_func", None) or (getattr(value, "fn", None) if kind == "FakeCUDAKernel" else None)
        if callable(dev) and hasattr(dev, "__code__"):
            inner = unreproducible_global(dev, seen)
            if inner is not None:
                return f"{name}.{inner}"
        elif callable(value) and hasattr(value, "__code__"):
            if overloads is None:
                overloads = _registered_overloads()
            if id(value) in overloads:
                return name
    return None


def _python_attribute(fn, _seen=None):
    """The first attribute read in ``fn`` (or a device function it calls) that only a Python object has:
    a name starting with ``_`` (``__globals__``, ``__class__``, a simulated array's ``_ary``) or
    ``py_func``. numba types no such attribute on a GPU; in the simulator it would reach the Python
    objects behind the kernel. None if there is none."""
    import dis

    seen = set() if _seen is None else _seen
    if id(fn) in seen or not hasattr(fn, "__code__"):
        return None
    seen.add(id(fn))
    codes = [fn.__code__]
    while codes:
        code = codes.pop()
        for instruction in dis.get_instructions(code):
            if instruction.opname in ("LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR", "DELETE_ATTR"):
                name = instruction.argval
                if isinstance(name, str) and (name.startswith("_") or name == "py_func"):
                    return name
        codes.extend(c for c in code.co_consts if isinstance(c, type(code)))
    for _, value in _referenced(fn):
        dev = getattr(value, "py_func", None) or (getattr(value, "fn", None)
                                                  if type(value).__name__ == "FakeCUDAKernel" else None)
        if callable(dev):
            found = _python_attribute(dev, seen)
            if found is not None:
                return found
    return None


def graded_refusal(fn):
    """Why a graded launch refuses kernel ``fn`` (it reaches what exists only in this simulator), or None."""
    name = unreproducible_global(fn)
    if name is not None:
        return f"it uses {name!r}, which exists only in this simulator, not on a GPU"
    attribute = _python_attribute(fn)
    if attribute is not None:
        return (f"it reads the attribute {attribute!r}, which a GPU kernel cannot read (kernels reach Python "
                "objects' internals only in this simulator)")
    return None
