"""Trusted float64 references of the primitives (NumPy), used by the tests and the graders."""

from __future__ import annotations

import numpy as np

__all__ = ["compact_reference", "histogram_reference", "reduce_reference", "scan_reference",
           "segmented_scan_reference"]


def reduce_reference(x) -> float:
    """Sum of ``x`` (shape (n,)) in float64."""
    return float(np.sum(np.asarray(x, np.float64)))


def scan_reference(x, inclusive: bool = False) -> np.ndarray:
    """Prefix sums of ``x`` (shape (n,)) in float64: ``out[i] = x[0] + ... + x[i - 1]`` (exclusive,
    ``out[0] = 0``) or up to ``x[i]`` (inclusive). Shape (n,), float64."""
    total = np.cumsum(np.asarray(x, np.float64))
    return total if inclusive else total - np.asarray(x, np.float64)


def segmented_scan_reference(x, flags) -> np.ndarray:
    """Inclusive scan of ``x`` restarting where ``flags`` (shape (n,), non-zero = head) is set; float64 (n,)."""
    x = np.asarray(x, np.float64)
    heads = np.asarray(flags) != 0
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
    return np.asarray(x)[np.asarray(keep) != 0]


def histogram_reference(keys, bins: int) -> np.ndarray:
    """Counts of each key in [0, bins): int64 of shape (bins,)."""
    return np.bincount(np.asarray(keys, np.int64), minlength=bins).astype(np.int64)
