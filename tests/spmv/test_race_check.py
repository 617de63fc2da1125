"""The race, barrier and bounds checker finds nothing in any reference kernel of Unit 2."""

import numpy as np
import pytest
from numba import cuda, int32

from course_lib import spmv
from course_lib.sim import check
from course_lib.spmv import kernels

# Row 1 crosses the boundaries of 16-thread blocks; row 3 is empty.
LENGTHS = [2, 37, 1, 0, 17]


@pytest.fixture(scope="module")
def matrix():
    import scipy.sparse as sp

    rng = np.random.default_rng(11)
    rows = np.repeat(np.arange(len(LENGTHS)), LENGTHS)
    cols = np.concatenate([rng.choice(40, n, replace=False) for n in LENGTHS])
    A = sp.coo_matrix((rng.uniform(-1, 1, rows.size), (rows, cols)), shape=(len(LENGTHS), 40))
    return spmv.as_csr(A, np.float32)


def _x():
    return np.random.default_rng(0).uniform(-1, 1, 40).astype(np.float32)


def _y():
    return np.zeros(len(LENGTHS), np.float32)


def test_csr_scalar_is_clean(matrix):
    assert check(kernels.csr_scalar_kernel, 1, 8, matrix.indptr, matrix.indices, matrix.data, _x(), _y()).ok


def test_csr_vector_is_clean(matrix):
    report = check(kernels.csr_vector_kernel, 3, 64, matrix.indptr, matrix.indices, matrix.data, _x(), _y())
    assert report.ok, str(report)


@pytest.mark.parametrize("seed", [None, 3])
def test_coo_segmented_is_clean(matrix, seed):
    rows = np.repeat(np.arange(matrix.shape[0], dtype=np.int32), np.diff(matrix.indptr))
    report = check(kernels.coo_segmented_kernel(16), -(-matrix.nnz // 16), 16, rows, matrix.indices, matrix.data,
                   _x(), _y(), seed=seed)
    assert report.ok, str(report)


def test_coo_atomic_and_zero_are_clean(matrix):
    rows = np.repeat(np.arange(matrix.shape[0], dtype=np.int32), np.diff(matrix.indptr))
    assert check(kernels.coo_atomic_kernel, 4, 16, rows, matrix.indices, matrix.data, _x(), _y()).ok
    assert check(kernels.zero_kernel, 1, 8, _y()).ok


def test_ell_is_clean(matrix):
    h = spmv.hyb_split(matrix, K=2)
    assert check(kernels.ell_kernel, 1, 8, h.ell_indices, h.ell_data, _x(), _y()).ok


def test_checker_catches_a_scan_without_its_middle_barrier():
    """Dropping the barrier between reading a neighbour and writing is a race the checker names."""
    block = 8

    @cuda.jit
    def scan_missing_barrier(rows, cols, data, x, y):
        products = cuda.shared.array(block, y.dtype)
        segment = cuda.shared.array(block, int32)
        t = cuda.threadIdx.x
        products[t] = data[t] * x[cols[t]]
        segment[t] = rows[t]
        cuda.syncthreads()
        offset = 1
        while offset < block:
            if t >= offset and segment[t - offset] == segment[t]:
                products[t] += products[t - offset]  # reads and writes in the same barrier interval
            cuda.syncthreads()
            offset *= 2
        if t == block - 1 or segment[t + 1] != segment[t]:
            cuda.atomic.add(y, segment[t], products[t])

    rows = np.zeros(block, np.int32)
    report = check(scan_missing_barrier, 1, block, rows, np.arange(block, dtype=np.int32),
                   np.ones(block, np.float32), np.ones(block, np.float32), np.zeros(1, np.float32))
    assert "race" in report.kinds()
