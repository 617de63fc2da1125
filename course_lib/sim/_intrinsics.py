"""CUDA intrinsics computed as the GPU computes them (installed into the simulator by :mod:`._hooks`).

The stock simulator's versions are Python one-liners that differ from the GPU in corner
cases. What the GPU computes is taken from what numba-cuda compiles (``compile_ptx``,
numba-cuda 0.30.4, cc 8.0) and from the PTX ISA's definition of those instructions:

* ``cuda.fma(a, b, c)`` compiles to ``fma.rn.f32`` / ``fma.rn.f64``: ``a * b + c`` rounded
  once (PTX ISA, "fma"). The stock ``a * b + c`` rounds twice.
* ``cuda.cbrt`` calls libdevice's ``__nv_cbrtf`` / ``__nv_cbrt``: the real cube root,
  negative for a negative argument (``cbrt(-8) == -2``); the stock ``a ** (1/3)`` gives NaN.
* ``cuda.brev`` of a uint64 compiles to ``brev.b64``; of any other integer (int64 and
  Python ints included) to ``brev.b32`` of the low 32 bits. ``cuda.clz`` and ``cuda.popc``
  count at the argument's width as numba types it: 8 bits for an int8 (``clz.b32`` of the
  zero-extended byte, minus 24), 64 for an int64 or a Python int, 32 for a special register
  (``cuda.threadIdx.x`` and ``cuda.laneid`` are int32: :data:`launch_arg_types`);
  ``cuda.ffs`` of one to ``64 - clz.b64(x & -x)``: 1 + the index of the lowest set bit, 0
  for 0. The stock versions format the value as 32 bits (and a negative one as ``-...``).
* ``max(a, b)`` / ``min(a, b)`` of floats in a kernel compile to ``max.f32`` / ``min.f32``
  (``.f64``): when one operand is NaN the result is the other one, NaN only when both are
  (PTX ISA, "max", "min"). Python's builtins return the first operand when the comparison
  with a NaN is false: ``max(nan, 1.0)`` is NaN in Python and 1.0 on the GPU.
* ``cuda.event(timing=True)``: ``record`` takes the host's clock (every simulated
  operation is synchronous, so an event is reached when it is recorded) and
  ``elapsed_time`` returns the milliseconds between two recorded events: the time the
  simulator took, not a GPU's.
"""

from __future__ import annotations

import builtins
import math
import sys
import time
from fractions import Fraction

import numpy as np

__all__ = ["brev", "cbrt", "clz", "ffs", "fma", "gpu_max", "gpu_min", "popc"]


def _float_dtype(*values):
    """The float type numba gives an operation on these values (float32 only when all are float32)."""
    if all(isinstance(v, (np.float32, np.float16)) for v in values):
        return np.float32
    return np.float64


def _round_to_float32(exact: Fraction) -> np.float32:
    """``exact`` rounded once to float32 (via float64 rounded to odd, which cannot round twice wrongly)."""
    nearest = float(exact)
    if Fraction(nearest) != exact and np.float64(nearest).view(np.int64) & 1 == 0:
        # Rounding to odd at 53 bits keeps the information that 24-bit rounding needs.
        nearest = float(np.nextafter(nearest, np.inf if exact > Fraction(nearest) else -np.inf))
    return np.float32(nearest)


def fma(self, a, b, c):
    """Simulated ``cuda.fma``: ``a * b + c`` with a single rounding, as ``fma.rn`` does."""
    dtype = _float_dtype(a, b, c)
    x, y, z = float(a), float(b), float(c)
    if not all(np.isfinite((x, y, z))):
        with np.errstate(all="ignore"):  # inf * 0 is NaN on the GPU too, silently
            return dtype(np.float64(x) * np.float64(y) + np.float64(z))  # inf and NaN follow IEEE 754 alike
    exact = Fraction(x) * Fraction(y) + Fraction(z)
    if exact == 0:
        # The sign of an exact zero: +0 unless both the product and c are -0 (IEEE 754, round to nearest).
        return dtype(np.float64(x) * np.float64(y) + np.float64(z))
    if dtype is np.float32:
        return _round_to_float32(exact)
    try:
        return np.float64(float(exact))
    except OverflowError:
        return np.float64(np.inf if exact > 0 else -np.inf)


def cbrt(self, a):
    """Simulated ``cuda.cbrt``: the real cube root (negative for a negative argument)."""
    return np.cbrt(_float_dtype(a)(a))


#: ``(filename, line, name) -> numba type`` of the argument of ``cuda.clz``/``popc``/``ffs`` at that line, as
#: numba-cuda typed the launched kernels (filled by :func:`course_lib.sim._typing.before_launch`). A Python int
#: here may be a 32-bit value on a GPU: ``cuda.threadIdx.x`` and ``cuda.laneid`` are int32 special registers
#: (``compile_ptx`` of ``cuda.clz(cuda.threadIdx.x)``: ``mov.u32 %r1, %tid.x; clz.b32``).
launch_arg_types: dict = {}


def _bits(val, name):
    """(unsigned value, width in bits, result type) of the argument of a bit intrinsic as numba types it.

    A NumPy integer has its own width (``cuda.clz`` of an int8 counts 8 bits: ``compile_ptx`` shows
    ``clz.b32`` of the zero-extended byte, minus 24); a Python int has the width numba-cuda typed the
    argument at the caller's line (int32 for special registers), else int64's.
    """
    if isinstance(val, np.integer):
        width = val.dtype.itemsize * 8
        return int(val) & ((1 << width) - 1), width, type(val)
    nbtype = launch_arg_types.get(_caller(name)) if launch_arg_types else None
    width = getattr(nbtype, "bitwidth", 64)
    out = int if width == 64 else np.dtype(str(nbtype)).type
    return int(val) & ((1 << width) - 1), width, out


def _caller(name):
    frame = sys._getframe(3)  # the kernel's frame: _caller <- _bits <- the intrinsic <- kernel code
    return frame.f_code.co_filename, frame.f_lineno, name


def brev(self, val):
    """Simulated ``cuda.brev``: ``brev.b64`` for a uint64, ``brev.b32`` of the low 32 bits otherwise
    (a narrow integer is sign- or zero-extended to 32 bits first: ``ld.global.s8``, ``brev.b32``)."""
    if isinstance(val, np.uint64):
        return np.uint64(int(f"{int(val):064b}"[::-1], 2))
    low = int(val) & 0xFFFFFFFF
    reversed32 = int(f"{low:032b}"[::-1], 2)
    return np.uint32(reversed32)  # numba types brev of anything but a uint64 as uint32 -> uint32


def clz(self, val):
    """Simulated ``cuda.clz``: leading zeros of the value's bit pattern at its numba width (8 to 64 bits),
    in the argument's type (numba-cuda's ``Cuda_clz``: ``int8 -> int8`` ...)."""
    bits, width, out = _bits(val, "clz")
    return out(width - bits.bit_length())


def popc(self, val):
    """Simulated ``cuda.popc``: set bits of the value's two's-complement pattern at its numba width.

    The stock simulator counts the ones of ``bin(val)``, which is wrong for negative values (an
    int32 ballot with lane 31 set, say): -1 has 32 set bits as an int32, 8 as an int8, not 1.
    """
    bits, _, out = _bits(val, "popc")
    return out(bin(bits).count("1"))


def ffs(self, val):
    """Simulated ``cuda.ffs``: 1 + the index of the lowest set bit, 0 when no bit is set (a uint32, as numba
    types it; numba-cuda compiles it for 32- and 64-bit integers only: narrower ones are refused by the typing)."""
    bits, _, _ = _bits(val, "ffs")
    return np.uint32((bits & -bits).bit_length())


def _isnan(x):
    return x != x


def gpu_max(*args, **kwargs):
    """``max`` as a kernel computes it: a NaN operand is ignored unless all are NaN (``max.f32``)."""
    if kwargs or len(args) < 2:
        return builtins.max(*args, **kwargs)  # max(iterable): not compiled by numba-cuda anyway
    result = args[0]
    for x in args[1:]:
        if _isnan(result) or (not _isnan(x) and x > result):
            result = x
    return _unified(args, result)


def gpu_min(*args, **kwargs):
    """``min`` as a kernel computes it: a NaN operand is ignored unless all are NaN (``min.f32``)."""
    if kwargs or len(args) < 2:
        return builtins.min(*args, **kwargs)
    result = args[0]
    for x in args[1:]:
        if _isnan(result) or (not _isnan(x) and x < result):
            result = x
    return _unified(args, result)


_PYTHON_NUMBER_DTYPES = {int: np.dtype(np.int64), float: np.dtype(np.float64), bool: np.dtype(np.bool_)}


def _unified(args, result):
    """``result`` in the type numba unifies the arguments' types to: ``max(float32, 0.0)`` is a float64
    (``compile_ptx``: ``cvt.f64.f32``, ``max.f64``), ``max(int32, int64)`` an int64."""
    first = type(args[0])
    if all(type(a) is first for a in args):
        return result
    try:
        dtypes = [_PYTHON_NUMBER_DTYPES.get(type(a)) or np.dtype(type(a)) for a in args]
        dtype = np.result_type(*dtypes)
    except TypeError:
        return result
    if dtype.kind not in "iufb":
        return result
    return dtype.type(result)


# cuda.fp16 ------------------------------------------------------------------------------
def hfma(self, a, b, c):
    """Simulated ``cuda.fp16.hfma``: ``a * b + c`` rounded once to float16 (``fma.rn.f16``); the stock
    simulator rounds the product first."""
    x, y, z = float(np.float16(a)), float(np.float16(b)), float(np.float16(c))
    p = x * y  # exact: 22 significant bits
    s_ = p + z
    if s_ - s_ == 0.0:
        v = s_ - p
        err = (p - (s_ - v)) + (z - v)  # TwoSum: the exact error of s_
        if err != 0.0 and not np.float64(s_).view(np.int64) & 1:
            s_ = math.nextafter(s_, math.inf if err > 0 else -math.inf)  # round to odd: one correct rounding
    with np.errstate(over="ignore"):
        return np.float16(s_)


def hfloor(self, x):
    """Simulated ``cuda.fp16.hfloor`` (``cvt.rmi.f16.f16``); the stock simulator rounds up."""
    return np.floor(x, dtype=np.float16)


def hmax(self, a, b):
    """Simulated ``cuda.fp16.hmax`` (``max.f16``): a NaN operand is ignored."""
    return np.float16(np.fmax(np.float16(a), np.float16(b)))


def hmin(self, a, b):
    """Simulated ``cuda.fp16.hmin`` (``min.f16``): a NaN operand is ignored."""
    return np.float16(np.fmin(np.float16(a), np.float16(b)))


# Events -------------------------------------------------------------------------------
class EventNotRecorded(RuntimeError):
    """``elapsed_time`` of an event that has no timestamp (never recorded, or made with timing=False)."""


def event_init(self, timing=True):
    """``cuda.event(timing=True)``: an event whose ``elapsed_time`` measures the simulator's time."""
    self.timing = bool(timing)
    self._recorded_ns = None


def event_record(self, stream=0):
    """Timestamp the event (the simulator runs every operation synchronously)."""
    self._recorded_ns = time.perf_counter_ns()


def event_query(self):
    """True: everything the simulator was asked to do before ``record`` is done."""
    return True


def event_elapsed_time(self, event):
    """Milliseconds from this event to ``event``, both recorded (the simulator's time, not a GPU's).

    Raises
    ------
    EventNotRecorded
        Either event was made with ``timing=False`` or never recorded (CUDA refuses both).
    """
    for e, name in ((self, "the start event"), (event, "the end event")):
        if not getattr(e, "timing", True):
            raise EventNotRecorded(f"{name} was made with cuda.event(timing=False): it has no timestamp")
        if getattr(e, "_recorded_ns", None) is None:
            raise EventNotRecorded(f"{name} was never recorded (call .record() before elapsed_time)")
    return (event._recorded_ns - self._recorded_ns) / 1e6
