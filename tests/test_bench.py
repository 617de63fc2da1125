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
    assert results["unit"] == "nbody" and results["date"] and results["cpu"] and results["quick"]
    assert results["notes"][-1] == bench.load_note(results) and results["notes"][-1].startswith("load average (1 min)")
    assert len(results["load_average_start"]) == len(results["load_average_end"]) == 3
    variants = {r["variant"] for r in results["rows"]}
    assert "cpu_numba_parallel" in variants
    by_n = {}
    for row in results["rows"]:
        by_n.setdefault(row["n"], {})[row["variant"]] = row
        assert row["repetitions"] == 5 and row["seconds_min"] <= row["seconds"] <= row["seconds_max"]
        assert row["interactions_per_s"] > 0
        assert abs(row["gflops"] - 20 * row["interactions_per_s"] / 1e9) < 1e-6 * row["gflops"]
    numpy_row = by_n[512]["numpy_float64"]  # the NumPy peer, paired with the course at the same N
    assert numpy_row["ratio_to_course"] == pytest.approx(numpy_row["seconds"] / by_n[512]["cpu_numba_parallel"]["seconds"])
    assert "peer/course" in bench.__dict__["timing_suffix"](numpy_row)
    if device.is_simulator():
        assert results["notes"][:2] == ["no GPU: only the CPU variants were measured", bench.LOADED_NOTE]
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


def test_paired_interleaves_rounds_and_reports_median_spread_and_ratios():
    """Each round calls every variant once, alternating the order; medians, spreads and per-round ratios come out."""
    from course_lib.bench import paired

    order = []
    calls = {name: (lambda name=name: order.append(name)) for name in ("course", "peer", "other")}
    t = paired(calls, course="course", repeat=4, warmup=2)
    warm, timed = order[:6], order[6:]
    assert warm == ["course", "peer", "other"] * 2
    assert timed == ["course", "peer", "other", "other", "peer", "course"] * 2  # forwards, backwards
    for name, timing in t.items():
        assert timing["repetitions"] == 4 and len(timing["round_seconds"]) == 4
        assert timing["seconds_min"] <= timing["seconds"] <= timing["seconds_max"]
        assert timing["spread"] == pytest.approx((timing["seconds_max"] - timing["seconds_min"]) / timing["seconds"])
        assert timing["ratio_to_course"] == pytest.approx(timing["seconds"] / t["course"]["seconds"])
        assert timing["round_ratio_min"] <= timing["round_ratio_median"] <= timing["round_ratio_max"]
    assert t["course"]["ratio_to_course"] == 1.0 and t["course"]["round_ratio_max"] == 1.0


def test_paired_ratio_follows_the_slower_peer():
    import time

    from course_lib.bench import paired

    t = paired({"fast": lambda: None, "slow": lambda: time.sleep(0.01)}, course="fast", repeat=3)
    assert t["slow"]["ratio_to_course"] > 10 and t["slow"]["round_ratio_min"] > 10
    assert t["slow"]["seconds"] >= 0.01


@pytest.mark.parametrize("kwargs, message", [
    (dict(calls={}), "at least one callable"),
    (dict(calls={"a": int}, course="b"), "course 'b' is not one of"),
    (dict(calls={"a": int}, repeat=0), "repeat must be >= 1"),
    (dict(calls={"a": int}, warmup=-1), "warmup >= 0"),
])
def test_paired_rejects_bad_arguments(kwargs, message):
    from course_lib.bench import paired

    calls = kwargs.pop("calls")
    with pytest.raises(ValueError, match=message):
        paired(calls, **kwargs)


def test_paired_rows_ratio_lines_and_growth_exponent():
    from course_lib.bench import growth_exponent, paired_rows, ratio_lines

    timings = {"course": {"seconds": 1.0, "seconds_min": 0.9, "seconds_max": 1.2, "spread": 0.3, "repetitions": 3,
                          "ratio_to_course": 1.0, "round_ratio_min": 1.0, "round_ratio_max": 1.0},
               "peer": {"seconds": 2.5, "seconds_min": 2.0, "seconds_max": 3.0, "spread": 0.4, "repetitions": 3,
                        "ratio_to_course": 2.5, "round_ratio_min": 2.2, "round_ratio_max": 2.9}}
    rows = paired_rows(timings, {"n": 7}, variants={"peer": "library"}, extra={"peer": {"prepare_seconds": 0.5}})
    assert [r["variant"] for r in rows] == ["course", "library"] and rows[1]["n"] == 7
    assert rows[1]["prepare_seconds"] == 0.5 and "prepare_seconds" not in rows[0]
    lines = ratio_lines(rows + [{"variant": "unpaired", "seconds": 1.0}], size=lambda r: f"N={r['n']}",
                        course=lambda r: r["variant"] == "course")
    assert len(lines) == 2 and "peer/course" not in lines[0]
    assert "median of 3 (spread 40 %)  peer/course 2.50x (rounds 2.20-2.90)  + preparation 0.5 s" in lines[1]
    assert growth_exponent([1000, 2000, 4000], [1.0, 2.0, 4.0]) == pytest.approx(1.0)
    assert growth_exponent([1000, 2000], [1.0, 5.3]) == pytest.approx(2.406, abs=1e-3)
    assert growth_exponent([1000], [1.0]) is None and growth_exponent([5, 5], [1.0, 2.0]) is None


def test_gpu_run_without_a_gpu_says_it_needs_one(tmp_path, capsys):
    """`--gpu` on a machine without a GPU measures nothing, writes nothing and says why (exit status 2)."""
    if device.is_gpu():
        pytest.skip("this machine has a GPU: the refusal cannot happen here")
    from course_lib.bench.__main__ import NEEDS_GPU

    assert main(["nbody", "--gpu", "--out", str(tmp_path)]) == NEEDS_GPU == 2
    err = capsys.readouterr().err
    assert "needs an NVIDIA GPU" in err and "Nothing was measured" in err and "without --gpu" in err
    assert not list(tmp_path.iterdir())


def test_gpu_run_writes_into_the_committed_results_with_versions(tmp_path, monkeypatch, capsys):
    """On a GPU, `--gpu` writes to benchmarks/results/ (where lessons read) with device, driver and versions."""
    import types

    from course_lib.bench import __main__ as cli

    fake_unit = types.SimpleNamespace(run=lambda quick: {"rows": [{"variant": "x"}], "summary": {}, "notes": []},
                                      summary=lambda results: "fake summary")
    monkeypatch.setattr(cli.device, "is_gpu", lambda: True)
    monkeypatch.setattr(cli, "RESULTS_DIR", tmp_path)
    monkeypatch.setattr(bench, "driver_versions", lambda: {"driver": "13.0", "runtime": "13.0"})
    monkeypatch.setattr(cli.importlib, "import_module", lambda name: fake_unit)
    assert main(["nbody", "--gpu"]) == 0
    (json_file,) = tmp_path.glob("nbody_*.json")
    saved = json.loads(json_file.read_text())
    assert saved["cuda"] == {"driver": "13.0", "runtime": "13.0"} and saved["date"] and saved["device"]["name"]
    assert {"numpy", "scipy", "numba", "fastcluster", "mne"} <= set(saved["versions"])
    if not any(name.startswith("cupy") for name in saved["versions"]):
        assert any("no GPU library peer" in note for note in saved["notes"])
    assert "fake summary" in capsys.readouterr().out


def test_versions_are_read_from_metadata():
    from importlib import metadata

    v = bench.versions()
    assert v["numpy"] == metadata.version("numpy") and set(v) <= set(bench.VERSIONED)
    assert bench.driver_versions() == {} or device.is_gpu()


def test_cpu_runs_are_named_apart_from_gpu_runs_and_skipped_by_lessons(tmp_path):
    base = bench.stamp("nbody")
    row = {"variant": "cpu_numba_parallel", "n": 512, "interactions_per_s": 1e9}
    cpu = dict(base, backend="simulator", summary={}, notes=[], rows=[row], date="2026-11-30T10:00:00+00:00")
    full, _ = bench.write_results(dict(cpu, quick=False), tmp_path)
    quick, _ = bench.write_results(dict(cpu, quick=True), tmp_path)
    assert (full.name, quick.name) == ("nbody_cpu-only_2026-11-30.json", "nbody_cpu-only-quick_2026-11-30.json")
    assert bench.committed_results("nbody", tmp_path) == []


def test_committed_results_folder_reads_cleanly():
    """Every committed results file of a unit is readable; CPU runs carry `cpu-only` in their name."""
    from course_lib.bench.__main__ import benchmarked_units

    for unit in benchmarked_units():
        for run in bench.committed_results(unit):  # raises on a broken or foreign file
            assert run["backend"] == "gpu"
    for path in bench.RESULTS_DIR.glob("*.json"):
        data = json.loads(path.read_text())
        assert (data["backend"] == "gpu") == ("_cpu-only" not in path.name), path.name


def test_paired_reports_progress_only_when_asked(monkeypatch, capsys):
    # Lessons call paired() in cells: silent there. The command-line bench turns progress on, so that a run
    # stopped at its time limit has said which measurements it finished.
    bench.paired({"course": lambda: None, "peer": lambda: None}, course="course", repeat=1)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(bench, "PROGRESS", True)
    bench.paired({"course": lambda: None, "peer": lambda: None}, course="course", repeat=1)
    err = capsys.readouterr().err
    assert "paired: course " in err and ", peer " in err


def test_readme_performance_table_is_the_scripts_output():
    # The manual's table (docs/benchmarks.md) is printed from the committed runs, never typed in: a new or removed
    # results file without `python benchmarks/performance_table.py` pasted into that page fails here.
    import importlib.util

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("performance_table", root / "benchmarks" / "performance_table.py")
    table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table)
    expected = table.markdown(table.rows())
    assert len(expected.splitlines()) > 2
    assert expected in (root / "docs" / "benchmarks.md").read_text(), \
        "docs/benchmarks.md's performance table is stale: paste the output of `python benchmarks/performance_table.py`"


# --- The timing rules (course_lib.bench.measure), on a simulated host clock and device queue -----------


class FakeGPU:
    """A host clock and an in-order device queue: a launch costs the host ``host`` seconds, then runs
    ``kernel`` seconds on the device once the work queued before it is done; an event fires when the
    device reaches it. ``spin_factor`` < 1 makes the spin kernel shorter than asked."""

    def __init__(self, host=50e-6, kernel=3e-6, spin_factor=1.0):
        self.host, self.kernel, self.spin_factor = host, kernel, spin_factor
        self.t = 0.0
        self.free = 0.0
        self.launched = 0

    def _submit(self, seconds):
        self.free = max(self.t, self.free) + seconds
        return self.free

    def launch(self):
        self.t += self.host
        self._submit(self.kernel)
        self.launched += 1

    def now(self):
        return self.t

    def event(self):
        return {}

    def record(self, event):
        self.t += 1e-6
        event["at"] = self._submit(0.0)

    def elapsed(self, start, stop):
        self.t = max(self.t, stop["at"])
        return stop["at"] - start["at"]

    def synchronize(self):
        self.t = max(self.t, self.free)

    def spin(self, seconds):
        self.t += 5e-6
        self._submit(seconds * self.spin_factor)


def test_events_around_one_launch_time_the_host_and_queued_launches_time_the_kernel():
    from course_lib.bench.measure import device_time, event_time

    gpu = FakeGPU(host=50e-6, kernel=3e-6)
    one = event_time(gpu.launch, gpu=gpu)
    assert one["seconds"] == pytest.approx(53e-6, rel=0.05) and not one["long_enough"]
    timing = device_time(gpu.launch, gpu=gpu)
    assert timing.device_seconds == pytest.approx(3e-6, rel=1e-6)
    assert timing.host_seconds_per_launch == pytest.approx(50e-6, rel=1e-6)
    assert timing.queued and timing.launches == 256  # 2 ms of 3 us kernels, capped at 256
    row = timing.fields()
    assert row["scope"] == "device" and row["seconds"] == timing.device_seconds
    assert row["host_seconds_per_launch"] == timing.host_seconds_per_launch and row["repetitions"] == 5


def test_a_long_kernel_is_timed_one_launch_at_a_time():
    from course_lib.bench.measure import device_time, event_time

    gpu = FakeGPU(host=50e-6, kernel=5e-3)
    timing = device_time(gpu.launch, gpu=gpu)
    assert timing.launches == 1 and timing.device_seconds == pytest.approx(5e-3, rel=1e-9) and timing.queued
    assert event_time(gpu.launch, gpu=gpu)["long_enough"]


def test_launches_the_host_could_not_queue_ahead_are_flagged():
    from course_lib.bench.measure import device_time

    short = FakeGPU(host=50e-6, kernel=3e-6, spin_factor=0.05)  # the spin ends before the launches are queued
    timing = device_time(short.launch, gpu=short, launches=64, repeat=3)
    assert not timing.queued and timing.device_seconds > 10e-6  # host time leaked into the interval
    retried = FakeGPU(host=50e-6, kernel=3e-6, spin_factor=0.3)  # a longer spin on retry suffices
    timing = device_time(retried.launch, gpu=retried, launches=64, repeat=3)
    assert timing.queued and timing.device_seconds == pytest.approx(3e-6, rel=1e-6)


def test_device_time_rejects_bad_arguments():
    from course_lib.bench.measure import device_time

    gpu = FakeGPU()
    with pytest.raises(ValueError, match="repeat"):
        device_time(gpu.launch, gpu=gpu, repeat=0)
    with pytest.raises(ValueError, match="launches"):
        device_time(gpu.launch, gpu=gpu, launches=0)


def test_end_to_end_is_the_wall_time_of_the_call_with_the_device_waited_for():
    from course_lib.bench.measure import wall_time

    gpu = FakeGPU(host=50e-6, kernel=1e-3)

    def public_call():  # 3 launches and 0.2 ms of host work (allocations, copies)
        for _ in range(3):
            gpu.launch()
        gpu.t += 2e-4

    timed = wall_time(public_call, synchronize=gpu.synchronize, clock=gpu.now, repeat=3)
    assert timed["scope"] == "end_to_end" and timed["seconds"] == pytest.approx(50e-6 + 3e-3, rel=1e-6)
    unsynchronised = wall_time(public_call, clock=gpu.now, repeat=3)["seconds"]
    assert unsynchronised < 1e-3  # without the wait the clock stops before the device is done


def test_bandwidth_counts_dram_bytes_only_past_the_l2():
    from course_lib.bench.measure import L2_BYTES, dram_rate

    with pytest.raises(ValueError, match="fits the 50 MB L2"):
        dram_rate(40e6, 1e-5, working_set=40e6)
    flushed = dram_rate(40e6, 1e-5, working_set=40e6, l2_flushed=True, peak=4.8e12)
    assert flushed["dram_bytes_per_s"] == pytest.approx(4e12) and flushed["fraction_of_peak"] == pytest.approx(4 / 4.8)
    big = dram_rate(340e6, 145e-6, working_set=340e6, requested_bytes=550e6)
    assert big["requested_bytes_per_s"] > big["dram_bytes_per_s"] and L2_BYTES == 50e6


def test_teps_rates_count_graph500_edges_and_arcs_apart():
    from course_lib.bench.measure import teps_rates

    rates = teps_rates(component_edges=1000, arcs_examined=2000, seconds=1e-3)
    assert rates["teps"] == 1e6 and rates["arcs_per_s"] == 2e6
    with pytest.raises(ValueError):
        teps_rates(1, 1, 0.0)


def test_rows_carry_one_scope_and_compare_the_same_problem():
    from course_lib.bench.measure import check_rows

    rows = [{"variant": "jacobi", "scope": "device", "size": "333x500", "pixels": 8418},
            {"variant": "opencv", "scope": "end_to_end", "size": "333x500", "pixels": 8418}]
    check_rows(rows, compare_by=("size", "pixels"))
    with pytest.raises(ValueError, match="compare different pixels"):
        check_rows(rows + [{"variant": "whole image", "scope": "device", "size": "333x500", "pixels": 166500}],
                   compare_by=("size", "pixels"))
    with pytest.raises(ValueError, match="scope"):
        check_rows([{"variant": "x"}])


def test_speedups_are_against_the_fastest_cpu_path_a_library_included():
    from course_lib.bench.measure import speedup

    cpu = [{"variant": "serial_queue", "seconds": 1.59}, {"variant": "scipy", "seconds": 0.017},
           {"variant": "direction_optimizing_cpu", "seconds": 0.078}]
    out = speedup(0.0085, cpu)
    assert out["against"] == "scipy" and out["speedup"] == pytest.approx(2.0)
    with pytest.raises(ValueError, match="no CPU path"):
        speedup(1.0, [])


def test_gpu_time_and_cupy_time_need_a_gpu():
    if device.is_gpu():
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="needs a GPU"):
        bench.gpu_time(lambda: None)


# --- The cost model (python -m course_lib.bench model) and the committed host costs -------------------------


def _gpu_run(unit, rows, tmp_path, day="2026-11-26"):
    device_fields = {"backend": "gpu", "name": "Test GPU", "sm_count": 100, "fp32_peak_flops": 100 * 128 * 2 * 2e9,
                     "memory_bandwidth": 4e12}
    extra = {"summary": {"bandwidth": [{"memory": "pageable", "mib": 256, "gb_per_s": 8.0},
                                       {"memory": "pinned", "mib": 256, "gb_per_s": 40.0}]}} if unit == "colocation" else {}
    data = {"unit": unit, "backend": "gpu", "device": device_fields, "date": day + "T00:00:00+00:00", "rows": rows,
            **extra}
    (tmp_path / f"{unit}_test-gpu_{day}.json").write_text(json.dumps(data))


def test_committed_costs_come_from_named_rows_of_the_runs(tmp_path):
    from course_lib.bench.costs import committed_costs

    _gpu_run("poisson", [{"variant": "jacobi", "scope": "iterations", "iterations": 800, "seconds": 800 * 50e-6},
                         {"variant": "jacobi", "scope": "iterations", "iterations": 800, "seconds": 800 * 54e-6},
                         {"variant": "jacobi", "scope": "iterations", "iterations": 800, "seconds": 800 * 52e-6}],
             tmp_path)
    _gpu_run("bfs", [{"variant": "frontier_atomic", "graph": "grid8x8", "iterations": 100, "seconds": 100 * 192e-6}],
             tmp_path)
    _gpu_run("colocation", [], tmp_path)
    costs = committed_costs(tmp_path)
    assert costs.launch_seconds == pytest.approx(52e-6) and costs.copy_seconds == pytest.approx(70e-6)
    assert costs.pageable_bytes_per_s == 8e9 and costs.pinned_bytes_per_s == 40e9 and costs.device == "Test GPU"
    assert "jacobi rows" in costs.sources["launch_seconds"] and "not measured" in costs.sources["alloc_seconds"]
    assert costs.modelled_host_seconds(launches=10, copies=2, copy_bytes=8e6) == pytest.approx(10 * 52e-6 + 140e-6 + 1e-3)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert committed_costs(empty).launch_seconds is None and committed_costs(empty).modelled_host_seconds(1) is None
    # A probe run measures the host cost per launch directly and replaces the unit run's estimate.
    probe = {"unit": "probe-poisson", "backend": "gpu", "device": {"name": "Probe GPU"}, "date": "2026-11-27T00:00:00",
             "rows": [{"variant": "jacobi", "scope": "device", "host_seconds_per_launch": 30e-6},
                      {"variant": "jacobi", "scope": "end_to_end", "allocations": 4, "alloc_host_seconds": 40e-6}]}
    (tmp_path / "probe-poisson_probe-gpu_2026-11-27.json").write_text(json.dumps(probe))
    newer = committed_costs(str(tmp_path) + "/")  # another key: not the cached reading
    assert newer.launch_seconds == 30e-6 and newer.alloc_seconds == 10e-6 and newer.device == "Probe GPU"


def test_the_model_predicts_rows_from_slots_bytes_launches_and_copies(tmp_path):
    from course_lib.bench import model

    _gpu_run("poisson", [{"variant": "jacobi", "scope": "iterations", "iterations": 800, "seconds": 800 * 50e-6,
                          "height": 10, "width": 10, "config": "block=32x8", "interior_pixels": 64}], tmp_path)
    _gpu_run("spmv", [{"variant": "cusparse", "matrix": "laplacian_5pt", "dtype": "float32", "rows": 10**6,
                       "nnz": 5 * 10**6, "bytes": 68 * 10**6, "seconds": 1e-4},
                      {"variant": "cpu_numba_parallel", "matrix": "laplacian_5pt", "seconds": 1e-3}], tmp_path)
    entries = model.errors(("poisson", "spmv"), tmp_path)
    assert [e["variant"] for e in entries] == ["jacobi", "cusparse"]  # CPU rows are not GPU rows
    jacobi, cusparse = entries
    assert jacobi["calibration"] and jacobi["predicted"] == pytest.approx(800 * 50e-6)
    # cuSPARSE: one launch at the committed cost, and the CSR bytes with x read once instead of per non-zero.
    dram = 68e6 - 4 * 5e6 + 4 * 1e6
    assert cusparse["terms"] == {"launches": 1, "dram_bytes": dram}
    assert cusparse["predicted"] == pytest.approx(50e-6 + dram / 4e12)
    assert cusparse["error"] == pytest.approx((cusparse["predicted"] - 1e-4) / 1e-4)
    text = model.format_errors(entries)
    assert "(calibration row)" in text and "median |error| per unit" in text and "spmv" in text.splitlines()[-1]


def test_model_command_prints_every_committed_row(capsys):
    from course_lib.bench import model

    if not bench.committed_results("spmv"):
        pytest.skip("no committed GPU run in this checkout")
    assert main(["model", "spmv", "--summary"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("median |error| per unit") and "spmv" in out
    with pytest.raises(SystemExit):
        model.main(["hac"])  # hac declares no cost model


def test_readme_states_the_models_error_and_the_committed_costs():
    """The manual's statement of the cost model (docs/benchmarks.md) is the command's output on the committed runs."""
    from course_lib.bench import model
    from course_lib.bench.costs import committed_costs

    if not bench.committed_results("poisson"):
        pytest.skip("no committed GPU run in this checkout")
    readme = (Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md").read_text()
    summary = model.format_errors(model.errors(), per_row=False)
    assert "```\n" + summary + "\n```" in readme
    costs = committed_costs()
    assert (f"({1e6 * costs.launch_seconds:.0f} us per launch and {1e6 * costs.copy_seconds:.0f} us per small "
            "blocking copy") in " ".join(readme.split())
