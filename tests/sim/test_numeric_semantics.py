"""Numbers as a GPU computes them: conversions, integer semantics, contraction, poles, fp16, print.

Every expected value is the one the PTX that numba-cuda 0.30.4 emits computes (the PTX is
checked in ``test_compiled_ptx_matches_the_simulated_semantics`` with ``numba.cuda.compile_ptx``),
with the PTX ISA section that defines the instruction: ``cvt`` (9.7.9.21: ``.rzi`` truncates and
saturates float-to-integer conversions, NaN gives 0), ``fma`` (9.7.3.6: one rounding), ``add``
(9.7.3.1: "mul/add sequences with no rounding modifiers may be optimized to use
fused-multiply-add"), ``neg``/``not`` in the operand's width, ``atom`` (9.7.13.4).
Math at the poles follows the CUDA Math API (``log``: log(+-0) = -inf; ``lgamma``: +inf at 0
and the negative integers; ``tgamma``: +-inf at +-0, NaN at the negative integers).
"""

import json
import math
import os
import subprocess
import sys
import textwrap
from fractions import Fraction

import numpy as np
import pytest
from numba import complex64, cuda, float32, int32, uint32

from course_lib import device

pytestmark = pytest.mark.skipif(not device.is_simulator(), reason="tests the simulator's own semantics")

X = np.float32(1 + 2**-12)  # X * X = 1 + 2**-11 + 2**-24 needs 25 bits: float32 rounds it


# Conversions (cvt.rzi, cvt.rn.f32.s64) ------------------------------------------------------
@cuda.jit
def to_int64(x, out):
    out[cuda.threadIdx.x] = int(x[cuda.threadIdx.x])


def test_int_of_a_float_saturates_and_nan_gives_zero():
    x = np.array([np.nan, 1e20, -1e20, np.inf, -np.inf, -2.9, 2.9])
    out = np.zeros(x.size, np.int64)
    to_int64[1, x.size](x, out)
    big, small = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    assert out.tolist() == [0, big, small, big, small, -2, 2]


@cuda.jit
def rounding_to_int(x, out):
    i = cuda.threadIdx.x
    out[0, i] = math.floor(x[i])
    out[1, i] = math.ceil(x[i])
    out[2, i] = round(x[i])
    out[3, i] = math.trunc(x[i])


def test_floor_ceil_round_and_trunc_of_huge_values_saturate():
    x = np.array([np.inf, -np.inf, 1e20, np.nan, 2.5, -2.5])
    out = np.zeros((4, x.size), np.int64)
    rounding_to_int[1, x.size](x, out)
    big, small = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    assert out[0].tolist() == [big, small, big, 0, 2, -3]
    assert out[1].tolist() == [big, small, big, 0, 3, -2]
    assert out[2].tolist() == [big, small, big, 0, 2, -2]  # half to even (llvm.rint)
    assert out[3].tolist() == [big, small, big, 0, 2, -2]


@cuda.jit
def store(x, out):
    out[cuda.threadIdx.x] = x[cuda.threadIdx.x]


@pytest.mark.parametrize("values, dtype, expected", [
    ([3e10, -3e10, np.nan], np.int32, [2**31 - 1, -2**31, 0]),  # cvt.rzi.s32.f64 saturates
    ([300.0, -1.0, 70000.0], np.uint8, [300 % 256, 0, 65535 % 256]),  # cvt.rzi.u16.f64, then st.u8: low bits
    ([200.0, -129.0], np.int8, [200 - 256, -129 + 256]),  # cvt.rzi.s16.f64, then st.u8
])
def test_a_float_stored_into_an_integer_array_saturates_as_cvt_rzi(values, dtype, expected):
    out = np.zeros(len(values), dtype)
    store[1, len(values)](np.array(values), out)
    assert out.tolist() == expected


def test_an_integer_stored_into_a_narrower_array_keeps_the_low_bits():
    out = np.zeros(2, np.int32)
    store[1, 2](np.array([2**40 + 5, -(2**33) - 1], np.int64), out)  # st.global.u32 of a 64-bit register
    assert out.tolist() == [5, -1]


@cuda.jit
def unsigned_ops(a, out):
    out[0] = a[0] - a[1]  # uint32 - uint32 is a uint64 in numba: 2**64 - 1, stored as int64 -1
    out[1] = -a[2]  # neg.s32, then cvt.u64.u32: negated in 32 bits
    out[2] = ~a[2]  # not.b32, then cvt.u64.u32


def test_unsigned_difference_negation_and_not():
    out = np.zeros(3, np.int64)
    unsigned_ops[1, 1](np.array([1, 2, 5], np.uint32), out)
    assert out.tolist() == [-1, 2**32 - 5, 2**32 - 1 - 5]


@cuda.jit
def negate_int32(a, out):
    out[0] = -a[0]  # neg.s32 before the widening: -INT32_MIN is INT32_MIN


def test_negating_int32_min_wraps_before_widening():
    out = np.zeros(1, np.int64)
    negate_int32[1, 1](np.array([-2**31], np.int32), out)
    assert out[0] == -2**31


@cuda.jit
def int_to_float32(a, out):
    out[0] = float32(a[0])


def test_float32_of_a_large_int64_is_rounded_once():
    n = 2**53 + 2**29 + 1  # just above the midpoint of two float32 neighbours
    out = np.zeros(1, np.float32)
    int_to_float32[1, 1](np.array([n], np.int64), out)
    assert int(out[0]) == 2**53 + 2**30  # cvt.rn.f32.s64; through float64 it would be 2**53
    assert int(np.float32(float(n))) == 2**53  # what rounding twice gives


@cuda.jit
def compare_with_literal(x, out):
    out[0] = x[0] == 0.1  # cvt.f64.f32, setp.eq.f64 with 0d3FB999999999999A
    out[1] = x[0] < 0.1
    out[2] = x[0] == float32(0.1)


def test_float32_compared_with_a_float_literal_is_compared_in_float64():
    out = np.zeros(3, np.int32)
    compare_with_literal[1, 1](np.array([0.1], np.float32), out)
    assert out.tolist() == [0, 0, 1]  # float32(0.1) = 0.100000001490116... > 0.1


@cuda.jit
def max_with_literal(x, y, out):
    out[0] = max(x[0], 0.0) * y[0]  # max.f64: a float64, so the product is float64 too


def test_max_of_float32_and_a_float_literal_is_float64():
    third = np.float32(1 / 3)
    out = np.zeros(1, np.float64)
    max_with_literal[1, 1](np.array([third], np.float32), np.array([3], np.float32), out)
    assert out[0] == float(third) * 3.0 and out[0] != 1.0  # float32 * float32 would round to 1.0


@cuda.jit
def integer_division_and_power(a, out):
    out[0] = a[0] // a[1]
    out[1] = a[0] % a[1]
    out[2] = a[2] ** a[3]
    out[3] = a[4] ** a[5]
    out[4] = a[6] ** a[5]


def test_int64_min_divided_by_minus_one_and_negative_powers():
    # numba-cuda's int_divmod_signed: MIN // -1 is 0 (not a trap); int_power_impl: an integer to a
    # negative power is 0 unless the base is +-1, and 0 ** negative is the sign bit alone.
    a = np.array([-2**63, -1, 2, -1, -1, -3, 0], np.int64)
    out = np.zeros(5, np.int64)
    integer_division_and_power[1, 1](a, out)
    assert out.tolist() == [0, 0, 0, -1, -2**63]


@cuda.jit
def decrement_unsigned(counter):
    cuda.atomic.add(counter, 0, -1)  # atom.global.add.u32 [...], -1: -1 converted to 0xFFFFFFFF


def test_atomic_add_of_minus_one_to_uint32_decrements():
    counter = np.array([5, 0], np.uint32)
    decrement_unsigned[1, 3](counter)
    assert counter.tolist() == [2, 0]


# Contraction (fma.rn) ---------------------------------------------------------------------------
@cuda.jit
def square_minus(x, y, out):
    out[0] = x[0] * x[0] - y[0]


def test_a_product_and_a_difference_are_one_fused_multiply_add():
    out = np.zeros(1, np.float32)
    square_minus[1, 1](np.array([X], np.float32), np.array([1], np.float32), out)
    exact = Fraction(float(X)) ** 2 - 1
    assert out[0] == np.float32(float(exact)) == np.float32(2**-11 + 2**-24)  # exact: 14 significant bits
    assert X * X - np.float32(1) == np.float32(2**-11)  # two roundings lose the 2**-24


@cuda.jit
def dot(a, b, out):
    acc = float32(0.0)
    for i in range(a.size):
        acc += a[i] * b[i]
    out[0] = acc


def test_a_float32_dot_product_accumulates_with_fma():
    a = np.array([X, X], np.float32)
    b = np.array([X, -X], np.float32)
    out = np.zeros(1, np.float32)
    dot[1, 1](a, b, out)
    # fma(X, -X, round(X * X)) = round(X * X) - X * X exactly: -2**-24; rounding twice gives 0.
    assert out[0] == np.float32(-(2**-24))


@cuda.jit
def complex_product(a, b, out):
    out[0] = a[0] * b[0]


def test_a_complex64_product_is_contracted():
    a = np.array([complex(X, X)], np.complex64)
    b = np.array([complex(X, -X)], np.complex64)
    out = np.zeros(1, np.complex64)
    complex_product[1, 1](a, b, out)
    # imaginary part: fma.rn.f32(ai, br, ar * bi) (compile_ptx) = X*(-X) rounded... + X*X exactly
    assert out[0].imag == np.float32(2**-24)
    assert out[0].real == np.float32(2 + 2**-10)


@cuda.jit
def mixed_precision(x, y, out):
    out[0] = x[0] * x[0] + y[0]  # float32 product, float64 sum: converted first, not contracted


def test_a_float32_product_added_to_a_float64_is_not_contracted():
    out = np.zeros(1, np.float64)
    mixed_precision[1, 1](np.array([X], np.float32), np.array([-1.0]), out)
    assert out[0] == 2**-11  # the product was rounded to float32 first


@cuda.jit(fastmath=True)
def fast_product(x, y, out):
    out[0] = x[0] * y[0]
    out[1] = x[0] * y[0] + x[1]
    out[2] = x[0] * y[0] + x[2]


@cuda.jit
def exact_product(x, y, out):
    out[0] = x[0] * y[0]
    out[1] = x[0] * y[0] + x[1]
    out[2] = x[0] * y[0] + x[2]


def test_fastmath_flushes_float32_subnormals():
    x = np.array([2**-70, 2**-100, 0], np.float32)
    y = np.array([2**-60], np.float32)
    out = np.ones(3, np.float32)
    exact_product[1, 1](x, y, out)
    assert out[0] == out[2] == np.float32(2**-130)  # a subnormal, kept by mul.f32 and fma.rn.f32
    fast_product[1, 1](x, y, out)
    assert out[0] == 0.0 and out[2] == 0.0  # mul.ftz.f32 / fma.rn.ftz.f32: flushed
    assert out[1] == np.float32(2**-100)


def test_fastmath_with_subnormal_arguments_flushes_operands():
    x = np.array([2**-140, 2**-10, 0], np.float32)  # 2**-140 is subnormal: .ftz reads it as 0
    y = np.array([2**20], np.float32)
    out = np.ones(3, np.float32)
    exact_product[1, 1](x, y, out)
    assert out[0] == np.float32(2**-120)
    fast_product[1, 1](x, y, out)
    assert out[0] == 0.0 and out[2] == 0.0


# Math at the poles --------------------------------------------------------------------------------
@cuda.jit
def at_poles(x, out):
    out[0] = math.log(x[0])
    out[1] = math.log10(x[0])
    out[2] = math.lgamma(x[0])
    out[3] = math.gamma(x[0])
    out[4] = math.gamma(x[1])
    out[5] = math.lgamma(x[2])
    out[6] = math.gamma(x[2])


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_math_at_the_poles_gives_the_gpu_infinities(dtype):
    x = np.array([0, -0.0, -2]).astype(dtype)
    out = np.zeros(7)
    at_poles[1, 1](x, out)
    negative_zero_gamma = -math.inf if dtype is np.float64 else math.inf  # an int64 0 has no sign
    assert out[:5].tolist() == [-math.inf, -math.inf, math.inf, math.inf, negative_zero_gamma]
    assert out[5] == math.inf and math.isnan(out[6])


# cuda.fp16 -------------------------------------------------------------------------------------
@cuda.jit
def half_ops(a, out):
    out[0] = cuda.fp16.hfma(a[0], a[0], a[1])
    out[1] = cuda.fp16.hfloor(a[2])
    out[2] = cuda.fp16.hmax(a[3], a[4])
    out[3] = cuda.fp16.hmin(a[3], a[4])


def test_fp16_intrinsics_as_compiled():
    h = 1 + 2**-10  # X * X = 1 + 2**-9 + 2**-20: float16 rounds the 2**-20 away
    a = np.array([h, -(1 + 2**-9), 2.5, np.nan, 3.0], np.float16)
    out = np.zeros(4, np.float16)
    half_ops[1, 1](a, out)
    assert out[0] == np.float16(2**-20)  # fma.rn.f16: rounded once
    assert out[1] == 2.0  # cvt.rmi (the stock simulator rounded up)
    assert out[2] == 3.0 and out[3] == 3.0  # max.f16 / min.f16 ignore a NaN operand


# print ---------------------------------------------------------------------------------------------
@cuda.jit
def say(x, n):
    print(x[0], n, 1.5, n > 3, (n, x[0]), cuda.threadIdx)


def test_print_formats_as_printf(capsys):
    say[1, 1](np.array([0.1], np.float32), 7)
    # numba-cuda's printimpl: %f for floats (float32 promoted to double), %lld for integers, "True"/"False"
    # for booleans, tuples element by element, a Dim3 as "(%d, %d, %d)".
    assert capsys.readouterr().out == "0.100000 7 1.500000 True (7, 0.100000) (0, 0, 0)\n"


# The claims above, checked against numba-cuda's PTX -----------------------------------------------
_PTX_SCRIPT = textwrap.dedent('''
    import json, math
    from numba import cuda, float32
    def fma_pair(a, b, c, d, out): out[0] = a * b + c * d
    def cplx(a, b, out): out[0] = a * b
    def to_int(a, out): out[0] = int(a)
    def to_u8(a, out): out[0] = a
    def neg_u32(a, out): out[0] = -a
    def f32_of_i64(a, out): out[0] = float32(a)
    def cmp_literal(a, out): out[0] = a == 0.1
    def atomic_dec(a): cuda.atomic.add(a, 0, -1)
    def say(a, n): print(a, n)
    def fast(a, b, out): out[0] = a * b
    def rnd(a, out): out[0] = round(a)
    def floor(a, out): out[0] = math.floor(a)
    kernels = {
        "rnd": (rnd, "void(float64, int64[:])", {}),
        "floor": (floor, "void(float64, int64[:])", {}),
        "fma_pair": (fma_pair, "void(float32, float32, float32, float32, float32[:])", {}),
        "cplx": (cplx, "void(complex64, complex64, complex64[:])", {}),
        "to_int": (to_int, "void(float64, int64[:])", {}),
        "to_u8": (to_u8, "void(float64, uint8[:])", {}),
        "neg_u32": (neg_u32, "void(uint32, int64[:])", {}),
        "f32_of_i64": (f32_of_i64, "void(int64, float32[:])", {}),
        "cmp_literal": (cmp_literal, "void(float32, int32[:])", {}),
        "atomic_dec": (atomic_dec, "void(uint32[:])", {}),
        "say": (say, "void(float32, int64)", {}),
        "fast": (fast, "void(float32, float32, float32[:])", {"fastmath": True}),
    }
    print(json.dumps({k: cuda.compile_ptx(f, s, cc=(8, 0), **kw)[0] for k, (f, s, kw) in kernels.items()}))
''')


@pytest.fixture(scope="module")
def ptx():
    env = dict(os.environ, COURSE_BACKEND="gpu", NUMBA_ENABLE_CUDASIM="0")
    done = subprocess.run([sys.executable, "-c", _PTX_SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    if done.returncode != 0:
        pytest.skip(f"numba-cuda cannot compile PTX here: {done.stderr[-300:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.timeout(300)
@pytest.mark.parametrize("kernel, instructions", [
    ("fma_pair", ["fma.rn.f32"]),  # NVVM contracts a*b + c*d: fma(a, b, c*d)
    ("cplx", ["fma.rn.f32", "sub.f32"]),  # imaginary part fused; real part mul/sub, left to ptxas
    ("to_int", ["cvt.rzi.s64.f64"]),
    ("to_u8", ["cvt.rzi.u16.f64", "st.global.u8"]),
    ("neg_u32", ["neg.s32", "cvt.u64.u32"]),
    ("f32_of_i64", ["cvt.rn.f32.s64"]),
    ("cmp_literal", ["cvt.f64.f32", "setp.eq.f64"]),
    ("atomic_dec", ["atom.global.add.u32"]),
    ("say", ["cvt.f64.f32", "vprintf"]),
    ("fast", ["mul.ftz.f32"]),  # fastmath=True flushes float32 subnormals
    ("rnd", ["cvt.rni.s64.f64"]),  # half to even, saturating, NaN to 0
    ("floor", ["cvt.rmi.f64.f64", "cvt.rzi.s64.f64"]),
])
def test_compiled_ptx_matches_the_simulated_semantics(ptx, kernel, instructions):
    text = ptx[kernel]
    for instruction in instructions:
        assert instruction in text, f"{kernel}: {instruction} not in the PTX numba-cuda emits"


def test_contraction_rounds_once_like_the_exact_fma():
    # The fused multiply-add of the contraction against cuda.fma's exact (Fraction) rounding, float32 and
    # float64, on operands whose sums cancel, round to a float32 midpoint, or overflow.
    from course_lib.sim._intrinsics import fma as exact_fma
    from course_lib.sim._typed_ops import muladd

    rng = np.random.default_rng(40)
    for dtype in (np.float32, np.float64):
        a = (rng.standard_normal(3000) * 2.0 ** rng.integers(-30, 30, 3000)).astype(dtype)
        b = (rng.standard_normal(3000) * 2.0 ** rng.integers(-30, 30, 3000)).astype(dtype)
        c = (-(a.astype(np.float64) * b) * rng.choice([1.0, 1 + 2**-20, 0.5], 3000)).astype(dtype)
        c[::7] = rng.standard_normal(c[::7].size).astype(dtype)
        a[:3], b[:3], c[:3] = dtype(1 + 2**-12), dtype(1 + 2**-12), dtype(-1)
        a[3], b[3], c[3] = np.finfo(dtype).max, dtype(2), dtype(-1)
        a[4], b[4], c[4] = X, X, dtype(2**-60)  # X*X is a float32 midpoint, + 2**-60 lies just above it
        with np.errstate(over="ignore"):  # kernels run so (overflow gives inf silently, as on a GPU)
            assert muladd(0, np.float32(X), np.float32(X), np.float32(2**-60)) == np.float32(1 + 2**-11 + 2**-23)
            for x, y, z in zip(a, b, c):
                want = exact_fma(None, x, y, z)
                got = muladd(0, x, y, z)
                assert type(got) is dtype and (got == want or (got != got and want != want)), (x, y, z, got, want)
                assert muladd(3, z, -x, y) == want or want != want  # z - (-x)*y: the same fma
