"""The CPU path of Unit 2: CpuSpmv (a matrix checked once) and spmv_cpu (raw arrays, checked every call)."""

import numpy as np
import pytest
import scipy.sparse as sp

from course_lib import spmv
from course_lib.spmv.cpu import CpuSpmv, spmv_cpu

from .test_kernels import assert_matches_reference, random_x


def _op(A):
    return CpuSpmv(A.indptr, A.indices, A.data, A.shape)


@pytest.mark.parametrize("name", sorted(spmv.MATRICES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_both_modes_match_the_reference_and_each_other(name, dtype):
    A = spmv.make_matrix(name, "sim", seed=4, dtype=dtype)
    op = spmv.prepare(A, "cpu")
    x = random_x(A.shape[1], dtype)
    serial, parallel = op(x, parallel=False), op(x, parallel=True)
    assert serial.dtype == dtype and serial.shape == (A.shape[0],)
    assert_matches_reference(serial, A, x)
    # Each row is summed by one thread in one order, whatever the split: the same bits.
    np.testing.assert_array_equal(serial, parallel)
    np.testing.assert_array_equal(serial, spmv_cpu(A.indptr, A.indices, A.data, x))


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (0, 0), (1, 1), (7, 3)])
def test_awkward_shapes(shape):
    A = sp.random(*shape, density=0.5, format="csr", dtype=np.float32, random_state=np.random.default_rng(2))
    A.indptr, A.indices = A.indptr.astype(np.int32), A.indices.astype(np.int32)
    x = random_x(shape[1], np.float32)
    for parallel in (False, True):
        y = _op(A)(x, parallel=parallel)
        assert y.shape == (shape[0],)
        assert_matches_reference(y, A, x)


def test_int64_indices_and_a_long_row_split_over_threads():
    rows, cols = np.zeros(3000, np.int64), np.arange(3000) % 50
    A = sp.csr_matrix((np.ones(3000), (rows, cols)), shape=(4, 50))  # one row holds every non-zero
    A.indptr, A.indices = A.indptr.astype(np.int64), A.indices.astype(np.int64)
    x = random_x(50, np.float64)
    y = _op(A)(x, parallel=True)
    assert_matches_reference(y, A, x)
    assert y[1:].tolist() == [0.0, 0.0, 0.0]


def test_the_prepared_matrix_keeps_its_own_copy():
    A = spmv.laplacian("5pt", 4)
    indptr, indices, data = A.indptr.copy(), A.indices.copy(), A.data.copy()
    op = CpuSpmv(indptr, indices, data, A.shape)
    x = random_x(16, np.float32)
    before = op(x)
    indices[:] = 10**6  # out of range: the copy checked at construction is what the products read
    data[:] = np.nan
    np.testing.assert_array_equal(op(x), before)


def test_default_mode_follows_the_threshold(monkeypatch):
    from course_lib.spmv import cpu

    A = spmv.laplacian("5pt", 4)
    assert _op(A).parallel is False
    monkeypatch.setattr(cpu, "PARALLEL_MIN_NNZ", 1)
    assert _op(A).parallel is (cpu.numba.get_num_threads() > 1)
    assert "CpuSpmv(shape=(16, 16), nnz=64" in repr(_op(A))


def _arrays():
    A = spmv.laplacian("5pt", 3)
    return A.indptr.copy(), A.indices.copy(), A.data.copy()


def _broken(part, index, value):
    arrays = dict(zip(("indptr", "indices", "data"), _arrays()))
    arrays[part][index] = value
    return arrays["indptr"], arrays["indices"], arrays["data"]


BAD_MATRICES = [
    (_broken("indptr", 0, 1), r"indptr must start at 0, got indptr\[0\] = 1"),
    (_broken("indptr", 4, 1), r"indptr must not decrease \(row 3 would end before it starts\)"),
    (_broken("indptr", -1, 32), r"indptr must rise from 0 to len\(indices\) = 33, got 0 \.\. 32"),
    (_broken("indices", 7, 9), r"indices must be column numbers in \[0, 9\) .*got 9 at index 7"),
    (_broken("indices", 2, -1), r"indices must be column numbers in \[0, 9\) .*got -1 at index 2"),
    (_broken("data", 5, np.inf), r"data must hold finite values, got inf at index \(5,\)"),
    (_broken("data", 0, np.nan), r"data must hold finite values, got nan at index \(0,\)"),
]


@pytest.mark.parametrize("arrays,message", BAD_MATRICES)
def test_a_bad_matrix_is_refused_once_with_the_problem_named(arrays, message):
    indptr, indices, data = arrays
    with pytest.raises(ValueError, match=message):
        CpuSpmv(indptr, indices, data, (9, 9))
    with pytest.raises(ValueError, match=message):
        spmv_cpu(indptr, indices, data, np.ones(9, np.float32))


@pytest.mark.parametrize("shape,message", [
    ((9,), "shape must be a pair"), ((9, -1), "shape must be a pair"), ((9.0, 9), "shape must be a pair"),
    ([9, 9], "shape must be a pair"), ((8, 9), r"indptr must have shape \(9,\) for 8 rows"),
    ((9, 4), r"indices must be column numbers in \[0, 4\) \(the number of columns\)"),
])
def test_a_bad_shape_is_refused(shape, message):
    with pytest.raises(ValueError, match=message):
        CpuSpmv(*_arrays(), shape)


@pytest.mark.parametrize("x,message", [
    (np.ones(8, np.float32), r"x must have shape \(9,\)"),
    (np.ones((9, 1), np.float32), r"x must have 1 dimension"),
    (np.ones(9), "data and x must have the same dtype"),
    (np.array([np.nan] + [1.0] * 8, np.float32), r"x must hold finite values, got nan at index \(0,\)"),
    (np.array([1.0] * 8 + [-np.inf], np.float32), r"x must hold finite values, got -inf at index \(8,\)"),
    (None, "x must be an array"),
])
def test_each_product_checks_x(x, message):
    op = CpuSpmv(*_arrays(), (9, 9))
    with pytest.raises(ValueError, match=message):
        op(x)
    with pytest.raises(ValueError, match="parallel must be True, False or None"):
        op(np.ones(9, np.float32), parallel=1)


def test_x_need_not_be_contiguous():
    op = CpuSpmv(*_arrays(), (9, 9))
    x = random_x(18, np.float32)[::2]
    np.testing.assert_array_equal(op(x), op(np.ascontiguousarray(x)))


def test_prepare_cpu_refuses_kernel_settings():
    A = spmv.laplacian("5pt", 3)
    with pytest.raises(ValueError, match="block only applies to the kernel methods"):
        spmv.prepare(A, "cpu", block=32)
    with pytest.raises(ValueError, match="K only applies to method 'hyb'"):
        spmv.prepare(A, "cpu", K=2)
    assert spmv.prepare(A, "cpu", dtype=np.float64).dtype == np.float64
