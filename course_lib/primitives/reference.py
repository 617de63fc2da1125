"""Trusted float64 references of the primitives (NumPy), used by the tests and the graders."""

from __future__ import annotations

import numpy as np

from .._validate import check_array, check_flag, check_int

__all__ = ["compact_reference", "histogram_reference", "reduce_reference", "scan_reference",
           "segmented_scan_reference"]


def _real(x, name="x"):
    return check_array(x, name, ndim=1, dtype="fiu", finite=True).astype(np.float64)


def _flags(flags, name, n):
    return check_array(flags, name, ndim=1, shape=(n,), dtype="iub") != 0


def reduce_reference(x) -> float:
    """Sum of ``x`` (shape (n,)) in float64."""
    return float(np.sum(_real(x)))


def scan_reference(x, inclusive: bool = False) -> np.ndarray:
    """Prefix sums of ``x`` (shape (n,)) in float64: ``out[i] = x[0] + ... + x[i - 1]`` (exclusive,
    ``out[0] = 0``) or up to ``x[i]`` (inclusive). Shape (n,), float64."""
    x = _real(x)
    total = np.cumsum(x)
    return total if check_flag(inclusive, "inclusive") else total - x


def segmented_scan_reference(x, flags) -> np.ndarray:
    """Inclusive scan of ``x`` restarting where ``flags`` (shape (n,), non-zero = head) is set; float64 (n,)."""
    x = _real(x)
    heads = _flags(flags, "flags", x.size)
    total = np.cumsum(x)
    if x.size == 0:
        return total
    # Subtract, at each element, the running total just before its segment's head.
    head_index = np.maximum.accumulate(np.where(heads, np.arange(x.size), 0))
    before_head = np.concatenate([[0.0], total])[head_index]
    before_head[~np.maximum.accumulate(heads)] = 0.0  # before the first head: one segment from 0
    return total - before_head


def compact_reference(x, keep) -> np.ndarray:
    """The elements of ``x`` where ``keep`` is non-zero, in order (same dtype as ``x``)."""
    x = check_array(x, "x", ndim=1, dtype="fiu", finite=True)
    return x[_flags(keep, "keep", x.size)]


def histogram_reference(keys, bins: int) -> np.ndarray:
    """Counts of each key in [0, bins): int64 of shape (bins,)."""
    keys = check_array(keys, "keys", ndim=1, dtype="iu")
    bins = check_int(bins, "bins", minimum=1)
    if keys.size and (keys.min() < 0 or keys.max() >= bins):
        raise ValueError(f"keys must lie in [0, bins) = [0, {bins}), got values from {keys.min()} to {keys.max()}")
    return np.bincount(keys.astype(np.int64), minlength=bins).astype(np.int64)
