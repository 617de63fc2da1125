"""Measurements agree with the models: launches per minibatch, coalescing, broadcast, SIMT efficiency."""

import shutil

import pytest

from course_lib.ica import model, profiling, simulate_eeg


@pytest.mark.parametrize("method", ["fused", "custom", "blas"])
def test_recorded_launches_match_the_model(method, tiny):
    got = profiling.count_launches(tiny.data, method, steps=1)
    batch = 7  # floor(sqrt(157 / 3))
    assert got["minibatches"] == 157 // batch
    assert got["launches_per_minibatch"] == model.launches_per_minibatch(method, batch)
    assert got["DtoH_count"] == 2  # W and the bias, once per step


@pytest.mark.parametrize("C", [32, 40])
def test_custom_gemv_is_coalesced_and_broadcasts(C):
    p = profiling.profile_gemv(C, batch=2)
    warps = -(-C // 32)
    assert p["custom"]["w_sectors_per_request"] == pytest.approx(C * 8 / 32 / warps)  # 8 per full warp of doubles
    assert p["gemv"]["w_sectors_per_request"] == pytest.approx(C / warps)  # one sector per lane
    assert p["custom"]["gather_sectors_per_request"] == pytest.approx(C * 8 / 32 / warps)
    assert p["custom"]["bank_conflict_degree"] == 1.0  # every lane reads the same sample[k]: broadcast
    assert p["custom"]["simt_efficiency"] == pytest.approx(model.simt_efficiency(C))
    assert p["custom"]["launches"] == 1 and p["gemv"]["launches"] == 2


@pytest.mark.skipif(shutil.which("ptxas") is None and not __import__("importlib").util.find_spec("cuda"),
                    reason="needs the CUDA toolkit wheels")
def test_compile_resources():
    r = profiling.compile_resources(ccs=((8, 0),), kernels=("permuted_gemv_kernel",))
    regs = r["permuted_gemv_kernel"]["sm_80"]
    assert 8 <= regs["registers"] <= 64 and regs["shared_bytes"] == 256 * 8


def test_bad_arguments():
    with pytest.raises(ValueError, match="n_channels"):
        profiling.profile_gemv(300)
    with pytest.raises(ValueError, match="kernels"):
        profiling.compile_resources(kernels=("nope",))
    with pytest.raises(ValueError, match="steps"):
        profiling.count_launches(simulate_eeg(3, 60).data, "fused", steps=0)
