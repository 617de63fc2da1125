"""The SpMV benchmark runs anywhere (its CPU part without a GPU) and writes JSON + a plot."""

import json

from course_lib import device
from course_lib.bench.__main__ import main


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
        assert abs(row["gflops"] - 2 * row["nnz"] / row["seconds"] / 1e9) < 1e-6 * row["gflops"]
        assert abs(row["gbs"] - row["bytes"] / row["seconds"] / 1e9) < 1e-6 * row["gbs"]
    cpu = results["summary"]["cpu_time_over_scipy"]
    assert set(cpu) == {"laplacian_5pt/float32", "power_law/float32"} and all(v > 0 for v in cpu.values())
    out = capsys.readouterr().out
    assert "best Numba time / scipy time" in out
    if device.is_simulator():
        assert results["notes"] == ["no GPU: only the CPU variants were measured"]
    else:
        assert {"csr_scalar", "hyb", "coo"} <= variants
