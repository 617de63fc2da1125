"""What both halves of the simulator's typing share (:mod:`course_lib.sim._typing`).

The switch (``COURSE_SIM_TYPING=0`` runs kernels with Python/NumPy semantics, as the
stock simulator), the numba types of runtime values, and the argument types of an
explicit ``cuda.jit`` signature, to which a call converts its scalar arguments.
"""

from __future__ import annotations

import os

import numpy as np

#: Set to "0" to run kernels without numba's typing (Python/NumPy semantics, as the stock simulator).
ENV_SWITCH = "COURSE_SIM_TYPING"


def enabled() -> bool:
    """False when ``COURSE_SIM_TYPING=0`` switches the typing off."""
    return os.environ.get(ENV_SWITCH, "1") != "0"


# ---------------------------------------------------------------------------------------------
# Numba types of runtime values
# ---------------------------------------------------------------------------------------------
def _numba_types():
    from numba.core import types

    return types


_SCALAR_TYPES: dict = {}


def _scalar_type(pytype):
    """The numba type of a scalar of Python type ``pytype``, or None (not a number)."""
    try:
        return _SCALAR_TYPES[pytype]
    except KeyError:
        pass
    types = _numba_types()
    if pytype is bool or pytype is np.bool_:
        out = types.boolean
    elif pytype is int:
        out = types.int64
    elif pytype is float:
        out = types.float64
    elif pytype is complex:
        out = types.complex128
    elif isinstance(pytype, type) and issubclass(pytype, (np.integer, np.floating, np.complexfloating)):
        from numba.np.numpy_support import from_dtype

        try:
            out = from_dtype(np.dtype(pytype))
        except Exception:
            out = None
        if out is not None and getattr(out, "bitwidth", 64) < 32 and isinstance(out, types.Float):
            out = None  # float16: numba-cuda types it with its own rules; leave it to NumPy
    else:
        out = None
    _SCALAR_TYPES[pytype] = out
    return out


def argument_type(arg):
    """The numba type a GPU launch gives the argument ``arg``, or None if it cannot tell."""
    from numba import typeof

    ary = arg
    for attr in ("_item", "_ary"):  # simulator device arrays (possibly wrapped) hold an ndarray
        inner = getattr(ary, attr, None)
        if inner is not None:
            ary = getattr(inner, "_ary", inner)
    if isinstance(ary, np.ndarray):
        if ary.ndim == 0:
            return None
        try:
            return typeof(ary)
        except Exception:
            return None
    if isinstance(arg, (bool, int, float, complex, np.number, np.bool_, tuple)):
        try:
            return typeof(arg)
        except Exception:
            return None
    return None


def signature_argtypes(func_or_sig):
    """The argument types of an explicit ``cuda.jit`` signature, or None.

    Parameters
    ----------
    func_or_sig : str, numba Signature, list or other
        The first argument of ``cuda.jit``: ``"void(float32[:], int32)"``, ``void(float32[:], int32)``
        or a list holding one of these. Anything else (a function, None, several signatures,
        among which numba would choose per launch) gives None.
    """
    if isinstance(func_or_sig, (list, tuple)):
        if len(func_or_sig) != 1:
            return None
        func_or_sig = func_or_sig[0]
    if not isinstance(func_or_sig, str) and type(func_or_sig).__name__ != "Signature":
        return None
    from numba.core import sigutils

    try:
        args, _ = sigutils.normalize_signature(func_or_sig)
    except Exception:  # numba's own jit reports a malformed signature at compile time, as it does here
        return None
    return tuple(args)


def convert_arguments(argtypes, args):
    """Scalar arguments converted to the types of an explicit signature, as numba converts them.

    A kernel (or device function) compiled for ``void(int32[:], int32)`` receives an int32
    even when it is launched with a Python int, and ``void(float32[:], float32)`` a float32
    for a Python float: the kernel computes with the signature's types, not the caller's.

    Parameters
    ----------
    argtypes : tuple of numba types
        The signature's argument types (:func:`signature_argtypes`).
    args : tuple
        The call's arguments; arrays and values of other kinds are passed unchanged.

    Returns
    -------
    tuple
        The arguments, with numbers converted (integers wrap to the width, as a C cast does).
    """
    if len(argtypes) != len(args):
        return args  # numba refuses the call; the simulator reports the wrong count its own way
    types = _numba_types()
    out = list(args)
    for i, (nbtype, value) in enumerate(zip(argtypes, args)):
        if not isinstance(nbtype, (types.Integer, types.Float, types.Boolean, types.Complex)):
            continue
        if not isinstance(value, (bool, int, float, complex, np.number, np.bool_)):
            continue
        if isinstance(nbtype, types.Integer) and isinstance(value, (float, complex, np.inexact)):
            continue  # not a conversion numba makes implicitly
        if isinstance(nbtype, types.Boolean):
            out[i] = bool(value)
            continue
        dtype = np.dtype(str(nbtype))
        out[i] = np.asarray(value).astype(dtype)[()]
    return tuple(out)
