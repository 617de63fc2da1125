"""Every statement of a submitted kernel must run under some graded launch.

A kernel can use the technique on the configurations the grader draws and something else outside
them: a branch on the size, the block shape, a stride, the order of the data or a count that the
grader never reaches. Whatever the branch tests, the code it guards never runs while the grader
watches. :func:`coverage_test` (added by :func:`~course_lib.grading.authoring.harness.question` to
every question whose technique is measured on kernels) therefore asks that every statement of the
student's kernels and device functions ran in some launch the question's tests made under the
course's profiler or checker. It reads them from the profiles of the technique tests, and, for what
they left out, runs the launches of the question's result and checker tests under the profiler (in the
simulator, on any backend). A statement that never ran caps the question at its technique cap.

A branch need not be a statement: ``tile = staged(a, i) if n <= 4096 else a[i]`` or
``ok = small and staged(a, i)`` runs its line whichever way it goes. So every *arm* of a conditional
expression in the kernel code counts as a statement: the ``body`` and ``orelse`` of ``x if c else y``,
and each operand of ``and``/``or`` after the first must have been evaluated in some profiled launch
(the profiler notes them, :attr:`course_lib.sim.ProfileReport.arms`).

What counts as the student's kernels: the kernel answered, or every kernel its factory made, and every
kernel and device function (``@cuda.jit`` in the student's notebook) that the answer's code names,
through its globals, closures and helper functions, so a kernel a factory returns only for a tile the
grader never asks for is read too.
"""

from __future__ import annotations

import ast
import types

from ...sim._lines import arm_key, conditional_arms, parsed_source, source_margin
from .buffers import fail
from .dispatch import is_dispatcher, launched_function

__all__ = ["host_coverage_test", "kernel_statements", "note_profile", "reset", "statements_ran",
           "traced_host"]

#: ``(file, line)`` of every statement that ran in a profiled or checked launch since :func:`reset`.
_ran: set = set()
#: ``(file, line, column, end line, end column)`` of every arm of a conditional expression evaluated in a
#: profiled launch since :func:`reset`.
_arms_ran: set = set()


def reset() -> None:
    """Forget the statements that ran (a new answer is being graded)."""
    _ran.clear()
    _arms_ran.clear()


def note_profile(report) -> None:
    """Record the statements that ran in a profiler's report (``report.lines``: one row per line that ran) and the
    arms of conditional expressions it evaluated (``report.arms``)."""
    for row in getattr(report, "lines", ()) or ():
        if getattr(row, "line", 0):
            _ran.add((str(row.file), int(row.line)))
    for entry in getattr(report, "arms", ()) or ():
        if isinstance(entry, tuple) and len(entry) == 5:
            _arms_ran.add((str(entry[0]), *(int(place) for place in entry[1:])))


def statements_ran() -> set:
    return set(_ran)


def _is_jit(decorator) -> bool:
    return "jit" in ast.unparse(decorator)


def _header_end(stmt) -> int:
    """The last line of a statement's own text: its header for a compound statement (``for``, ``if``...)."""
    blocks = [getattr(stmt, f, None) for f in ("body", "orelse", "finalbody")]
    firsts = [b[0].lineno for b in blocks if isinstance(b, list) and b and isinstance(b[0], ast.stmt)]
    firsts += [h.lineno for h in getattr(stmt, "handlers", []) or []]
    firsts += [c.pattern.lineno for c in getattr(stmt, "cases", []) or []]
    if firsts:
        return max(stmt.lineno, min(firsts) - 1)
    return stmt.end_lineno or stmt.lineno


def _statements(body, filename, offset, out, skip_jit=False):
    """Add ``(file, first line, last line)`` of every statement of ``body`` (nested blocks too; a block's docstring
    is not one); ``skip_jit`` leaves out the bodies of ``@cuda.jit`` functions defined there."""
    for k, stmt in enumerate(body):
        if k == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                and isinstance(stmt.value.value, str):
            continue
        out.add((filename, stmt.lineno + offset, _header_end(stmt) + offset))
        if skip_jit and isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                any(_is_jit(d) for d in stmt.decorator_list):
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                _statements(block, filename, offset, out, skip_jit)
        for handler in getattr(stmt, "handlers", []) or []:
            _statements(handler.body, filename, offset, out, skip_jit)
        for case in getattr(stmt, "cases", []) or []:
            _statements(case.body, filename, offset, out, skip_jit)


def _parsed(function):
    """``(function definition, line offset, column margin)`` of a function's source, or None where it cannot be
    read."""
    parsed = parsed_source(function)
    if parsed is None:
        return None
    tree, lines, start = parsed
    node = tree.body[0]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    return node, start - 1, source_margin(lines)


def _arms(fdef, filename, offset, margin, arms):
    """Add the :func:`~course_lib.sim._lines.arm_key` of every arm of a conditional expression of ``fdef``."""
    if arms is not None:
        arms.update(arm_key(filename, arm, offset, margin) for _, _, _, arm in conditional_arms(fdef))


def _device_code(function, is_kernel, out, host=False, arms=None):
    """Statements of ``function`` if it is kernel code (or, with ``host``, host code: then every statement but the
    bodies of kernels), and of every ``@cuda.jit`` function defined inside it; the arms of the kernel code's
    conditional expressions go to ``arms``."""
    parsed = _parsed(function)
    if parsed is None:
        return
    node, offset, margin = parsed
    filename = function.__code__.co_filename
    if is_kernel or host:
        if not (host and is_kernel):
            _statements(node.body, filename, offset, out, skip_jit=host)
            if not host:
                _arms(node, filename, offset, margin, arms)
        return
    for inner in ast.walk(node):
        if inner is not node and isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                any(_is_jit(d) for d in inner.decorator_list):
            _statements(inner.body, filename, offset, out)
            _arms(inner, filename, offset, margin, arms)


def _names(code):
    names = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def kernel_statements(roots, host: bool = False, arms: set | None = None) -> set:
    """``(file, first line, last line)`` of every statement of the student's kernel code reached from ``roots``
    (with ``host``: of the student's host code instead, the host program and its helper functions).

    Parameters
    ----------
    roots : iterable
        Kernels (dispatchers) and functions (kernel factories, helpers) of the student's notebook.
    arms : set, optional
        Filled with ``(file, line, column, end line, end column)`` of every arm of a conditional expression of
        the kernel code (the ``body`` and ``orelse`` of ``a if c else b``, the operands of ``and``/``or`` after
        the first, a body written on its header's line), as the profiler notes them (:attr:`course_lib.sim.ProfileReport.arms`).

    Functions of other modules (NumPy, the course's device functions a question offers) are not followed:
    only those sharing the globals of the first root's function.
    """
    out, seen, home = set(), set(), None
    work = list(roots)
    while work:
        obj = work.pop()
        if isinstance(obj, types.MethodType):
            obj = obj.__func__
        if is_dispatcher(obj):
            try:
                function, is_kernel = launched_function(obj), True
            except Exception:
                continue
        elif isinstance(obj, types.FunctionType):
            function, is_kernel = obj, False
        else:
            continue
        if home is None:
            home = function.__globals__
        if function.__globals__ is not home or id(function) in seen:
            continue
        seen.add(id(function))
        _device_code(function, is_kernel, out, host, arms)
        cells = dict(zip(function.__code__.co_freevars, function.__closure__ or ()))
        for name in _names(function.__code__):
            if name in cells:
                try:
                    work.append(cells[name].cell_contents)
                except ValueError:  # an empty cell
                    pass
            elif name in function.__globals__:
                work.append(function.__globals__[name])
    return out


def _roots(answer):
    """The kernels and factories of a prepared answer (a dict answer's kernel fields too)."""
    def is_answer(x):  # an Answer of .answers (which imports this module: checked by its attributes)
        return hasattr(x, "_make") and hasattr(x, "_kernels") and hasattr(x, "value")

    roots = []
    values = [answer] if is_answer(answer) else []
    if is_answer(answer) and isinstance(answer.value, dict):
        values += [v for v in answer.value.values() if is_answer(v)]
    for value in values:
        if isinstance(value.value, dict):
            continue
        if is_dispatcher(value.value) or value._make is not None:
            roots.append(value.value)
            roots.extend(value._kernels.values())
    return roots


def _has_run(statement) -> bool:
    filename, first, last = statement
    return any((filename, line) in _ran for line in range(first, last + 1))


def _uncovered(answer, host=False):
    """``(file, line)`` of every statement of the answer's kernel code (or host code) that never ran, and (kernel
    code) of every arm of a conditional expression never evaluated, in line order."""
    roots = [answer.value] if host else _roots(answer)
    arms = None if host else set()
    missing = {(f, first) for f, first, last in kernel_statements(roots, host, arms) if not _has_run((f, first, last))}
    missing.update(key[:2] for key in arms or () if key not in _arms_ran)
    return sorted(missing)


class traced_host:
    """Records the lines the student's host code runs while open: the functions sharing the globals of ``function``
    (its notebook), not the course's or other packages' code; in the calling thread, in every thread started while
    open (``threading.Thread``, a ``concurrent.futures`` pool's new workers) and in the calls a thread pool's
    workers started earlier run for it (``ThreadPoolExecutor.submit`` and ``map``)."""

    def __init__(self, function):
        self.home = getattr(function, "__globals__", None)
        self.open = False

    def _local(self, frame, event, arg):
        if not self.open:
            return None
        if event == "line":
            _ran.add((frame.f_code.co_filename, frame.f_lineno))
        return self._local

    def _global(self, frame, event, arg):
        if not self.open:  # a thread that outlived the call (a pool's worker): untraced from now on
            import sys

            sys.settrace(None)
            return None
        if frame.f_globals is self.home:
            _ran.add((frame.f_code.co_filename, frame.f_lineno))
            return self._local
        return None

    def _started(self, frame, event, arg):
        """First trace call of a thread started while open: the simulator's carriers (which run kernels, not host code,
        and are pooled for later launches) are left untraced."""
        import sys
        import threading

        from ...sim._baton import Carrier

        if isinstance(threading.current_thread(), Carrier):
            sys.settrace(None)
            return None
        sys.settrace(self._global)
        return self._global(frame, event, arg)

    def _traced(self, fn):
        """``fn`` run with this tracer in the thread that calls it (a pool's worker), where none is set."""
        import functools
        import sys

        @functools.wraps(fn)
        def run(*args, **kwargs):
            if not self.open or sys.gettrace() is not None:
                return fn(*args, **kwargs)
            sys.settrace(self._global)
            try:
                return fn(*args, **kwargs)
            finally:
                sys.settrace(None)

        return run

    def __enter__(self):
        import sys
        import threading
        from concurrent.futures import ThreadPoolExecutor

        self._saved = sys.gettrace()
        self.open = self.home is not None and self._saved is None  # under a debugger or coverage tool: leave it be
        # The hooks for other threads are the process's: set once (another thread's traced_host may hold them).
        self._threads = self.open and threading.gettrace() is None
        if self.open:
            sys.settrace(self._global)
        if self._threads:
            threading.settrace(self._started)  # threads started while open trace from their first call
            self._submit = ThreadPoolExecutor.submit
            traced, submit = self._traced, self._submit

            def traced_submit(pool, fn, /, *args, **kwargs):
                return submit(pool, traced(fn), *args, **kwargs)

            ThreadPoolExecutor.submit = traced_submit
        return self

    def __exit__(self, *exc):
        import sys
        import threading
        from concurrent.futures import ThreadPoolExecutor

        if self.open:
            self.open = False  # threads still running stop recording at their next event
            sys.settrace(None)
        if self._threads:
            threading.settrace(None)
            ThreadPoolExecutor.submit = self._submit
        return False


def host_coverage_test(name: str):
    """Every statement of the student's host program (and of its helper functions) ran in the question's calls
    (:func:`~course_lib.grading.authoring.hostcosts.counted_call` records them): a copy, a read or an allocation
    made only past the step counts or sizes the grader draws never runs. 0 points; a failure caps the question."""
    from ..core import Test

    def inputs(rng, info):
        return {}

    def produce(answer, data):
        return {"missing": [[str(f), int(line)] for f, line in _uncovered(answer, host=True)]}

    return Test(name, hidden=True, hint="", inputs=inputs, produce=produce, judge=_judge_missing("host program"),
                points=0, technique=True, hints=())


def _judge_missing(what, arms=False):
    """The judge of a coverage test; ``arms``: the missing entries include arms of conditional expressions."""
    things = ("statement(s) or arm(s) of a conditional expression (`x if c else y`, the operands of `and`/`or` "
              "after the first)") if arms else "statement(s)"

    def judge(data, got, info):
        if not isinstance(got, dict) or not isinstance(got.get("missing"), list):
            raise fail("the list of statements that ran did not come back", "answer")
        missing = got["missing"]
        if missing:
            lines = ", ".join(str(entry[1]) for entry in missing[:12] if isinstance(entry, list) and len(entry) == 2)
            lines += " ..." if len(missing) > 12 else ""
            failure = fail(f"{len(missing)} {things} of your {what} never ran under the grader's runs "
                           f"(lines {lines}): code the grader never runs cannot be credited. Every statement must "
                           "serve the sizes and step counts the question allows", "technique", public=True)
            failure.measurement = {"measured": float(len(missing)), "low": 0.0, "high": 0.0,
                                   "unit": "statements that never ran"}
            raise failure

    return judge
