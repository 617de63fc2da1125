"""Detecting a notebook that changes the grading machinery in its own process, and kernels
that call host code.

The worker takes a :class:`Snapshot` before any student code runs: for every module of the
course (and NumPy, ``numba.cuda``, ``builtins``), which object each name holds; for every
function of the course, its code, defaults, closure and globals; for every class, its
attributes; for every question, its tests and their steps; the contents of the course's
module-level lists, tuples, dicts and sets. After the notebook has run, and after each test's
``produce`` step, :meth:`Snapshot.changes` lists what differs: a notebook that replaced
``Test.produce`` by the course's reference, patched the worker, NumPy's functions or the
registry is refused (every question 0, and the feedback says why).

A module first imported by the notebook is not covered (there was nothing to compare with),
and this check runs in the student's own process: it stops substitution through the course's
objects, not a submission determined to write raw protocol messages; what those carry is
judged by the grader as data, like any output.

:func:`kernel_host_calls` names what a ``@cuda.jit`` kernel reaches that a GPU could not
compile (a host Python function, such as the course's float64 reference, called from a
kernel runs in the simulator but not on a GPU).
"""

from __future__ import annotations

import builtins
import dis
import sys
import types

__all__ = ["Snapshot", "kernel_host_calls"]

_WATCHED_OUTSIDE = ("numpy", "numba.cuda", "builtins")


def _watched_modules() -> dict:
    modules = {name: m for name, m in list(sys.modules.items())
               if isinstance(m, types.ModuleType) and (name == "course_lib" or name.startswith("course_lib.")
                                                       or name in _WATCHED_OUTSIDE)}
    main = sys.modules.get("__main__")
    if getattr(main, "__spec__", None) is not None and str(main.__spec__.name).startswith("course_lib."):
        modules["__main__"] = main  # the worker itself, run with -m
    return modules


def _ours(obj, module_name: str) -> bool:
    return getattr(obj, "__module__", None) == module_name


def _function_state(func) -> tuple:
    cells = tuple(_cell_value(c) for c in func.__closure__ or ())
    return (func.__code__, func.__defaults__, tuple(sorted((func.__kwdefaults__ or {}).items(), key=lambda kv: kv[0])),
            cells, func.__globals__)


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return None


def _runtime_state(module) -> frozenset:
    """Names the module's own functions rebind (``global counter``): its state at run time, not machinery."""
    names, seen = set(), set()
    codes = []
    for value in list(vars(module).values()):
        members = [value] + (list(vars(value).values()) if isinstance(value, type) else [])
        for member in members:
            func = getattr(member, "__func__", member)
            if isinstance(func, types.FunctionType) and func.__module__ == module.__name__:
                codes.append(func.__code__)
    while codes:
        code = codes.pop()
        if code in seen:
            continue
        seen.add(code)
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
        # Decoding every instruction of every course function is most of a snapshot's cost: only code whose
        # opcodes (every other byte of co_code, which dis decodes too) include one of the two is decoded.
        if not _GLOBAL_STORES.isdisjoint(code.co_code[::2]):
            names.update(ins.argval for ins in dis.get_instructions(code)
                         if ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL"))
    return frozenset(names)


_GLOBAL_STORES = frozenset(dis.opmap[name] for name in ("STORE_GLOBAL", "DELETE_GLOBAL"))


def _names(namespace: dict, before: dict, state: frozenset = frozenset()) -> dict:
    """Which object each name of a module holds, as far as a change matters: names bound since to
    a module (a submodule imported later) are left out, and so are the simulator's own stand-in for
    ``numba.cuda`` (it swaps that module in the globals of the kernels it runs), the registry of
    warnings already shown, and the names the module's own code rebinds (:func:`_runtime_state`)."""
    names = {}
    for key, value in list(namespace.items()):
        if key == "__warningregistry__" or key in state:  # the warnings module's record; the module's own state
            continue
        old = before.get(key, _ABSENT)
        if isinstance(value, types.ModuleType) and old is _ABSENT:
            continue
        if old is not value and isinstance(old, types.ModuleType) and type(value).__name__ == "FakeCUDAModule":
            value = old
        names[key] = id(value)
    return names


_ABSENT = object()


def _constant_name(label: str) -> bool:
    """Containers named like constants (``QUESTIONS``, ``_Q1_TESTS``) are compared item by item;
    other module-level containers (caches, session state) change legitimately."""
    name = label.rsplit(".", 1)[-1].split("[", 1)[0].lstrip("_")
    return "[" in label.rsplit(".", 1)[-1] or (name.isupper() and any(c.isalpha() for c in name))


class Snapshot:
    """The grading machinery's state (see the module docstring)."""

    def __init__(self):
        self.entries: list = []  # (label, getter, value): the getter re-reads the current value
        seen: set = set()
        for name, module in sorted(_watched_modules().items()):
            namespace = vars(module)
            state = _runtime_state(module) if name not in _WATCHED_OUTSIDE else frozenset()
            self._add(f"{name} (its names)",
                      lambda ns=namespace, before=dict(namespace), state=state: _names(ns, before, state),
                      keep=list(namespace.values()))
            if name in _WATCHED_OUTSIDE:
                continue
            for attr, value in list(namespace.items()):
                self._object(f"{name}.{attr}", value, module.__name__, seen)

    def watch(self, label: str, getter) -> None:
        """Also compare ``getter()`` (re-read each time) with its value now."""
        self._add(label, getter)

    def _add(self, label, getter, keep=None):
        self.entries.append((label, getter, getter(), keep))

    def _object(self, label, value, module_name, seen, depth=0):
        if id(value) in seen or depth > 3:
            return
        if isinstance(value, types.FunctionType):
            if not value.__module__ or not str(value.__module__).startswith("course_lib"):
                return
            seen.add(id(value))
            self._add(label, lambda f=value: _function_state(f), keep=value)
        elif isinstance(value, type) and _ours(value, module_name):
            seen.add(id(value))
            self._add(label, lambda c=value: {k: id(v) for k, v in vars(c).items() if k != "__weakref__"},
                      keep=[value, *vars(value).values()])
            for attr, member in list(vars(value).items()):
                if isinstance(member, (types.FunctionType, staticmethod, classmethod, property)):
                    func = getattr(member, "__func__", None) or getattr(member, "fget", None) or member
                    if isinstance(func, types.FunctionType):
                        self._object(f"{label}.{attr}", func, module_name, seen, depth + 1)
        elif isinstance(value, (list, tuple, set, frozenset, dict)) and (depth > 0 or _constant_name(label)):
            seen.add(id(value))
            items = list(value.items()) if isinstance(value, dict) else list(value)
            # Entries may be added (a registry fills as units are imported), not removed or replaced.
            if isinstance(value, dict):
                self._add(label, lambda v=value, keys=list(value): [id(v.get(k, v)) for k in keys], keep=[value, items])
            elif isinstance(value, list):
                self._add(label, lambda v=value, n=len(value): [id(x) for x in v[:n]] + [len(v) >= n],
                          keep=[value, items])
            else:
                self._add(label, lambda v=value: [id(x) for x in v], keep=[value, items])
            for index, item in enumerate(items[:1000]):
                self._object(f"{label}[{index}]", item[1] if isinstance(value, dict) else item, module_name, seen,
                             depth + 1)
        elif type(value).__module__.startswith("course_lib") and hasattr(value, "__dict__"):
            # An instance of a course class (a Question, a Test, a registry entry).
            seen.add(id(value))
            # Its class too: assigning __class__ swaps every method without touching vars().
            self._add(label, lambda o=value: (id(type(o)), {k: id(v) for k, v in vars(o).items()}),
                      keep=[value, type(value), dict(vars(value))])
            for attr, member in list(vars(value).items()):
                self._object(f"{label}.{attr}", member, module_name, seen, depth + 1)
        elif hasattr(value, "py_func") and isinstance(getattr(value, "py_func", None), types.FunctionType):
            # A Numba dispatcher of the course (a reference kernel): its Python function.
            seen.add(id(value))
            self._add(f"{label}.py_func", lambda d=value: (id(d.py_func), _function_state(d.py_func)),
                      keep=value.py_func)

    def changes(self, limit: int = 5) -> list:
        """Labels of what differs from the snapshot (at most ``limit``)."""
        changed = []
        for label, getter, before, _keep in self.entries:
            try:
                now = getter()
            except Exception:  # noqa: BLE001  (an object made unreadable is a change too)
                now = object()
            if now != before:
                changed.append(label)
                if len(changed) >= limit:
                    break
        return changed


def fingerprint(entries, _id=id, _type=type, _tuple=tuple, _dict=dict, _list=list) -> tuple:
    """What a :class:`Snapshot` recorded, as one value: each entry's identity, its getter's identity, code
    and defaults, and the contents of the value it recorded (copied out of the dicts and lists that hold them).

    The worker keeps the fingerprint of its snapshot in a local variable (out of a notebook's reach)
    and compares it after every step: a notebook that empties the snapshot, replaces an entry, rewrites
    a getter or edits a recorded value changes it. The builtins it uses are bound when it is defined,
    so patching ``builtins.id`` changes nothing here.
    """
    out = []
    for entry in entries:
        value = entry[2]
        kind = _type(value)
        if kind is _dict:
            value = _tuple(value.items())
        elif kind is _list:
            value = _tuple(value)
        elif kind is _tuple and len(value) == 2 and _type(value[1]) is _dict:  # (class, attributes) of an object
            value = (value[0], _tuple(value[1].items()))
        out.append((_id(entry), _id(entry[1]), _id(entry[1].__code__), _id(entry[1].__defaults__), value))
    return _tuple(out)


# --------------------------------------------------------------------------- kernels
#: Names a kernel may call or read besides device functions, modules, numbers and arrays.
_BUILTINS_IN_KERNELS = {"range", "len", "min", "max", "abs", "int", "float", "bool", "round", "divmod", "pow",
                        "complex", "True", "False", "None", "print", "slice", "enumerate", "zip"}
_DEVICE_MODULES = ("numba", "math", "cmath", "numpy", "operator")


def _allowed_in_kernel(obj) -> bool:
    import numpy as np

    if isinstance(obj, (int, float, complex, bool, str, bytes, type(None), np.ndarray, np.generic, np.dtype,
                        np.ufunc)):
        return True  # constants, arrays read as constants, and NumPy's ufuncs (np.sqrt), which kernels may call
    if isinstance(obj, tuple):
        return all(_allowed_in_kernel(x) for x in obj)
    if isinstance(obj, types.ModuleType):
        return True  # judged by the attribute read from it
    module = getattr(obj, "__module__", None) or type(obj).__module__ or ""
    if isinstance(obj, type):
        if issubclass(obj, BaseException) and module == "builtins":
            return True  # raise ValueError(...) compiles for a GPU
        return module.split(".")[0] in _DEVICE_MODULES  # types: np.float32, numba's float32
    if isinstance(obj, types.BuiltinFunctionType):
        return module in ("math", "cmath", "_operator")
    # Numba's objects (cuda.threadIdx, cuda.shared, its types) but no other package's functions, NumPy's
    # array functions (np.sum) included: a GPU kernel cannot call them.
    return type(obj).__module__.split(".")[0] in ("numba", "numba_cuda") and not callable(obj) \
        or type(obj).__module__.startswith(("numba.cuda", "numba_cuda", "numba.core.types")) \
        or _is_dispatcher(obj)


def _is_dispatcher(obj) -> bool:
    """A CUDA kernel or device function (not a CPU ``@njit`` function)."""
    return type(obj).__module__.startswith(("numba.cuda", "numba_cuda")) and hasattr(obj, "py_func")


def kernel_host_calls(kernel, _seen=None) -> list:
    """Names of host objects (Python functions and the like) a kernel and its device functions reach.

    Empty for a kernel that a GPU could compile as far as its globals go: device functions,
    ``cuda``/``math``/``numpy`` attributes and types, numbers and arrays.
    """
    seen = set() if _seen is None else _seen
    func = getattr(kernel, "py_func", None)
    if not isinstance(func, types.FunctionType) or func.__code__ in seen:
        return []
    seen.add(func.__code__)
    found = []
    cells = {name: _cell_value(c) for name, c in zip(func.__code__.co_freevars, func.__closure__ or ())}
    codes = [func.__code__]
    while codes:
        code = codes.pop()
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
        current, path = None, ""
        for ins in dis.get_instructions(code):
            if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLASSDEREF"):
                name = ins.argval
                if ins.opname.startswith("LOAD_DEREF") or ins.opname == "LOAD_CLASSDEREF":
                    current = cells.get(name)
                elif name in func.__globals__:
                    current = func.__globals__[name]
                elif name in _BUILTINS_IN_KERNELS:
                    current, path = None, ""
                    continue
                else:
                    current = getattr(builtins, name, None)
                path = name
            elif ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and isinstance(current, types.ModuleType):
                current = getattr(current, ins.argval, None)
                path = f"{path}.{ins.argval}"
            else:
                current, path = None, ""
                continue
            if current is None or isinstance(current, types.ModuleType):
                continue
            if _is_dispatcher(current):
                found += kernel_host_calls(current, seen)  # a device function: its own calls count
            elif not _allowed_in_kernel(current):
                found.append(path)
    return sorted(set(found))

