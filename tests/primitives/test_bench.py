"""The benchmark's CPU part runs and reports the peers."""

from course_lib.primitives import bench


def test_quick_run_without_a_gpu():
    results = bench.run(quick=True)
    variants = {r["variant"] for r in results["rows"]}
    assert {"numpy_cumsum", "numpy_bincount"} <= variants
    assert all(r["gbs"] > 0 for r in results["rows"])
    assert "numpy_cumsum" in bench.summary(results)
