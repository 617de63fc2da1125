"""Trusted reference for SpMV: ``scipy.sparse`` in float64 (used by tests and graders)."""

from __future__ import annotations

import numpy as np

from .._validate import check_array
import scipy.sparse as sp

__all__ = ["spmv_reference"]


def spmv_reference(A, x):
    """``y = A @ x`` computed by SciPy in float64.

    Parameters
    ----------
    A : scipy sparse matrix or array of shape (R, C)
        Any format; real values.
    x : array_like of shape (C,)

    Returns
    -------
    ndarray of shape (R,), float64
    """
    from ._checks import as_csr

    A64 = as_csr(A, np.float64)
    return _spmv_checked(A64, check_array(x, "x", shape=(A64.shape[1],), dtype="biuf", finite=True))


def _spmv_checked(csr, x):
    """:func:`spmv_reference` of a checked CSR matrix and a checked ``x`` of its column count (for
    :func:`course_lib.spmv.spmv`, which checks them once)."""
    return np.asarray(csr.astype(np.float64, copy=False) @ x.astype(np.float64)).ravel()
