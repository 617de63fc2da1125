"""The input check shared by the modules of Unit 2: :func:`as_csr` (canonical CSR, int32 indices).

:mod:`~course_lib.spmv.api` re-exports it; :mod:`~course_lib.spmv.model` and
:mod:`~course_lib.spmv.reference` use it too.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._validate import check_dtype, describe

__all__ = ["as_csr"]


def as_csr(A, dtype=None):
    """Validate a SciPy sparse matrix and return canonical CSR with int32 indices.

    Parameters
    ----------
    A : scipy sparse matrix or array of shape (R, C)
        Any format; real values (integers and booleans are converted to float64).
    dtype : float32 or float64, optional
        Value type wanted; default: float32 stays float32, float16 becomes float32,
        everything else float64.

    Returns
    -------
    scipy.sparse.csr_matrix
        Sorted indices, duplicates summed, int32 ``indptr`` and ``indices``.

    Raises
    ------
    ValueError
        Not a SciPy sparse matrix, not 2-D, complex or non-numeric values, or more
        non-zeros than int32 indices can address.
    """
    if not sp.issparse(A):
        raise ValueError(f"A must be a SciPy sparse matrix or array (any format), got {describe(A)}; "
                         "wrap a dense array with scipy.sparse.csr_matrix(...)")
    if A.ndim != 2:
        raise ValueError(f"A must be 2-D, got {A.ndim} dimensions")
    if A.dtype.kind not in "biuf":
        raise ValueError(f"A must hold real numbers, got dtype {A.dtype}")
    if dtype is None:
        dtype = np.float32 if A.dtype in (np.float16, np.float32) else np.float64
    dtype = check_dtype(dtype)
    csr = sp.csr_matrix(A, dtype=dtype, copy=True)
    csr.sum_duplicates()  # also sorts the column indices
    if not np.isfinite(csr.data).all():
        raise ValueError("A must hold finite values, got NaN or infinity in its stored entries")
    if csr.nnz >= 2**31 or max(csr.shape) >= 2**31:
        raise ValueError(f"A has {csr.nnz} non-zeros and shape {csr.shape}: too large for int32 indices")
    csr.indptr = csr.indptr.astype(np.int32, copy=False)
    csr.indices = csr.indices.astype(np.int32, copy=False)
    return csr
