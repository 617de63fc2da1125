"""The CPU peers of the primitives: the best NumPy routines, which every GPU figure is set against.

``numpy.cumsum`` (a serial scan in C), ``numpy.add.reduce`` (pairwise sums, vectorised),
boolean indexing for compaction and ``numpy.bincount`` for histograms. A scan is memory bound
on both sides: the CPU reads and writes each value once, as the GPU's work-efficient scan does.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_array, check_flag, check_int

__all__ = ["compact_cpu", "histogram_cpu", "reduce_cpu", "scan_cpu", "segmented_scan_cpu"]


def _values(x):
    return check_array(x, "x", ndim=1, dtype=(np.float32, np.int32), finite=True)


def _flags(flags, name, n):
    return check_array(flags, name, ndim=1, shape=(n,), dtype="iub") != 0


def check_keys(keys, bins, *, maximum=None):
    """Histogram keys as an int32 array of values in ``[0, bins)``, and ``bins`` as an int.

    Raises
    ------
    ValueError
        Keys that are not a 1-D int32 array or fall outside ``[0, bins)``; ``bins`` < 1 (or above ``maximum``).
    """
    keys = check_array(keys, "keys", ndim=1, dtype=np.int32)
    bins = check_int(bins, "bins", minimum=1, maximum=maximum)
    if keys.size and (keys.min() < 0 or keys.max() >= bins):
        raise ValueError(f"keys must lie in [0, bins) = [0, {bins}), got values from {keys.min()} to {keys.max()}")
    return keys, bins


# The public functions check their arguments (students call them directly); the private ones below take
# arguments checked already, for :mod:`course_lib.primitives.api`, which checks them once at its door.


def reduce_cpu(x) -> float:
    """Sum of ``x`` (shape (n,)) in its own dtype (NumPy's pairwise summation)."""
    return _reduce(_values(x))


def _reduce(x):
    return np.add.reduce(x)


def scan_cpu(x, inclusive: bool = False) -> np.ndarray:
    """Prefix sums of ``x`` (shape (n,)) in its dtype, exclusive or inclusive (``numpy.cumsum``)."""
    return _scan(_values(x), check_flag(inclusive, "inclusive"))


def _scan(x, inclusive):
    total = np.cumsum(x, dtype=x.dtype)
    if inclusive:
        return total
    out = np.empty_like(total)
    out[:1] = 0
    out[1:] = total[:-1]
    return out


def segmented_scan_cpu(x, flags) -> np.ndarray:
    """Inclusive segmented scan of ``x`` (segments start where ``flags`` is set) with ``numpy.cumsum``."""
    x = _values(x)
    return _segmented_scan(x, _flags(flags, "flags", x.size))


def _segmented_scan(x, heads):
    total = np.cumsum(x, dtype=x.dtype)
    if x.size == 0:
        return total
    starts = np.flatnonzero(heads)
    offsets = np.zeros(x.size, x.dtype)
    offsets[starts[starts > 0]] = total[starts[starts > 0] - 1]
    # Each segment subtracts the total before its head; cumulative max of the head index picks it.
    owner = np.maximum.accumulate(np.where(heads, np.arange(x.size), 0))
    return total - offsets[owner]


def compact_cpu(x, keep) -> np.ndarray:
    """``x[keep != 0]``, in order."""
    x = _values(x)
    return x[_flags(keep, "keep", x.size)]


def histogram_cpu(keys, bins: int) -> np.ndarray:
    """``numpy.bincount`` of int keys in [0, bins): int64 of shape (bins,)."""
    return _histogram(*check_keys(keys, bins))


def _histogram(keys, bins):
    return np.bincount(keys, minlength=bins)
