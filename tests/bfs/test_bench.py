"""The BFS benchmark runs (its CPU part without a GPU); the figures and the explorer draw."""


import json
import matplotlib
import pytest
from course_lib import bfs, device
from course_lib.bench import LOADED_NOTE
from course_lib.bench.__main__ import main
from course_lib.bfs import data

matplotlib.use("Agg")


def test_bfs_bench_quick_writes_results(tmp_path, capsys):
    assert main(["bfs", "--quick", "--out", str(tmp_path)]) == 0
    (json_file,) = tmp_path.glob("bfs_*.json")
    assert list(tmp_path.glob("bfs_*.png"))
    results = json.loads(json_file.read_text())
    variants = {r["variant"] for r in results["rows"]}
    assert {"scipy_breadth_first_order", "cpu_numba_queue", "cpu_numba_direction_optimizing", "networkx"} <= variants
    for row in results["rows"]:
        assert row["gteps"] > 0 and 0 < row["traversed_edges"] <= row["edges"]
        assert abs(row["gteps"] - row["traversed_edges"] / row["seconds"] / 1e9) < 1e-9 * row["gteps"]
        if row["variant"] in ("scipy_breadth_first_order", "cpu_numba_queue", "networkx"):  # paired, one run
            assert row["repetitions"] == 5 and row["seconds_min"] <= row["seconds"] <= row["seconds_max"]
            assert row["ratio_to_course"] > 0
    assert all(r["prepare_seconds"] > 0 for r in results["rows"] if r["variant"] == "networkx")
    if device.is_simulator():
        # the last note is the machine's load during the run (course_lib.bench.load_note)
        assert results["notes"][:-1] == ["no GPU: only the CPU variants were measured", LOADED_NOTE]
        assert results["notes"][-1].startswith("load average (1 min) ")
    else:
        assert {"frontier_atomic", "frontier_scan", "direction_optimizing", "edge_quadratic"} <= variants
        assert "goal_met" in results["summary"]


def test_goal_summary_picks_the_best_frontier_on_the_largest_kronecker_graph():
    from course_lib.bfs import bench

    def row(variant, graph, vertices, gteps):
        return {"variant": variant, "graph": graph, "vertices": vertices, "gteps": gteps}

    big = 1 << 22
    rows = [row("scipy_breadth_first_order", "kronecker22", big, 0.1), row("cpu_numba_queue", "kronecker22", big, 0.2),
            row("frontier_atomic", "kronecker22", big, 4.0), row("frontier_scan", "kronecker22", big, 3.0),
            row("edge_quadratic", "kronecker22", big, 1.0), row("frontier_atomic", "kronecker20", big // 4, 9.0),
            row("frontier_atomic", "grid2048x2048", big, 0.5)]
    s = bench._goal(rows)
    assert s["best_frontier"]["variant"] == "frontier_atomic" and s["graph"] == "kronecker22"
    assert s["speedup_vs_scipy"] == pytest.approx(40) and s["speedup_vs_best_cpu"] == pytest.approx(20)
    assert s["goal_met"]
    rows[2]["gteps"] = rows[3]["gteps"] = 1.5  # below 3.3 GTEPS
    assert not bench._goal(rows)["goal_met"]


def test_gpu_part_of_the_benchmark_runs_its_code_path():
    """The GPU rows are timed only on a GPU, but their code path (device graph reuse, CUDA events, work counts)
    runs in the simulator too; its times mean nothing there and are not checked."""
    from course_lib.bfs import bench

    graphs = [("kronecker5", bfs.as_graph(data.kronecker(5, 4, seed=1), directed=False), 3),
              ("grid4x4", bfs.as_graph(data.grid_2d(4, 4), directed=False), 0)]
    rows = bench._gpu_rows(graphs, True, 3.35e12)
    assert {r["variant"] for r in rows} == {"frontier_atomic", "frontier_scan", "direction_optimizing",
                                            "edge_quadratic", "frontier_twc", "direction_optimizing_twc"}
    for row in rows:
        graph = dict((name, g) for name, g, _ in graphs)[row["graph"]]
        if row["variant"].startswith("frontier"):
            assert row["edges_examined"] == 2 * row["traversed_edges"]  # each arc of the component once
            # The roofline's bytes are per arc: a top-down search examines 2 arcs per TEPS edge.
            assert row["roofline_arcs_per_s_range"] == pytest.approx([3.35e12 / 36, 3.35e12 / 8])
            assert row["roofline_gteps_range"] == pytest.approx([3.35e12 / 72 / 1e9, 3.35e12 / 16 / 1e9])
            assert row["arcs_examined"] == row["edges_examined"] and row["scope"] == "end_to_end"
        if row["variant"] == "edge_quadratic":
            assert row["edges_examined"] == row["iterations"] * graph.n_arcs // 2
