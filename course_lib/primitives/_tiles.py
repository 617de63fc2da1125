"""The tile sizes and types every kernel factory of the primitives unit accepts (shared by
:mod:`course_lib.primitives.kernels` and its warp-level kernels)."""

from __future__ import annotations

from numba import float32, int32

LESSON = "lessons/09_primitives.ipynb"
#: Shared-memory banks of 4 bytes (every CUDA GPU since compute capability 2.0).
BANKS = 32
#: Threads per block the factories accept: powers of two, so that the trees are full.
BLOCKS = (32, 64, 128, 256, 512)
_NUMBA_TYPES = {"float32": float32, "int32": int32}


def _check(block: int, dtype: str):
    if block not in BLOCKS:
        raise ValueError(f"block must be one of {BLOCKS} (threads per block, a power of two), got {block!r}")
    if dtype not in _NUMBA_TYPES:
        raise ValueError(f"dtype must be one of {sorted(_NUMBA_TYPES)}, got {dtype!r}")
