"""Integer operators as numba-cuda lowers them (:mod:`course_lib.sim._typed_ops` picks them by type).

Computed in the result's width and wrapped, as a GPU does; negation and inversion in the operand's
width before widening; ``MIN // -1`` is 0, division by zero 0 (numba-cuda's "numpy" error model) unless
the launch has ``debug=True``; a negative power of an integer is 0 unless the base is +-1.
"""

from __future__ import annotations

import numpy as np

__all__ = ["_make_int"]


def _make_int(pyop, result, name, python_ints=False, operand=None):
    """``python_ints``: the operands are Python ints and the result int64, which stays a Python int
    (within int64's range: the simulator's indices are Python ints, and they are cheaper)."""
    bits = result.bitwidth
    mask = (1 << bits) - 1
    half = 1 << (bits - 1)
    ctor = np.dtype(str(result)).type
    signed = result.signed
    dividing = name in ("floordiv", "mod")
    operand_bits = getattr(operand, "bitwidth", None)
    operand_signed = getattr(operand, "signed", True)

    if python_ints and not dividing:
        low, high = -half, half

        if name != "pos":
            def impl(a, b):  # i * n + j of indices: two operands, without a tuple of them
                r = pyop(a, b)
                if low <= r < high:
                    return r
                r &= mask
                return r - (1 << bits) if r >= half else r

            return impl

        def impl(*operands):
            r = pyop(*operands)
            if low <= r < high:
                return r
            r &= mask
            return r - (1 << bits) if r >= half else r

        return impl

    if name in ("neg", "invert") and operand_bits and operand_bits < bits:
        # numba negates (inverts) in the operand's own type, then widens (neg.s32, cvt.u64.u32):
        # -uint32(5) is 4294967291, -int32(INT32_MIN) is INT32_MIN.
        op_mask, op_half = (1 << operand_bits) - 1, 1 << (operand_bits - 1)

        def impl(a):
            r = pyop(int(a)) & op_mask
            if operand_signed and r >= op_half:
                r -= 1 << operand_bits
            r &= mask
            if signed and r >= half:
                r -= 1 << bits
            return ctor(r)

        return impl
    if name == "pow":
        def impl(a, b):
            a, b = int(a), int(b)
            if b < 0:  # numba's int_power_impl: no float result, 0 for |a| > 1
                if a == 0:
                    if np.geterr()["divide"] == "raise":
                        raise ZeroDivisionError("0 cannot be raised to a negative power")
                    return ctor(-half if signed else half)  # _get_power_zerodiv_return: the sign bit alone
                r = 0 if a not in (1, -1) else (1 if a == 1 or b % 2 == 0 else -1)
            else:
                r = pow(a, b, 1 << bits)
            r &= mask
            if signed and r >= half:
                r -= 1 << bits
            return ctor(r)

        return impl

    if name not in ("neg", "pos", "invert"):
        # Two operands (i * n + j, i // 32 of indices): without a list and a tuple of them.
        def impl(a, b):
            a, b = int(a), int(b)
            if dividing:
                if signed and b == -1 and a == -half:
                    return ctor(0)  # numba's int_divmod_signed: MIN // -1 and MIN % -1 give 0, not a trap
                if b == 0:
                    # numba-cuda's "numpy" error model gives 0 (numba/cuda/cpython/numbers.py, _int_divmod_impl);
                    # a debug=True launch (the "python" error model) raises, as its launches here do.
                    if np.geterr()["divide"] == "raise":
                        raise ZeroDivisionError("integer division or modulo by zero")
                    return ctor(0)
            r = pyop(a, b)
            if type(r) is not int:  # e.g. int ** negative int
                return np.float64(r)
            r &= mask
            if signed and r >= half:
                r -= 1 << bits
            return ctor(r)

        return impl

    def impl(a):  # -a, +a, ~a in the result's width
        r = pyop(int(a))
        r &= mask
        if signed and r >= half:
            r -= 1 << bits
        return ctor(r)

    return impl
