"""The counting model of SIMT efficiency agrees with the simulator's profiler on the real kernels."""

import pytest

from course_lib import spmv
from course_lib.spmv.profiling import MEASURED_METHODS, measure

MATRICES = {
    "balanced": lambda: spmv.random_balanced(70, 5, seed=1),
    "power law": lambda: spmv.power_law_rows(70, 5.0, 2.1, seed=2),
    "empty rows and a long row": lambda: spmv.empty_rows_and_long_row(40, 75, seed=3),
}


@pytest.mark.parametrize("name", sorted(MATRICES))
@pytest.mark.parametrize("method", MEASURED_METHODS)
def test_model_equals_measurement(method, name):
    A = MATRICES[name]()
    if method == "csr_vector":
        A = A[:20]  # 32 simulated threads per row
    measured = measure(A, method)
    model = spmv.simt_efficiency(A, method)
    assert measured["useful"] == model["useful"] == A.nnz
    assert measured["issued"] == model["issued"], (measured["issued"], model["issued"])
    assert measured["efficiency"] == pytest.approx(model["efficiency"])


def test_hyb_with_any_k_and_coalescing():
    A = spmv.empty_rows_and_long_row(40, 75, seed=3)
    for K in (0, 2, 75):
        measured = measure(A, "hyb", K=K)
        assert measured["issued"] == spmv.simt_efficiency(A, "hyb", K=K)["issued"]
    stencil = spmv.laplacian("5pt", 16)  # 256 rows: whole warps
    # ELL reads slot k of 32 consecutive rows: 4 sectors of 32 bytes per warp-level load
    # (its x gathers are neighbours too); thread per row reads 32 rows 5 entries apart.
    assert measure(stencil, "ell")["sectors_per_request"] == pytest.approx(4.0, abs=0.1)
    assert measure(stencil, "csr_scalar")["sectors_per_request"] > 2.5 * 4.0


def test_measure_rejects_bad_arguments():
    A = spmv.laplacian("3pt", 5)
    with pytest.raises(ValueError, match="unknown method"):
        measure(A, "coo_atomic")
    with pytest.raises(ValueError, match="multiple of 32"):
        measure(A, "csr_scalar", block=48)


# ---- from test_plots_widgets.py

import matplotlib


matplotlib.use("Agg")


from course_lib import spmv


from course_lib.spmv import plots, widgets


def test_measure_methods_gpu_path(monkeypatch):
    """The widget's GPU timing path, with the simulator standing in and a fake clock."""
    import course_lib.bench

    monkeypatch.setattr(widgets.device, "is_gpu", lambda: True)
    monkeypatch.setattr(course_lib.bench, "gpu_time", lambda launch, **kw: (launch(), 1e-3)[1])
    measured = widgets.measure_methods(spmv.empty_rows_and_long_row(40, 30, seed=1), K=2)
    assert set(measured) == set(plots.MODEL_METHODS) and set(measured.values()) == {1e-3}
