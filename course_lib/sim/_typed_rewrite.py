"""The source rewrite that routes a kernel's arithmetic through :mod:`course_lib.sim._typed_ops`.

Applied by :mod:`course_lib.sim._lines` to every recompiled kernel and device function:
operators, augmented assignments, comparisons, stores, conversions and ``math`` calls become
calls of the typed operations, and the body runs inside a quiet floating-point state
(:func:`quiet`: overflow and division by zero give inf/NaN silently, as on a GPU).
"""

from __future__ import annotations

import ast
import threading

import numpy as np

from . import _convert
from ._typed_ops import _AST_OPS, _MATH_NAMES, CONVERTERS, binop, call, muladd, unop
from ._typing_base import enabled

__all__ = ["TypedOps", "as_unified", "quiet", "rewrite", "typed_copy_names", "unified_assignments", "wrap_quiet"]


class _Depth(threading.local):
    """The depth of nested :class:`_Quiet` contexts of the running OS thread."""

    n = 0


class _Quiet:
    """Floating-point overflow, underflow, invalid operations and division by zero give
    inf/NaN silently, as on a GPU (a launch that raises on division by zero keeps raising)."""

    __slots__ = ("saved",)
    # Nested calls (a kernel calling device functions) set it once. Not named with a leading underscore: the
    # rewritten copies of device functions read it, and graded launches refuse kernels reading such attributes.
    nesting = _Depth()

    def __enter__(self):
        depth = self.nesting
        n = depth.n
        depth.n = n + 1
        if n:
            self.saved = None
            return
        # np.errstate rather than np.seterr and back: half the cost, paid by every simulated thread.
        divide = "raise" if np.geterr()["divide"] == "raise" else "ignore"
        state = np.errstate(over="ignore", under="ignore", invalid="ignore", divide=divide)
        state.__enter__()
        self.saved = state

    def __exit__(self, *exc):
        self.nesting.n -= 1
        if self.saved is not None:
            self.saved.__exit__(None, None, None)
        return False


def quiet():
    """A context in which floating-point errors give inf/NaN silently (see :class:`_Quiet`)."""
    return _Quiet()


# ---------------------------------------------------------------------------------------------
# The source rewrite (applied by course_lib.sim._lines to every recompiled kernel)
# ---------------------------------------------------------------------------------------------
#: Code of a kernel -> ``{(line, variable): numba type}`` of the assignments converted where paths merge
#: (:attr:`course_lib.sim._typing.KernelTyping.unified`), set by the static typing before its launch.
unified_assignments: dict = {}


def as_unified(value, name):
    """``value`` converted to the NumPy dtype ``name`` of the type numba unified its variable to (an int64 stays
    a Python int, the simulator's int64; a bool becomes an integer or float; a number a complex)."""
    dtype = _DTYPES.get(name) or _DTYPES.setdefault(name, np.dtype(name))
    if dtype == _INT64 and type(value) is int:
        return value
    if dtype.kind == "c":
        return dtype.type(value)
    converted = _convert.convert(bool(value) if isinstance(value, np.bool_) else value, dtype)
    return int(converted) if dtype == _INT64 else converted


_INT64 = np.dtype(np.int64)
_DTYPES: dict = {}
_BINOP, _UNOP, _CALL, _QUIET = "__course_binop__", "__course_unop__", "__course_call__", "__course_quiet__"
_AS = "__course_as__"
_FMA, _CMP, _STORE = "__course_fma__", "__course_cmp__", "__course_store__"
_CMP_OPS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}


def typed_copy_names() -> dict:
    """Names the rewritten code refers to, and their values."""
    # _Quiet itself rather than quiet(): one call fewer for every device-function call.
    return {_BINOP: binop, _UNOP: unop, _CALL: call, _QUIET: _Quiet, _FMA: muladd, _CMP: _convert.compare,
            _STORE: _convert.store, _AS: as_unified}


def _small_int(node):
    """An integer literal that float32 represents exactly (``i < 0``, ``tid == 1``)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int and abs(node.value) <= 1 << 24


def _is_mul(node):
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)


def _simple(node):
    """An expression that can be evaluated twice with no side effect (a name, a constant, ...)."""
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.Attribute):
        return _simple(node.value)
    if isinstance(node, ast.Tuple):
        return all(_simple(e) for e in node.elts)
    if isinstance(node, ast.BinOp):
        return _simple(node.left) and _simple(node.right)
    if isinstance(node, ast.UnaryOp):
        return _simple(node.operand)
    return False


def _load(node):
    """A copy of the store target ``node`` as an expression that loads it."""
    import copy

    node = copy.deepcopy(node)
    for sub in ast.walk(node):
        if hasattr(sub, "ctx"):
            sub.ctx = ast.Load()
    return node


class TypedOps(ast.NodeTransformer):
    """Arithmetic through :func:`binop`/:func:`unop`/:func:`call`; the body inside ``with quiet():``.

    ``unified``: ``{(line, variable): numba type}`` of the assignments whose value is converted to the type
    numba-cuda unifies the variable to where paths merge (see :data:`unified_assignments`).
    """

    def __init__(self, unified=None):
        super().__init__()
        self.unified = unified or {}

    def _as_unified(self, node, target, value):
        """``value`` converted as numba-cuda converts it where the variable ``target`` merges, if it does."""
        if not self.unified or not isinstance(target, ast.Name):
            return value
        nbtype = self.unified.get((node.lineno, target.id))
        if nbtype is None:
            return value
        try:
            name = np.dtype(str(nbtype)).name
        except TypeError:
            return value
        return ast.copy_location(ast.Call(ast.Name(_AS, ast.Load()), [value, ast.Constant(name)], []), value)

    def _contracted(self, node, left, right, subtract):
        """``left +- right`` with a product on one side, as a fused multiply-add (:func:`muladd`)."""
        if _is_mul(left):
            kind, operands = (1 if subtract else 0), (left.left, left.right, right)
        else:
            kind, operands = (3 if subtract else 2), (left, right.left, right.right)
        operands = [self.visit(o) for o in operands]
        call_ = ast.Call(ast.Name(_FMA, ast.Load()), [ast.Constant(kind), *operands], [])
        return ast.copy_location(call_, node)

    def visit_BinOp(self, node):
        if isinstance(node.op, (ast.Add, ast.Sub)) and (_is_mul(node.left) or _is_mul(node.right)):
            return self._contracted(node, node.left, node.right, isinstance(node.op, ast.Sub))
        self.generic_visit(node)
        name = _AST_OPS.get(type(node.op))
        if name is None:  # @ (matmul)
            return node
        call_ = ast.Call(ast.Name(_BINOP, ast.Load()), [ast.Constant(name), node.left, node.right], [])
        return ast.copy_location(call_, node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        name = _AST_OPS.get(type(node.op))
        if name is None:  # not
            return node
        call_ = ast.Call(ast.Name(_UNOP, ast.Load()), [ast.Constant(name), node.operand], [])
        return ast.copy_location(call_, node)

    def visit_AugAssign(self, node):
        name = _AST_OPS.get(type(node.op))
        target = node.target
        simple = isinstance(target, ast.Name) or (isinstance(target, ast.Subscript) and _simple(target.value)
                                                  and _simple(target.slice))
        if simple and name in ("add", "sub") and _is_mul(node.value):  # acc += a * b: one fma
            value = self._contracted(node.value, _load(target), node.value, name == "sub")
        else:
            self.generic_visit(node)
            if name is None or not simple:
                return node
            value = ast.Call(ast.Name(_BINOP, ast.Load()), [ast.Constant(name), _load(target), node.value], [])
        if isinstance(target, ast.Subscript):
            value = ast.Call(ast.Name(_STORE, ast.Load()), [_load(target.value), value], [])
        value = self._as_unified(node, target, value)
        return ast.copy_location(ast.Assign([target], value), node)

    def visit_Assign(self, node):
        self.generic_visit(node)
        target = node.targets[0] if len(node.targets) == 1 else None
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            # a[i] = v stores v as a GPU does (a float into an integer array saturates: _convert.store)
            node.value = ast.Call(ast.Name(_STORE, ast.Load()), [_load(target.value), node.value], [])
        node.value = self._as_unified(node, target, node.value)
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        name = _CMP_OPS.get(type(node.ops[0])) if len(node.ops) == 1 else None
        if name is None or any(_small_int(side) for side in (node.left, node.comparators[0])):
            return node  # a small integer literal is exact in float32: NumPy compares as numba does
        call_ = ast.Call(ast.Name(_CMP, ast.Load()), [ast.Constant(name), node.left, node.comparators[0]], [])
        return ast.copy_location(call_, node)

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        # math.sqrt(x), or sqrt(x) after `from math import sqrt` (call() checks that it is math's).
        named = (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "math") \
            or (isinstance(func, ast.Name) and func.id in _MATH_NAMES) \
            or (isinstance(func, ast.Name) and func.id == "round" and len(node.args) in (1, 2)) \
            or (len(node.args) == 1 and ((isinstance(func, ast.Name) and func.id in CONVERTERS)
                                         or (isinstance(func, ast.Attribute) and func.attr in CONVERTERS)))
        if named and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args):
            call_ = ast.Call(ast.Name(_CALL, ast.Load()), [func, *node.args], [])
            return ast.copy_location(call_, node)
        return node

    def visit_FunctionDef(self, node):
        if getattr(self, "_seen", False):
            return node  # nested functions: not kernel code
        self._seen = True
        self.generic_visit(node)
        return node


def rewrite(fdef, code=None):
    """Arithmetic of the function definition ``fdef`` through numba's types, in place (:class:`TypedOps`);
    ``code``: the original function's code, whose assignments numba-cuda converts where paths merge are
    converted too (:data:`unified_assignments`)."""
    if enabled():
        TypedOps(unified_assignments.get(code)).visit(fdef)
    return fdef


def wrap_quiet(fdef):
    """The body of ``fdef`` (after its docstring) inside ``with quiet():``, in place.

    A device function called by a kernel runs inside its kernel's ``quiet()`` already, where a nested one
    changes nothing: the body is also kept unwrapped, run when the thread is quiet already (the ``with``
    would cost more than a short device function's body, called in a kernel's inner loop)::

        if __course_quiet__.nesting.n:
            <body>
        else:
            with __course_quiet__():
                <body>
    """
    if not enabled():
        return fdef
    body = fdef.body
    first = 1 if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None),
                                                                         ast.Constant) else 0
    if len(body) > first:
        import copy

        with_ = ast.With([ast.withitem(ast.Call(ast.Name(_QUIET, ast.Load()), [], []), None)], body[first:])
        ast.copy_location(with_, body[first])
        # (the depth read through _Quiet: copies are pickled with their kernel, and _Quiet by reference)
        depth = ast.Attribute(ast.Name(_QUIET, ast.Load()), "nesting", ast.Load())
        quiet_already = ast.Attribute(depth, "n", ast.Load())
        if_ = ast.If(quiet_already, copy.deepcopy(body[first:]), [with_])
        ast.copy_location(if_, body[first])
        fdef.body = body[:first] + [if_]
    return fdef
