"""The kernels of ``lessons/00_seeing_the_gpu.ipynb``: small bugs and their fixes.

Each defect the lesson shows comes as a pair: a kernel with the bug (named after it,
not registered as a reference kernel) and its fixed twin (registered, with an example
launch, so the checker keeps it clean). The performance pairs (coalescing, bank
conflicts, divergence) are both correct; they differ in what the profiler counts.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, float32

from ..registry import course_kernel, register_kernel

__all__ = [
    "FULL_MASK",
    "TILE",
    "TILE_PADDED",
    "branch_per_lane_kernel",
    "branch_per_warp_kernel",
    "copy_strided_kernel",
    "histogram_atomic_kernel",
    "histogram_racy_kernel",
    "reverse_early_exit_kernel",
    "reverse_kernel",
    "transpose_padded_kernel",
    "transpose_tile_kernel",
    "warp_sum_kernel",
    "whoami_kernel",
]

LESSON = "lessons/00_seeing_the_gpu.ipynb"
FULL_MASK = 0xFFFFFFFF
#: Side of the shared-memory tile of the transpose kernels (one warp per tile row).
TILE = 32
#: Row length of the padded tile: one extra column shifts each row by one bank.
TILE_PADDED = TILE + 1


def _example_histogram():
    data = np.random.default_rng(0).integers(0, 8, size=100).astype(np.int64)
    return 4, 32, (data, np.zeros(8, np.int64))


def _example_vector():
    x = np.arange(45, dtype=np.float32)
    return 2, 32, (x, np.zeros_like(x))


def _example_matrix():
    a = np.arange(TILE * TILE, dtype=np.float32).reshape(TILE, TILE)
    return 1, (TILE, TILE), (a, np.zeros_like(a))


@course_kernel("void(int32[:, ::1])", lesson=LESSON,
               example=lambda: (2, 48, (np.zeros((96, 4), np.int32),)))
def whoami_kernel(out):
    """Row ``i`` of ``out`` (int32, shape (threads, 4)) gets block, thread, warp and lane of thread i."""
    i = cuda.grid(1)
    if i < out.shape[0]:
        t = cuda.threadIdx.x
        out[i, 0] = cuda.blockIdx.x
        out[i, 1] = t
        out[i, 2] = t // 32
        out[i, 3] = cuda.laneid


@cuda.jit
def histogram_racy_kernel(data, bins):
    """BUG: ``bins[v] += 1`` from many threads at once (read, add, write: updates get lost)."""
    i = cuda.grid(1)
    if i < data.size:
        bins[data[i]] += 1



@course_kernel("void(int64[::1], int64[::1])", lesson=LESSON, example=_example_histogram)
def histogram_atomic_kernel(data, bins):
    """Count ``data`` (int64, values in [0, bins.size)) into ``bins`` (int64) with atomic adds."""
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(bins, data[i], 1)


@cuda.jit
def reverse_early_exit_kernel(x, out):
    """BUG: threads past the end return before ``syncthreads``, which the others then wait at."""
    s = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i >= x.size:
        return
    s[t] = x[i]
    cuda.syncthreads()
    out[i] = s[cuda.blockDim.x - 1 - t]


@course_kernel("void(float32[::1], float32[::1])", lesson=LESSON, example=_example_vector)
def reverse_kernel(x, out):
    """Reverse each block-sized chunk of ``x`` (float32, blocks of at most 32 threads) into ``out``.

    Every thread reaches the barrier; only the loads and stores are guarded. The last,
    partial chunk is reversed as if padded with zeros to the block size.
    """
    s = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else float32(0.0)
    cuda.syncthreads()
    if i < x.size:
        out[i] = s[cuda.blockDim.x - 1 - t]


@course_kernel("void(float32[::1], float32[::1], int64)", lesson=LESSON,
               example=lambda: (2, 32, (np.arange(64 * 3, dtype=np.float32), np.zeros(64, np.float32), 3)))
def copy_strided_kernel(x, out, stride):
    """Copy every ``stride``-th element of ``x`` into ``out`` (float32): stride 1 is coalesced, larger strides waste sectors."""
    i = cuda.grid(1)
    if i < out.size and i * stride < x.size:
        out[i] = x[i * stride]


def _transpose(name, row_length):
    """Transpose through a TILE x ``row_length`` shared tile (TILE: conflicts, TILE_PADDED: none)."""

    def transpose(a, out):
        tile = cuda.shared.array((TILE, row_length), float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        x = cuda.blockIdx.x * TILE + tx
        y = cuda.blockIdx.y * TILE + ty
        if y < a.shape[0] and x < a.shape[1]:
            tile[ty, tx] = a[y, x]  # coalesced read of a row of a
        cuda.syncthreads()
        x = cuda.blockIdx.y * TILE + tx
        y = cuda.blockIdx.x * TILE + ty
        if y < out.shape[0] and x < out.shape[1]:
            # The warp reads a column of the tile: lane tx reads word tx * row_length + ty,
            # all in one bank when row_length is 32, in 32 different banks when it is 33.
            out[y, x] = tile[tx, ty]

    transpose.__name__ = transpose.__qualname__ = name
    return transpose


#: Transpose ``a`` (float32, (n, n)) into ``out`` through a TILE x TILE shared tile: the
#: column reads are 32-way bank conflicts. Launch with blocks of (TILE, TILE) threads.
transpose_tile_kernel = cuda.jit(_transpose("transpose_tile_kernel", TILE))
#: The same with the tile padded to TILE x (TILE + 1): no bank conflict.
transpose_padded_kernel = cuda.jit(_transpose("transpose_padded_kernel", TILE_PADDED))
for _name, _kernel in (("transpose_tile_kernel", transpose_tile_kernel),
                       ("transpose_padded_kernel", transpose_padded_kernel)):
    register_kernel(f"sim.{_name}", "void(float32[:, ::1], float32[:, ::1])", (lambda k=_kernel: k.py_func),
                    LESSON, example=_example_matrix)


def _branchy(name, group):
    """Half the threads take one branch, half the other, by groups of ``group`` consecutive threads."""

    def branchy(x, out):
        i = cuda.grid(1)
        if i < x.size:
            v = x[i]
            if (i // group) % 2 == 0:
                for _ in range(8):
                    v = v * float32(0.5) + float32(1.0)
            else:
                for _ in range(8):
                    v = v * float32(2.0) - float32(1.0)
            out[i] = v

    branchy.__name__ = branchy.__qualname__ = name
    return branchy


#: Even threads take one branch, odd threads the other: every warp runs both at half width.
branch_per_lane_kernel = cuda.jit(_branchy("branch_per_lane_kernel", 1))
#: The same work, the branch decided per warp (groups of 32 threads): no warp diverges.
branch_per_warp_kernel = cuda.jit(_branchy("branch_per_warp_kernel", 32))
for _name, _kernel in (("branch_per_lane_kernel", branch_per_lane_kernel),
                       ("branch_per_warp_kernel", branch_per_warp_kernel)):
    register_kernel(f"sim.{_name}", "void(float32[::1], float32[::1])", (lambda k=_kernel: k.py_func), LESSON,
                    example=_example_vector)


@course_kernel("void(float32[::1], float32[::1])", lesson=LESSON,
               example=lambda: (2, 64, (np.arange(128, dtype=np.float32), np.zeros(1, np.float32))))
def warp_sum_kernel(x, total):
    """Add ``x`` (float32, size a multiple of 32 covered by the grid) into ``total[0]``.

    Each warp sums its 32 values with five shuffles, then lane 0 adds the warp's sum
    with one atomic: 32 times fewer atomics than one per element.
    """
    i = cuda.grid(1)
    v = x[i]
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(total, 0, v)
