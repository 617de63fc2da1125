"""The device arrays of a batch of cells and the recursive prefix sum over them, shared by the compacting
simulators (:mod:`course_lib.cellsim.api`'s ``"compact"`` and :mod:`course_lib.cellsim._pooled`)."""

from __future__ import annotations

import numpy as np

from .. import device
from .._validate import check_block, check_int, check_positive_int
from .model import frame_bytes

__all__ = ["BatchArrays", "exclusive_scan"]


def _grid(n, block):
    """Blocks of ``block`` threads that cover ``n`` threads (at least one: a launch of no blocks is refused)."""
    return max(1, -(-n // block))


class BatchArrays:
    """The device arrays of one batch of cells of one generation, with its scan scratch.

    Parameters
    ----------
    capacity : int
        Cells the batch can hold (>= 1).
    block : int
        Threads per block of the prefix sum (sizes the per-level block sums in ``scan``).

    Attributes
    ----------
    ids : device array of shape (capacity,), int64
    phis, taus, division_times : device arrays of shape (capacity,), float64
    types, children, offsets : device arrays of shape (capacity,), int32
        Cell types, daughters per cell (0 or 2) and their exclusive prefix sum.
    scan : list of (device array, device array), int32
        Block sums and their offsets, one pair per level of the recursive scan
        (:func:`exclusive_scan`'s ``scratch``).
    nbytes : int
        Device bytes, as :func:`~course_lib.cellsim.model.frame_bytes` counts them.
    """

    def __init__(self, capacity, block):
        from numba import cuda

        capacity = check_positive_int(capacity, "capacity")
        block = check_block(block, "block")
        if block < 2:
            raise ValueError("block must be at least 2 (the prefix sum needs two threads per block)")
        self.capacity = capacity
        self.ids = cuda.device_array(capacity, np.int64)
        self.phis = cuda.device_array(capacity, np.float64)
        self.taus = cuda.device_array(capacity, np.float64)
        self.types = cuda.device_array(capacity, np.int32)
        self.children = cuda.device_array(capacity, np.int32)
        self.offsets = cuda.device_array(capacity, np.int32)
        self.division_times = cuda.device_array(capacity, np.float64)
        self.scan = []  # per recursion level: block sums and their offsets
        n = capacity
        while True:
            n = -(-n // block)
            self.scan.append((cuda.device_array(n, np.int32), cuda.device_array(n, np.int32)))
            if n <= 1:
                break
        self.nbytes = frame_bytes(capacity, block)

    @property
    def cells(self):
        return self.ids, self.phis, self.taus, self.types


def exclusive_scan(values, n, out, scratch, block, level=0, total_out=None):
    """Exclusive prefix sum of ``values[:n]`` (int32 device array) into ``out``; returns the device
    array whose element 0 is the total.

    ``scratch`` is a list of (block sums, their offsets) pairs, one per recursion level, each
    at least ``ceil(n / block**(level + 1))`` long (a :class:`BatchArrays` holds them).
    ``total_out`` (int32, length >= 1), if given, receives the total from the last level's
    launch itself, e.g. a mapped host array that the host reads without a copy.
    """
    return _exclusive_scan(values, check_int(n, "n", minimum=0), out, scratch, check_block(block, "block"), level,
                           total_out)


def _exclusive_scan(values, n, out, scratch, block, level=0, total_out=None):
    """:func:`exclusive_scan` on checked ``n`` and ``block`` (the simulators' inner loops)."""
    from . import kernels

    n_blocks = _grid(n, block)
    sums, sums_offsets = scratch[level]
    if n_blocks == 1 and total_out is not None:
        sums = total_out
    kernels.scan_block_kernel(block)[n_blocks, block](values, n, out, sums)
    if n_blocks == 1:
        return sums
    total = _exclusive_scan(sums, n_blocks, sums_offsets, scratch, block, level + 1, total_out)
    kernels.add_block_offsets_kernel[n_blocks, block](out, n, sums_offsets)
    return total


def _release_freed_memory():
    """On a GPU, free device memory released by Python at once (Numba defers deallocations)."""
    if device.is_gpu():
        from numba import cuda

        cuda.current_context().deallocations.clear()
