"""Fast CPU baseline: CSR SpMV compiled by Numba, rows split over the cores.

This is the CPU side of every "GPU vs CPU" figure of Unit 2. It runs the same
thread-per-row algorithm as the CSR scalar kernel, accumulating in the value dtype like
the kernels. Indices are read as unsigned so that Numba need not check for negative
(wrap-around) indices in the inner loop; that check alone made it twice slower than
``scipy.sparse``, which runs the same loop in C++ on one core.
"""

from __future__ import annotations

import numba
import numpy as np

from .._validate import check_array

__all__ = ["PARALLEL_MIN_NNZ", "spmv_cpu"]

#: Below this many non-zeros, starting the worker threads costs more than it saves.
PARALLEL_MIN_NNZ = 200_000


@numba.njit(fastmath=True, cache=True, nogil=True)
def _csr_spmv_serial(indptr, indices, data, x, y):
    for row in range(y.shape[0]):
        total = y.dtype.type(0)
        for k in range(np.uintp(indptr[row]), np.uintp(indptr[row + 1])):
            total += data[k] * x[np.uintp(indices[k])]
        y[row] = total


@numba.njit(parallel=True, fastmath=True, cache=True, nogil=True)
def _csr_spmv_parallel(indptr, indices, data, x, y):
    for row in numba.prange(y.shape[0]):
        total = y.dtype.type(0)
        for k in range(np.uintp(indptr[row]), np.uintp(indptr[row + 1])):
            total += data[k] * x[np.uintp(indices[k])]
        y[row] = total


def spmv_cpu(indptr, indices, data, x, parallel=None):
    """``y = A @ x`` for a CSR matrix on the CPU.

    Parameters
    ----------
    indptr : ndarray of shape (R + 1,), int32
        Row pointers.
    indices : ndarray of shape (Z,), int32
        Column index of each non-zero (in range: they are not checked here).
    data : ndarray of shape (Z,), float32 or float64
        Values.
    x : ndarray of shape (C,), same dtype as ``data``
    parallel : bool, optional
        Split the rows over Numba's threads. Default: when there is more than one
        thread and at least :data:`PARALLEL_MIN_NNZ` non-zeros.

    Returns
    -------
    ndarray of shape (R,), dtype of ``data``
    """
    indptr = check_array(indptr, "indptr", ndim=1, dtype=(np.int32, np.int64), allow_empty=False)
    data = check_array(data, "data", ndim=1, dtype=(np.float32, np.float64), finite=True)
    indices = check_array(indices, "indices", ndim=1, dtype=(np.int32, np.int64))
    if indices.shape != data.shape:
        raise ValueError(f"indices and data must have the same length (one column per value), got indices "
                         f"{indices.shape[0]} and data {data.shape[0]}")
    x = check_array(x, "x", ndim=1, dtype=(np.float32, np.float64), finite=True)
    if x.dtype != data.dtype:
        raise ValueError(f"data and x must have the same dtype, got data {data.dtype} and x {x.dtype}")
    # The loops index without bounds checks: a bad structure must not reach them.
    if indptr[0] != 0 or indptr[-1] != indices.shape[0] or np.any(np.diff(indptr) < 0):
        raise ValueError(f"indptr must rise from 0 to len(indices) = {indices.shape[0]}, "
                         f"got {indptr[0]} .. {indptr[-1]}")
    if indices.size and (indices.min() < 0 or indices.max() >= x.shape[0]):
        raise ValueError(f"indices must be column numbers in [0, {x.shape[0]}) (the length of x), "
                         f"got {indices.min()} .. {indices.max()}")
    if parallel is not None and not isinstance(parallel, (bool, np.bool_)):
        raise ValueError(f"parallel must be True, False or None, got {parallel!r}")
    y = np.empty(len(indptr) - 1, dtype=data.dtype)
    if parallel is None:
        parallel = numba.get_num_threads() > 1 and data.size >= PARALLEL_MIN_NNZ
    (_csr_spmv_parallel if parallel else _csr_spmv_serial)(indptr, indices, data, x, y)
    return y
