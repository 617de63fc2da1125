"""Does the benchmark run, report the goals and draw its figure?"""

import json

import matplotlib

from course_lib.bench import stamp, write_results
from course_lib.cellsim import bench

matplotlib.use("Agg")


def test_quick_benchmark_reports_rates_and_the_cpu_goal(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "_cpu_rows", lambda quick: _small_rows())
    results = stamp("cellsim")
    results.update(bench.run(quick=True))
    s = results["summary"]
    assert s["cpu_over_python"] > 0 and isinstance(s["cpu_goal_met"], bool)
    assert {r["variant"] for r in results["rows"]} == {"python_event_loop", "cpu_numba_parallel",
                                                       "cpu_numba_serial"}
    json_path, png_path = write_results(results, tmp_path, bench.plot)
    assert json.loads(json_path.read_text())["unit"] == "cellsim" and png_path.stat().st_size > 0
    assert "Python event loop" in bench.summary(results)


def _small_rows():
    """The CPU rows at a small size (the real quick run takes about a minute)."""
    import time

    from course_lib.cellsim import THESIS_TYPES, lognormal_histogram, prepare_problem, simulate_reference
    from course_lib.cellsim.cpu import simulate_cpu

    h0 = lognormal_histogram(20, seed=1)
    start = time.perf_counter()
    python = simulate_reference(h0, THESIS_TYPES, tau_max=bench.TAU_MAX, phi_min=bench.PHI_MIN, seed=1,
                                streams="numpy")
    rows = [bench._row("python_event_loop", 20, time.perf_counter() - start, python)]
    problem = prepare_problem(h0, THESIS_TYPES, tau_max=bench.TAU_MAX, phi_min=bench.PHI_MIN, seed=1)
    for variant, parallel in (("cpu_numba_parallel", True), ("cpu_numba_serial", False)):
        seconds, result = bench._timed(lambda: simulate_cpu(problem, parallel=parallel), repeat=1)
        rows.append(bench._row(variant, 20, seconds, result))
    return rows
