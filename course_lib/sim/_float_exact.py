"""Floating-point operations rounded once, as the PTX numba-cuda emits rounds them.

``fma.rn.f32`` and ``fma.rn.f64`` (:func:`_fma32`, :func:`_fma64`), the complex product as NVVM
contracts it (:func:`_complex_mul`) and ``round(x, ndigits)`` as numba-cuda lowers it
(:func:`_round_ndigits`); :func:`course_lib.sim._typed_ops.muladd` routes contracted source here.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["_complex_mul", "_fma32", "_fma64", "_fma64_exact", "_round_ndigits"]


def _fma32(x, y, z):
    """``fma.rn.f32``: x * y + z of float32 values rounded once (the product is exact in float64;
    the float64 sum is made round-to-odd, which float32 rounding then rounds correctly)."""
    p = x * y
    s = p + z
    if s - s != 0.0:  # inf or NaN: as IEEE 754 gives it
        return np.float32(s)
    v = s - p
    err = (p - (s - v)) + (z - v)  # TwoSum: the exact error of s
    if err != 0.0 and (_frexp(s)[0] * _TWO53) % 2.0 == 0.0:  # inexact, and the last bit of s is even
        s = _nextafter(s, math.inf if err > 0 else -math.inf)
    return np.float32(s)


_frexp, _nextafter, _TWO53 = math.frexp, math.nextafter, float(2**53)


def _fma64(x, y, z):
    """``fma.rn.f64``: x * y + z rounded once.

    Usually in floats: Dekker's exact product (``x * y == p + e``, Veltkamp's split) and Knuth's TwoSum
    (``p + z == s + t``) give the exact result as ``s + (t + e)``; where ``t + e`` is itself exact (one
    more TwoSum leaves no error), the float addition of ``s`` and ``t + e`` rounds it once. Both are exact
    for operands whose partial products neither overflow nor underflow (the bounds checked); the other
    cases take exact integer arithmetic (:func:`_fma64_exact`).
    """
    p = x * y
    if p - p != 0.0 or z - z != 0.0:
        return np.float64(p + z)
    if _DEKKER_LOW < abs(x) < _DEKKER_HIGH and _DEKKER_LOW < abs(y) < _DEKKER_HIGH and abs(z) < _DEKKER_HIGH:
        c = _SPLITTER * x
        xh = c - (c - x)
        xl = x - xh
        c = _SPLITTER * y
        yh = c - (c - y)
        yl = y - yh
        e = xl * yl - (((p - xh * yh) - xl * yh) - xh * yl)  # x * y - p, exactly
        s = p + z
        v = s - p
        t = (p - (s - v)) + (z - v)  # p + z - s, exactly
        u = t + e
        v = u - t
        if (t - (u - v)) + (e - v) == 0.0:  # u == t + e exactly: x * y + z == s + u
            r = s + u
            return np.float64(r if r != 0.0 else p + z)  # an exact zero as _fma64_exact gives it
    return _fma64_exact(x, y, z, p)


#: Veltkamp's splitter for doubles (2**27 + 1), and the magnitudes within which Dekker's product is exact:
#: no partial product overflows (|x|, |y| < 2**450) or falls below the normal range (|x|, |y| > 2**-450).
_SPLITTER, _DEKKER_LOW, _DEKKER_HIGH = 134217729.0, 2.0**-450, 2.0**450


def _fma64_exact(x, y, z, p):
    """:func:`_fma64` in exact integer arithmetic (int / int rounds correctly); ``p`` is ``x * y``."""
    n1, d1 = x.as_integer_ratio()
    n2, d2 = y.as_integer_ratio()
    n3, d3 = z.as_integer_ratio()
    num = n1 * n2 * d3 + n3 * d1 * d2
    if num == 0:
        return np.float64(p + z)  # the sign of an exact zero, as IEEE 754 gives it
    try:
        return np.float64(num / (d1 * d2 * d3))
    except OverflowError:
        return np.float64(math.inf if num > 0 else -math.inf)


def _complex_mul(width):
    """Complex product as numba-cuda compiles it: the imaginary part ``fma(ai, br, ar*bi)`` (NVVM,
    ``compile_ptx``), the real part ``ar*br - ai*bi`` contracted by ptxas like any mul/sub pair."""
    fused, real, out = (_fma32, np.float32, np.complex64) if width == 32 else (_fma64, np.float64, np.complex128)

    def impl(a, b):
        a, b = out(a), out(b)
        ar, ai, br, bi = float(a.real), float(a.imag), float(b.real), float(b.imag)
        re = fused(ar, br, -float(real(ai * bi)))
        im = fused(ai, br, float(real(ar * bi)))
        return out(complex(float(re), float(im)))

    return impl


_INT64 = np.dtype(np.int64)


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
