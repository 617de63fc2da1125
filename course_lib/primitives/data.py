"""Seeded inputs of the primitives: values to scan, segment heads, keys to count.

Sizes are chosen awkward on purpose by the tests (not a multiple of the tile); the skewed keys
make most threads hit a few bins, where global atomics serialise and privatisation pays.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_float, check_int, check_seed

__all__ = ["random_values", "segment_heads", "skewed_keys", "uniform_keys"]


def random_values(n: int, seed: int | None = 0) -> np.ndarray:
    """``n`` float32 values uniform in [-1, 1), seeded; shape (n,)."""
    n = check_int(n, "n", minimum=0)
    return np.random.default_rng(check_seed(seed)).uniform(-1, 1, n).astype(np.float32)


def segment_heads(n: int, mean_length: float, seed: int | None = 0) -> np.ndarray:
    """int32 flags of shape (n,): 1 where a segment starts, segments of about ``mean_length``
    (geometric lengths); element 0 is always a head."""
    n = check_int(n, "n", minimum=0)
    mean_length = check_float(mean_length, "mean_length", minimum=1.0)
    rng = np.random.default_rng(check_seed(seed))
    heads = (rng.random(n) < 1.0 / mean_length).astype(np.int32)
    heads[:1] = 1
    return heads


def uniform_keys(n: int, bins: int, seed: int | None = 0) -> np.ndarray:
    """int32 keys of shape (n,) uniform in [0, bins)."""
    n, bins = check_int(n, "n", minimum=0), check_int(bins, "bins", minimum=1)
    return np.random.default_rng(check_seed(seed)).integers(0, bins, n).astype(np.int32)


def skewed_keys(n: int, bins: int, hot_share: float = 0.8, seed: int | None = 0) -> np.ndarray:
    """int32 keys of shape (n,) in [0, bins), ``hot_share`` of them in bin 0 (contention on one counter)."""
    n, bins = check_int(n, "n", minimum=0), check_int(bins, "bins", minimum=1)
    hot_share = check_float(hot_share, "hot_share", minimum=0.0, maximum=1.0)
    rng = np.random.default_rng(check_seed(seed))
    keys = rng.integers(0, bins, n).astype(np.int32)
    keys[rng.random(n) < hot_share] = 0
    return keys
