"""Recompiled kernels: statement counters for the profiler, loop ticks for a fair scheduler.

The profiler needs, per thread, the number of executions of every source line. A
``sys.settrace`` hook would give them, but it makes every Python call of the simulator
pay for a trace event, several times the cost of the launch. Instead, :func:`counted`
recompiles the kernel (and the device functions it calls) from its source with one
counting statement before each statement (docstrings are not statements that run)::

    __course_lines__.d[(file, 12)] += 1

``__course_lines__`` is a free variable holding a :class:`LineCounter`, whose ``d``
the scheduler points at the counts of whichever simulated thread holds the baton.

The scheduler needs to know when a simulated thread goes round a loop: a thread
spinning on a flag that another thread will set must give the others a turn, as warps
progress independently on a GPU. :func:`with_ticks` (and :func:`counted`, which does
both) puts a call of the scheduler's ``tick`` at the start of every loop body, i.e. at
every loop back-edge.

The copies also see ``max`` and ``min`` as a kernel compiles them (a NaN operand is
ignored, as by ``max.f32``; see :mod:`course_lib.sim._intrinsics`) and ``print`` as
numba-cuda's ``printf`` formats (:mod:`course_lib.sim._convert`) unless the function's
module defines names of its own for them.
Every copy also computes its arithmetic in the types numba gives it on a GPU
(:func:`course_lib.sim._typed_rewrite.rewrite`), inside a floating-point state that lets overflow
and division by zero give inf/NaN silently, as on a GPU.

The profiler's copies also note which *arms* of conditional expressions were evaluated: the
``body`` and ``orelse`` of ``a if c else b`` and every operand of ``and``/``or`` after the first,
each wrapped as ``__course_lines__.arm(key, <arm>)`` (which returns the arm's value unchanged). A
line can run while one of its arms never does (``x = staged(a) if n <= 4096 else a[i]``): the
grader's coverage (:mod:`course_lib.grading.authoring.coverage`) asks that every arm was evaluated,
keyed by :func:`arm_key` (file, line and column in the file).

Line numbers are those of the original file, so frames, reports and the source text
agree; the copy shares the original's globals and closure cells. Functions whose source
cannot be read (or no longer matches their code) are not rewritten: the callers fall
back to ``sys.settrace`` (profiler) or to ticks at atomics only (scheduler).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
from collections import defaultdict

from . import _typed_rewrite
from ._marks import REWRITTEN

__all__ = ["LineCounter", "arm_key", "conditional_arms", "counted", "source_margin", "with_ticks"]

_COUNTER = "__course_lines__"
_TICK = "__course_tick__"


class LineCounter:
    """Where the counting statements add: ``d`` is the running thread's dict."""

    __slots__ = ("arms", "d", "statement_of")

    def __init__(self):
        self.d = defaultdict(int)
        #: (file, line) of every line inside a multi-line statement -> (file, first line).
        self.statement_of = {}
        #: :func:`arm_key` of every arm of a conditional expression that was evaluated (by any thread).
        self.arms = set()

    def arm(self, key, value):
        """Note that the arm ``key`` was evaluated; its value, unchanged."""
        self.arms.add(key)
        return value


def conditional_arms(fdef):
    """The arms of the conditional expressions in the body of the function definition ``fdef`` (not in functions or
    lambdas defined inside it): ``(node, field, index, arm)`` for the ``body`` and ``orelse`` of every ``ast.IfExp``
    (index None), the operands after the first of every ``ast.BoolOp`` (``field`` "values", their index) and the
    first statement of a body written on its compound statement's line (``field`` "body", index "inline")."""
    out, todo = [], list(fdef.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, (ast.If, ast.For, ast.While, ast.With)) and node.body[0].lineno == node.lineno:
            # A body written on its header's line (``if n > 4096: t = staged(a, i)``): the header's count is the
            # line's, so the body's first statement is an arm (``field`` "body", index "inline").
            out.append((node, "body", "inline", node.body[0]))
        if isinstance(node, ast.IfExp):
            out += [(node, field, None, arm) for field, arm in (("body", node.body), ("orelse", node.orelse))
                    if not _inert(arm)]
        elif isinstance(node, ast.BoolOp):
            out += [(node, "values", k, value) for k, value in enumerate(node.values) if k and not _inert(value)]
        todo.extend(ast.iter_child_nodes(node))
    return sorted(out, key=lambda entry: (entry[3].lineno, entry[3].col_offset))


def _inert(arm) -> bool:
    """An arm that does nothing but name a value (``head``, ``0``, ``-1``): ``x = b if b < x else x`` is a minimum,
    and its ``else x`` need not run any more than the missing ``else`` of ``if b < x: x = b``. What it names was
    computed by a statement that ran (and a kernel cannot choose between device functions by name)."""
    if isinstance(arm, ast.UnaryOp):
        arm = arm.operand
    return isinstance(arm, (ast.Name, ast.Constant))


def source_margin(lines) -> int:
    """Characters :func:`textwrap.dedent` removes from the start of each line of a function's source ``lines``."""
    dedented = textwrap.dedent("".join(lines)).splitlines()
    for line, short in zip("".join(lines).splitlines(), dedented):
        if line.strip():
            return len(line) - len(short)
    return 0


def parsed_source(fn):
    """``(tree, lines, start)`` of a function's source: its dedented parse (the function first in ``tree.body``), the
    source lines and the first line's number in the file; None where the source cannot be read or parsed."""
    try:
        lines, start = inspect.getsourcelines(fn)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError, IndentationError, ValueError):
        return None
    return (tree, lines, start) if tree.body else None


def arm_key(filename, arm, line_offset, margin):
    """``(file, line, column, end line, end column)`` of an arm in the file, from its node in a dedented parse of the
    source (``line_offset`` lines and ``margin`` columns removed); the same for a kernel read alone or inside its
    factory. The end is part of the key: an arm that is itself a conditional expression (``(b if d else e) if c
    else f``, ``p and (b if d else e)``) starts where its own first arm starts, and only the end tells them apart."""
    return (filename, arm.lineno + line_offset, arm.col_offset + margin,
            arm.end_lineno + line_offset, arm.end_col_offset + margin)


def _is_docstring(stmt):
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


class _Insert(ast.NodeTransformer):
    def __init__(self, filename, counter, ticks):
        self.filename = filename
        self.counter = counter
        self.ticks = ticks

    def _count(self, lineno):
        key = ast.Tuple([ast.Constant(self.filename), ast.Constant(lineno)], ast.Load())
        target = ast.Subscript(ast.Attribute(ast.Name(_COUNTER, ast.Load()), "d", ast.Load()), key, ast.Store())
        return ast.AugAssign(target, ast.Add(), ast.Constant(1))

    def _body(self, body, loop=False):
        out = []
        for k, stmt in enumerate(body):
            self.visit(stmt)
            if self.counter is not None and not (k == 0 and _is_docstring(stmt)):
                count = self._count(stmt.lineno)
                ast.copy_location(count, stmt)
                ast.fix_missing_locations(count)
                out.append(count)
                if not isinstance(stmt, (ast.For, ast.While, ast.If, ast.With, ast.Try, ast.FunctionDef)):
                    for line in range(stmt.lineno + 1, (stmt.end_lineno or stmt.lineno) + 1):
                        self.counter.statement_of[(self.filename, line)] = (self.filename, stmt.lineno)
            out.append(stmt)
        if loop and self.ticks and body:
            tick = ast.Expr(ast.Call(ast.Name(_TICK, ast.Load()), [], []))
            ast.copy_location(tick, body[0])
            ast.fix_missing_locations(tick)
            out.insert(0, tick)
        return out

    def generic_visit(self, node):
        loop = isinstance(node, (ast.For, ast.While, ast.AsyncFor))
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, field, self._body(block, loop=loop and field == "body"))
        for handler in getattr(node, "handlers", []) or []:
            handler.body = self._body(handler.body)
        for case in getattr(node, "cases", []) or []:
            case.body = self._body(case.body)
        return node


def _rewrite(fn, counter, tick):
    """The copy of ``fn`` with counters (if ``counter``) and ticks (if ``tick``), or None."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE):
        return None
    parsed = parsed_source(fn)
    if parsed is None:
        return None
    tree, lines, start = parsed
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef) or fdef.name != code.co_name:
        return None
    fdef.decorator_list = []
    filename = code.co_filename
    # The arms' keys, taken before the typed rewrite replaces the arms' nodes (it keeps the IfExp/BoolOp nodes).
    arms = [(node, field, index, arm_key(filename, arm, start - 1, source_margin(lines)))
            for node, field, index, arm in conditional_arms(fdef)] if counter is not None else []
    ast.increment_lineno(tree, start - 1)
    _typed_rewrite.rewrite(fdef, code)  # arithmetic in numba's types (before the counters, which stay plain Python)
    _Insert(filename, counter, tick is not None).generic_visit(fdef)
    for node, field, index, key in arms:
        if index == "inline":  # noted when the body starts: a statement before its (already counted) statements
            noted = ast.Expr(ast.Call(ast.Attribute(ast.Name(_COUNTER, ast.Load()), "arm", ast.Load()),
                                      [ast.Constant(key), ast.Constant(None)], []))
            ast.copy_location(noted, node.body[0])
            ast.fix_missing_locations(noted)
            node.body.insert(0, noted)
            continue
        value = getattr(node, field) if index is None else node.values[index]
        noted = ast.Call(ast.Attribute(ast.Name(_COUNTER, ast.Load()), "arm", ast.Load()),
                         [ast.Constant(key), value], [])
        ast.copy_location(noted, value)
        if index is None:
            setattr(node, field, noted)
        else:
            node.values[index] = noted
    _typed_rewrite.wrap_quiet(fdef)
    # The copy is compiled inside a factory whose parameters are the original's free
    # variables and the injected names, so its code has them as free variables too;
    # the function is then made with the original's own cells (later rebindings of a
    # closure variable are seen, as by the original).
    from ._convert import gpu_print
    from ._intrinsics import gpu_max, gpu_min

    typed = _typed_rewrite.typed_copy_names()
    freevars = list(code.co_freevars)
    builtins_as_compiled = {name: value for name, value in (("max", gpu_max), ("min", gpu_min), ("print", gpu_print))
                            if name not in fn.__globals__ and name not in freevars}
    injected = [_COUNTER, _TICK, *builtins_as_compiled, *typed]
    factory = ast.FunctionDef(
        name="__course_factory__",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(v) for v in injected + freevars],
                           kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=[fdef, ast.Return(ast.Name(fdef.name, ast.Load()))],
        decorator_list=[],
    )
    module = ast.Module([factory], type_ignores=[])
    ast.fix_missing_locations(module)
    try:
        factory_code = compile(module, filename, "exec").co_consts
        outer = next(c for c in factory_code if isinstance(c, types.CodeType))
        inner = next(c for c in outer.co_consts if isinstance(c, types.CodeType) and c.co_name == fdef.name)
    except Exception:
        return None
    cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
    cells[_COUNTER] = types.CellType(counter)
    cells[_TICK] = types.CellType(tick)
    for name, value in builtins_as_compiled.items():
        cells[name] = types.CellType(value)
    cells.update((name, types.CellType(value)) for name, value in typed.items())
    if any(name not in cells for name in inner.co_freevars) or inner.co_argcount != code.co_argcount:
        return None  # the source no longer matches the function
    copy = types.FunctionType(inner, fn.__globals__, fn.__name__, fn.__defaults__,
                              tuple(cells[name] for name in inner.co_freevars))
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    copy.__module__ = fn.__module__
    copy.__doc__ = fn.__doc__
    setattr(copy, REWRITTEN, fn)
    return copy


def counted(fn, counter: LineCounter, tick=None):
    """A copy of the Python function ``fn`` that counts its statements into ``counter``.

    Parameters
    ----------
    fn : function
        A kernel or device function (module level, or made by a factory).
    counter : LineCounter
    tick : callable, optional
        Called at the start of every loop body (see :func:`with_ticks`).

    Returns
    -------
    function or None
        None if the source of ``fn`` cannot be read or recompiled.
    """
    return _rewrite(fn, counter, tick)


def with_ticks(fn, tick):
    """A copy of ``fn`` calling ``tick()`` at the start of every loop body, or None."""
    return _rewrite(fn, None, tick)
