"""Counting models of the primitives: work, span, barriers and shared-memory wavefronts of one tile.

The figures are counts of what the reference kernels do (checked against the simulator's profiler by
:mod:`course_lib.primitives.profiling`), written as formulas where the kernels are regular:

=====================  ===========================  ================  ======================
tile of T values        adds (work)                  steps (span)      barriers per block
=====================  ===========================  ================  ======================
serial loop             T - 1                        T - 1             -
tree reduction          T - 1                        log2 T            log2 T
Hillis-Steele scan      T log2 T - (T - 1)           log2 T            log2 T + 1
Blelloch scan           2 (T - 1)                    2 log2 T          2 log2 T + 1
=====================  ===========================  ================  ======================

The shared-memory *wavefronts* of an access are the most distinct 4-byte words one bank must serve
for a warp (1 when every lane hits another bank or the same word). :func:`sweep_wavefronts` counts
them for the Blelloch sweeps from their index pattern, with and without the padding i + i // 32.
"""

from __future__ import annotations

import math

import numpy as np

from .._validate import check_array, check_choice, check_flag, check_int

__all__ = ["BANKS", "WARP", "scan_adds", "scan_barriers", "scan_steps", "sweep_wavefronts", "wavefronts"]

BANKS = 32
WARP = 32
_METHODS = ("serial", "reduce", "hillis_steele", "blelloch")


def _tile(tile):
    tile = check_int(tile, "tile", minimum=1)
    if tile & (tile - 1):
        raise ValueError(f"tile must be a power of two, got {tile}")
    return tile


def _method(method):
    return check_choice(method, "method", _METHODS)


def scan_adds(method: str, tile: int) -> int:
    """Additions one tile of ``tile`` values needs (see the module's table).

    >>> scan_adds("hillis_steele", 8), scan_adds("blelloch", 8), scan_adds("serial", 8)
    (17, 14, 7)
    """
    tile, method = _tile(tile), _method(method)
    levels = int(math.log2(tile))
    return {"serial": tile - 1, "reduce": tile - 1, "hillis_steele": tile * levels - (tile - 1),
            "blelloch": 2 * (tile - 1)}[method]


def scan_steps(method: str, tile: int) -> int:
    """Dependent steps (the span) of one tile: how many adds lie on the longest chain.

    >>> scan_steps("hillis_steele", 256), scan_steps("blelloch", 256)
    (8, 16)
    """
    tile, method = _tile(tile), _method(method)
    levels = int(math.log2(tile))
    return {"serial": tile - 1, "reduce": levels, "hillis_steele": levels, "blelloch": 2 * levels}[method]


def scan_barriers(method: str, tile: int) -> int:
    """``syncthreads`` each block of the reference kernel passes for a tile of ``tile`` values.

    >>> scan_barriers("reduce", 64), scan_barriers("hillis_steele", 64), scan_barriers("blelloch", 128)
    (6, 7, 15)
    """
    tile, method = _tile(tile), _method(method)
    levels = int(math.log2(tile))
    return {"serial": 0, "reduce": levels, "hillis_steele": levels + 1, "blelloch": 2 * levels + 1}[method]


def wavefronts(word_indices) -> int:
    """Wavefronts one warp-wide shared access needs: the most distinct words in one bank.

    >>> wavefronts(range(32)), wavefronts(range(0, 64, 2)), wavefronts([5] * 32)
    (1, 2, 1)
    """
    words = check_array(word_indices, "word_indices", ndim=1, dtype="iu")
    if words.size and words.min() < 0:
        raise ValueError(f"word_indices must be non-negative word indices, got {words.min()}")
    words = np.unique(words.astype(np.int64))
    if words.size == 0:
        return 0
    return int(np.bincount(words % BANKS).max())


def sweep_wavefronts(tile: int, padded: bool) -> dict:
    """Wavefronts of the Blelloch sweeps of one tile, per warp-wide access, from the index pattern.

    Each level's active threads t read ``left = s (2t + 1) - 1`` and ``right = left + s`` (s the
    stride); each warp of them issues one access to the lefts and one to the rights.

    Parameters
    ----------
    tile : int
        Values per tile (2 x threads per block), a power of two.
    padded : bool
        Indices stored at i + i // 32.

    Returns
    -------
    dict
        ``accesses`` (warp-wide accesses to lefts or rights, both sweeps), ``wavefronts`` (their total),
        ``worst`` (the most wavefronts of one access).
    """
    tile = _tile(tile)
    padded = check_flag(padded, "padded")
    accesses = total = worst = 0
    stride, active = 1, tile // 2
    while active > 0:
        for first in range(0, active, WARP):
            t = np.arange(first, min(first + WARP, active))
            left = stride * (2 * t + 1) - 1
            for index in (left, left + stride):
                index = index + (index >> 5) if padded else index
                w = wavefronts(index)
                accesses, total, worst = accesses + 1, total + w, max(worst, w)
        stride, active = stride * 2, active // 2
    # The down-sweep visits the same levels in the opposite order, with the same patterns.
    return {"accesses": 2 * accesses, "wavefronts": 2 * total, "worst": worst}
