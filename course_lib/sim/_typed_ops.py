"""Typed arithmetic while a kernel runs, and the source rewrite that routes it there.

The recompiled copy of every kernel and device function (:mod:`course_lib.sim._lines`)
evaluates each arithmetic operator, augmented assignment, unary operator, ``math`` call
and ``round(x, ndigits)`` through :func:`binop`, :func:`unop` and :func:`call`, which
compute in the types numba's typing gives for the operand types: first the signatures the
static typing found in the launched kernels (:data:`launch_ops`, filled by
:func:`course_lib.sim._typing.before_launch`), else numba's own CPU typing context, whose
rules for scalars are the same.
"""

from __future__ import annotations

import ast
import math
import operator
import threading

import numpy as np

from ._typing_base import _numba_types, _scalar_type, enabled


#: Signatures the static typing of the launched kernels found (CUDA typing), consulted first.
launch_ops: dict = {}
_impls: dict = {}
_typing_context = None

_PYOPS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
    "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow, "lshift": operator.lshift,
    "rshift": operator.rshift, "and_": operator.and_, "or_": operator.or_, "xor": operator.xor,
    "neg": operator.neg, "pos": operator.pos, "invert": operator.invert,
}
_AST_OPS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
    ast.Mod: "mod", ast.Pow: "pow", ast.LShift: "lshift", ast.RShift: "rshift", ast.BitAnd: "and_",
    ast.BitOr: "or_", ast.BitXor: "xor", ast.USub: "neg", ast.UAdd: "pos", ast.Invert: "invert",
}
#: math functions whose float32 (and float64) versions NumPy computes elementwise in that precision.
_UFUNCS = {
    "sqrt": np.sqrt, "exp": np.exp, "log": np.log, "log2": np.log2, "log10": np.log10, "sin": np.sin,
    "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "atan2": np.arctan2,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "fabs": np.fabs, "expm1": np.expm1, "log1p": np.log1p, "hypot": np.hypot,
    "copysign": np.copysign, "fmod": np.fmod, "pow": np.power, "isnan": np.isnan, "isinf": np.isinf,
    "isfinite": np.isfinite, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
}


_MATH_NAMES = frozenset(name for name in dir(math) if not name.startswith("_") and callable(getattr(math, name)))


def _context():
    global _typing_context
    if _typing_context is None:
        from numba.core.registry import cpu_target

        ctx = cpu_target.typing_context
        ctx.refresh()
        _typing_context = ctx
    return _typing_context


def _resolve(name, given):
    """(cast-to types, result type) numba gives operator ``name`` on ``given`` types, or None."""
    found = launch_ops.get((name, given))
    if found is not None:
        return found
    ctx = _context()
    try:
        if name.startswith("math."):
            fnty = ctx.resolve_value_type(getattr(math, name[5:]))
            sig = ctx.resolve_function_type(fnty, given, {})
        else:
            sig = ctx.resolve_function_type(_PYOPS[name], given, {})
    except Exception:
        return None
    if sig is None:
        return None
    return tuple(sig.args), sig.return_type


def _scalar_ctor(nbtype):
    types = _numba_types()
    if nbtype == types.boolean:
        return bool
    return np.dtype(str(nbtype)).type


def _int_arg(ctor):
    """An integer argument of a ``math`` function: wrapped to its numba type, passed as a Python int."""
    return lambda v: int(ctor(v))


def _make_int(pyop, result, name, python_ints=False):
    """``python_ints``: the operands are Python ints and the result int64, which stays a Python int
    (within int64's range: the simulator's indices are Python ints, and they are cheaper)."""
    bits = result.bitwidth
    mask = (1 << bits) - 1
    half = 1 << (bits - 1)
    ctor = np.dtype(str(result)).type
    signed = result.signed
    dividing = name in ("floordiv", "mod")

    if python_ints and not dividing:
        low, high = -half, half

        def impl(*operands):
            r = pyop(*operands)
            if low <= r < high:
                return r
            r &= mask
            return r - (1 << bits) if r >= half else r

        return impl

    def impl(*operands):
        values = [int(v) for v in operands]
        if dividing and values[1] == 0:
            # numba-cuda's "numpy" error model gives 0 (numba/cuda/cpython/numbers.py, _int_divmod_impl);
            # a debug=True launch (the "python" error model) raises, as its launches here do.
            if np.geterr()["divide"] == "raise":
                raise ZeroDivisionError("integer division or modulo by zero")
            return ctor(0)
        r = pyop(*values)
        if type(r) is not int:  # e.g. int ** negative int
            return np.float64(r)
        r &= mask
        if signed and r >= half:
            r -= 1 << bits
        return ctor(r)

    return impl


def _make(name, given, pytypes):
    """The function computing operator ``name`` on operands of numba types ``given`` (Python types
    ``pytypes``) as numba does."""
    types = _numba_types()
    resolved = _resolve(name, given)
    if resolved is None:
        return None
    args, result = resolved
    if isinstance(result, types.Boolean):
        pyop = _PYOPS.get(name)
        if pyop is None:
            return None
        return lambda *operands: bool(pyop(*(bool(v) for v in operands)))
    if isinstance(result, types.Integer) and not name.startswith("math."):
        if any(not isinstance(t, (types.Integer, types.Boolean)) for t in args):
            return None
        python_ints = result == types.int64 and all(t is int for t in pytypes) and name != "pow"
        return _make_int(_PYOPS[name], result, name, python_ints)
    if isinstance(result, (types.Float, types.Complex)) and not name.startswith("math."):
        # Operands are converted to the signature's types (to the result type when they are
        # integers, as numba's int / int), then the operation runs in that precision.
        casts = [_scalar_ctor(result if isinstance(t, (types.Integer, types.Boolean)) else t) for t in args]
        pyop = _PYOPS[name]
        out = _scalar_ctor(result)
        if len(casts) == 1:
            c0 = casts[0]
            return pyop if pytypes[0] is c0 is out else (lambda a: out(pyop(c0(a))))
        c0, c1 = casts
        if pytypes[0] is c0 and pytypes[1] is c1 and c0 is c1 is out and name in ("add", "sub", "mul"):
            return pyop  # NumPy computes float32 op float32 in float32, float64 op float64 in float64, as numba
        return lambda a, b: out(pyop(c0(a), c1(b)))
    if name.startswith("math."):
        fname = name[5:]
        ufunc = _UFUNCS.get(fname)
        # ``math`` functions take their integer arguments (ldexp's exponent) as Python ints only.
        casts = [_int_arg(_scalar_ctor(t)) if isinstance(t, types.Integer) else _scalar_ctor(t) for t in args]
        if isinstance(result, types.Float):
            out = _scalar_ctor(result)
            if ufunc is not None and all(isinstance(t, types.Float) for t in args):
                return lambda *operands: out(ufunc(*(c(v) for c, v in zip(casts, operands))))
            fn = getattr(math, fname)

            def impl(*operands):
                try:
                    return out(fn(*(c(v) for c, v in zip(casts, operands))))
                except ValueError:
                    return out(math.nan)
                except OverflowError:
                    return out(math.inf)

            return impl
        if isinstance(result, types.Integer):
            fn = getattr(math, fname)
            ctor = _scalar_ctor(result)
            return lambda *operands: ctor(fn(*(c(v) for c, v in zip(casts, operands))))
        if isinstance(result, types.Boolean) and ufunc is not None:
            return lambda *operands: bool(ufunc(*(c(v) for c, v in zip(casts, operands))))
    return None


def _impl(name, operands):
    key = (name, *map(type, operands))
    try:
        return _impls[key]
    except KeyError:
        pass
    given = tuple(_scalar_type(type(v)) for v in operands)
    impl = None if any(t is None for t in given) else _make(name, given, tuple(map(type, operands)))
    _impls[key] = impl
    return impl


def binop(name, a, b):
    """``a <op> b`` computed as numba computes it for the operands' types (``name``: e.g. ``"mul"``)."""
    impl = _impls.get((name, type(a), type(b)), _impls)
    if impl is _impls:
        impl = _impl(name, (a, b))
    if impl is None:
        return _PYOPS[name](a, b)
    return impl(a, b)


def unop(name, a):
    """``-a``, ``+a`` or ``~a`` computed as numba computes it for the operand's type."""
    impl = _impls.get((name, type(a)), _impls)
    if impl is _impls:
        impl = _impl(name, (a,))
    if impl is None:
        return _PYOPS[name](a)
    return impl(a)


def _round_ndigits(x, ndigits):
    """``round(x, ndigits)`` of a float as numba-cuda lowers it (``cudaimpl.round_to_impl``: CPython's
    fallback ``double_round``, in float64 whatever ``x``'s type, the result in ``x``'s type)."""
    out = type(x) if isinstance(x, np.floating) else float
    value = float(x)
    if math.isinf(value) or math.isnan(value):
        return x
    if ndigits >= 0:
        pow1, pow2 = (10.0 ** (ndigits - 22), 1e22) if ndigits > 22 else (10.0 ** ndigits, 1.0)
        y = (value * pow1) * pow2
        if math.isinf(y):
            return x
    else:
        pow1 = 10.0 ** (-ndigits)
        y = value / pow1
    z = float(round(y))  # half to even, as the GPU's rint
    if math.fabs(y - z) == 0.5:
        z = 2.0 * round(y / 2.0)
    z = (z / pow2) / pow1 if ndigits >= 0 else z * pow1
    return out(z)


def call(fn, *args):
    """``fn(*args)``; a function of the ``math`` module, and ``round(x, ndigits)`` of a float, are
    computed in the types numba gives them."""
    if fn is round:
        if len(args) == 2 and isinstance(args[0], (float, np.floating)) \
                and isinstance(args[1], (int, np.integer)) and not isinstance(args[1], bool):
            return _round_ndigits(args[0], int(args[1]))
        return fn(*args)
    if getattr(fn, "__module__", None) != "math" or not args:
        return fn(*args)
    name = "math." + fn.__name__
    impl = _impls.get((name, *map(type, args)), _impls)
    if impl is _impls:
        impl = _impl(name, args)
    if impl is None:
        return fn(*args)
    return impl(*args)


class _Quiet:
    """Floating-point overflow, underflow, invalid operations and division by zero give
    inf/NaN silently, as on a GPU (a launch that raises on division by zero keeps raising)."""

    __slots__ = ("saved",)
    _depth = threading.local()  # nested calls (a kernel calling device functions) set it once

    def __enter__(self):
        depth = getattr(self._depth, "n", 0)
        self._depth.n = depth + 1
        if depth:
            self.saved = None
            return
        saved = np.geterr()
        self.saved = saved
        np.seterr(over="ignore", under="ignore", invalid="ignore",
                  divide="raise" if saved["divide"] == "raise" else "ignore")

    def __exit__(self, *exc):
        self._depth.n -= 1
        if self.saved is not None:
            np.seterr(**self.saved)
        return False


def quiet():
    return _Quiet()


# ---------------------------------------------------------------------------------------------
# The source rewrite (applied by course_lib.sim._lines to every recompiled kernel)
# ---------------------------------------------------------------------------------------------
_BINOP, _UNOP, _CALL, _QUIET = "__course_binop__", "__course_unop__", "__course_call__", "__course_quiet__"


def typed_copy_names() -> dict:
    """Names the rewritten code refers to, and their values."""
    return {_BINOP: binop, _UNOP: unop, _CALL: call, _QUIET: quiet}


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
    """Arithmetic through :func:`binop`/:func:`unop`/:func:`call`; the body inside ``with quiet():``."""

    def visit_BinOp(self, node):
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
        self.generic_visit(node)
        name = _AST_OPS.get(type(node.op))
        target = node.target
        if name is None:
            return node
        if isinstance(target, ast.Name) or (isinstance(target, ast.Subscript) and _simple(target.value)
                                            and _simple(target.slice)):
            value = ast.Call(ast.Name(_BINOP, ast.Load()), [ast.Constant(name), _load(target), node.value], [])
            return ast.copy_location(ast.Assign([target], value), node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        # math.sqrt(x), or sqrt(x) after `from math import sqrt` (call() checks that it is math's).
        named = (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "math") \
            or (isinstance(func, ast.Name) and func.id in _MATH_NAMES) \
            or (isinstance(func, ast.Name) and func.id == "round" and len(node.args) == 2)
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


def rewrite(fdef):
    """Arithmetic of the function definition ``fdef`` through numba's types, in place (:class:`TypedOps`)."""
    if enabled():
        TypedOps().visit(fdef)
    return fdef


def wrap_quiet(fdef):
    """The body of ``fdef`` (after its docstring) inside ``with quiet():``, in place."""
    if not enabled():
        return fdef
    body = fdef.body
    first = 1 if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None),
                                                                         ast.Constant) else 0
    if len(body) > first:
        with_ = ast.With([ast.withitem(ast.Call(ast.Name(_QUIET, ast.Load()), [], []), None)], body[first:])
        ast.copy_location(with_, body[first])
        fdef.body = body[:first] + [with_]
    return fdef
