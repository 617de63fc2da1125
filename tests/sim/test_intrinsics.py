"""Intrinsics in the simulator compute what the GPU computes.

Sources of the expectations (what numba-cuda 0.30.4 compiles, seen with
``cuda.compile_ptx(kernel, sig, cc=(8, 0))``, and the PTX ISA's or CUDA Math API's
definition of the instruction or function):

* ``cuda.fma`` -> ``fma.rn.f32`` / ``fma.rn.f64``. PTX ISA, "fma": "computes the product of
  a and b to infinite precision and then adds c to this product, again in infinite precision.
  The resulting value is then rounded ... using the .rn rounding mode": one rounding.
* ``cuda.cbrt`` -> libdevice ``__nv_cbrtf`` / ``__nv_cbrt``; CUDA Math API ``cbrtf(x)``: the
  cube root of x (negative for negative x; ``cbrt(-0) = -0``, ``cbrt(±inf) = ±inf``).
* ``cuda.brev`` of uint64 -> ``brev.b64``; of int64 (and int32, uint32) -> ``brev.b32`` of the
  low 32 bits. ``cuda.clz`` / ``cuda.popc`` of a 64-bit integer -> ``clz.b64`` / ``popc.b64``;
  ``cuda.ffs`` of one -> ``64 - clz.b64(x & -x)``, of a 32-bit one -> ``bfind.shiftamt`` of
  ``brev`` + 1: the 1-based position of the lowest set bit, 0 for 0 (PTX ISA "brev", "clz",
  "popc", "bfind"; CUDA Math API ``__ffs``, ``__ffsll``).
* ``max(a, b)`` / ``min(a, b)`` of float32/float64 -> ``max.f32`` / ``min.f32`` (``.f64``).
  PTX ISA, "max": "If both inputs are NaN, the result is NaN. If only one is NaN, the result is
  the non-NaN input" (likewise "min").
* ``match_any_sync`` / ``match_all_sync`` -> ``match.any.sync.b32`` / ``.b64`` of the value's
  bits (PTX ISA "match.sync": compares the operand's bit pattern): ``0.0`` and ``-0.0``
  differ, a NaN matches the same NaN.
* ``cuda.event(timing=True)``: numba-cuda docs, "Events": ``elapsed_time`` gives the time in
  milliseconds between two recorded events; CUDA refuses it for an event made without timing
  or not recorded (``cudaEventElapsedTime``: ``cudaErrorInvalidResourceHandle``).
"""

from fractions import Fraction

import numpy as np
import pytest
from numba import cuda

from course_lib.sim import _intrinsics
from tests.conftest import sim_only


@cuda.jit
def fma_kernel(a, b, c, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = cuda.fma(a[i], b[i], c[i])


def test_fma_rounds_once_in_float64():
    # a*b = 1 - 2**-60 exactly; rounded first it is 1.0 and a*b + c is 0.
    a = np.array([1 + 2.0**-30, 3.0], np.float64)
    b = np.array([1 - 2.0**-30, 0.1], np.float64)
    c = np.array([-1.0, -0.3], np.float64)
    out = np.zeros(2, np.float64)
    fma_kernel[1, 2](a, b, c, out)
    assert out[0] == -(2.0**-60) and a[0] * b[0] + c[0] == 0.0
    exact = Fraction(3.0) * Fraction(0.1) + Fraction(-0.3)
    assert out[1] == float(exact)  # Fraction -> float rounds correctly: the single rounding


def test_fma_rounds_once_in_float32_even_where_float64_then_float32_would_round_twice():
    # exact = 1 + 2**-23 + 2**-24 - 2**-60: just below the float32 midpoint, so 1 + 2**-23.
    # Rounded to float64 first it is the midpoint itself, which then rounds (to even) to 1 + 2**-22.
    a = np.array([2.0**-24 * (1 + 2.0**-18), 1 + 2.0**-12], np.float32)
    b = np.array([1 - 2.0**-18, 1 + 2.0**-12], np.float32)
    c = np.array([1 + 2.0**-23, -(1 + 2.0**-11)], np.float32)
    out = np.zeros(2, np.float32)
    fma_kernel[1, 2](a, b, c, out)
    assert out[0] == np.float32(1 + 2.0**-23)
    assert np.float32(float(a[0]) * float(b[0]) + float(c[0])) == np.float32(1 + 2.0**-22)  # the double rounding
    # a*b = 1 + 2**-11 + 2**-24 exactly; in float32 it rounds (a tie, to even) to 1 + 2**-11.
    assert out[1] == np.float32(2.0**-24) and a[1] * b[1] + c[1] == 0
    assert out.dtype == np.float32


def test_fma_of_infinities_and_nan_follows_ieee():
    a = np.array([np.inf, 0.0, np.nan, 1.0], np.float64)
    b = np.array([2.0, np.inf, 1.0, 1.0], np.float64)
    c = np.array([1.0, 1.0, 1.0, -1.0], np.float64)
    out = np.zeros(4, np.float64)
    fma_kernel[1, 4](a, b, c, out)
    assert out[0] == np.inf and np.isnan(out[1]) and np.isnan(out[2]) and out[3] == 0.0


@cuda.jit
def cbrt_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = cuda.cbrt(x[i])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cbrt_of_a_negative_number_is_negative(dtype):
    x = np.array([-8.0, -27.0, 64.0, -0.0, -np.inf, 0.001], dtype)
    out = np.full(x.size, np.nan, dtype)
    cbrt_kernel[1, x.size](x, out)
    np.testing.assert_allclose(out[:3], [-2.0, -3.0, 4.0], rtol=2e-7)
    assert out[3] == 0 and np.signbit(out[3]) and out[4] == -np.inf
    np.testing.assert_allclose(out[5], 0.1, rtol=2e-7)


@cuda.jit
def bits_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = cuda.brev(x[i])
        out[i, 1] = cuda.clz(x[i])
        out[i, 2] = cuda.ffs(x[i])
        out[i, 3] = cuda.popc(x[i])


def test_bit_intrinsics_of_uint64_use_all_64_bits():
    x = np.array([1, 1 << 40, (1 << 64) - 1, 0], np.uint64)
    out = np.zeros((4, 4), np.uint64)
    bits_kernel[1, 4](x, out)
    np.testing.assert_array_equal(out[:, 0], [1 << 63, 1 << 23, (1 << 64) - 1, 0])  # brev.b64
    np.testing.assert_array_equal(out[:, 1], [63, 23, 0, 64])  # clz.b64
    np.testing.assert_array_equal(out[:, 2], [1, 41, 1, 0])  # ffs: 1-based lowest set bit, 0 for 0
    np.testing.assert_array_equal(out[:, 3], [1, 1, 64, 0])  # popc.b64


def test_bit_intrinsics_of_int64_follow_what_numba_compiles():
    x = np.array([1, 1 << 40, -1, -4], np.int64)
    out = np.zeros((4, 4), np.int64)
    bits_kernel[1, 4](x, out)
    # brev of an int64 compiles to brev.b32 of its low 32 bits (zero-extended).
    np.testing.assert_array_equal(out[:, 0], [1 << 31, 0, 0xFFFFFFFF, 0x3FFFFFFF])
    np.testing.assert_array_equal(out[:, 1], [63, 23, 0, 0])
    np.testing.assert_array_equal(out[:, 2], [1, 41, 1, 3])
    np.testing.assert_array_equal(out[:, 3], [1, 1, 64, 62])


def test_bit_intrinsics_of_int32_use_32_bits():
    x = np.array([1, -1, -4, 0], np.int32)
    out = np.zeros((4, 4), np.int64)
    bits_kernel[1, 4](x, out)
    np.testing.assert_array_equal(out[:, 0], [1 << 31, 0xFFFFFFFF, 0x3FFFFFFF, 0])
    np.testing.assert_array_equal(out[:, 1], [31, 0, 0, 32])
    np.testing.assert_array_equal(out[:, 2], [1, 1, 3, 0])
    np.testing.assert_array_equal(out[:, 3], [1, 32, 30, 0])


@cuda.jit
def max_min_kernel(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = max(a[i], b[i])
        out[i, 1] = min(a[i], b[i])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_and_min_ignore_a_nan_operand_as_max_f32_does(dtype):
    nan = np.nan
    a = np.array([nan, 1.0, nan, 2.0, -1.0], dtype)
    b = np.array([1.0, nan, nan, 3.0, -5.0], dtype)
    out = np.zeros((5, 2), dtype)
    max_min_kernel[1, 5](a, b, out)
    np.testing.assert_array_equal(out[:, 0], [1.0, 1.0, nan, 3.0, -1.0])
    np.testing.assert_array_equal(out[:, 1], [1.0, 1.0, nan, 2.0, -5.0])
    assert max(nan, 1.0) != max(nan, 1.0)  # Python's builtin gives NaN here: the difference the kernel must not show


def test_max_and_min_of_integers_and_of_many_operands():
    assert _intrinsics.gpu_max(3, 7, 5) == 7 and _intrinsics.gpu_min(3, 7, 5) == 3
    assert _intrinsics.gpu_max(np.nan, 2.0, np.nan, 1.0) == 2.0
    assert _intrinsics.gpu_max([4, 9, 2]) == 9  # the iterable form is Python's


@cuda.jit
def match_kernel(values, any_out, all_out):
    lane = cuda.threadIdx.x
    any_out[lane] = cuda.match_any_sync(0xFFFFFFFF, values[lane])
    mask, pred = cuda.match_all_sync(0xFFFFFFFF, values[lane])
    all_out[lane] = mask if pred else -1


def test_match_any_compares_bit_patterns_zero_and_minus_zero_differ():
    values = np.where(np.arange(32) % 2 == 0, 0.0, -0.0).astype(np.float32)
    any_out, all_out = np.zeros(32, np.int64), np.zeros(32, np.int64)
    match_kernel[1, 32](values, any_out, all_out)
    even, odd = 0x55555555, np.uint32(0xAAAAAAAA).view(np.int32)  # masks are int32, as numba types them
    np.testing.assert_array_equal(any_out, np.where(np.arange(32) % 2 == 0, even, odd))
    assert (all_out == -1).all()  # 0.0 == -0.0 in Python, but their bits differ: not all equal


def test_match_all_of_the_same_nan_is_true():
    values = np.full(32, np.nan, np.float64)
    any_out, all_out = np.zeros(32, np.int64), np.zeros(32, np.int64)
    match_kernel[1, 32](values, any_out, all_out)
    assert (any_out == -1).all() and (all_out == -1).all()  # mask 0xFFFFFFFF as int32 is -1; pred True
    values[5] = 1.0
    match_kernel[1, 32](values, any_out, all_out)
    assert any_out[5] == 1 << 5 and any_out[0] == np.uint32(0xFFFFFFFF & ~(1 << 5)).view(np.int32)


@cuda.jit
def busy(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = x[i] * 2.0 + 1.0


def test_timing_events_measure_a_positive_elapsed_time():
    start, end = cuda.event(timing=True), cuda.event()
    x = np.ones(256)
    start.record()
    busy[2, 128](x)
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) > 0
    assert end.query()


@sim_only
def test_elapsed_time_is_refused_for_events_without_a_timestamp():
    untimed, timed = cuda.event(timing=False), cuda.event(timing=True)
    untimed.record()
    timed.record()
    with pytest.raises(_intrinsics.EventNotRecorded, match="timing=False"):
        untimed.elapsed_time(timed)
    with pytest.raises(_intrinsics.EventNotRecorded, match="never recorded"):
        timed.elapsed_time(cuda.event())
