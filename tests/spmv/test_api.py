"""The hybrid split, the Bell-Garland K, the byte and SIMT-efficiency models, the generators."""


import numpy as np
import pytest
import scipy.sparse as sp
from course_lib import spmv

def test_hyb_split_layout_is_column_major_and_padded():
    A = sp.csr_matrix(np.array([[1, 2, 3, 4], [5, 0, 0, 0], [0, 6, 0, 7]], np.float32))
    h = spmv.hyb_split(A, K=2)
    assert h.ell_indices.shape == (2, 3) and h.ell_indices.flags.c_contiguous
    assert h.ell_indices.tolist() == [[0, 0, 1], [1, -1, 3]]  # slot k of all rows side by side
    assert h.ell_data.tolist() == [[1, 5, 6], [2, 0, 7]]
    assert (h.coo_rows.tolist(), h.coo_cols.tolist(), h.coo_data.tolist()) == ([0, 0], [2, 3], [3, 4])
    assert h.ell_nnz == 5 and h.coo_nnz == 2 and h.padding == pytest.approx(1 / 6)


@pytest.mark.parametrize("name", sorted(spmv.MATRICES))
@pytest.mark.parametrize("K", [None, 0, 1, 3, 1000])
def test_hyb_split_loses_nothing(name, K):
    A = spmv.make_matrix(name, "sim", seed=2)
    h = spmv.hyb_split(A, K=K)
    assert (h.to_csr() != A).nnz == 0
    assert h.ell_nnz + h.coo_nnz == A.nnz
    assert np.all(np.diff(h.coo_rows) >= 0), "the segmented scan needs COO sorted by row"
