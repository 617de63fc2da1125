"""Counting how often each simulated thread executes each statement of a kernel.

The profiler needs, per thread, the number of executions of every source line. A
``sys.settrace`` hook would give them, but it makes every Python call of the simulator
pay for a trace event, several times the cost of the launch. Instead, :func:`counted`
recompiles the kernel (and the device functions it calls) from its source with one
counting statement before each statement::

    __course_lines__.d[(file, 12)] += 1

``__course_lines__`` is a free variable holding a :class:`LineCounter`, whose ``d``
the scheduler points at the counts of whichever simulated thread holds the baton.
Line numbers are those of the original file, so frames, reports and the source text
agree. Kernels whose source cannot be read return None (the caller falls back to
``sys.settrace``).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections import defaultdict

__all__ = ["LineCounter", "counted"]

_COUNTER = "__course_lines__"


class LineCounter:
    """Where the counting statements add: ``d`` is the running thread's dict."""

    __slots__ = ("d", "statement_of")

    def __init__(self):
        self.d = defaultdict(int)
        #: (file, line) of every line inside a multi-line statement -> (file, first line).
        self.statement_of = {}


class _Insert(ast.NodeTransformer):
    def __init__(self, filename, counter):
        self.filename = filename
        self.counter = counter

    def _count(self, lineno):
        key = ast.Tuple([ast.Constant(self.filename), ast.Constant(lineno)], ast.Load())
        target = ast.Subscript(ast.Attribute(ast.Name(_COUNTER, ast.Load()), "d", ast.Load()), key, ast.Store())
        return ast.AugAssign(target, ast.Add(), ast.Constant(1))

    def _body(self, body):
        out = []
        for stmt in body:
            self.visit(stmt)
            count = self._count(stmt.lineno)
            ast.copy_location(count, stmt)
            ast.fix_missing_locations(count)
            out.extend((count, stmt))
            if not isinstance(stmt, (ast.For, ast.While, ast.If, ast.With, ast.Try, ast.FunctionDef)):
                for line in range(stmt.lineno + 1, (stmt.end_lineno or stmt.lineno) + 1):
                    self.counter.statement_of[(self.filename, line)] = (self.filename, stmt.lineno)
        return out

    def generic_visit(self, node):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, field, self._body(block))
        for handler in getattr(node, "handlers", []) or []:
            handler.body = self._body(handler.body)
        return node


def counted(fn, counter: LineCounter):
    """A copy of the Python function ``fn`` that counts its statements into ``counter``.

    Parameters
    ----------
    fn : function
        A kernel or device function (module level, or made by a factory: its closure
        values are captured as they are now).
    counter : LineCounter

    Returns
    -------
    function or None
        None if the source of ``fn`` cannot be read or recompiled.
    """
    try:
        lines, start = inspect.getsourcelines(fn)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    fdef = tree.body[0] if tree.body else None
    if not isinstance(fdef, ast.FunctionDef) or fdef.name != fn.__code__.co_name:
        return None
    fdef.decorator_list = []
    ast.increment_lineno(tree, start - 1)
    filename = fn.__code__.co_filename
    _Insert(filename, counter).generic_visit(fdef)
    # Free variables (the factory's values, and the counter) become parameters of an
    # enclosing function, so the copy sees them as closure cells like the original.
    freevars = list(fn.__code__.co_freevars)
    factory = ast.FunctionDef(
        name="__course_factory__",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(_COUNTER)] + [ast.arg(v) for v in freevars],
                           kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=[fdef, ast.Return(ast.Name(fdef.name, ast.Load()))],
        decorator_list=[],
    )
    module = ast.Module([factory], type_ignores=[])
    ast.fix_missing_locations(module)
    namespace = {}
    try:
        exec(compile(module, filename, "exec"), fn.__globals__, namespace)
    except Exception:
        return None
    cells = [c.cell_contents for c in (fn.__closure__ or ())]
    copy = namespace["__course_factory__"](counter, *cells)
    copy.__defaults__ = fn.__defaults__
    copy.__name__ = fn.__name__
    return copy
