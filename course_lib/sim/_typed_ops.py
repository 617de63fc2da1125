"""Typed arithmetic while a kernel runs (the source rewrite that routes it here: :mod:`course_lib.sim._typed_rewrite`).

The recompiled copy of every kernel and device function (:mod:`course_lib.sim._lines`)
evaluates each arithmetic operator, augmented assignment, unary operator, ``math`` call
and ``round(x, ndigits)`` through :func:`binop`, :func:`unop` and :func:`call`, which
compute in the types numba's typing gives for the operand types: first the signatures the
static typing found in the launched kernels (:data:`launch_ops`, filled by
:func:`course_lib.sim._typing.before_launch`), else numba's own CPU typing context, whose
rules for scalars are the same.

The rewrite (:mod:`course_lib.sim._typed_rewrite`) also follows the PTX numba-cuda emits where Python differs: a product added to or
subtracted from a value in the same expression (``a * b + c``, ``acc += a * b``) is one fused
multiply-add (:func:`muladd`), as NVVM and ptxas contract it; complex products likewise;
``int(x)``, ``float32(x)`` and the other conversions, stores into arrays and comparisons go
through :mod:`course_lib.sim._convert`; integer negation, inversion, division and powers
follow numba-cuda's lowering (computed in the operand's width; ``MIN // -1`` is 0; a negative
power of an integer is 0 unless the base is +-1); ``math`` functions at their poles give
libdevice's infinities; under ``fastmath=True`` float32 subnormals are flushed
(:class:`flushing_subnormals`).
"""

from __future__ import annotations

import ast
import math
import operator

import numpy as np

from . import _convert
from ._float_exact import _TWO53, _complex_mul, _fma64, _frexp, _nextafter, _round_ndigits
from ._int_ops import _make_int
from ._typing_base import _numba_types, _scalar_type


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
        return _make_int(_PYOPS[name], result, name, python_ints and name not in ("neg", "invert"),
                         operand=args[0] if len(args) == 1 else None)
    if name == "mul" and isinstance(result, types.Complex) and all(isinstance(t, types.Complex) for t in args):
        return _complex_mul(result.bitwidth // 2)
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
        if pytypes[0] is c0 and pytypes[1] is c1 and c0 is c1 is out and name in ("add", "sub", "mul", "truediv"):
            return pyop  # NumPy computes float32 op float32 in float32, float64 op float64 in float64, as numba
        return lambda a, b: out(pyop(c0(a), c1(b)))
    if name.startswith("math."):
        fname = name[5:]
        ufunc = _UFUNCS.get(fname)
        # ``math`` functions take their integer arguments (ldexp's exponent) as Python ints only.
        casts = [_int_arg(_scalar_ctor(t)) if isinstance(t, types.Integer) else _scalar_ctor(t) for t in args]
        if isinstance(result, types.Float):
            out = _scalar_ctor(result)
            if fname in ("gamma", "lgamma"):
                pass  # no NumPy ufunc; math's, with the poles of CUDA's tgamma/lgamma (_at_pole)
            elif ufunc is not None and all(isinstance(t, types.Float) for t in args):
                return _ufunc_impl(ufunc, casts, pytypes, out)
            fn = getattr(math, fname)

            def impl(*operands):
                values = [c(v) for c, v in zip(casts, operands)]
                try:
                    return out(fn(*values))
                except ValueError:
                    return out(_at_pole(fname, values))
                except OverflowError:
                    return out(math.inf)

            return impl
        if isinstance(result, types.Integer):
            fn = getattr(math, fname)
            ctor = _scalar_ctor(result)
            if ufunc is not None and len(args) == 1 and isinstance(args[0], types.Float):
                # math.floor/ceil/trunc of a float: cvt.rmi (rpi, rzi) then cvt.rzi.s64 -- saturating, NaN
                # giving 0 -- where Python raises for inf, NaN and values past int64.
                dtype = np.dtype(str(result))
                return lambda a: _convert.convert(float(ufunc(np.float64(a))), dtype)
            return lambda *operands: ctor(fn(*(c(v) for c, v in zip(casts, operands))))
        if isinstance(result, types.Boolean) and ufunc is not None:
            if len(casts) == 1:
                c0 = casts[0]
                return lambda a: bool(ufunc(c0(a)))
            return lambda *operands: bool(ufunc(*(c(v) for c, v in zip(casts, operands))))
    return None


def _ufunc_impl(ufunc, casts, pytypes, out):
    """``out(ufunc(*casts(operands)))``: a ``math`` function of floats computed by NumPy in their precision.

    A ``math.sqrt`` of a float32 runs in every inner loop of some kernels: the usual one- and two-operand
    cases skip the casts (and the final conversion) that would only copy a scalar of the right type.
    """
    if len(casts) == 1:
        c0 = casts[0]
        if pytypes[0] is c0:
            def impl(a):
                r = ufunc(a)
                return r if type(r) is out else out(r)

            return impl
        return lambda a: out(ufunc(c0(a)))
    if len(casts) == 2:
        c0, c1 = casts
        if pytypes[0] is c0 and pytypes[1] is c1:
            def impl(a, b):
                r = ufunc(a, b)
                return r if type(r) is out else out(r)

            return impl
        return lambda a, b: out(ufunc(c0(a), c1(b)))
    return lambda *operands: out(ufunc(*(c(v) for c, v in zip(casts, operands))))


def _at_pole(fname, values):
    """What CUDA's libdevice returns where Python's ``math`` raises ValueError (CUDA Math API,
    "Mathematical functions": ``log(0)`` is -inf, ``lgamma`` of 0 or a negative integer +inf,
    ``tgamma(+-0)`` +-inf, ``tgamma`` of a negative integer NaN); NaN for a domain error."""
    x = float(values[0]) if values else math.nan
    if fname == "lgamma" and x <= 0 and x == math.floor(x):
        return math.inf
    if fname == "gamma" and x == 0:
        return math.copysign(math.inf, x)
    ufunc = _UFUNCS.get(fname)
    if ufunc is not None:
        with np.errstate(all="ignore"):
            return float(ufunc(*(np.float64(v) for v in values)))  # log(0) = -inf, log(-1) = nan
    return math.nan


def _impl(name, operands):
    key = (name, *map(type, operands))
    try:
        return _impls[key]
    except KeyError:
        pass
    given = tuple(_scalar_type(type(v)) for v in operands)
    impl = None if any(t is None for t in given) else _make(name, given, tuple(map(type, operands)))
    if _flushing == _STRICT and impl is not None and any(t is np.float32 for t in key[1:]):
        impl = _FTZ_OPS.get(name) if key[1:] == (np.float32, np.float32) else None
        if impl is None:
            impl = _flushed(_make(name, given, tuple(map(type, operands))))
    elif _flushing and impl is not None and key[1:] == (np.float32, np.float32) and name in _FTZ_OPS:
        impl = _PYOPS[name]  # NumPy's float32 operation; binop flushes a subnormal result
    _impls[key] = impl
    return impl


# fastmath=True: float32 subnormals flushed to zero ---------------------------------------------
_TINY32 = 2.0**-126
_plain_impls = _impls
_ftz_impls: dict = {}
_ftz_strict_impls: dict = {}
#: binop's copy of ``_impls``, by name, then by operand types: three lookups of hashes Python keeps cost less
#: than hashing a new ``(name, type, type)`` tuple, for every operator a kernel runs. One per ``_impls``.
_binops: dict = {}
_plain_binops = _binops
_ftz_binops: dict = {}
_ftz_strict_binops: dict = {}
_flushing = False


def _has_subnormals(arg):
    """True if the launch argument ``arg`` is (or holds) a float32 subnormal."""
    if type(arg) is np.float32:
        return arg != 0 and abs(arg) < _TINY32
    ary = arg
    for attr in ("_item", "_ary"):  # simulator device arrays hold an ndarray
        ary = getattr(ary, attr, ary)
    if not isinstance(ary, np.ndarray) or ary.dtype != np.float32 or ary.size == 0:
        return False
    magnitude = np.abs(ary)
    return bool(np.any((magnitude < _TINY32) & (magnitude > 0)))


def _flush(x):
    """A float32 subnormal as ``.ftz`` instructions see it: a zero of its sign."""
    if type(x) is np.float32 and x != 0 and -_TINY32 < x < _TINY32:
        return np.float32(math.copysign(0.0, float(x)))
    return x


def _flushed(impl):
    def flushed(*operands):
        return _flush(impl(*(_flush(v) for v in operands)))

    return flushed


def _ftz_op(pyop):
    """float32 ``pyop`` as its ``.ftz`` instruction: computed on Python floats (a float32 sum, difference,
    product or quotient rounded to float64 and then to float32 is correctly rounded: 53 >= 2 * 24 + 2),
    subnormal operands and results flushed to zeros of their sign."""
    tiny, zero, f32 = _TINY32, math.copysign, np.float32

    def op(a, b):
        x, y = float(a), float(b)
        if -tiny < x < tiny:
            x = zero(0.0, x)
        if -tiny < y < tiny:
            y = zero(0.0, y)
        try:
            r = f32(pyop(x, y))
        except ZeroDivisionError:  # x / 0 in float32: inf or NaN, as IEEE 754 gives it
            return f32(np.float32(x) / np.float32(0.0))
        if -tiny < r < tiny:
            return f32(zero(0.0, r))
        return r

    return op


_FTZ_OPS = {name: _ftz_op(_PYOPS[name]) for name in ("add", "sub", "mul", "truediv")}
_TINY = np.float32(_TINY32)
_copysign = math.copysign
_STRICT = 2  # _flushing when the launch's arguments hold float32 subnormals: operands are flushed too


class flushing_subnormals:
    """``with flushing_subnormals(kernel_fastmath):`` runs float32 arithmetic as ``fastmath=True`` compiles
    it: ``mul.ftz.f32``, ``add.ftz.f32``, ``fma.rn.ftz.f32`` (``compile_ptx``; PTX ISA 9.7.3, ``.ftz``:
    subnormal inputs and results flushed to sign-preserving zero). Launches run one at a time
    (:data:`course_lib.sim._engine.launch_lock`), so the switch is module-wide."""

    __slots__ = ("on", "saved")

    def __init__(self, on, args=()):
        self.on = _STRICT if on and any(_has_subnormals(a) for a in args) else bool(on)

    def __enter__(self):
        global _impls, _binops, _flushing
        self.saved = (_impls, _binops, _flushing)
        if self.on == _STRICT:
            _impls, _binops, _flushing = _ftz_strict_impls, _ftz_strict_binops, self.on
        elif self.on:
            _impls, _binops, _flushing = _ftz_impls, _ftz_binops, self.on
        return self

    def __exit__(self, *exc):
        global _impls, _binops, _flushing
        _impls, _binops, _flushing = self.saved
        return False


def binop(name, a, b):
    """``a <op> b`` computed as numba computes it for the operands' types (``name``: e.g. ``"mul"``).

    Under ``fastmath=True`` a float32 result below the normal range is flushed here, not by a wrapper
    around the operation: no operand can be subnormal then (every float32 a fastmath kernel computes is
    flushed, and its arguments hold none: :class:`flushing_subnormals`), and this runs for every operator
    of a kernel's inner loop. (Where the arguments hold subnormals, ``_impls`` flushes the operands too.)
    """
    try:
        impl = _binops[name][type(a)][type(b)]
    except KeyError:
        impl = _impl(name, (a, b))
        _binops.setdefault(name, {}).setdefault(type(a), {})[type(b)] = impl
    if impl is None:
        return _PYOPS[name](a, b)
    if _flushing:
        r = impl(a, b)
        if type(r) is _F32 and abs(r) < _TINY and r != 0:  # add.ftz.f32 ...: a zero of the result's sign
            return _F32(_copysign(0.0, float(r)))
        return r
    return impl(a, b)


def unop(name, a):
    """``-a``, ``+a`` or ``~a`` computed as numba computes it for the operand's type (flushed as in :func:`binop`)."""
    impl = _impls.get((name, type(a)), _impls)
    if impl is _impls:
        impl = _impl(name, (a,))
    if impl is None:
        return _PYOPS[name](a)
    r = impl(a)
    if _flushing and type(r) is _F32 and abs(r) < _TINY and r != 0:
        return _F32(_copysign(0.0, float(r)))
    return r



_F64 = (float, np.float64)


def muladd(kind, x, y, z):
    """A product and a sum contracted into one fused multiply-add, as NVVM and ptxas compile them.

    ``kind`` 0: ``x*y + z``, 1: ``x*y - z``, 2: ``x + y*z``, 3: ``x - y*z`` (the source's order of
    evaluation is kept). NVVM contracts ``fmul`` + ``fadd`` into ``fma.rn`` by default (numba-cuda's
    ``fma`` option; ``compile_ptx`` of ``a*b + c*d`` shows ``fma.rn.f32 a, b, c*d``), and ptxas contracts
    the ``mul``/``sub`` pairs left without a rounding modifier (PTX ISA 9.7.3, ``add``: "mul/add
    sequences with no rounding modifiers may be optimized to use fused-multiply-add"). Only operands
    of one floating-point type are contracted: a float32 product added to a float64 is converted first.
    """
    if type(x) is _F32 and type(y) is _F32 and type(z) is _F32:
        if _flushing == _STRICT:  # fastmath, and the arguments hold subnormals: fma.rn.ftz.f32 flushes operands
            x, y, z = _flush(x), _flush(y), _flush(z)
        # _fma32, inlined: this runs for every a*b + c of a float32 kernel.
        if kind == 0:
            a, b, c = float(x), float(y), float(z)
        elif kind == 1:
            a, b, c = float(x), float(y), -float(z)
        elif kind == 2:
            a, b, c = float(y), float(z), float(x)
        else:
            a, b, c = -float(y), float(z), float(x)
        p = a * b
        s = p + c
        if s - s == 0.0:
            v = s - p
            err = (p - (s - v)) + (c - v)
            if err != 0.0 and (_frexp(s)[0] * _TWO53) % 2.0 == 0.0:
                s = _nextafter(s, _INF if err > 0 else -_INF)
        r = _F32(s)
        if _flushing and -_TINY32 < s < _TINY32 and -_TINY32 < float(r) < _TINY32:
            return _F32(math.copysign(0.0, s))  # fastmath: a subnormal result is flushed (its sign kept)
        return r
    tx, ty, tz = type(x), type(y), type(z)
    if tx in _F64 and ty in _F64 and tz in _F64:
        if kind == 0:
            return _fma64(float(x), float(y), float(z))
        if kind == 1:
            return _fma64(float(x), float(y), -float(z))
        if kind == 2:
            return _fma64(float(y), float(z), float(x))
        return _fma64(-float(y), float(z), float(x))
    if kind < 2:
        return binop("add" if kind == 0 else "sub", binop("mul", x, y), z)
    return binop("add" if kind == 2 else "sub", x, binop("mul", y, z))


_F32, _INF = np.float32, math.inf



_INT64 = np.dtype(np.int64)

#: Names of conversions a kernel may call (``int(x)``, ``float32(x)``, ``np.int32(x)``): see call().
CONVERTERS = frozenset({"int", "float", "float16", "float32", "float64", "int8", "int16", "int32", "int64",
                        "uint8", "uint16", "uint32", "uint64", "intp", "uintp", "intc", "uintc", "float_", "double",
                        "single", "int_", "uint"})


def _converter(fn):
    """The NumPy dtype a call of ``fn`` converts to (``int`` -> int64, ``numba.float32`` -> float32), or None."""
    if fn is int:
        return np.dtype(np.int64)
    if fn is float:
        return np.dtype(np.float64)
    if isinstance(fn, type) and issubclass(fn, (np.integer, np.floating)):
        return np.dtype(fn)
    types = _numba_types()
    if isinstance(fn, types.Integer) or (isinstance(fn, types.Float) and fn.bitwidth >= 32):
        return np.dtype(str(fn))
    return None


_CONVERSION, _ROUND, _MATH, _OTHER = range(4)
#: id(fn) -> (fn, kind, detail, float scalar type) of every function call() was given. Keyed by id: numba's
#: types (``float32(x)``) hash in Python, and call() runs for every conversion and ``math`` call of a kernel.
_call_kinds: dict = {}


def _call_kind(fn):
    """What :func:`call` does with ``fn``: (fn, kind, dtype or the ``math`` operator name, the scalar type of a
    float dtype or None)."""
    dtype = _converter(fn)
    if dtype is not None:
        entry = (fn, _CONVERSION, dtype, dtype.type if dtype.kind == "f" else None)
    elif fn is round:
        entry = (fn, _ROUND, None, None)
    elif getattr(fn, "__module__", None) == "math":
        entry = (fn, _MATH, "math." + fn.__name__, None)
    else:
        entry = (fn, _OTHER, None, None)
    _call_kinds[id(fn)] = entry  # holds fn: its id is not reused while the entry stands
    return entry


def call(fn, *args):
    """``fn(*args)``; a function of the ``math`` module, and ``round(x, ndigits)`` of a float, are
    computed in the types numba gives them."""
    entry = _call_kinds.get(id(fn))
    if entry is None or entry[0] is not fn:
        entry = _call_kind(fn)
    kind = entry[1]
    if kind == _MATH and args:
        name = entry[2]
        impl = _impls.get((name, type(args[0])) if len(args) == 1 else (name, *map(type, args)), _impls)
        if impl is _impls:
            impl = _impl(name, args)
        if impl is None:
            return fn(*args)
        r = impl(*args)
        if _flushing and type(r) is _F32 and abs(r) < _TINY and r != 0:  # fastmath (see binop)
            return _F32(_copysign(0.0, float(r)))
        return r
    if kind == _CONVERSION and len(args) == 1:
        value = args[0]
        vt = type(value)
        if vt is int and fn is int and _INT64_MIN <= value <= _INT64_MAX:
            return value  # int(i) of an index: itself, as _convert.convert gives it
        to_float = entry[3]
        if to_float is not None and (vt is _F32 or vt is float or vt is _F64_TYPE):
            converted = to_float(value)  # _convert.convert of a float to a float type, inlined
        elif isinstance(value, (int, float, np.integer, np.floating)):
            converted = _convert.convert(value, entry[2])
        else:
            return fn(*args)
        if _flushing and type(converted) is _F32 and abs(converted) < _TINY and converted != 0:
            converted = _F32(_copysign(0.0, float(converted)))  # fastmath: cvt.rn.ftz.f32.f64
        return int(converted) if fn is int else (float(converted) if fn is float else converted)
    if kind == _ROUND:
        if len(args) == 1 and isinstance(args[0], (float, np.floating)):
            # cvt.rni.s64.f64 (compile_ptx): half to even, saturating, NaN giving 0.
            return int(_convert.convert(float(np.rint(np.float64(args[0]))), _INT64))
        if len(args) == 2 and isinstance(args[0], (float, np.floating)) \
                and isinstance(args[1], (int, np.integer)) and not isinstance(args[1], bool):
            return _round_ndigits(args[0], int(args[1]))
    return fn(*args)


_INT64_MIN, _INT64_MAX, _F64_TYPE = -(1 << 63), (1 << 63) - 1, np.float64
