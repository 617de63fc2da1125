"""Fast CPU baseline: CSR SpMV compiled by Numba, on one core or split over the cores.

This is the CPU side of every "GPU vs CPU" figure of Unit 2. It runs the same
thread-per-row algorithm as the CSR scalar kernel, accumulating in the value dtype like
the kernels.

Two ways in, as with ``scipy.sparse``:

- :class:`CpuSpmv` (or ``prepare(A, "cpu")``) checks a matrix's structure and values
  once, keeps its own contiguous copy, and each product then checks only ``x``; this is
  what ``csr_matrix(...)`` followed by ``A @ x`` does, and what repeated products (an
  iterative solver, the benchmark) should use;
- :func:`spmv_cpu` takes the raw CSR arrays and checks all of them on every call.

The checks are one compiled pass, not several NumPy ones. Indices are read as unsigned
so that Numba need not test for negative (wrap-around) indices in the inner loop; the
checks make that safe.
"""

from __future__ import annotations

import numba
import numpy as np

from .._docs import fill_doc
from .._validate import check_array

__all__ = ["PARALLEL_MIN_NNZ", "CpuSpmv", "spmv_cpu"]

#: Below this many non-zeros the default is one core: a product then takes a few ms at most, and the
#: threads' start and join (and, on a machine busy with other work, waiting for a descheduled thread
#: at the join) cost more than the split saves.
PARALLEL_MIN_NNZ = 1_000_000

#: Floating-point liberty of the product loops: fused multiply-adds only (a row's sum keeps its order, so
#: both modes give the same bits). Never for the checks, which must see NaN and infinity.
_FAST = {"contract"}

# Problems _first_problem finds, by code; each message is completed with where it was found.
_OK, _BAD_START, _FALLS, _BAD_END, _BAD_COLUMN, _NOT_FINITE = range(6)


# The checks below first scan without a branch per value, which the compiler vectorises, and
# only look for where the problem is when there is one (an early exit would stop the
# vectorising). There ``v - v != 0`` stands for "not finite" (inf - inf and NaN - NaN are NaN):
# unlike ``np.isfinite``, it vectorises.


@numba.njit(cache=True, nogil=True)
def _first_problem(indptr, indices, data, n_cols):
    """``(code, position)`` of the first structural or value problem of a CSR matrix, ``(0, 0)`` if none.

    The product loops read without bounds checks, so everything they index must be in
    range. ``indices`` and ``data`` have the same length (checked by the caller).
    """
    n_rows = indptr.shape[0] - 1
    if indptr[0] != 0:
        return _BAD_START, 0
    falls = False
    for row in range(n_rows):
        falls |= indptr[row + 1] < indptr[row]
    if falls:
        for row in range(n_rows):
            if indptr[row + 1] < indptr[row]:
                return _FALLS, row
    if indptr[n_rows] != indices.shape[0]:
        return _BAD_END, n_rows
    columns = np.uintp(n_cols)
    bad = False
    for k in range(indices.shape[0]):
        # One unsigned comparison tests both ends: a negative index wraps to a huge one.
        bad |= (np.uintp(indices[k]) >= columns) | ((data[k] - data[k]) != 0)
    if bad:
        for k in range(indices.shape[0]):
            if indices[k] < 0 or indices[k] >= n_cols:
                return _BAD_COLUMN, k
            if not np.isfinite(data[k]):
                return _NOT_FINITE, k
    return _OK, 0


@numba.njit(cache=True, nogil=True)
def _first_non_finite(x):
    """Index of the first NaN or infinity of ``x``, -1 if none."""
    bad = False
    for i in range(x.shape[0]):
        bad |= (x[i] - x[i]) != 0
    if bad:
        for i in range(x.shape[0]):
            if not np.isfinite(x[i]):
                return i
    return -1


@numba.njit(fastmath=_FAST, cache=True, nogil=True, inline="always")
def _row(indices, data, x, start, end, zero):
    """One row's product with ``x``: its entries ``start <= k < end`` (uintp), summed from ``zero`` (0 in the
    result's dtype).

    Inlined where it is called (Numba inlines it before LLVM sees the loop): a call would keep the
    compiler from knowing that storing into ``y`` changes none of the inputs, and cost about 20 %
    on a 5-point stencil.
    """
    one, two = np.uintp(1), np.uintp(2)
    # Two partial sums: a row's additions form two chains of half the length, which the core
    # overlaps (1.2x to 1.3x on 5-point stencils against one chain, the loop SciPy runs).
    even = zero
    odd = zero
    k = start
    while k + one < end:
        even += data[k] * x[np.uintp(indices[k])]
        odd += data[k + one] * x[np.uintp(indices[k + one])]
        k += two
    if k < end:
        even += data[k] * x[np.uintp(indices[k])]
    return even + odd


@numba.njit(fastmath=_FAST, cache=True, nogil=True)
def _rows(indptr, indices, data, x, y, first, last):
    """``y[r] = A[r] @ x`` for the rows ``first <= r < last`` (one chunk of :func:`_spmv_parallel`)."""
    zero, end = y.dtype.type(0), np.uintp(indptr[first])
    for row in range(first, last):
        start, end = end, np.uintp(indptr[row + 1])
        y[row] = _row(indices, data, x, start, end, zero)


@numba.njit(fastmath=_FAST, cache=True, nogil=True)
def _spmv_serial(indptr, indices, data, x):
    y = np.empty(indptr.shape[0] - 1, dtype=data.dtype)
    zero, end = y.dtype.type(0), np.uintp(indptr[0])
    for row in range(y.shape[0]):
        start, end = end, np.uintp(indptr[row + 1])
        y[row] = _row(indices, data, x, start, end, zero)
    return y


@numba.njit(parallel=True, fastmath=_FAST, cache=True, nogil=True)
def _spmv_parallel(indptr, indices, data, x, n_chunks):
    y = np.empty(indptr.shape[0] - 1, dtype=data.dtype)
    # Chunks of equal non-zero counts, not of equal row counts: on a power-law matrix a few
    # rows hold a large share of the work.
    targets = np.linspace(0, indices.shape[0], n_chunks + 1)
    bounds = np.searchsorted(indptr, targets)
    bounds[0], bounds[-1] = 0, y.shape[0]
    for c in numba.prange(n_chunks):
        _rows(indptr, indices, data, x, y, min(bounds[c], y.shape[0]), min(bounds[c + 1], y.shape[0]))
    return y


def _check_parallel(parallel):
    if parallel is not None and not isinstance(parallel, (bool, np.bool_)):
        raise ValueError(f"parallel must be True, False or None, got {parallel!r}")


def _raise_problem(code, where, indptr, indices, data, n_cols, columns_are):
    if code == _BAD_START:
        raise ValueError(f"indptr must start at 0, got indptr[0] = {indptr[0]}")
    if code == _FALLS:
        raise ValueError(f"indptr must not decrease (row {where} would end before it starts), got "
                         f"indptr[{where}] = {indptr[where]} > indptr[{where + 1}] = {indptr[where + 1]}")
    if code == _BAD_END:
        raise ValueError(f"indptr must rise from 0 to len(indices) = {indices.shape[0]}, got "
                         f"{indptr[0]} .. {indptr[-1]}")
    if code == _BAD_COLUMN:
        raise ValueError(f"indices must be column numbers in [0, {n_cols}) ({columns_are}), got "
                         f"{indices[where]} at index {where}")
    raise ValueError(f"data must hold finite values, got {data[where]} at index ({where},)")


def _check_csr(indptr, indices, data, n_cols, columns_are):
    """The CSR arrays as arrays of the accepted dtypes, their structure and values checked."""
    indptr = check_array(indptr, "indptr", ndim=1, dtype=(np.int32, np.int64), allow_empty=False)
    indices = check_array(indices, "indices", ndim=1, dtype=(np.int32, np.int64))
    data = check_array(data, "data", ndim=1, dtype=(np.float32, np.float64))
    if indices.shape != data.shape:
        raise ValueError(f"indices and data must have the same length (one column per value), got indices "
                         f"{indices.shape[0]} and data {data.shape[0]}")
    code, where = _first_problem(indptr, indices, data, n_cols)
    if code != _OK:
        _raise_problem(code, where, indptr, indices, data, n_cols, columns_are)
    return indptr, indices, data


def _check_x(x, n_cols, dtype):
    """``x`` as a contiguous array of ``dtype`` and length ``n_cols``, finite."""
    if not (type(x) is np.ndarray and x.dtype == dtype and x.shape == (n_cols,) and x.flags.c_contiguous):
        x = check_array(x, "x", ndim=1, dtype=(np.float32, np.float64))
        if x.dtype != dtype:
            raise ValueError(f"data and x must have the same dtype, got data {dtype} and x {x.dtype}")
        if x.shape[0] != n_cols:
            raise ValueError(f"x must have shape ({n_cols},) to match the matrix's {n_cols} columns, "
                             f"got shape {x.shape}")
        x = np.ascontiguousarray(x)
    bad = _first_non_finite(x)
    if bad >= 0:
        raise ValueError(f"x must hold finite values, got {x[bad]} at index ({bad},)")
    return x


def _product(indptr, indices, data, x, parallel):
    if parallel is None:
        parallel = numba.get_num_threads() > 1 and data.shape[0] >= PARALLEL_MIN_NNZ
    if parallel:
        return _spmv_parallel(indptr, indices, data, x, numba.get_num_threads())
    return _spmv_serial(indptr, indices, data, x)


#: The CSR arrays :class:`CpuSpmv` and :func:`spmv_cpu` take, documented once (:func:`course_lib._docs.fill_doc`).
_CSR_PARAMETERS = """
indptr : ndarray of shape (R + 1,), int32 or int64
    Row pointers: rising from 0 to Z.
indices : ndarray of shape (Z,), int32 or int64
    Column of each non-zero, in [0, C).
data : ndarray of shape (Z,), float32 or float64
    Values, finite.
"""


@fill_doc(csr=_CSR_PARAMETERS)
class CpuSpmv:
    """A CSR matrix checked once, ready for repeated products ``A @ x`` on the CPU.

    The constructor checks the structure and the values (one compiled pass) and keeps a
    contiguous copy of the arrays, so that changing the caller's arrays afterwards cannot
    break it; each product then checks only ``x``. ``prepare(A, "cpu")`` builds one
    from a SciPy matrix.

    Parameters
    ----------
    {csr}
    shape : tuple of int
        (R, C).

    Attributes
    ----------
    method : str
        ``"cpu"`` (as :class:`~course_lib.spmv.api.DeviceSpmv` names its kernel).
    shape : tuple of int
    dtype : numpy.dtype
    nnz : int
    parallel : bool
        Whether a product without ``parallel=`` splits the rows over Numba's threads:
        with more than one thread and at least :data:`PARALLEL_MIN_NNZ` non-zeros.

    Examples
    --------
    >>> import numpy as np
    >>> from course_lib.spmv import CpuSpmv, laplacian
    >>> A = laplacian("5pt", 3)
    >>> op = CpuSpmv(A.indptr, A.indices, A.data, A.shape)
    >>> op(np.ones(9, np.float32))[:3]
    array([2., 1., 2.], dtype=float32)
    """

    method = "cpu"

    def __init__(self, indptr, indices, data, shape):
        if not (isinstance(shape, tuple) and len(shape) == 2
                and all(isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_)) and s >= 0
                        for s in shape)):
            raise ValueError(f"shape must be a pair of non-negative integers (rows, columns), got {shape!r}")
        n_rows, n_cols = int(shape[0]), int(shape[1])
        indptr, indices, data = _check_csr(indptr, indices, data, n_cols, "the number of columns")
        if indptr.shape[0] != n_rows + 1:
            raise ValueError(f"indptr must have shape ({n_rows + 1},) for {n_rows} rows, got shape {indptr.shape}")
        self._keep(*(np.array(a, order="C", copy=True) for a in (indptr, indices, data)), n_rows, n_cols)

    @classmethod
    def _of_checked(cls, csr):
        """A :class:`CpuSpmv` of a SciPy CSR matrix :func:`~course_lib.spmv.as_csr` checked (for
        ``prepare(A, "cpu")``, which checks it once): the structure is not checked again."""
        op = cls.__new__(cls)
        # as_csr's arrays are its own copies: kept as they are.
        op._keep(*(np.ascontiguousarray(a) for a in (csr.indptr, csr.indices, csr.data)), *csr.shape)
        return op

    def _keep(self, indptr, indices, data, n_rows, n_cols):
        self._indptr, self._indices, self._data = indptr, indices, data
        self.shape, self.dtype, self.nnz = (n_rows, n_cols), data.dtype, int(data.shape[0])
        self.parallel = numba.get_num_threads() > 1 and self.nnz >= PARALLEL_MIN_NNZ

    def __call__(self, x, parallel=None):
        """``A @ x``.

        Parameters
        ----------
        x : ndarray of shape (C,), the matrix's dtype
            Finite values.
        parallel : bool, optional
            Split the rows over Numba's threads; default :attr:`parallel`.

        Returns
        -------
        ndarray of shape (R,), the matrix's dtype
        """
        _check_parallel(parallel)
        x = _check_x(x, self.shape[1], self.dtype)
        return _product(self._indptr, self._indices, self._data, x, self.parallel if parallel is None else parallel)

    def __repr__(self):
        return f"CpuSpmv(shape={self.shape}, nnz={self.nnz}, dtype={self.dtype}, parallel={self.parallel})"


@fill_doc(csr=_CSR_PARAMETERS)
def spmv_cpu(indptr, indices, data, x, parallel=None):
    """``y = A @ x`` for a CSR matrix on the CPU, every array checked on every call.

    For repeated products with one matrix, :class:`CpuSpmv` checks the matrix once.

    Parameters
    ----------
    {csr}
    x : ndarray of shape (C,), same dtype as ``data``
    parallel : bool, optional
        Split the rows over Numba's threads. Default: when there is more than one
        thread and at least :data:`PARALLEL_MIN_NNZ` non-zeros.

    Returns
    -------
    ndarray of shape (R,), dtype of ``data``
    """
    _check_parallel(parallel)
    x = check_array(x, "x", ndim=1, dtype=(np.float32, np.float64))
    indptr, indices, data = _check_csr(indptr, indices, data, x.shape[0], "the length of x")
    return _product(indptr, indices, data, _check_x(x, x.shape[0], data.dtype), parallel)


def _spmv_checked(csr, x):
    """:func:`spmv_cpu` of a checked SciPy CSR matrix (:func:`~course_lib.spmv.as_csr`) and a checked, finite
    ``x`` of its column count (for :func:`course_lib.spmv.spmv`, which checks them once)."""
    return _product(csr.indptr, csr.indices, csr.data, np.ascontiguousarray(x, dtype=csr.data.dtype), None)
