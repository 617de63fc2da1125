"""The one reader of committed GPU runs (``course_lib.bench.runs``): benchmarks and probes, newest first, labelled."""

import json
from pathlib import Path

import pytest

from course_lib import bench
from course_lib.bench import runs


def _write(folder, name, unit, day, *, backend="gpu", rows=None):
    data = {"unit": unit, "backend": backend, "device": {"name": "NVIDIA H200" if backend == "gpu" else "cpu"},
            "date": f"{day}T12:00:00+00:00", "rows": rows or [{"variant": "fast", "seconds": 1.0}]}
    (folder / f"{name}.json").write_text(json.dumps(data))


def test_runs_of_both_kinds_newest_first_labelled_with_device_date_and_kind(tmp_path):
    _write(tmp_path, "demo_nvidia-h200_2026-11-26", "demo", "2026-11-26")
    _write(tmp_path, "probe-demo_nvidia-h200_2026-11-27", "probe-demo", "2026-11-27",
           rows=[{"variant": "old", "seconds": 2.0}, {"variant": "fast", "default": True, "seconds": 1.0}])
    _write(tmp_path, "demo_cpu-only_2026-11-30", "demo", "2026-11-30", backend="simulator")  # no GPU figure
    _write(tmp_path, "probe-demo2_nvidia-h200_2026-11-29", "probe-demo2", "2026-11-29")  # another unit's
    found = runs.committed_runs("demo", folder=tmp_path)
    assert [(r.kind, r.date, r.device) for r in found] == [("probe", "2026-11-27", "NVIDIA H200"),
                                                           ("benchmark", "2026-11-26", "NVIDIA H200")]
    assert found[0].label == "NVIDIA H200, 2026-11-27, probe" and found[0].default_row()["variant"] == "fast"
    assert found[1].default_row() is None and found[0].rows_of("old")[0]["seconds"] == 2.0
    assert [r.kind for r in runs.committed_runs("demo", kinds=("benchmark",), folder=tmp_path)] == ["benchmark"]
    text = runs.runs_text("demo", folder=tmp_path)
    assert text.splitlines()[1:3] == ["- NVIDIA H200, 2026-11-27, probe (probe-demo_nvidia-h200_2026-11-27.json)",
                                      "- NVIDIA H200, 2026-11-26, benchmark (demo_nvidia-h200_2026-11-26.json)"]
    assert "  fast (default): 1 s" in text
    with pytest.raises(ValueError, match="unknown kind"):
        runs.committed_runs("demo", kinds=("full",), folder=tmp_path)
    (tmp_path / "probe-demo_broken.json").write_text(json.dumps({"unit": "demo", "device": {"name": "x"}, "date": "d"}))
    with pytest.raises(ValueError, match="not a results file of the probe-demo benchmark"):
        runs.committed_runs("demo", folder=tmp_path)


def test_a_unit_without_a_run_says_so_from_the_reader_and_where_it_looked(tmp_path):
    assert runs.committed_runs("demo", folder=tmp_path) == []
    sentence = runs.runs_text("demo", folder=tmp_path)
    assert sentence.startswith("No GPU run of demo is committed (neither its benchmark nor the probe, in ")
    assert "python -m course_lib.bench probe demo" in sentence
    # Installed without the checkout's results: nothing to read, and the sentence says where it looked.
    missing = tmp_path / "not-shipped"
    assert runs.committed_runs("demo", folder=missing) == []
    assert "(not in this installation)" in runs.runs_text("demo", folder=missing)
    assert runs.RESULTS_DIR == bench.RESULTS_DIR == Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def test_gpu_figures_show_the_probe_when_only_the_probe_ran(tmp_path):
    _write(tmp_path, "probe-hac_nvidia-h200_2026-11-27", "probe-hac", "2026-11-27",
           rows=[{"variant": "gpu_persistent", "default": True, "seconds": 0.2, "seconds_best": 0.19,
                  "repetitions": 3, "scope": "end_to_end", "device_seconds": 0.1, "seconds_per_merge": 1e-5}])
    text = bench.gpu_figures("hac", tmp_path)
    assert "No GPU run of the hac benchmark itself is committed; the probe's runs are:" in text
    assert "NVIDIA H200, 2026-11-27, probe" in text and "gpu_persistent (default): best 0.19 s" in text
    assert bench.committed_results("probe-hac", tmp_path)[0]["unit"] == "probe-hac"
    assert bench.committed_results("hac", tmp_path) == []


def test_the_committed_probe_runs_are_read_and_the_readme_corrects_icas_step_figure():
    """hac and ica have probe runs committed: the reader finds them (lessons print them, not 'no run')."""
    found = {unit: runs.committed_runs(unit) for unit in ("hac", "ica")}
    if not all(found.values()):
        pytest.skip("no committed probe run in this checkout")
    assert "No GPU run" not in runs.runs_text("hac") and "No GPU run" not in runs.runs_text("ica")
    first = next(r for r in found["ica"] if r.date == "2026-11-27")
    fused = first.rows_of("fused")[0]
    minibatches = 180_000 // int((180_000 / 3) ** 0.5)  # 737 minibatches of 244 samples, 2 launches each
    step_calls = fused["launches"] / (2 * minibatches)
    assert step_calls == 10 and fused["steps_timed"] == 3  # 6 restarts: 10 steps run, 3 kept
    readme = (Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "README.md").read_text()
    assert f"**{fused['seconds'] / step_calls:.3f} s**" in readme and "**10 steps**" in readme


def test_full_size_cpu_runs_are_read_when_asked_for_and_labelled_with_the_cpu(tmp_path):
    _write(tmp_path, "demo_cpu-only_2026-11-26", "demo", "2026-11-26", backend="simulator")
    _write(tmp_path, "demo_cpu-only-quick_2026-11-27", "demo", "2026-11-27", backend="simulator")  # quick: never read
    data = json.loads((tmp_path / "demo_cpu-only_2026-11-26.json").read_text())
    (tmp_path / "demo_cpu-only_2026-11-26.json").write_text(json.dumps(dict(data, cpu="AMD EPYC", cpu_cores=2)))
    assert runs.committed_runs("demo", folder=tmp_path) == []  # GPU runs by default
    (cpu,) = runs.committed_runs("demo", kinds=("cpu",), folder=tmp_path)
    assert cpu.label == "AMD EPYC (2 cores), 2026-11-26, cpu" and cpu.path.name == "demo_cpu-only_2026-11-26.json"
    committed = runs.committed_runs("hac", kinds=("cpu",))
    if committed:  # the checkout's full-size CPU run of HAC, which lesson 5 reads
        assert all("quick" not in run.path.name for run in committed)
