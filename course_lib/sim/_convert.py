"""Conversions, comparisons and ``print`` as a kernel compiled by numba-cuda computes them.

The recompiled copy of every kernel (:mod:`course_lib.sim._typed_ops`) routes here what
NumPy and Python do differently from the PTX that numba-cuda emits (checked with
``numba.cuda.compile_ptx``; PTX ISA section 9.7.9.21, ``cvt``):

* **float -> integer** (``int(x)``, ``int32(x)``, a float stored into an integer array) is
  ``cvt.rzi``: truncation, saturating at the limits of the converted type, NaN giving 0.
  Numba converts to at least 16 bits (``cvt.rzi.u16.f64`` then ``st.u8`` for a uint8
  array), so a store into an 8-bit array saturates at 16 bits and keeps the low 8.
  Python raises (OverflowError, ValueError) and NumPy gives INT_MIN.
* **integer -> narrower integer** (a store, ``int32(x)``) keeps the low bits, as ``st.u32``
  of a 64-bit register does; NumPy raises for a Python int out of range.
* **integer -> float32** is ``cvt.rn.f32.s64``: rounded once; a Python int converted by
  NumPy goes through float64 first (rounded twice).
* **float32 compared with a float64 or an integer** is compared in float64 (``cvt.f64.f32``,
  ``setp.eq.f64``): ``float32(0.1) == 0.1`` is False. NumPy 2 compares a float32 with a
  Python number in float32 (True).
* **print** formats as numba-cuda's ``printf`` (``numba/cuda/printimpl.py``): integers with
  ``%lld``/``%llu``, floats with ``%f`` (six decimals, float32 promoted to double), booleans
  as ``True``/``False``, tuples and ``Dim3`` in parentheses, items separated by spaces.
"""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

__all__ = ["compare", "convert", "gpu_print", "operand", "store"]

_INT_DTYPES = {np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                     np.uint64)}
_FLOATS = (float, np.floating)


def _float_to_int(x: float, dtype: np.dtype) -> int:
    """``cvt.rzi`` of ``x`` into an integer of at least 16 bits, then the low bits of ``dtype``."""
    bits = dtype.itemsize * 8
    signed = dtype.kind == "i"
    if x != x:
        return 0
    width = builtins.max(bits, 16)
    low, high = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
    if x <= low:
        value = low
    elif x >= high:
        value = high
    else:
        value = int(x)  # truncation toward zero; |x| < 2**64 here
    return _wrap(value, bits, signed)


def _wrap(value: int, bits: int, signed: bool) -> int:
    value &= (1 << bits) - 1
    if signed and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def convert(value, dtype):
    """``value`` converted to ``dtype`` as numba-cuda converts it (a cast or a store).

    Parameters
    ----------
    value : int, float, bool or NumPy scalar
    dtype : numpy.dtype

    Returns
    -------
    NumPy scalar of ``dtype`` (or ``value`` unchanged when it is not a number).
    """
    kind = dtype.kind
    if kind in "iu":
        if isinstance(value, _FLOATS):
            return dtype.type(_float_to_int(float(value), dtype))
        if isinstance(value, (int, np.integer)):  # bool too
            return dtype.type(_wrap(int(value), dtype.itemsize * 8, kind == "i"))
        return value
    if kind == "f":
        if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
            integer = int(value)
            if dtype.itemsize < 8 and not -(1 << 24) <= integer <= 1 << 24:
                # cvt.rn.f32.s64 / .u64: rounded once (NumPy's C cast), not through float64.
                source = np.uint64 if integer >= 1 << 63 else np.int64
                return source(integer).astype(dtype)
            return dtype.type(integer)
        if isinstance(value, (float, np.floating)):
            return dtype.type(value)
    return value


def store(array, value):
    """The value that ``array[i] = value`` leaves in ``array``, as a GPU store leaves it (see the module).

    Only the conversions NumPy makes differently are done here: a float into an integer
    array, and a Python int outside the range NumPy accepts.
    """
    vt = type(value)
    if vt is np.float32 or vt is np.float64 or vt is float:
        return convert(value, array.dtype) if _kind(array) in "iu" else value
    if vt is int:
        if -32768 <= value < 32768:
            return value
        dtype = array.dtype
        if dtype.kind in "iuf":
            return convert(value, dtype)
    elif vt in _NUMPY_INTS:
        dtype = array.dtype
        if dtype.type is not vt and dtype.kind in "iuf":
            return convert(value, dtype)
    return value


_NUMPY_INTS = frozenset(np.dtype(t).type for t in _INT_DTYPES)
_DTYPE = "_course_dtype"


def _dtype(array):
    """``array.dtype``, kept on a simulator array wrapper (whose ``dtype`` passes two ``__getattr__``)."""
    if type(array) is np.ndarray:
        return array.dtype
    namespace = getattr(array, "__dict__", None)
    if namespace is None:
        return array.dtype
    dtype = namespace.get(_DTYPE)
    if dtype is None:
        dtype = namespace[_DTYPE] = array.dtype
    return dtype


def _kind(array):
    return _dtype(array).kind


def operand(array, value):
    """The operand of an atomic on ``array`` converted to its element type first, as numba-cuda converts it
    (``cuda.atomic.add(uint32_array, i, -1)`` adds 0xFFFFFFFF; a float64 added to a float32 array is
    rounded to float32 before the sum)."""
    vt = type(value)
    if vt is int and 0 <= value < 32768:
        return value
    dtype = _dtype(array)
    if vt is dtype.type or dtype.kind not in "iuf" or not isinstance(value, (int, float, np.number)):
        return value
    return convert(value, dtype)


_COMPARE = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
            "ge": operator.ge}
_WIDENED = (float, int, np.float64, np.int64, np.int32, np.uint32, np.uint64, np.int16, np.int8, np.uint8,
            np.uint16)


def compare(name, a, b):
    """``a <op> b`` as numba compares: a float32 with anything but float32 (or a narrow int) in float64."""
    ta, tb = type(a), type(b)
    if ta is np.float32 and tb in _WIDENED:
        a = float(a)
    elif tb is np.float32 and ta in _WIDENED:
        b = float(b)
    return _COMPARE[name](a, b)


def _format(item):
    if isinstance(item, (bool, np.bool_)):
        return "True" if item else "False"  # numba-cuda's bool_print_impl: "%s" of "True"/"False"
    if isinstance(item, tuple):
        inner = ", ".join(_format(v) for v in item)
        return f"({inner},)" if len(item) == 1 else f"({inner})"
    if all(hasattr(item, axis) for axis in ("x", "y", "z")) and not isinstance(item, (int, float, np.number)):
        return f"({int(item.x)}, {int(item.y)}, {int(item.z)})"  # a Dim3: "(%d, %d, %d)"
    if isinstance(item, (int, np.integer)):
        return str(int(item))
    if isinstance(item, (float, np.floating)):
        x = float(item)
        if math.isnan(x):
            return "-nan" if math.copysign(1.0, x) < 0 else "nan"
        return f"{x:f}"  # printf("%f"): six decimals, inf as "inf"
    return str(item)


def gpu_print(*items, **kwargs):
    """``print`` in a kernel: numba-cuda's ``printf`` formats (``%lld``, ``%f``), separated by spaces."""
    if kwargs:
        return builtins.print(*items, **kwargs)  # numba-cuda refuses keyword arguments; the typing says so
    builtins.print(" ".join(_format(item) for item in items))
