"""Plots, widgets and the benchmark run without a display and without a GPU."""


import json
import matplotlib
import numpy as np
from course_lib import device, poisson
from course_lib.bench import LOADED_NOTE
from course_lib.bench.__main__ import main as bench_main

matplotlib.use("Agg")


def test_bench_quick_writes_results(tmp_path, capsys):
    assert bench_main(["poisson", "--quick", "--out", str(tmp_path)]) == 0
    (json_file,) = tmp_path.glob("poisson_*.json")
    assert list(tmp_path.glob("poisson_*.png"))
    results = json.loads(json_file.read_text())
    variants = {r["variant"] for r in results["rows"]}
    assert {"cpu_numba_parallel", "numpy_reference", "opencv_seamlessClone"} <= variants
    for row in results["rows"]:
        assert row["seconds"] > 0
        if row["iterations"]:
            expected = row["interior_pixels"] * row["iterations"] / row["seconds"]
            assert np.isclose(row["pixel_iterations_per_s"], expected)
            assert np.isclose(row["effective_gbps"], expected * 37 / 1e9)
    opencv = [r for r in results["rows"] if r["variant"] == "opencv_seamlessClone"]
    assert opencv and all(r["prepare_seconds"] > 0 and r["repetitions"] == 5 and r["ratio_to_course"] > 0
                          for r in opencv)
    # Every finished clone says how far it is from the exact solution; the course's direct solve is it.
    end_to_end = [r for r in results["rows"] if r["scope"] == "end_to_end" and r["variant"] in
                  ("cpu_numba_parallel", "cpu_direct", "opencv_seamlessClone")]
    assert all(r["levels_from_exact_mean"] >= 0 and r["levels_from_exact_max"] >= 0 for r in end_to_end)
    direct = [r for r in end_to_end if r["variant"] == "cpu_direct"]
    assert len(direct) == 2 and all(r["levels_from_exact_max"] <= 1 and r["ratio_to_course"] == 1.0 for r in direct)
    if device.is_simulator():
        # the last note is the machine's load during the run (course_lib.bench.load_note)
        assert results["notes"][:-1] == ["no GPU: only the CPU variants were measured", LOADED_NOTE]
        assert results["notes"][-1].startswith("load average (1 min) ")
    else:
        assert {"jacobi", "jacobi_fused"} <= variants and "goal_met" in results["summary"]


def test_bench_gpu_part_runs_in_the_simulator_at_a_tiny_size(monkeypatch):
    """The GPU rows' code (solvers, end-to-end calls, summary) runs; wall-clock stands in for CUDA events."""
    from course_lib.bench import time_call
    from course_lib.poisson import bench

    if not device.is_simulator():
        return  # on a GPU, test_bench_quick_writes_results covers the real thing
    monkeypatch.setattr(bench, "GOAL_SIZE", (24, 36))
    monkeypatch.setattr(bench, "ITERATIONS", 3)
    from course_lib.bench.measure import DeviceTiming

    def device_time(launch, repeat):
        seconds = time_call(launch, repeat=1, warmup=0, min_time=0)
        return DeviceTiming(seconds, seconds, 1, True, [seconds])

    monkeypatch.setattr(bench, "device_time", device_time)
    monkeypatch.setattr(bench, "time_call", lambda fn, repeat: time_call(fn, repeat=1, warmup=0, min_time=0))
    monkeypatch.setattr(bench.device, "is_gpu", lambda: True)
    results = bench.run(quick=True)
    gpu = [r for r in results["rows"] if r["variant"] in ("jacobi", "jacobi_fused")]
    assert {(r["variant"], r["scope"]) for r in gpu} == {("jacobi", "device"), ("jacobi", "end_to_end"),
                                                         ("jacobi_fused", "device"), ("jacobi_fused", "end_to_end")}
    # Every row of a size solves the mask's box, the pixels seamless_clone solves.
    assert len({r["solved_pixels"] for r in results["rows"] if r["height"] == 24}) == 1
    assert all(r["host_seconds_per_launch"] > 0 and r["launches_per_call"] >= 1 for r in gpu if r["scope"] == "device")
    assert results["summary"]["best_end_to_end"]["height"] == 24 and "goal_met" in results["summary"]
    assert results["summary"]["strongest_cpu"] in ("cpu_direct", "opencv_seamlessClone")
    assert results["summary"]["speedup_vs_strongest_cpu"] > 0
    assert "goal: 800 iterations" in bench.summary(dict(results, device={"name": "sim"}))
