"""Warp-level kernels of the primitives unit (re-exported by :mod:`course_lib.primitives.kernels`) (``lessons/09_primitives.ipynb``, sections 11 and 12).

The 32 lanes of a warp can exchange registers without shared memory or a barrier:

- a **shuffle** (``cuda.shfl_down_sync``, ``shfl_up_sync``, ``shfl_xor_sync``, ``shfl_sync``) reads a
  register of another lane of the same warp;
- a **vote** (``cuda.ballot_sync``, ``any_sync``, ``all_sync``) gives every lane the predicates of its warp,
  ``ballot_sync`` as the 32 bits of one integer, whose set bits ``cuda.popc`` counts.

Every ``*_sync`` call names in its first argument (the *mask*) the lanes that take part; each of them must
reach the call. A full warp is ``FULL_MASK``. The kernels below build the expert versions of the lesson's
block primitives from these:

- :func:`warp_reduce_kernel`: a grid-stride loop (any number of values with a fixed grid), a shuffle tree in
  each warp, the warps' sums through shared memory: **one** barrier per block, where the shared-memory tree
  of :func:`~course_lib.primitives.kernels.block_reduce_kernel` passes log2(B);
- :func:`warp_scan_kernel`: the hybrid block scan: a Kogge-Stone (Hillis-Steele) scan inside each warp with
  ``shfl_up_sync`` (5 steps, no barrier), the warps' totals scanned by the first warp, added back: **two**
  barriers per block and 32 times fewer shared words than the one-value-per-thread scans;
- :func:`warp_vote_count_kernel`: how many values pass a test, with one atomic per warp (a ballot counted with
  ``popc`` by the warp's first lane) instead of one per passing value: a *warp-aggregated atomic*.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import cuda, float32, int32

from ..registry import register_kernel
from ._tiles import LESSON, _check

__all__ = ["FULL_MASK", "WARP", "warp_reduce_kernel", "warp_scan_kernel", "warp_vote_count_kernel"]

#: Lanes of a warp.
WARP = 32
#: Every lane of a warp, as a ``*_sync`` mask.
FULL_MASK = 0xFFFFFFFF
_NUMBA_TYPES = {"float32": float32, "int32": int32}


# --------------------------------------------------------------------------- reduce
@lru_cache(maxsize=None)
def warp_reduce_kernel(block: int, dtype: str = "float32"):
    """Sum of any number of values: a grid-stride loop, a shuffle tree per warp, one barrier per block.

    Each thread first adds the values ``i, i + G, i + 2G, ...`` (G the grid's threads) in a register: a
    **grid-stride loop**, so a grid sized for the GPU (a few blocks per SM) covers any ``n`` and each
    thread's loads stay coalesced across its warp. Then each warp halves its 32 partial sums five times with
    ``shfl_down_sync`` (lane l adds lane l + 16, then l + 8, ...); lane 0 holds the warp's sum and writes it
    to shared memory; after the block's only barrier the first warp sums those ``block / 32`` values the same
    way.

    Parameters
    ----------
    block : int
        Threads per block, one of :data:`~course_lib.primitives.kernels.BLOCKS`.
    dtype : {"float32", "int32"}

    Returns
    -------
    numba.cuda kernel
        ``kernel[blocks, block](x, partial)``: ``x`` of shape (n,), ``partial`` of shape (blocks,) receives
        each block's share of the sum (any ``blocks`` >= 1; the shares add up to ``x.sum()``).
    """
    _check(block, dtype)
    kind = _NUMBA_TYPES[dtype]
    warps = block // WARP

    def warp_reduce(x, partial):
        sums = cuda.shared.array(warps, kind)
        t = cuda.threadIdx.x
        lane = t % WARP
        warp = t // WARP
        acc = kind(0)
        stride = cuda.gridsize(1)
        for i in range(cuda.grid(1), x.shape[0], stride):  # grid-stride loop
            acc += x[i]
        offset = WARP // 2
        while offset > 0:  # every lane takes part: the whole warp reaches each shuffle
            acc += cuda.shfl_down_sync(FULL_MASK, acc, offset)
            offset //= 2
        if lane == 0:
            sums[warp] = acc
        cuda.syncthreads()
        if warp == 0:
            acc = sums[lane] if lane < warps else kind(0)
            offset = WARP // 2
            while offset > 0:
                acc += cuda.shfl_down_sync(FULL_MASK, acc, offset)
                offset //= 2
            if lane == 0:
                partial[cuda.blockIdx.x] = acc

    warp_reduce.__name__ = warp_reduce.__qualname__ = f"warp_reduce_{dtype}_{block}"
    return cuda.jit(warp_reduce)


# --------------------------------------------------------------------------- scan
@lru_cache(maxsize=None)
def warp_scan_kernel(block: int, dtype: str = "float32"):
    """Hybrid inclusive scan of a tile of ``block`` values per block: shuffles in each warp, the warps'
    totals through shared memory.

    1. Each warp scans its 32 values with ``shfl_up_sync`` (Kogge-Stone: at step d, lane l adds lane l - d,
       for d = 1, 2, 4, 8, 16): log2(32) = 5 steps in registers, no barrier, no shared memory.
    2. The last lane of each warp writes the warp's total to shared memory; barrier.
    3. The first warp scans those ``block / 32`` totals the same way (inclusive), in place; barrier.
    4. Every lane adds the total of the warps before its own.

    Two barriers per block whatever ``block``, against log2(B) for the one-value-per-thread Hillis-Steele
    kernel and 2 log2(2B) for Blelloch's; the step-inefficient Kogge-Stone adds cost nothing extra inside a
    warp, since the 32 lanes issue together anyway.

    Returns
    -------
    numba.cuda kernel
        ``kernel[ceil(n / block), block](x, out, block_sums)``: ``out`` of shape (n,) the inclusive scan
        within each tile, ``block_sums`` of shape (blocks,) each tile's total.
    """
    _check(block, dtype)
    kind = _NUMBA_TYPES[dtype]
    warps = block // WARP

    def warp_scan(x, out, block_sums):
        totals = cuda.shared.array(warps, kind)
        t = cuda.threadIdx.x
        lane = t % WARP
        warp = t // WARP
        i = cuda.blockIdx.x * block + t
        value = x[i] if i < x.shape[0] else kind(0)
        d = 1
        while d < WARP:  # Kogge-Stone inside the warp
            below = cuda.shfl_up_sync(FULL_MASK, value, d)
            if lane >= d:
                value += below
            d *= 2
        if lane == WARP - 1:
            totals[warp] = value
        cuda.syncthreads()
        if warp == 0:
            total = totals[lane] if lane < warps else kind(0)
            d = 1
            while d < WARP:
                below = cuda.shfl_up_sync(FULL_MASK, total, d)
                if lane >= d:
                    total += below
                d *= 2
            if lane < warps:
                totals[lane] = total
        cuda.syncthreads()
        if warp > 0:
            value += totals[warp - 1]
        if i < x.shape[0]:
            out[i] = value
        if t == block - 1:
            block_sums[cuda.blockIdx.x] = totals[warps - 1]

    warp_scan.__name__ = warp_scan.__qualname__ = f"warp_scan_{dtype}_{block}"
    return cuda.jit(warp_scan)


# --------------------------------------------------------------------------- vote
@cuda.jit
def warp_vote_count_kernel(x, threshold, count):
    """How many of ``x`` exceed ``threshold``: a ballot per warp, one atomic per warp.

    ``in_range = ballot_sync(FULL_MASK, i < n)``, taken by all 32 lanes before any of them leaves, names the
    lanes that hold a value (fewer than 32 in the warp that straddles the end); those lanes vote on their value
    with that mask, and the lowest of them (``ffs`` is 1-based) adds the warp's ``popc`` to ``count[0]``.
    Launch with whole warps (``blockdim`` a multiple of 32) so that every lane reaches the first ballot.

    Parameters
    ----------
    x : float32 array, shape (n,)
    threshold : float32
    count : int32 array, shape (1,), zeroed by the caller
    """
    i = cuda.grid(1)
    in_range = cuda.ballot_sync(FULL_MASK, i < x.shape[0])
    if i < x.shape[0]:
        votes = cuda.ballot_sync(in_range, x[i] > threshold)
        if cuda.laneid == cuda.ffs(in_range) - 1:
            cuda.atomic.add(count, 0, cuda.popc(votes))


# --------------------------------------------------------------------------- the registry
def _values(n, dtype="float32"):
    return (np.arange(n) % 7 - 3).astype(dtype)


def _register():
    for dtype in ("float32", "int32"):
        register_kernel(f"primitives.warp_reduce_kernel[64,{dtype}]", f"void({dtype}[::1], {dtype}[::1])",
                        lambda d=dtype: warp_reduce_kernel(64, d).py_func, LESSON,
                        example=lambda d=dtype: (2, 64, (_values(301, d), np.zeros(2, d))))
        register_kernel(f"primitives.warp_scan_kernel[64,{dtype}]", f"void({dtype}[::1], {dtype}[::1], {dtype}[::1])",
                        lambda d=dtype: warp_scan_kernel(64, d).py_func, LESSON,
                        example=lambda d=dtype: (3, 64, (_values(150, d), np.zeros(150, d), np.zeros(3, d))))
    register_kernel("primitives.warp_vote_count_kernel", "void(float32[::1], float32, int32[::1])",
                    lambda: warp_vote_count_kernel.py_func, LESSON,
                    example=lambda: (2, 64, (_values(100), np.float32(0.5), np.zeros(1, np.int32))))


_register()
