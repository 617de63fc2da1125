"""Does the benchmark run, report the goals and draw its figure?"""

import json

import matplotlib

from course_lib.bench import stamp, write_results
from course_lib.cellsim import bench

matplotlib.use("Agg")


def test_quick_benchmark_reports_rates_and_the_cpu_goal(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "QUICK_SIZES", (20, 60))  # the real quick run takes about a minute
    # On a GPU the benchmark adds its device rows at 100,000 cells (measured by `python -m course_lib.bench
    # cellsim --gpu`, not by the suite): this test checks the CPU rows, on either backend.
    monkeypatch.setattr(bench, "_gpu_rows", lambda quick: ([], []))
    results = stamp("cellsim")
    results.update(bench.run(quick=True))
    s = results["summary"]
    assert s["cpu_over_python"] > 0 and isinstance(s["cpu_goal_met"], bool)
    assert {r["variant"] for r in results["rows"]} == {"python_event_loop", "cpu_numba_parallel",
                                                       "cpu_numba_serial"}
    by = {(r["variant"], r["n_initial"]): r for r in results["rows"]}
    assert set(by) == {("python_event_loop", 20), ("cpu_numba_parallel", 20), ("cpu_numba_serial", 20),
                       ("cpu_numba_parallel", 60), ("cpu_numba_serial", 60)}
    for r in results["rows"]:  # paired in one run: median, spread, ratio to the compiled parallel version
        assert r["repetitions"] == bench.REPEAT and r["seconds_min"] <= r["seconds"] <= r["seconds_max"]
        assert r["ratio_to_course"] == (r["seconds"] / by[("cpu_numba_parallel", r["n_initial"])]["seconds"])
    assert all(r["cells"] > 0 for r in results["rows"])  # rates are per cell (the loop's random stream differs)
    json_path, png_path = write_results(results, tmp_path, bench.plot)
    assert json.loads(json_path.read_text())["unit"] == "cellsim" and png_path.stat().st_size > 0
    text = bench.summary(results)
    assert "Python event loop" in text and "peer/course" in text
