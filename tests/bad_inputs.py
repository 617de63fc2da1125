"""Kinds of arguments and the bad values each must refuse (used by tests/test_bad_inputs.py).

Each unit declares, in ``tests/<unit>/arguments.py``, a dict ``ARGUMENTS`` mapping every
public function of the unit (every function in its ``__all__``) to a :class:`Call`: a
cheap valid call and the kind of each argument worth breaking. The test replaces one
argument at a time with each bad value of its kind and requires a ``ValueError`` whose
message names the argument.

Kinds (append ``?`` when ``None`` is a valid value, ``+empty`` when an empty array is,
``+nan`` when NaN is, e.g. a graph's stored values, which are edges whatever they hold):

=================  ===============================================================
``count``          a positive integer (sizes, counts)
``nonneg_int``     an integer >= 0
``int``            any integer
``block``          threads per block
``seed``           None or a non-negative integer
``positive``       a finite number > 0
``nonneg``         a finite number >= 0
``fraction``       a finite number in [0, 1]
``real``           any finite number
``choice``         one string among several (method=, kind=, name=)
``real_array``     an array of real numbers (any real dtype; converted by the function)
``float_array``    an array of floating point numbers of a given precision (float32 or float64)
``index_array``    an array of integers >= 0
``int_array``      an array of integers (negative ones mean something, e.g. -1 for "none")
``uint8_image``    an 8-bit image (H, W, 3) or (H, W)
``bool_mask``      a boolean mask (H, W) that must match images given with it
``bool_array``     a boolean array (H, W) on its own
``sparse``         a SciPy sparse matrix
``shape``          a tuple of positive integers (H, W)
``precision``      a floating dtype (float32 or float64)
``flag``           True or False
=================  ===============================================================

The six bad values of the issue are None, a negative, a float where an integer is
meant, NaN, an empty array and a wrong dtype (or type); a kind lists those that apply
to it (a negative mass or a float array where floats are meant are not errors).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import scipy.sparse as sp

__all__ = ["Call", "NO_ARGUMENTS", "bad_values"]


@dataclass
class Call:
    """A valid call (``make() -> dict`` of keyword arguments, built lazily) and the kinds of its arguments."""

    make: Callable[[], dict] | None
    kinds: dict = field(default_factory=dict)
    #: Positional-only order, for functions whose arguments cannot be given by keyword.
    positional: tuple = ()

    def __init__(self, make=None, positional=(), **kinds):
        self.make, self.kinds, self.positional = make, kinds, tuple(positional)


#: A function without arguments (nothing to break): ``default_block`` and the like.
NO_ARGUMENTS = Call()


def _empty_like(a):
    a = np.asarray(a)
    return np.empty((0,) + a.shape[1:], a.dtype) if a.ndim else np.empty(0, a.dtype)


def _with_nan(a):
    a = np.array(a, dtype=np.float64 if np.asarray(a).dtype.kind != "f" else np.asarray(a).dtype, copy=True)
    a.flat[0] = np.nan
    return a


def _negative(a):
    a = np.asarray(a)
    a = np.array(a, dtype=np.int64 if a.dtype.kind == "u" else a.dtype, copy=True)
    a.flat[0] = -1
    return a


def bad_values(kind: str, valid) -> list:
    """``[(label, value), ...]``: the bad values of ``kind``, built from a valid value."""
    optional = kind.endswith("?")
    kind = kind.rstrip("?")
    empty_ok = "+empty" in kind
    nan_ok = "+nan" in kind
    kind = kind.replace("+empty", "").replace("+nan", "")
    empty_array = np.array([])
    scalar_ints = [("None", None), ("negative", -3), ("float", 3.0), ("nan", np.nan), ("empty", empty_array),
                   ("dtype", "3")]
    table = {
        "count": scalar_ints,
        "nonneg_int": [(lbl, -1 if lbl == "negative" else v) for lbl, v in scalar_ints],
        "int": [(lbl, v) for lbl, v in scalar_ints if lbl != "negative"],
        "block": [(lbl, {"negative": -32, "float": 32.0}.get(lbl, v)) for lbl, v in scalar_ints],
        "seed": [(lbl, {"float": 1.5}.get(lbl, v)) for lbl, v in scalar_ints if lbl != "None"],
        "positive": [("None", None), ("negative", -1.0), ("nan", np.nan), ("empty", empty_array), ("dtype", "1.0"),
                     ("zero", 0.0), ("inf", np.inf)],
        "nonneg": [("None", None), ("negative", -1.0), ("nan", np.nan), ("empty", empty_array), ("dtype", "1.0")],
        "fraction": [("None", None), ("negative", -0.5), ("nan", np.nan), ("empty", empty_array), ("dtype", "0.5"),
                     ("above one", 1.5)],
        "real": [("None", None), ("nan", np.nan), ("empty", empty_array), ("dtype", "1.0")],
        "choice": [("None", None), ("negative", -1), ("float", 1.5), ("nan", np.nan), ("empty", empty_array),
                   ("unknown", "no-such-choice")],
        "precision": [("None", None), ("float", 1.5), ("nan", np.nan), ("empty", empty_array),
                      ("dtype", np.int32), ("unknown", "nonsense")],
        "flag": [("None", None), ("negative", -1), ("float", 1.0), ("nan", np.nan), ("empty", empty_array),
                 ("dtype", "yes")],
        "shape": [("None", None), ("negative", (-4, 5)), ("float", (4.0, 5)), ("nan", (np.nan, 5)),
                  ("empty", ()), ("dtype", "4x5")],
    }
    if kind in table:
        values = table[kind]
    elif kind in ("real_array", "float_array"):
        valid = np.asarray(valid)
        values = [("None", None), ("nan", _with_nan(valid)), ("empty", _empty_like(valid)),
                  ("dtype", valid.astype(np.complex128)), ("strings", valid.astype(str))]
        if kind == "float_array":
            other = np.float64 if valid.dtype == np.float32 else np.float32
            values.append(("precision", valid.astype(other)))
    elif kind == "index_array":
        valid = np.asarray(valid)
        values = [("None", None), ("negative", _negative(valid)), ("float", valid.astype(np.float64)),
                  ("nan", _with_nan(valid)), ("empty", _empty_like(valid)), ("dtype", valid.astype(np.complex128))]
    elif kind == "int_array":
        valid = np.asarray(valid)
        values = [("None", None), ("float", valid.astype(np.float64)), ("nan", _with_nan(valid)),
                  ("empty", _empty_like(valid)), ("dtype", valid.astype(np.complex128))]
    elif kind == "uint8_image":
        valid = np.asarray(valid)
        values = [("None", None), ("float", valid.astype(np.float32)), ("nan", _with_nan(valid)),
                  ("empty", valid[:0]), ("dtype", valid.astype(np.int64))]
    elif kind == "bool_array":
        valid = np.asarray(valid)
        values = [("None", None), ("float", valid.astype(np.float64)), ("nan", _with_nan(valid)),
                  ("empty", valid[:0]), ("dtype", valid.astype(np.int64))]
    elif kind == "bool_mask":
        valid = np.asarray(valid)
        values = [("None", None), ("float", valid.astype(np.float64)), ("nan", _with_nan(valid)),
                  ("empty", valid[:0]), ("dtype", valid.astype(np.int64)), ("shape", valid[:, :-1])]
    elif kind == "sparse":
        values = [("None", None), ("dense", valid.toarray()), ("nan", _sparse_with_nan(valid)),
                  ("dtype", valid.astype(np.complex128)), ("empty", sp.csr_matrix((0, 0), dtype=valid.dtype))]
    else:
        raise KeyError(f"unknown argument kind {kind!r}")
    if optional:
        values = [(lbl, v) for lbl, v in values if lbl != "None"]
    if empty_ok:
        values = [(lbl, v) for lbl, v in values if lbl != "empty"]
    if nan_ok:
        values = [(lbl, v) for lbl, v in values if lbl != "nan"]
    return values


def _sparse_with_nan(A):
    A = sp.csr_matrix(A, copy=True).astype(np.float64)
    A.data[0] = np.nan
    return A
