"""The fast paths of the simulator's typed arithmetic give what the exact (slow) ones give."""

import math
import random

import numpy as np
import pytest
from numba import cuda, float32

from course_lib import device
from course_lib.sim import _float_exact, _typed_ops, _typed_rewrite

pytestmark = pytest.mark.skipif(not device.is_simulator(), reason="tests the simulator's own semantics")


def _double(rng, low=-460, high=460, bits=53):
    mantissa = rng.getrandbits(bits) | (1 << (bits - 1))
    return math.ldexp(mantissa, rng.randint(low, high) - bits) * rng.choice((1, -1))


def _triples(rng, n):
    """(x, y, z) across magnitudes, with exact products, cancellations and ties of p + z."""
    for k in range(n):
        x, y = _double(rng), _double(rng)
        exponent = math.frexp(x * y)[1]
        kind = k % 6
        if kind == 0:
            z = _double(rng)
        elif kind == 1:
            z = _double(rng, exponent - 120, exponent + 120)
        elif kind == 2:
            z = -(x * y)  # the exact result is the product's rounding error
        elif kind == 3:
            z = math.nextafter(-(x * y), rng.choice((math.inf, -math.inf)))
        elif kind == 4:  # few significant bits: exact products
            x, y = _double(rng, bits=rng.randint(1, 26)), _double(rng, bits=rng.randint(1, 26))
            z = _double(rng, exponent - 60, exponent + 60, bits=rng.randint(1, 53))
        else:  # z at half an ulp of the product: p + z at or next to a tie
            z = math.copysign(math.ldexp(1.0, exponent - 54 + rng.randint(-1, 1)), rng.choice((1, -1)))
        yield x, y, z


def test_the_float64_fma_in_floats_is_the_exact_one(monkeypatch):
    """Dekker's product and TwoSum round x * y + z once, bit for bit as exact integer arithmetic does,
    and they, not the integer arithmetic, compute most of these."""
    exact = _float_exact._fma64_exact
    fallbacks = []

    def counted_exact(*args):
        fallbacks.append(args)
        return exact(*args)

    monkeypatch.setattr(_float_exact, "_fma64_exact", counted_exact)
    rng = random.Random(7)
    n = 0
    for x, y, z in _triples(rng, 6000):
        for a, b, c in ((x, y, z), (-x, y, z), (x, y, -z)):
            got = _float_exact._fma64(a, b, c)
            want = exact(a, b, c, a * b)
            assert type(got) is np.float64
            assert got.tobytes() == want.tobytes(), (a.hex(), b.hex(), c.hex())
            n += 1
    assert len(fallbacks) < n / 2


@pytest.mark.parametrize("x, y, z", [
    (0.0, 1.5, -0.0), (-0.0, 1.5, 0.0), (2.0**-450, 3.0, 1.0), (2.0**450, 2.0**450, 1.0), (1e-300, 1e-300, 5e-324),
    (1e300, 1e10, -1e308), (5e-324, 0.5, 0.0), (1.0, 1.0, -1.0), (3.0, 1.0 / 3.0, -1.0),
    # x * y = 1 - 2**-60 (p = 1), p + z = 2**53 + 3 a tie: the product's error decides it (2**53 + 2), which
    # t + e rounded first would lose (2**53 + 4)
    (1 + 2.0**-30, 1 - 2.0**-30, 2.0**53 + 2), (-1 - 2.0**-30, 1 - 2.0**-30, -2.0**53 - 2),
])
def test_the_float64_fma_at_the_bounds_of_the_float_path(x, y, z):
    assert _float_exact._fma64(x, y, z).tobytes() == _float_exact._fma64_exact(x, y, z, x * y).tobytes()


@pytest.mark.parametrize("strict", [False, True])
def test_fastmath_flushes_subnormal_results_of_operators_and_conversions(strict):
    """Operators, negation and conversions give zeros of the result's sign where the result is subnormal."""
    a, b = np.float32(2**-63), np.float32(2**-64)  # product 2**-127: subnormal
    arguments = (np.array([2**-140], np.float32),) if strict else ()
    with _typed_rewrite.quiet(), _typed_ops.flushing_subnormals(True, arguments):
        for got, negative in ((_typed_ops.binop("mul", a, b), False), (_typed_ops.binop("mul", -a, b), True),
                              (_typed_ops.binop("truediv", a, np.float32(2**64)), False),
                              (_typed_ops.unop("neg", _typed_ops.binop("mul", a, b)), True),
                              (_typed_ops.call(float32, -1e-40), True), (_typed_ops.call(np.float32, 1e-40), False)):
            assert type(got) is np.float32 and got == 0 and math.copysign(1.0, got) == (-1.0 if negative else 1.0)
        assert _typed_ops.binop("mul", a, np.float32(2**4)) == np.float32(2**-59)  # normal results are kept
        assert type(_typed_ops.binop("mul", a, 1.0)) is np.float64  # float32 * float64: float64, not flushed
    assert _typed_ops.binop("mul", a, b) == np.float32(2**-127)  # outside fastmath: kept


@cuda.jit(device=True)
def _ratio(a, b):
    return a / b


@cuda.jit
def _ratios(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = _ratio(x[i], float32(0))


def test_device_functions_divide_by_zero_silently_from_kernels_and_from_host_code():
    """Inside a kernel a device function runs in the kernel's quiet floating-point state; called from host
    code it sets its own; either way numpy's state is as before afterwards (warnings are errors here)."""
    before = np.geterr()
    out = np.zeros(3, np.float32)
    _ratios[1, 32](np.array([1, -1, 0], np.float32), out)
    assert out[0] == np.inf and out[1] == -np.inf and np.isnan(out[2])
    assert _ratio(np.float32(1), np.float32(0)) == np.inf
    assert np.geterr() == before
