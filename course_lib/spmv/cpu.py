"""Fast CPU baseline: CSR SpMV with Numba ``parallel=True`` (rows split over the cores).

This is the CPU side of every "GPU vs CPU" figure of Unit 2. ``scipy.sparse`` runs on
one core; this loop runs the same thread-per-row algorithm as the CSR scalar kernel,
with a ``prange`` over rows, and accumulates in the value dtype like the kernels.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["spmv_cpu"]


@numba.njit(parallel=True, fastmath=True, cache=True, nogil=True)
def _csr_spmv(indptr, indices, data, x, y):
    for row in numba.prange(y.shape[0]):
        total = y.dtype.type(0)
        for k in range(indptr[row], indptr[row + 1]):
            total += data[k] * x[indices[k]]
        y[row] = total


def spmv_cpu(indptr, indices, data, x):
    """``y = A @ x`` for a CSR matrix, all cores.

    Parameters
    ----------
    indptr : ndarray of shape (R + 1,), int32
        Row pointers.
    indices : ndarray of shape (Z,), int32
        Column index of each non-zero.
    data : ndarray of shape (Z,), float32 or float64
        Values.
    x : ndarray of shape (C,), same dtype as ``data``

    Returns
    -------
    ndarray of shape (R,), dtype of ``data``
    """
    y = np.empty(len(indptr) - 1, dtype=data.dtype)
    _csr_spmv(indptr, indices, data, x, y)
    return y
