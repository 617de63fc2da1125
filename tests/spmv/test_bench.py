"""The SpMV benchmark runs anywhere (its CPU part without a GPU) and writes JSON + a plot."""

import json

from course_lib import bench, device
from course_lib.bench.__main__ import main
from course_lib.spmv import bench as spmv_bench


def test_spmv_bench_quick_writes_results(tmp_path, capsys):
    assert main(["spmv", "--quick", "--out", str(tmp_path)]) == 0
    (json_file,) = tmp_path.glob("spmv_*.json")
    assert list(tmp_path.glob("spmv_*.png"))
    results = json.loads(json_file.read_text())
    assert results["unit"] == "spmv" and results["date"] and results["cpu"]
    variants = {r["variant"] for r in results["rows"]}
    assert {"scipy", "cpu_numba_parallel", "cpu_numba_serial"} <= variants
    for row in results["rows"]:
        assert row["seconds"] > 0
        if row["variant"] in ("scipy", "cpu_numba_parallel", "cpu_numba_serial"):  # paired in one run
            assert row["repetitions"] == spmv_bench.REPEAT and row["seconds_min"] <= row["seconds"] <= row["seconds_max"]
            assert row["ratio_to_course"] > 0 and row["round_ratio_min"] <= row["round_ratio_max"]
        if row["variant"].startswith("cpu_") or row["variant"] == "scipy":  # each building timed apart
            assert row["prepare_seconds"] > 0
        assert abs(row["gflops"] - 2 * row["nnz"] / row["seconds"] / 1e9) < 1e-6 * row["gflops"]
        assert abs(row["gbs"] - row["bytes"] / row["seconds"] / 1e9) < 1e-6 * row["gbs"]
    cpu = results["summary"]["cpu_time_over_scipy"]
    assert set(cpu) == {"laplacian_5pt/float32", "power_law/float32"} and all(v > 0 for v in cpu.values())
    out = capsys.readouterr().out
    assert "best Numba time / scipy time" in out
    if device.is_simulator():
        # the last note is the machine's load during the run (course_lib.bench.load_note)
        assert results["notes"][:-1] == ["no GPU: only the CPU variants were measured", bench.LOADED_NOTE]
        assert results["notes"][-1].startswith("load average (1 min) ")
    else:
        assert {"csr_scalar", "hyb", "coo"} <= variants


def test_gpu_part_runs_its_kernels_and_checks_them(monkeypatch):
    """The GPU code path, with the simulator standing in for the GPU and a fake clock:
    every method is prepared, launched, checked against the reference and reported."""
    import numpy as np

    from course_lib.spmv import bench, data

    from course_lib.bench.measure import DeviceTiming

    monkeypatch.setattr(bench, "device_time", lambda launch, **kw: (launch(), DeviceTiming(1e-3, 5e-5, 1, True, [1e-3]))[1])
    monkeypatch.setattr(bench, "make_matrix", lambda name, size, seed, dtype: data.make_matrix(name, "sim", seed, dtype))
    monkeypatch.setattr(bench, "_cusparse_rows", lambda name, A, x, dtype, bw: [
        bench._row("cusparse", name, A, 2e-3, dtype, bench.bytes_per_spmv(A, "csr_scalar"), bw)])
    monkeypatch.setattr(bench, "STENCILS", ["laplacian_5pt"])
    rows, notes = bench._gpu_rows(True, 1e12)
    assert not [n for n in notes if "relative error" in n], notes
    assert all(r["correct"] and r["relative_error"] < 1e-4 for r in rows if r["variant"] != "cusparse")
    assert {r["variant"] for r in rows} == set(bench.GPU_METHODS) | {"cusparse"}
    assert {r["matrix"] for r in rows} == {"laplacian_5pt", "power_law"}
    for r in rows:
        assert 0 < r["fraction_of_bandwidth"] and r["seconds"] in (1e-3, 2e-3)
        # DRAM bytes read x once where the model reads it per non-zero; a small matrix stays in L2.
        assert r["dram_bytes"] < r["requested_bytes"] and r["l2_resident"] and r["dram_fraction_of_bandwidth"] is None
    assert all(r["host_seconds_per_launch"] == 5e-5 and r["scope"] == "device" for r in rows if r["variant"] != "cusparse")
    ratio = bench._ratio(rows, ["laplacian_5pt"])["laplacian_5pt"]
    assert ratio["ratio"] == 2.0 and np.isfinite(ratio["ratio"])


def test_wrong_gpu_results_do_not_count_toward_the_goal(monkeypatch):
    """A fast method whose result failed the reference check is left out of the ratio and the goal."""
    import scipy.sparse as sp

    from course_lib.spmv import bench

    monkeypatch.setattr(bench, "STENCILS", ["laplacian_5pt"])
    A = sp.identity(10, format="csr", dtype="float32")

    def row(variant, matrix, seconds, correct=True):
        r = bench._row(variant, matrix, A, seconds, "float32", 100)
        if variant != "cusparse":
            r["correct"] = correct
        return r

    rows = [row("cusparse", "laplacian_5pt", 1.0), row("cusparse", "power_law", 1.0),
            row("csr_scalar", "laplacian_5pt", 2.0), row("hyb", "laplacian_5pt", 0.5, correct=False),
            row("hyb", "power_law", 1.0)]
    summary = bench._gpu_summary(rows)
    assert summary["vs_cusparse_stencils"] == {"laplacian_5pt": {"best_method": "csr_scalar", "ratio": 0.5}}
    assert summary["gpu_goal_met"] is False
    rows[2] = row("csr_scalar", "laplacian_5pt", 1.0)  # as fast as cuSPARSE, and correct
    assert bench._gpu_summary(rows)["gpu_goal_met"] is True
    # A matrix whose only course result is wrong has no ratio, and the goal is not met.
    rows[2]["correct"] = False
    summary = bench._gpu_summary(rows)
    assert "laplacian_5pt" not in summary["vs_cusparse_stencils"] and summary["gpu_goal_met"] is False
