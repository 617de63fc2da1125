"""Reference CUDA kernels of the primitives unit, taught in ``lessons/09_primitives.ipynb``.

Every kernel works on one tile of the input per block and leaves what crosses blocks to a
second pass (:func:`add_block_offsets_kernel`, or the host), as the lesson's host loop shows:

- :func:`block_reduce_kernel`: a tree sum in shared memory with sequential addressing, one
  partial sum per block;
- :func:`hillis_steele_scan_kernel`: the step-efficient inclusive scan (log2 B steps, B log2 B adds);
- :func:`blelloch_scan_kernel`: the work-efficient exclusive scan (up-sweep then down-sweep,
  2 (2B - 1) adds for a tile of 2B values), with or without the padding that removes its
  shared-memory bank conflicts;
- :func:`segmented_scan_kernel`: an inclusive scan restarting at every flagged element;
- :func:`scatter_kept_kernel`: the last pass of stream compaction (flags, scan, scatter);
- :func:`histogram_atomic_kernel` and :func:`histogram_private_kernel`: one global atomic per
  element against one per bin and block (privatisation in shared memory).

The tile sizes are compile-time constants of each factory (shared arrays need them).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import cuda, float32, int32

from ..registry import course_kernel, register_kernel
from ._tiles import _NUMBA_TYPES, BANKS, BLOCKS, LESSON, _check  # noqa: F401
from ._warp import FULL_MASK, WARP, warp_reduce_kernel, warp_scan_kernel, warp_vote_count_kernel  # noqa: F401

__all__ = ["BANKS", "BLOCKS", "FULL_MASK", "WARP", "add_block_offsets_kernel", "add_segment_carries_kernel", "blelloch_scan_kernel", "block_reduce_kernel",
           "conflict_free", "hillis_steele_scan_kernel", "histogram_atomic_kernel", "histogram_private_kernel",
           "keep_flags_kernel", "scatter_kept_kernel", "segmented_scan_kernel", "shift_right_kernel",
           "sweep_pair", "tile_tails_kernel", "warp_reduce_kernel", "warp_scan_kernel", "warp_vote_count_kernel"]

@cuda.jit(device=True, inline=True)
def conflict_free(i):
    """Index ``i`` of a shared array padded by one word every 32: i + i // 32.

    Element ``i`` then lives in bank ``(i + i // 32) % 32``, so the up- and down-sweep's
    power-of-two strides no longer land every lane of a warp in the same bank.
    """
    return i + (i >> 5)


@cuda.jit(device=True, inline=True)
def sweep_pair(t, stride, padded):
    """The two slots thread ``t`` combines at one level of a Blelloch sweep.

    Parameters
    ----------
    t : int
        The thread (one of the level's active ones).
    stride : int
        The level's distance between the two children.
    padded : bool
        The shared array is padded: the slots are mapped by :func:`conflict_free`.

    Returns
    -------
    (int, int)
        The left child's slot and the right child's (the parent's) slot.
    """
    left = stride * (2 * t + 1) - 1
    right = left + stride
    if padded:
        return conflict_free(left), conflict_free(right)
    return left, right


# --------------------------------------------------------------------------- reduce
@lru_cache(maxsize=None)
def block_reduce_kernel(block: int, dtype: str = "float32"):
    """Tree reduction of one tile of ``block`` values per block, sequential addressing.

    Parameters
    ----------
    block : int
        Threads per block, one of :data:`BLOCKS`.
    dtype : {"float32", "int32"}

    Returns
    -------
    numba.cuda kernel
        ``kernel[ceil(n / block), block](x, partial)``: ``x`` of shape (n,), ``partial`` of shape
        (ceil(n / block),) receives each block's sum. log2(block) barriers, block - 1 adds per block.
    """
    _check(block, dtype)
    kind = _NUMBA_TYPES[dtype]

    def block_reduce(x, partial):
        tile = cuda.shared.array(block, kind)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * block + t
        tile[t] = x[i] if i < x.shape[0] else 0
        stride = block // 2
        while stride > 0:
            cuda.syncthreads()
            # Sequential addressing: the active threads are 0..stride-1, packed into whole warps.
            if t < stride:
                tile[t] += tile[t + stride]
            stride //= 2
        if t == 0:
            partial[cuda.blockIdx.x] = tile[0]

    block_reduce.__name__ = block_reduce.__qualname__ = f"block_reduce_{dtype}_{block}"
    return cuda.jit(block_reduce)


# --------------------------------------------------------------------------- scans
@lru_cache(maxsize=None)
def hillis_steele_scan_kernel(block: int, dtype: str = "float32"):
    """Step-efficient inclusive scan of one tile of ``block`` values per block (Hillis and Steele).

    At step d every element adds the one 2**d to its left: log2(block) steps, each with a
    read, a barrier and a write through a double buffer, and about block * log2(block) adds
    against the block - 1 a serial loop needs.

    Returns
    -------
    numba.cuda kernel
        ``kernel[ceil(n / block), block](x, out, block_sums)``: ``out`` of shape (n,) the
        inclusive scan within each tile, ``block_sums`` of shape (blocks,) each tile's total.
    """
    _check(block, dtype)
    kind = _NUMBA_TYPES[dtype]
    both_halves = 2 * block  # a shared array's size must be a constant of the compiled kernel

    def hillis_steele_scan(x, out, block_sums):
        buffers = cuda.shared.array(both_halves, kind)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * block + t
        buffers[t] = x[i] if i < x.shape[0] else 0
        source = 0
        offset = 1
        while offset < block:
            cuda.syncthreads()
            # Read from one half, write to the other: no thread overwrites a value another still reads.
            value = buffers[source * block + t]
            if t >= offset:
                value += buffers[source * block + t - offset]
            source = 1 - source
            buffers[source * block + t] = value
            offset *= 2
        cuda.syncthreads()
        if i < x.shape[0]:
            out[i] = buffers[source * block + t]
        if t == block - 1:
            block_sums[cuda.blockIdx.x] = buffers[source * block + t]

    hillis_steele_scan.__name__ = hillis_steele_scan.__qualname__ = f"hillis_steele_scan_{dtype}_{block}"
    return cuda.jit(hillis_steele_scan)


@lru_cache(maxsize=None)
def blelloch_scan_kernel(block: int, dtype: str = "float32", padded: bool = False):
    """Work-efficient exclusive scan of a tile of 2 * ``block`` values per block (Blelloch).

    Each thread loads two values. The up-sweep adds pairs at strides 1, 2, 4... into a balanced
    tree (2B - 1 adds), the root is cleared, and the down-sweep swaps and adds back down the tree
    (another 2B - 1): 2 log2(2B) barriers. Without padding, the stride-2**d accesses of a warp
    fall into 2**d-way bank conflicts; with ``padded``, index i is stored at i + i // 32.

    Parameters
    ----------
    block : int
        Threads per block, one of :data:`BLOCKS` (the tile is twice that).
    dtype : {"float32", "int32"}
    padded : bool
        Store element i at :func:`conflict_free` (i).

    Returns
    -------
    numba.cuda kernel
        ``kernel[ceil(n / (2 block)), block](x, out, block_sums)``: ``out`` of shape (n,) the
        exclusive scan within each tile, ``block_sums`` of shape (blocks,) each tile's total.
    """
    _check(block, dtype)
    kind = _NUMBA_TYPES[dtype]
    tile = 2 * block
    size = tile + tile // BANKS if padded else tile

    def blelloch_scan(x, out, block_sums):
        temp = cuda.shared.array(size, kind)
        t = cuda.threadIdx.x
        base = cuda.blockIdx.x * tile
        n = x.shape[0]
        a, b = t, t + block  # two loads a block apart: each is coalesced
        pa = conflict_free(a) if padded else a
        pb = conflict_free(b) if padded else b
        temp[pa] = x[base + a] if base + a < n else 0
        temp[pb] = x[base + b] if base + b < n else 0
        stride = 1
        active = block
        while active > 0:  # up-sweep: after it, temp[tile - 1] holds the tile's total
            cuda.syncthreads()
            if t < active:
                left, right = sweep_pair(t, stride, padded)
                temp[right] += temp[left]
            stride *= 2
            active //= 2
        last = conflict_free(tile - 1) if padded else tile - 1
        if t == 0:
            block_sums[cuda.blockIdx.x] = temp[last]
            temp[last] = 0
        active = 1
        while active < tile:  # down-sweep: the left child gets the parent's prefix, the right adds the left sum
            stride //= 2
            cuda.syncthreads()
            if t < active:
                left, right = sweep_pair(t, stride, padded)
                carried = temp[left]
                temp[left] = temp[right]
                temp[right] += carried
            active *= 2
        cuda.syncthreads()
        if base + a < n:
            out[base + a] = temp[pa]
        if base + b < n:
            out[base + b] = temp[pb]

    suffix = "_padded" if padded else ""
    blelloch_scan.__name__ = blelloch_scan.__qualname__ = f"blelloch_scan{suffix}_{dtype}_{block}"
    return cuda.jit(blelloch_scan)


@course_kernel("void(float32[::1], float32[::1], int32)", lesson=LESSON,
               example=lambda: (3, 32, (np.ones(70, np.float32), np.arange(3, dtype=np.float32), np.int32(32))))
def add_block_offsets_kernel(out, offsets, per_block):
    """Second pass of a scan longer than a tile: ``out[i] += offsets[i // per_block]``.

    ``offsets`` is the exclusive scan of the tiles' totals, shape (ceil(n / per_block),).
    """
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] += offsets[i // per_block]


# --------------------------------------------------------------------------- segmented scan
@lru_cache(maxsize=None)
def segmented_scan_kernel(block: int):
    """Inclusive segmented scan (Hillis-Steele on value-flag pairs) of one tile per block.

    ``flags[i] = 1`` starts a segment at i. A pair (v, f) combines with the pair on its left as
    ``(v if f else v_left + v, f or f_left)``: the sum stops at a segment's head. The operator
    is associative, so the same log2(block) steps as the plain scan apply.

    Returns
    -------
    numba.cuda kernel
        ``kernel[ceil(n / block), block](x, flags, out, reached)``: float32 ``x``, int32 ``flags``,
        float32 ``out`` and int32 ``reached`` of shape (n,). ``out`` is the segmented scan within each
        tile; ``reached[i]`` is 1 when no head lies between the tile's start and i, so that a carry
        from the tiles on the left still reaches i (:func:`add_segment_carries_kernel`).
    """
    _check(block, "float32")

    def segmented_scan(x, flags, out, reached):
        values = cuda.shared.array((2, block), float32)
        heads = cuda.shared.array((2, block), int32)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * block + t
        inside = i < x.shape[0]
        values[0, t] = x[i] if inside else 0
        heads[0, t] = flags[i] if inside else 1  # padding starts segments of its own
        source = 0
        offset = 1
        while offset < block:
            cuda.syncthreads()
            value = values[source, t]
            head = heads[source, t]
            if t >= offset and head == 0:
                value += values[source, t - offset]
                head = heads[source, t - offset]
            source = 1 - source
            values[source, t] = value
            heads[source, t] = head
            offset *= 2
        cuda.syncthreads()
        if inside:
            out[i] = values[source, t]
            reached[i] = 1 - heads[source, t]

    segmented_scan.__name__ = segmented_scan.__qualname__ = f"segmented_scan_{block}"
    return cuda.jit(segmented_scan)


@course_kernel("void(float32[::1], int32[::1], float32[::1], int32)", lesson=LESSON,
               example=lambda: (2, 32, (np.ones(50, np.float32), (np.arange(50) < 40).astype(np.int32),
                                        np.array([0, 3], np.float32), np.int32(32))))
def add_segment_carries_kernel(out, reached, carries, per_block):
    """Second pass of a segmented scan: ``out[i] += carries[i // per_block]`` where the carry reaches i
    (``reached[i]``: no head earlier in its tile). ``carries[b]`` is the segmented sum that flows out
    of the tiles left of tile b (0 where a head stopped it)."""
    i = cuda.grid(1)
    if i < out.shape[0] and reached[i] != 0:
        out[i] += carries[i // per_block]


@course_kernel("void(float32[::1], int32[::1], int32, float32[::1], int32[::1])", lesson=LESSON,
               example=lambda: (1, 32, (np.ones(50, np.float32), (np.arange(50) < 40).astype(np.int32), np.int32(32),
                                        np.zeros(2, np.float32), np.zeros(2, np.int32))))
def tile_tails_kernel(out, reached, per_block, tails, stopped):
    """The value-flag pair each tile of a segmented scan passes on: ``tails[b]`` its last scanned value,
    ``stopped[b]`` 1 where a head inside tile b stops what came from the left. Their segmented scan,
    shifted by one tile, is every tile's carry, so the carries are computed on the device too."""
    b = cuda.grid(1)
    if b < tails.shape[0]:
        last = min((b + 1) * per_block, out.shape[0]) - 1
        tails[b] = out[last]
        stopped[b] = 1 - reached[last]


@course_kernel("void(float32[::1], float32[::1])", lesson=LESSON,
               example=lambda: (1, 32, (np.arange(5, dtype=np.float32), np.zeros(5, np.float32))))
def shift_right_kernel(src, dst):
    """``dst[0] = 0``, ``dst[i] = src[i - 1]``: an inclusive scan's result made exclusive."""
    i = cuda.grid(1)
    if i < dst.shape[0]:
        dst[i] = src[i - 1] if i > 0 else 0


# --------------------------------------------------------------------------- stream compaction
@course_kernel("void(float32[::1], float32, int32[::1])", lesson=LESSON,
               example=lambda: (2, 32, (np.linspace(-1, 1, 45).astype(np.float32), np.float32(0.25),
                                        np.zeros(45, np.int32))))
def keep_flags_kernel(x, threshold, keep):
    """First pass of compaction: ``keep[i] = 1`` where ``x[i] > threshold`` (a map)."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        keep[i] = 1 if x[i] > threshold else 0


def _scatter_example():
    x = np.arange(45, dtype=np.float32)
    keep = (np.arange(45) % 3 == 0).astype(np.int32)
    positions = (np.cumsum(keep) - keep).astype(np.int32)
    return 2, 32, (x, keep, positions, np.zeros(int(keep.sum()), np.float32))


@course_kernel("void(float32[::1], int32[::1], int32[::1], float32[::1])", lesson=LESSON, example=_scatter_example)
def scatter_kept_kernel(x, keep, positions, out):
    """Last pass of compaction: a kept element goes to its exclusive-scan position (order kept)."""
    i = cuda.grid(1)
    if i < x.shape[0] and keep[i] != 0:
        out[positions[i]] = x[i]


# --------------------------------------------------------------------------- histogram
def _histogram_example():
    keys = (np.arange(70) * 7 % 10).astype(np.int32)
    return 3, 32, (keys, np.zeros(10, np.int32))


@course_kernel("void(int32[::1], int32[::1])", lesson=LESSON, example=_histogram_example)
def histogram_atomic_kernel(keys, counts):
    """One global atomic per element: ``counts[keys[i]] += 1`` (keys in [0, bins))."""
    i = cuda.grid(1)
    if i < keys.shape[0]:
        cuda.atomic.add(counts, keys[i], 1)


@lru_cache(maxsize=None)
def histogram_private_kernel(bins: int):
    """Privatised histogram: each block counts into its own copy in shared memory, then adds each
    non-zero bin to the global counts once (bins atomics per block, not one per element).

    Parameters
    ----------
    bins : int
        Number of bins, 1..4096 (the private copy takes 4 bytes a bin of shared memory).

    Returns
    -------
    numba.cuda kernel
        ``kernel[blocks, threads](keys, counts)``: int32 ``keys`` of shape (n,) in [0, bins), int32
        ``counts`` of shape (bins,) zeroed before the launch. A grid-stride loop: any grid covers n.
    """
    if not isinstance(bins, (int, np.integer)) or not 1 <= bins <= 4096:
        raise ValueError(f"bins must be an integer between 1 and 4096, got {bins!r}")
    bins = int(bins)

    def histogram_private(keys, counts):
        private = cuda.shared.array(bins, int32)
        t = cuda.threadIdx.x
        for b in range(t, bins, cuda.blockDim.x):
            private[b] = 0
        cuda.syncthreads()
        for i in range(cuda.grid(1), keys.shape[0], cuda.gridsize(1)):
            cuda.atomic.add(private, keys[i], 1)  # a shared-memory atomic: no trip to L2
        cuda.syncthreads()
        for b in range(t, bins, cuda.blockDim.x):
            if private[b] != 0:
                cuda.atomic.add(counts, b, private[b])

    histogram_private.__name__ = histogram_private.__qualname__ = f"histogram_private_{bins}"
    return cuda.jit(histogram_private)


# --------------------------------------------------------------------------- the registry
def _values(n, dtype="float32"):
    return (np.arange(n) % 7 - 3).astype(dtype)


def _register():
    for dtype in ("float32", "int32"):
        sig_t = dtype
        register_kernel(f"primitives.block_reduce_kernel[32,{dtype}]", f"void({sig_t}[::1], {sig_t}[::1])",
                        lambda d=dtype: block_reduce_kernel(32, d).py_func, LESSON,
                        example=lambda d=dtype: (2, 32, (_values(45, d), np.zeros(2, d))))
        register_kernel(f"primitives.hillis_steele_scan_kernel[32,{dtype}]",
                        f"void({sig_t}[::1], {sig_t}[::1], {sig_t}[::1])",
                        lambda d=dtype: hillis_steele_scan_kernel(32, d).py_func, LESSON,
                        example=lambda d=dtype: (2, 32, (_values(45, d), np.zeros(45, d), np.zeros(2, d))))
        for padded in (False, True):
            register_kernel(f"primitives.blelloch_scan_kernel[32,{dtype},padded={padded}]",
                            f"void({sig_t}[::1], {sig_t}[::1], {sig_t}[::1])",
                            lambda d=dtype, p=padded: blelloch_scan_kernel(32, d, p).py_func, LESSON,
                            example=lambda d=dtype: (2, 32, (_values(100, d), np.zeros(100, d), np.zeros(2, d))))
    register_kernel("primitives.segmented_scan_kernel[32]",
                    "void(float32[::1], int32[::1], float32[::1], int32[::1])",
                    lambda: segmented_scan_kernel(32).py_func, LESSON,
                    example=lambda: (2, 32, (_values(45), (np.arange(45) % 11 == 0).astype(np.int32),
                                             np.zeros(45, np.float32), np.zeros(45, np.int32))))
    register_kernel("primitives.histogram_private_kernel[10]", "void(int32[::1], int32[::1])",
                    lambda: histogram_private_kernel(10).py_func, LESSON, example=_histogram_example)


_register()
