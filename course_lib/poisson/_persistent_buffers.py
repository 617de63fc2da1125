"""What the one-launch clone (:class:`~course_lib.poisson.api.PersistentSolver`) sets up once per crop shape:
device buffers, the host staging array, the kernel and its launch, pooled per host thread."""

from __future__ import annotations

import threading

import numpy as np

from .. import device

__all__ = ["POOL_SHAPES", "band_plan", "release_buffers"]

#: Per host thread (a grader clones in threads): crop shape -> :class:`_PersistentBuffers`.
_POOL = threading.local()
#: Crop shapes a thread's pool keeps (the oldest is dropped beyond this).
POOL_SHAPES = 4
#: Threads per block of the banded layout in the simulator (every thread at a barrier costs time there).
BANDED_SIM_THREADS = 8


def _cooperative_blocks(kernel, block, signature=None):
    """Most blocks of ``block`` threads a cooperative launch of ``kernel`` may have (all resident at once)."""
    from .kernels import COOPERATIVE_SIG

    signature = COOPERATIVE_SIG if signature is None else signature
    if device.is_simulator():
        return kernel.overloads[signature].max_cooperative_grid_blocks(block)
    return kernel.compile(signature).max_cooperative_grid_blocks(block)


def _sm_count():
    """SMs of the current GPU (in the simulator: None, its cooperative limit decides alone)."""
    if device.is_simulator():
        return None
    from numba import cuda

    return cuda.get_current_device().MULTIPROCESSOR_COUNT


def band_plan(h, w, sms=None, threads=None):
    """Rows per band, bands, shared-memory floats and threads of the banded layout for an h x w crop.

    The bands are as thin as it takes to give every SM one block (3 channels x bands <= ``sms``), and
    never thinner than one row; a block has a thread per entry of its band (rounded up to a warp,
    at most 1024), each thread keeping one or a few pixels in registers.

    Parameters
    ----------
    h, w : int
        The crop.
    sms : int, optional
        Blocks to spread over (default: the GPU's SMs; in the simulator, its cooperative limit).
    threads : int, optional
        Threads per block (default as above; :data:`BANDED_SIM_THREADS` in the simulator).

    Returns
    -------
    band_rows, bands, capacity, threads : int

    Raises
    ------
    ValueError
        If even a band of one row (with its two halo rows) does not fit 48 KB of shared memory.
    """
    pw = w + 2
    if 3 * pw > 12288:
        raise ValueError(f"a {h} x {w} crop is too wide for the banded layout (3 rows of W + 2 floats must fit "
                         "48 KB of shared memory): use layout='grid' (seamless_clone's method='persistent' picks it)")
    if sms is None:
        sms = _sm_count()
    if sms is None:  # the simulator: as many blocks as it lets a cooperative grid have
        from ..sim import max_cooperative_grid_blocks

        sms = max_cooperative_grid_blocks(BANDED_SIM_THREADS if threads is None else threads)
    band_rows = max(1, -(-h // max(1, sms // 3)))  # at most sms // 3 bands: 3 channels x bands <= sms
    band_rows = min(band_rows, 12288 // pw - 2)  # the widest crops: the rows that fit (more blocks per SM)
    bands = -(-h // band_rows)
    if threads is None:
        threads = BANDED_SIM_THREADS if device.is_simulator() else min(1024, -(-band_rows * pw // 32) * 32)
    capacity = min(12288, -(-(band_rows + 2) * pw // 256) * 256)  # size classes of 256 floats: fewer kernels
    return band_rows, bands, capacity, threads


class _PersistentBuffers:
    """Device buffers, host staging array and launch of the one-launch clone of one crop shape (``key``: its
    height, width, layout, and the shared layout's capacity and threads; ``grid_block``: the threads per block
    of the grid layout)."""

    def __init__(self, key, grid_block):
        from numba import cuda

        from . import kernels

        h, w, layout, capacity, threads = key
        self.packed = np.empty((h, w, kernels.PACKED_CHANNELS), np.uint8)
        self.d_packed = None  # allocated by the first upload
        self.d_out = cuda.device_array((h, w, 3), np.uint8)
        self.d_planes = cuda.device_array((3, h, w), np.float32)
        self.work = ()
        if layout == "shared":
            self.kernel, self.grid, self.block = kernels.jacobi_persistent_kernel(capacity, threads), 3, threads
        elif layout == "bands":
            plan = band_plan(h, w)
            while True:  # fewer, thicker bands until the grid is co-resident (a cooperative launch's rule)
                band_rows, bands, capacity, threads = plan
                self.kernel, self.block = kernels.jacobi_banded_kernel(capacity, threads), threads
                limit = _cooperative_blocks(self.kernel, threads, kernels.BANDED_SIG)
                if 3 * bands <= limit:
                    break
                plan = band_plan(h, w, sms=limit, threads=threads)
                if limit < 3 or plan[1] >= bands:
                    raise ValueError(f"a {h} x {w} crop needs {3 * bands} blocks of the banded layout, more than a "
                                     f"cooperative launch may have ({limit}): use layout='grid' (seamless_clone's "
                                     "method='persistent' picks it)")
            self.grid = 3 * bands
            self.work = (np.int32(band_rows), cuda.device_array((2, 3, bands, 2, w), np.float32))
        else:
            self.kernel, self.block = kernels.jacobi_cooperative_kernel, grid_block
            self.grid = max(1, min(-(-3 * h * w // self.block), _cooperative_blocks(self.kernel, self.block)))
            self.work = (cuda.device_array((h, w), np.uint8),) + tuple(
                cuda.device_array((3, h, w), np.float32) for _ in range(3))


def _persistent_buffers() -> dict:
    """This thread's pool of one-launch clone buffers (insertion ordered; at most :data:`POOL_SHAPES`)."""
    pool = getattr(_POOL, "buffers", None)
    if pool is None:
        pool = _POOL.buffers = {}
    return pool


def release_buffers() -> None:
    """Free this thread's pooled buffers of :func:`~course_lib.poisson.seamless_clone`'s one-launch clone."""
    _POOL.buffers = {}
