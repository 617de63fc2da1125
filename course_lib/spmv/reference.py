"""Trusted reference for SpMV: ``scipy.sparse`` in float64 (used by tests and graders)."""

from __future__ import annotations

import numpy as np
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
    A64 = sp.csr_matrix(A, dtype=np.float64)
    return np.asarray(A64 @ np.asarray(x, dtype=np.float64)).ravel()
