"""The benchmark command runs anywhere (its CPU part without a GPU) and writes JSON + a plot."""

import json

from course_lib import device
from course_lib.bench.__main__ import main


def test_nbody_bench_quick_writes_results(tmp_path, capsys):
    assert main(["nbody", "--quick", "--out", str(tmp_path)]) == 0
    (json_file,) = tmp_path.glob("nbody_*.json")
    assert list(tmp_path.glob("nbody_*.png"))
    results = json.loads(json_file.read_text())
    assert results["unit"] == "nbody" and results["date"] and results["cpu"]
    variants = {r["variant"] for r in results["rows"]}
    assert "cpu_numba_parallel" in variants
    for row in results["rows"]:
        assert row["interactions_per_s"] > 0
        assert abs(row["gflops"] - 20 * row["interactions_per_s"] / 1e9) < 1e-6 * row["gflops"]
    if device.is_simulator():
        assert results["notes"] == ["no GPU: only the CPU variants were measured"]
        assert "CPU part only" in capsys.readouterr().out
    else:
        assert {"naive", "tiled"} <= variants


def test_only_units_with_a_benchmark_are_offered(monkeypatch):
    import course_lib
    from course_lib.bench.__main__ import benchmarked_units

    monkeypatch.setitem(course_lib.UNITS, "quiz_only_unit", "lessons/99_none.ipynb")
    units = benchmarked_units()
    assert "nbody" in units and "quiz_only_unit" not in units
