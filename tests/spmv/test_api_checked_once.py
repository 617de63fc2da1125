"""spmv and prepare check the matrix and x once, at their door: the CPU and SciPy paths take them checked."""

import numpy as np
import pytest

from course_lib import spmv as sm
from course_lib.spmv import _checks, api, cpu, reference


@pytest.fixture
def checks(monkeypatch):
    calls = []

    def counting(name, original):
        def count(*args, **kwargs):
            calls.append(name)
            return original(*args, **kwargs)
        return count

    as_csr, check_array = counting("A", _checks.as_csr), counting("array", api.check_array)
    for module in (_checks, api):
        monkeypatch.setattr(module, "as_csr", as_csr)
    for module in (api, reference, cpu):
        monkeypatch.setattr(module, "check_array", check_array)
    monkeypatch.setattr(cpu, "_check_csr", counting("csr structure", cpu._check_csr))
    return calls


@pytest.mark.parametrize("method", ["cpu", "scipy", "csr_scalar"])
def test_spmv_checks_the_matrix_and_x_once(checks, method):
    A = sm.laplacian("5pt", 3)
    checks.clear()
    y = sm.spmv(A, np.arange(9, dtype=np.float32), method=method)
    assert checks == ["A", "array"]
    np.testing.assert_allclose(y, A @ np.arange(9, dtype=np.float64), rtol=1e-6)


def test_prepare_for_the_cpu_checks_the_matrix_once(checks):
    A = sm.laplacian("5pt", 3)
    checks.clear()
    op = sm.prepare(A, "cpu")
    assert checks == ["A"]
    np.testing.assert_array_equal(op(np.ones(9, np.float32)), sm.CpuSpmv(A.indptr, A.indices, A.data, A.shape)(
        np.ones(9, np.float32)))


def test_the_inner_functions_still_check_what_students_pass():
    A = sm.laplacian("5pt", 2)
    with pytest.raises(ValueError, match="indices must be column numbers"):
        sm.spmv_cpu(A.indptr, A.indices + 3, A.data, np.ones(4, np.float32))
    with pytest.raises(ValueError, match="x must have shape"):
        sm.spmv_reference(A, np.ones(5))
