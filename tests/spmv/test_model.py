"""The hybrid split, the Bell-Garland K, the byte and SIMT-efficiency models, the generators."""


import numpy as np
import pytest
import scipy.sparse as sp
from course_lib import spmv

def test_bell_garland_k_is_the_one_third_line():
    assert spmv.bell_garland_k([1, 1, 2, 2, 3, 9]) == 3      # 2 of 6 rows have >= 3 entries
    assert spmv.bell_garland_k([5] * 9) == 5                  # balanced: everything in ELL
    assert spmv.bell_garland_k([0, 0, 0, 0, 0, 7]) == 0       # one row in six: COO only
    assert spmv.bell_garland_k([]) == 0
    assert spmv.bell_garland_k([4, 4, 1, 1], fraction=0.5) == 4
    lengths = np.random.default_rng(1).integers(0, 40, 999)
    K = spmv.bell_garland_k(lengths)
    assert np.sum(lengths >= K) >= 999 / 3 > np.sum(lengths >= K + 1)


@pytest.mark.parametrize("skew", [0.0, 0.7, 1.5, 2.5])
def test_bell_garland_k_minimises_the_sweep_cost(skew):
    A = spmv.row_length_family(600, skew, mean_nnz=6, seed=3)
    sweep = spmv.k_sweep(A)
    best = sweep["best_K"]
    assert best == spmv.bell_garland_k(A)
    assert sweep["cost"][best] == pytest.approx(sweep["cost"].min())
    # Both failure modes: K = 0 (all COO) and K = longest row (all ELL) cost more on skewed rows.
    if skew >= 1.5:
        assert sweep["cost"][0] > sweep["cost"][best] < sweep["cost"][-1]
        assert sweep["padding"][-1] > 0.8 and sweep["padding"][best] < sweep["padding"][-1] - 0.2


def test_k_sweep_columns_add_up():
    A = spmv.power_law_rows(200, 6, 2.2, seed=1)
    sweep = spmv.k_sweep(A, Ks=[0, 2, 5, 10_000])
    assert list(sweep["ell_nnz"] + sweep["coo_nnz"]) == [A.nnz] * 4
    for K, ell_nnz in zip(sweep["K"], sweep["ell_nnz"]):
        assert ell_nnz == spmv.hyb_split(A, K=int(K)).ell_nnz
    assert sweep["bytes"][0] == spmv.bytes_per_spmv(A, "hyb", K=0)


def test_csr_fp32_is_about_12_bytes_per_nonzero():
    A = spmv.laplacian("27pt", 12)
    per_nnz = spmv.bytes_per_spmv(A, "csr_scalar") / A.nnz
    assert 12 < per_nnz < 13
    R, Z = A.shape[0], A.nnz
    assert spmv.bytes_per_spmv(A.astype(np.float64), "csr_scalar") == 8 * R + 4 * Z + 16 * Z + 16 * R
    # The fact sheet's H100 figure: ~560 GFLOP/s for fp32 CSR at 3.35 TB/s.
    assert spmv.gflops_roofline(12 * 10**6, 10**6, 3.35e12) == pytest.approx(558, rel=0.01)


def test_byte_model_formulas():
    A = sp.csr_matrix(np.array([[1, 1, 0], [0, 0, 0], [1, 1, 1]], np.float32))  # R=3, Z=5
    assert spmv.bytes_per_spmv(A, "csr_scalar") == 2 * 4 * 3 + 4 * 5 + 2 * 4 * 5 + 2 * 4 * 3
    assert spmv.bytes_per_spmv(A, "coo") == 2 * 4 * 5 + 2 * 4 * 5 + 2 * 4 * 2   # 2 occupied rows
    assert spmv.bytes_per_spmv(A, "ell") == 4 * 3 * 3 + 4 * 5 + 4 * 5 + 2 * 4 * 3
    hyb = (4 * 3 * 1 + 4 * 2 + 4 * 2 + 2 * 4 * 3) + (2 * 4 * 3 + 2 * 4 * 3 + 2 * 4 * 2)
    assert spmv.bytes_per_spmv(A, "hyb", K=1) == hyb


def test_simt_efficiency_follows_the_longest_row_only_for_thread_per_row():
    balanced = spmv.simt_efficiency([8] * 64, "csr_scalar")
    assert balanced["efficiency"] == 1.0 and balanced["warp_steps"] == 2 * 8
    skewed = [1] * 31 + [32]  # one warp: 32 steps, 63 useful lane-steps of 1024
    eff = spmv.simt_efficiency(skewed, "csr_scalar")
    assert eff["warp_steps"] == 32 and eff["efficiency"] == pytest.approx(63 / 1024)
    # Thread per element only sees the number of non-zeros.
    assert spmv.simt_efficiency(skewed, "coo")["efficiency"] == pytest.approx(63 / 64)
    assert spmv.simt_efficiency([62, 1], "coo") == spmv.simt_efficiency(skewed, "coo")
    vec = spmv.simt_efficiency([1, 40], "csr_vector")
    assert vec["warp_steps"] == 3 and vec["reduction_steps"] == 10
    assert spmv.simt_efficiency(skewed, "ell")["warp_steps"] == 32
    assert spmv.simt_efficiency(skewed, "hyb", K=1)["warp_steps"] == 1 + 1
    assert spmv.simt_efficiency([], "csr_scalar")["efficiency"] == 1.0


def test_modelled_cost_ranks_the_methods_as_the_lesson_says():
    balanced = spmv.row_length_family(1024, 0.0, mean_nnz=8, seed=0)
    skewed = spmv.row_length_family(1024, 2.5, mean_nnz=8, seed=0)
    cost = {m: (spmv.modelled_cost(balanced, m), spmv.modelled_cost(skewed, m))
            for m in ["csr_scalar", "coo", "hyb", "ell"]}
    assert cost["csr_scalar"][0] < cost["coo"][0]                     # balanced: thread per row wins
    assert cost["coo"][1] < cost["csr_scalar"][1]                     # skewed: thread per element wins
    assert cost["hyb"][0] <= cost["csr_scalar"][0] and cost["hyb"][1] < cost["coo"][1]  # hybrid: best of both
    assert cost["coo"][0] == pytest.approx(cost["coo"][1], rel=0.1)    # insensitive to the distribution


@pytest.mark.parametrize("bad,message", [
    (dict(A=[1.5, 2]), "A must have an integer dtype"),
    (dict(A=[-1, 2]), r"A \(row lengths\) must be non-negative"),
])
def test_model_rejects_bad_row_lengths(bad, message):
    with pytest.raises(ValueError, match=message):
        spmv.bell_garland_k(bad["A"])


def test_model_rejects_bad_arguments():
    with pytest.raises(ValueError, match="method must be one of"):
        spmv.simt_efficiency([1, 2], "dense")
    with pytest.raises(ValueError, match="K only applies"):
        spmv.simt_efficiency([1, 2], "ell", K=1)
    with pytest.raises(ValueError, match="fraction"):
        spmv.bell_garland_k([1, 2], fraction=0)
