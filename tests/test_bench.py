"""The benchmark command runs anywhere (its CPU part without a GPU) and writes JSON + a plot."""

import json
from pathlib import Path

import pytest

from course_lib import bench, device
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


def test_series_groups_sorts_and_filters_rows():
    from course_lib.bench import series

    rows = [{"variant": "b", "n": 4, "y": 2.0, "family": "k"}, {"variant": "b", "n": 1, "y": 1.0, "family": "k"},
            {"variant": "a", "n": 2, "y": None, "family": "k"}, {"variant": "a", "n": 3, "y": 5.0, "family": "grid"}]
    assert series(rows, "n", "y") == {"a": ([3], [5.0]), "b": ([1, 4], [1.0, 2.0])}
    assert series(rows, "n", "y", keep=lambda r: r["family"] == "k") == {"b": ([1, 4], [1.0, 2.0])}
    assert list(series(rows, "n", "y", label=lambda r: r["variant"] + "!")) == ["a!", "b!"]


def test_results_runs_the_gpu_part_only_on_a_gpu():
    from course_lib.bench import NO_GPU_NOTE, results

    called = []

    def gpu_part():
        called.append(True)
        return [{"variant": "gpu"}], {"goal_met": True}, ["gpu note"]

    out = results([{"variant": "cpu"}], gpu_part)
    if device.is_gpu():
        assert called and out["rows"][-1] == {"variant": "gpu"} and out["notes"] == ["gpu note"]
        assert out["summary"] == {"goal_met": True}
    else:
        assert not called and out == {"rows": [{"variant": "cpu"}], "summary": {}, "notes": [NO_GPU_NOTE]}
    assert results([])["notes"] == [NO_GPU_NOTE]  # no GPU part at all


def test_summary_text_and_plot_series(tmp_path):
    from course_lib.bench import figure, plot_series, summary_text

    import matplotlib.pyplot as plt

    open_before = set(plt.get_fignums())  # other tests may leave figures open; only ours must close
    text = summary_text({"rows": [{"n": 1}, {"n": 2}], "notes": ["note"]}, lambda r: f"N={r['n']}", ["extra"])
    assert text.splitlines() == ["N=1", "N=2", "extra", "note"]
    path = tmp_path / "curves.png"
    plot_series({"a": ([1, 10], [1.0, 100.0])}, path, xlabel="n", ylabel="rate", title="t",
                references=[(50.0, "peak")])
    assert path.read_bytes().startswith(b"\x89PNG")
    assert set(plt.get_fignums()) <= open_before  # saved and closed
    bad = tmp_path / "never.png"
    try:
        with figure(bad) as ax:
            ax.plot([1], [1])
            raise RuntimeError("drawing failed")
    except RuntimeError:
        pass
    assert not bad.exists() and set(plt.get_fignums()) <= open_before  # a failed drawing leaves no file and no open figure


def test_summary_text_goal_line_only_with_a_summary():
    from course_lib.bench import summary_text

    def goal(s):
        return f"goal met: {s['goal_met']}"

    with_summary = {"rows": [], "summary": {"goal_met": True}, "notes": []}
    assert summary_text(with_summary, str, goal=goal) == "goal met: True"
    assert summary_text({"rows": [], "summary": {}, "notes": ["no GPU"]}, str, goal=goal) == "no GPU"


def test_gpu_figures_show_the_newest_committed_gpu_run(tmp_path):
    assert bench.RESULTS_DIR == Path(__file__).resolve().parents[1] / "benchmarks" / "results"
    empty = bench.gpu_figures("nbody", tmp_path)
    assert "No GPU run of the nbody benchmark is committed yet" in empty and "python -m course_lib.bench nbody" in empty
    base = bench.stamp("nbody")
    row = {"variant": "tiled", "n": 1 << 20, "tile": 256, "gflops": 0.0}
    gpu = dict(base["device"], name="NVIDIA H100 80GB HBM3")
    for date, rate in [("2026-11-01T10:00:00+00:00", 1.0e12), ("2026-11-20T10:00:00+00:00", 2.1e12)]:
        bench.write_results(dict(base, backend="gpu", device=gpu, date=date, summary={}, notes=[],
                                 rows=[dict(row, interactions_per_s=rate)]), tmp_path)
    # A later run without a GPU carries no GPU figure: it is not shown.
    bench.write_results(dict(base, backend="simulator", date="2026-11-30T10:00:00+00:00", summary={},
                             rows=[dict(row, variant="cpu_numba_parallel", interactions_per_s=1e9)],
                             notes=[bench.NO_GPU_NOTE]), tmp_path)
    runs = bench.committed_results("nbody", tmp_path)
    assert [r["date"][:10] for r in runs] == ["2026-11-20", "2026-11-01"]
    text = bench.gpu_figures("nbody", tmp_path)
    assert text.splitlines()[0] == "Measured on NVIDIA H100 80GB HBM3, 2026-11-20 (committed run, 2 in benchmarks/results):"
    assert "2.100e+12 interactions/s" in text and "1.000e+12" not in text and "cpu_numba_parallel" not in text
    assert bench.committed_results("spmv", tmp_path) == []  # another unit's files are not this one's


def test_committed_results_name_a_broken_file(tmp_path):
    (tmp_path / "nbody_broken.json").write_text("{")
    with pytest.raises(ValueError, match="nbody_broken.json: not a benchmark results file"):
        bench.committed_results("nbody", tmp_path)
    (tmp_path / "nbody_broken.json").write_text(json.dumps({"unit": "spmv", "device": {"name": "x"}, "date": "d"}))
    with pytest.raises(ValueError, match="not a results file of the nbody benchmark"):
        bench.gpu_figures("nbody", tmp_path)
