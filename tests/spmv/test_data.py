"""The hybrid split, the Bell-Garland K, the byte and SIMT-efficiency models, the generators."""


import numpy as np
import pytest
from course_lib import spmv

@pytest.mark.parametrize("stencil,n,interior", [("3pt", 10, 3), ("5pt", 6, 5), ("7pt", 4, 7), ("9pt", 5, 9),
                                                ("27pt", 4, 27)])
def test_laplacian_stencils(stencil, n, interior):
    A = spmv.laplacian(stencil, n)
    dims = spmv.STENCILS[stencil][0]
    assert A.shape == (n**dims, n**dims) and A.dtype == np.float32
    assert np.diff(A.indptr).max() == interior
    assert (A != A.T).nnz == 0
    assert abs(A.sum(axis=1)).max() <= interior  # rows sum to 0 inside, positive on the boundary
    assert np.all(np.asarray(A.sum(axis=1)).ravel()[np.diff(A.indptr) == interior] == 0)


def test_generators_are_seeded_and_shaped():
    for name in spmv.MATRICES:
        a = spmv.make_matrix(name, "sim", seed=4)
        b = spmv.make_matrix(name, "sim", seed=4)
        assert a.indices.dtype == np.int32 and a.has_canonical_format
        assert (a != b).nnz == 0
    c = spmv.make_matrix("power_law", "sim", seed=5)
    assert (c != spmv.make_matrix("power_law", "sim", seed=4)).nnz > 0
    assert spmv.make_matrix("laplacian_5pt", dtype=np.float64).dtype == np.float64


def test_row_length_profiles():
    assert set(np.diff(spmv.random_balanced(50, 6, seed=1).indptr)) == {6}
    power = np.diff(spmv.power_law_rows(5000, 8, 2.2, seed=1).indptr)
    assert power.max() > 10 * np.median(power) and 5 < power.mean() < 12
    # The mean is the one asked for, exactly (up to rounding the total), whatever the size and the cap.
    for n_rows, mean_nnz, n_cols in ((256, 8.0, None), (4096, 8.0, None), (70, 5.0, None), (33, 2.5, 40),
                                     (2, 4.0, None), (1, 1.0, None), (10, 10.0, None)):
        A = spmv.power_law_rows(n_rows, mean_nnz, 2.2, n_cols=n_cols, seed=3)
        lengths = np.diff(A.indptr)
        assert A.nnz == round(min(mean_nnz, A.shape[1]) * n_rows) and lengths.max() <= A.shape[1], (n_rows, A.nnz)
        assert len(np.unique(A.indices[A.indptr[0]:A.indptr[1]])) == lengths[0]  # distinct columns per row
    odd = np.diff(spmv.empty_rows_and_long_row(60, 50, seed=1).indptr)
    assert odd[20] == 50 and np.sum(odd == 0) > 10
    balanced = np.diff(spmv.row_length_family(500, 0.0, 8).indptr)
    skewed = np.diff(spmv.row_length_family(500, 2.0, 8).indptr)
    assert set(balanced) == {8} and skewed.std() > 3 * balanced.std() + 5
    fem = spmv.banded_fem(40, 4, seed=0)
    rows, cols = fem.nonzero()
    assert np.abs(rows - cols).max() <= 4 and (fem != fem.T).nnz == 0
    assert np.all(np.linalg.eigvalsh(fem.toarray()) > 0)
    assert spmv.dense_block(5).nnz == 25


@pytest.mark.parametrize("call,message", [
    (lambda: spmv.laplacian("4pt", 3), "stencil must be one of"),
    (lambda: spmv.laplacian("5pt", 0), "positive integer"),
    (lambda: spmv.random_balanced(10, 2, dtype=np.int32), "float32 or float64"),
    (lambda: spmv.power_law_rows(10, exponent=1.5), "exponent must be a finite number >= 2"),
    (lambda: spmv.banded_fem(10, density=0), "density"),
    (lambda: spmv.empty_rows_and_long_row(1), ">= 2"),
    (lambda: spmv.row_length_family(10, -1), "skew"),
    (lambda: spmv.make_matrix("webbase"), "name must be one of"),
    (lambda: spmv.make_matrix("power_law", size="huge"), "size must be"),
])
def test_generators_reject_bad_arguments(call, message):
    with pytest.raises(ValueError, match=message):
        call()
