"""Does the benchmark run end to end on small graphs, and summarise and plot what it measured?"""

import json

import matplotlib

from course_lib import bench
from course_lib.hac import bench as hac_bench
from course_lib.hac import data

matplotlib.use("Agg")


def test_quick_benchmark_on_tiny_graphs(tmp_path, monkeypatch):
    tiny = [("planted_120", data.planted_graph(120, 1200, n_groups=2, seed=1)[0])]
    monkeypatch.setattr(hac_bench, "_graphs", lambda quick: tiny)
    results = bench.stamp("hac")
    results.update(hac_bench.run(quick=True))
    variants = {r["variant"] for r in results["rows"]}
    assert {"cpu", "cpu_scan", "scipy_linkage_dense", "fastcluster_dense", "python_original"} <= variants
    s = results["summary"]
    assert s["n_elements"] == 120 and not s["cpu_goal_met"]  # the goal is for the thesis size only
    assert "Python original" in hac_bench.summary(results)
    json_path, png_path = bench.write_results(results, tmp_path, hac_bench.plot)
    assert json.loads(json_path.read_text())["unit"] == "hac" and png_path.stat().st_size > 0
