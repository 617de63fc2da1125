"""Does the benchmark time bare, warmed peers beside the course in paired rounds, and report them honestly?"""

import json

import matplotlib
import numpy as np

from course_lib import bench
from course_lib.hac import bench as hac_bench
from course_lib.hac import data

matplotlib.use("Agg")


def test_quick_benchmark_on_tiny_graphs(tmp_path, monkeypatch):
    tiny = [(f"planted_{n}", data.planted_graph(n, 10 * n, n_groups=2, seed=1)[0]) for n in (60, 120)]
    monkeypatch.setattr(hac_bench, "_graphs", lambda quick: tiny)
    monkeypatch.setattr(hac_bench, "REPEAT", 3)
    results = bench.stamp("hac")
    results.update(hac_bench.run(quick=True))
    variants = {r["variant"] for r in results["rows"]}
    assert {"cpu", "cpu_scan", "scipy_linkage", "fastcluster_average", "python_original"} <= variants
    paired_rows = [r for r in results["rows"] if "ratio_to_course" in r]
    assert len(paired_rows) == 2 * 4  # cpu float32, cpu float64 and the two peers at each size
    for r in paired_rows:
        assert r["repetitions"] == 3 and len(r["round_seconds"]) == 3
        assert r["seconds_min"] <= r["seconds"] <= r["seconds_max"] and r["spread"] >= 0
        assert r["round_ratio_min"] <= r["round_ratio_median"] <= r["round_ratio_max"]
    course = [r for r in paired_rows if r["variant"] == "cpu" and r["dtype"] == "float64"]
    assert all(r["ratio_to_course"] == 1.0 and r["same_heights_as_scipy"] for r in course)
    peers = [r for r in paired_rows if r["variant"] in hac_bench.PEERS]
    assert all(r["prepare_seconds"] > 0 and r["input"] == "condensed distances" for r in peers)
    s = results["summary"]
    assert [p["n_elements"] for p in s["per_size"]] == [60, 120]
    assert not s["cpu_goal_met"]  # no size >= GOAL_FROM_N was measured: nothing to meet
    assert set(s["growth_exponents"]) >= {"cpu float64", "scipy_linkage", "fastcluster_average"}
    text = hac_bench.summary(results)
    assert "peer/course" in text and "growth exponents" in text and "Python original" in text
    json_path, png_path = bench.write_results(results, tmp_path, hac_bench.plot)
    saved = json.loads(json_path.read_text())
    assert saved["unit"] == "hac" and png_path.stat().st_size > 0
    assert all({"seconds", "spread", "repetitions", "ratio_to_course"} <= set(r) for r in saved["rows"]
               if r["variant"] in hac_bench.PEERS)
    # A lesson prints the newest committed GPU run of this benchmark through the unit's summary.
    committed = tmp_path / "committed"
    bench.write_results(dict(results, backend="gpu", device=dict(results["device"], name="NVIDIA H100 80GB HBM3")),
                        committed)
    shown = bench.gpu_figures("hac", committed)
    assert shown.startswith("Measured on NVIDIA H100 80GB HBM3") and "peer/course" in shown


def test_condensed_distances_are_scipys_input():
    """The peers' input is D = c - S per component, the same matrix the course's SciPy wrapper builds."""
    from scipy.cluster.hierarchy import linkage

    from course_lib.hac import cluster
    from course_lib.hac.reference import scipy_average_linkage

    g = data.planted_graph(50, 400, n_groups=2, seed=3)[0]
    ((offset, y),) = hac_bench.condensed_distances(g)
    assert y.shape == (50 * 49 // 2,) and offset == g.weight.max()
    z = linkage(y, method="average")
    np.testing.assert_allclose(np.sort(offset - z[:, 2]), np.sort(scipy_average_linkage(g).merge_heights), rtol=1e-12)
    assert hac_bench._same_heights(cluster(g, "cpu", dtype=np.float64), [(offset, y)], [z])
    z_wrong = z.copy()
    z_wrong[0, 2] += 0.1
    assert not hac_bench._same_heights(cluster(g, "cpu", dtype=np.float64), [(offset, y)], [z_wrong])
