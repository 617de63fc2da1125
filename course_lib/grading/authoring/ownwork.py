"""Is an answer the student's own work? Rejecting answers that just call the course's code.

An analysis question asks for a function (a formula, a count, a rule). The library
computes the same things for the lessons, so an answer must not be, or reach, the
library's code: :func:`as_student_function` follows the answer's own code (nested
functions, lambdas, comprehensions, closures, defaults, ``functools.partial`` and the
helper functions of its own notebook) and reports every ``course_lib`` function, class
or module it reaches. NumPy, SciPy and other packages are allowed and not read.

The code is read, not run, so the routes around a plain name are reported too: an
``import course_lib...`` (or ``from course_lib... import``) inside a function, a string
naming ``course_lib``, the dynamic-import machinery (``__import__``, ``importlib``,
``sys.modules``, ``eval``/``exec``, ``globals()``/``vars()``), ``getattr`` on a course
module, and attribute walks from any module (``numpy.sys.modules``, ``some_module.course_lib``).
These are static facts of the answer's bytecode: the verdict is the same on every backend.
"""

from __future__ import annotations

import dis
import functools
import sys
import types

from ..core import CAUSE_PREFIX, CAUSE_WORDS, TestFailure

__all__ = ["as_student_function", "library_uses", "model_uses"]


def _is_library(obj) -> bool:
    """A function or class defined in the course's package (or a module of it)."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__.split(".")[0] == "course_lib"
    module = getattr(obj, "__module__", None)
    return callable(obj) and isinstance(module, str) and module.split(".")[0] == "course_lib"


def _library_uses(func, seen, found, forbidden_names, home=None, allowed=()):
    """Collect into ``found`` the library functions (and ``forbidden_names``) that ``func`` reaches.

    Functions of the answer's own namespace ``home`` (its notebook) are followed; those of other
    packages (NumPy, SciPy) are not read. Objects in ``allowed`` (compared by
    identity) are not reported.
    """
    if any(func is a for a in allowed):
        return
    if isinstance(func, functools.partial):
        _library_uses(func.func, seen, found, forbidden_names, home, allowed)
        for arg in (*func.args, *func.keywords.values()):
            _library_uses(arg, seen, found, forbidden_names, home, allowed)
        return
    if isinstance(func, types.MethodType):
        func = func.__func__
    if not isinstance(func, types.FunctionType) and callable(func) and not isinstance(func, type):
        if _is_library(func):  # an instance of one of the course's classes (a stored answer key: by its name)
            found.add(getattr(func, "key_name", None) or type(func).__qualname__)
            return
        call = getattr(type(func), "__call__", None)
        if _is_library(call):
            # Another package's object whose call the course patches (a simulated kernel
            # launch goes through course_lib.sim): the object is the student's, not the course's.
            return
        if isinstance(call, types.FunctionType):
            func = call
    if _is_library(func) and not isinstance(func, types.ModuleType):
        found.add(getattr(func, "__qualname__", repr(func)))
        if isinstance(found, _Found):
            found.modules.add(getattr(func, "__module__", ""))
        return
    if not isinstance(func, types.FunctionType) or func.__code__ in seen:
        return
    if home is None:
        home = func.__globals__
    elif func.__globals__ is not home:
        if not _made_outside_a_module(func):
            return  # another package's function (NumPy, SciPy): not read
        home = func.__globals__  # made by exec/types.FunctionType with globals of its own: read it there
    seen.add(func.__code__)
    cells = dict(zip(func.__code__.co_freevars, (c.cell_contents for c in func.__closure__ or ()
                                                   if _cell_full(c))))
    for value in (*(func.__defaults__ or ()), *(func.__kwdefaults__ or {}).values(), *cells.values()):
        _library_uses(value, seen, found, forbidden_names, home, allowed)
    _scan_code(func.__code__, home, cells, seen, found, forbidden_names, allowed)


def _made_outside_a_module(func) -> bool:
    """True if ``func``'s globals are not the namespace of an imported module (``exec`` into a dict,
    ``types.FunctionType`` with made-up globals): the student's own code, whatever namespace it runs in."""
    namespace = func.__globals__
    module = sys.modules.get(namespace.get("__name__")) if isinstance(namespace.get("__name__"), str) else None
    return module is None or getattr(module, "__dict__", None) is not namespace


def _cell_full(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


_MISSING = object()
_PACKAGE = "course_lib"


def _dynamic_lookups():
    """Objects that fetch code by a name computed at run time: an answer using them is not judged own work."""
    import builtins
    import importlib
    import importlib.util
    import sys

    found = {id(builtins.__import__): "__import__", id(builtins.eval): "eval", id(builtins.exec): "exec",
             id(builtins.globals): "globals()", id(builtins.vars): "vars()", id(sys.modules): "sys.modules",
             id(importlib): "importlib", id(importlib.import_module): "importlib.import_module",
             id(importlib.util): "importlib.util", id(importlib.reload): "importlib.reload"}
    return found


def _names_package(value) -> bool:
    return isinstance(value, str) and _PACKAGE in value


def _imported(name):
    """The module an ``import name`` statement would bind, if it is already loaded (nothing is imported here)."""
    import sys

    return sys.modules.get(name, _MISSING)


def _scan_code(code, globals_, cells, seen, found, forbidden_names, allowed=()):
    """Follow ``name.attr.attr`` chains in the bytecode and record the library objects they reach, the
    imports of the package, the strings naming it and the dynamic lookups (see the module docstring)."""
    import builtins

    dynamic = _dynamic_lookups()
    current = _MISSING
    uses_getattr = reaches_package_module = False
    imported = {}  # local names bound by an import inside this code -> the module or object
    for instruction in dis.get_instructions(code):
        op, name = instruction.opname, instruction.argval
        if op in ("STORE_FAST", "STORE_NAME", "STORE_DEREF") and current is not _MISSING:
            imported[name] = current
            current = _MISSING
            continue
        if op == "IMPORT_NAME":
            if isinstance(name, str) and name.split(".")[0] == _PACKAGE:
                found.add(f"import {name}")
                if isinstance(found, _Found):
                    found.modules.add(name)
            current, path = _imported(name), name
            if current is not _MISSING and name.split(".")[0] != name:
                current = _imported(name.split(".")[0])  # `import a.b` binds a
        elif op == "IMPORT_FROM" and current is not _MISSING:
            # `from a.b import c`: c is an attribute of a.b (or the submodule a.b.c), not of a
            source = _imported(path) if isinstance(path, str) else _MISSING
            source = current if source is _MISSING else source
            current = getattr(source, name, _MISSING) if isinstance(source, types.ModuleType) else _MISSING
            if isinstance(found, _Found) and isinstance(path, str) and path.split(".")[0] == _PACKAGE and \
                    not path.endswith(f".{name}") and f".{name}." not in f"{path}.":
                # from course_lib.unit import model (loaded or not); not the steps of `import a.b.c as m`
                found.modules.add(f"{path}.{name}")
            path = f"{path}.{name}"
        elif op in ("LOAD_GLOBAL", "LOAD_NAME"):
            current = globals_.get(name, getattr(builtins, name, _MISSING))
            path = name
        elif op in ("LOAD_DEREF", "LOAD_CLASSDEREF"):
            current, path = cells.get(name, imported.get(name, _MISSING)), name
        elif op == "LOAD_FAST" and name in imported:
            current, path = imported[name], name
            continue  # reported when it was imported; its attributes are followed
        elif op in ("LOAD_ATTR", "LOAD_METHOD") and current is not _MISSING:
            current = getattr(current, name, _MISSING) if isinstance(current, types.ModuleType) else _MISSING
            path = f"{path}.{name}"
            if current is not _MISSING and name in forbidden_names:
                found.add(path)
        elif op == "LOAD_CONST" and _names_package(name):
            found.add(repr(name)[:60])
            continue
        else:
            if op in ("LOAD_ATTR", "LOAD_METHOD") and name == "__dict__":
                uses_getattr = True
            current = _MISSING
            continue
        if current is _MISSING:
            continue
        if op in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF") and name in forbidden_names:
            found.add(name)
        if id(current) in dynamic:
            found.add(f"{path} (code fetched by a name computed at run time)")
        if current is builtins.getattr:
            uses_getattr = True
        if isinstance(current, types.ModuleType) and _is_library(current):
            reaches_package_module = True
        _library_uses(current, seen, found, forbidden_names, globals_, allowed)
    if uses_getattr and reaches_package_module:
        found.add("getattr on a course module")
    for const in code.co_consts:
        if isinstance(const, types.CodeType):  # lambdas, comprehensions and inner functions
            _scan_code(const, globals_, {}, seen, found, forbidden_names, allowed)


class _Found(set):
    """The names found, and the course modules they come from (``.modules``)."""

    def __init__(self):
        super().__init__()
        self.modules = set()


def model_uses(func) -> list:
    """The course's modules that compute what a measurement should find, reached by ``func``: the cost
    models (``course_lib.<unit>.model``), the questions' own judges (``course_lib.<unit>.questions``) and the
    grading package (``course_lib.grading...``): their functions called, or the module imported anywhere in the
    answer's code (inside a function too).

    A measuring function may use the course's tools (the profiler, ``record()``), but a figure it
    returns from a model predicts, and one from the grader's own measurement copies the answer: neither
    measures.

    Returns
    -------
    list of str
        The modules' names, sorted (empty if none).
    """
    found = _Found()
    _library_uses(func, set(), found, frozenset(), allowed=())
    return sorted({_module_holding_answers(m) for m in found.modules} - {None})


def _module_holding_answers(name: str):
    """The module of ``name`` (a module, or an object imported from one) if it is a model, a questions module
    or part of the grading package; else None."""
    parts = name.split(".")
    if parts[0] != _PACKAGE:
        return None
    for i, part in enumerate(parts[1:3], start=1):
        if part in ("model", "questions") or part.startswith(("questions_", "_questions_")):  # a question in its own module
            return ".".join(parts[:i + 1])
    if parts[1:2] == ["grading"]:
        while len(parts) > 2 and ".".join(parts) not in sys.modules:  # `from module import function`
            parts = parts[:-1]
        return ".".join(parts)
    return None


def library_uses(func, *, allowed=(), forbidden_names=()) -> set:
    """Names of the course's functions, classes and ``forbidden_names`` that ``func`` reaches (see the module
    docstring); the objects in ``allowed`` are not reported. ``func`` may be a kernel's Python function."""
    found = set()
    _library_uses(func, set(), found, frozenset(forbidden_names), allowed=tuple(allowed))
    return found


def as_student_function(func, what: str = "function", forbidden_names=(), *, allowed=()):
    """Check that an answer is a function that does its own work, not the course's own code.

    Parameters
    ----------
    func : callable
        The answer.
    what : str
        What it is, for the message (e.g. ``"choose_tile"``).
    forbidden_names : sequence of str
        Names of library values (constants) that hold the answer and may not be used either.
    allowed : sequence
        Course objects the answer may use (a device function the question offers, say).

    Raises
    ------
    TestFailure
        If it is not callable, or it is (or calls, directly or through the answer's own helpers)
        one of the course's functions, or uses one of ``forbidden_names`` (library constants that
        hold the answer).
    """
    if not callable(func) or isinstance(func, type):
        raise TestFailure(f"{what} must be a function")
    found = library_uses(func, allowed=allowed, forbidden_names=forbidden_names)
    if found:
        raise TestFailure(f"{what} uses the course's own {', '.join(sorted(found))}; write your own\n"
                          f"{CAUSE_PREFIX}{CAUSE_WORDS['library']}", cause="library")
    return func
