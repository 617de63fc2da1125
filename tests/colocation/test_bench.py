"""The co-location benchmark runs anywhere (its CPU part without a GPU) and writes JSON + a plot."""

import json

from course_lib import device
from course_lib.bench import LOADED_NOTE
from course_lib.bench.__main__ import main


def test_colocation_bench_quick_writes_results(tmp_path, capsys):
    assert main(["colocation", "--quick", "--out", str(tmp_path)]) == 0
    (json_file,) = tmp_path.glob("colocation_*.json")
    assert list(tmp_path.glob("colocation_*.png"))
    results = json.loads(json_file.read_text())
    assert results["unit"] == "colocation" and results["parameters"]["n_features"] == 20
    rows = results["rows"]
    cpu = [r for r in rows if r["variant"].startswith("cpu")]
    assert [r["instances"] for r in cpu] == [5_000, 20_000] and all(r["seconds"] > 0 for r in rows)
    # The planted groups are found, and the reference agrees where it ran.
    assert all(r["patterns"] >= 3 for r in cpu)
    (reference,) = [r for r in rows if r["variant"].startswith("reference")]
    assert reference["agrees"] is True and reference["instances"] == 5_000
    # paired with the compiled miner in one run: median of REPEAT rounds, spread, ratio
    cpu_5k = next(r for r in cpu if r["instances"] == 5_000)
    assert reference["repetitions"] == cpu_5k["repetitions"] == 3
    assert reference["ratio_to_course"] == reference["seconds"] / cpu_5k["seconds"]
    assert reference["round_ratio_min"] <= reference["round_ratio_median"] <= reference["round_ratio_max"]
    out = capsys.readouterr().out
    assert "cpu (numba, all cores)" in out
    if device.is_simulator():
        # the last note is the machine's load during the run (course_lib.bench.load_note)
        assert results["notes"][:-1] == ["no GPU: only the CPU variants were measured", LOADED_NOTE]
        assert results["notes"][-1].startswith("load average (1 min) ")
        assert results["summary"] == {}


def test_gpu_part_runs_every_version_and_reports_the_goal(monkeypatch):
    """The GPU code path with the simulator standing in for the GPU (tiny sizes, no copy timing)."""
    from course_lib.colocation import bench

    monkeypatch.setattr(bench, "QUICK_SIZES", (80,))
    monkeypatch.setattr(bench, "time_call", lambda fn, **kw: (fn(), 1e-3)[1])  # one run, a fake clock
    monkeypatch.setattr(bench, "N_FEATURES", 4)  # 6 size-2 candidates: the per-candidate versions stay quick
    monkeypatch.setattr(bench, "GROUPS", ((0, 1),))
    monkeypatch.setattr(bench, "REFERENCE_UP_TO", 0)
    monkeypatch.setattr(bench.device, "is_gpu", lambda: True)
    monkeypatch.setattr("course_lib.bench.device.is_gpu", lambda: True)
    monkeypatch.setattr(bench, "copy_bandwidth", lambda sizes: [dict(memory="pinned", mib=16, gb_per_s=20.0)])
    results = bench.run(quick=True)
    gpu = [r for r in results["rows"] if r["variant"].startswith("gpu")]
    assert [r["variant"] for r in gpu] == ["gpu v0", "gpu v1", "gpu v2", "gpu v3", "gpu v4"]
    cpu_patterns = next(r["patterns"] for r in results["rows"] if r["variant"].startswith("cpu"))
    assert all(r["patterns"] == cpu_patterns for r in gpu)
    goal = results["summary"]["goal"]
    assert goal["instances"] == 80 and goal["speedup"] > 0 and goal["goal"] == bench.GOAL_SPEEDUP
    text = bench.summary(results)
    assert "goal: GPU >= 50x" in text and "copy from pinned" in text


def test_copy_bandwidth_takes_turns_and_keeps_the_median(monkeypatch):
    """Pageable and pinned copies alternate (after one warm-up turn); the median copy time is kept."""
    from course_lib.colocation import bench

    monkeypatch.setattr(bench.device, "is_gpu", lambda: True)
    calls, times = [], iter([9.0, 9.0] + [1e-3, 5e-4, 2e-3, 5e-4, 1e-3, 9.0]).__next__

    def fake_event_time(copy, repeat, warmup):
        assert (repeat, warmup) == (1, 0)
        calls.append(copy)
        return {"seconds": times()}

    monkeypatch.setattr(bench, "event_time", fake_event_time)
    rows = bench.copy_bandwidth([1], repeat=3)
    assert len(calls) == 8 and calls[0::2] == [calls[0]] * 4 and calls[1::2] == [calls[1]] * 4
    assert [r["memory"] for r in rows] == ["pageable", "pinned"] and all(r["mib"] == 1 for r in rows)
    assert rows[0]["gb_per_s"] == 2**20 / 1e-3 / 1e9 and rows[1]["gb_per_s"] == 2**20 / 5e-4 / 1e9
