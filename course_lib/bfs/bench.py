"""Benchmark of Unit 3: ``python -m course_lib.bench bfs``.

Traversed edges per second (TEPS, Graph500 convention: the undirected edges of the
source's component divided by the search time) on Graph500-style Kronecker graphs
(edge factor 16, power-law, low diameter) and on a 2-D grid (road-like, high
diameter), for SciPy's ``breadth_first_order`` (compiled C), the compiled CPU BFS of
:mod:`course_lib.bfs.cpu` (a one-core queue BFS and a direction-optimising BFS on all
cores) and NetworkX (pure Python, small graphs only), and, on a
GPU, the two top-down frontier BFS, the direction-optimising BFS (reported apart: it
skips most edges, yet TEPS count every edge of the component) and the quadratic
edge-parallel BFS, with their iterations and the edges their kernels examined (counted
on the host after the timed search, :mod:`course_lib.bfs.model`).

Goal on an H100: the frontier BFS >= 3.3 GTEPS on the scale-22 Kronecker graph (the
single-GPU figure of Merrill, Garland & Grimshaw, PPoPP 2012) and >= 20x SciPy's
``breadth_first_order`` on the same graph. Roofline: a top-down level reads 8 to 36
bytes per edge (column index, the neighbour's depth, and with poor locality whole
sectors), so the memory bandwidth bounds TEPS at bandwidth / 36 .. bandwidth / 8; the
quadratic BFS reads every edge (12 bytes: both endpoints and a depth) at every level,
bound bandwidth / (12 * iterations).

GPU times are end to end: the wall time of ``traverse()`` as a user calls it, the device synchronised
(:func:`course_lib.bench.measure.wall_time`), host loop included (each level copies a frontier size or
the ``done`` flag back; nothing else: the kernels carry no counters), and the final copy of the
depths and parents to the host. Beside the TEPS, each GPU row gives the adjacency entries its kernels
examined (``arcs_examined``, ``arcs_per_s``); the roofline is per examined arc
(``roofline_arcs_per_s_range``) and, converted with the row's arcs per traversed edge, in TEPS. The graph is on the device already, but each search
still allocates its depth, parent and frontier buffers (and ``frontier_scan`` its
per-arc scratch), so the figures include those allocations: a lower bound on what a
search with preallocated buffers reaches.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy.sparse import csgraph

from .. import device
from ..bench import LOADED_NOTE, paired, plot_series, results as bench_results, series, summary_text, timed_once
from ..bench import timing_suffix
from ..bench.measure import teps_rates, wall_time
from ..bench.cases import Case, CostModel, Inputs, Probe, default_gpu_method, method_cases
from .api import METHODS, DeviceGraph, traverse
from .cpu import bfs_cpu, bfs_cpu_parallel
from .data import as_graph, grid_2d, kronecker

GOAL_GTEPS = 3.3
GOAL_SCALE = 22
GOAL_SPEEDUP_VS_SCIPY = 20.0
EDGE_FACTOR = 16
#: Bytes a top-down BFS moves per traversed edge, best and worst case (see module docstring).
BYTES_PER_EDGE = (8, 36)
#: Bytes the quadratic BFS reads per edge per iteration.
QUADRATIC_BYTES_PER_EDGE = 12
#: Paired CPU rounds (3 on the largest graphs), and the largest graph NetworkX (pure Python) runs on.
REPEAT, NETWORKX_UP_TO = 5, 1 << 12
CPU_VARIANTS = ("scipy_breadth_first_order", "cpu_numba_queue", "cpu_numba_direction_optimizing", "networkx")


def _graphs(quick, on_gpu):
    """(name, Graph, source) for the benchmark; sources have degree > 0 (as in Graph500)."""
    if quick:
        scales, grid_side = [10, 12], 64
    elif on_gpu:
        scales, grid_side = [16, 18, 20, 22], 1024
    else:
        scales, grid_side = [14, 16, 18, 20], 512
    out = []
    for scale in scales:
        g = as_graph(kronecker(scale, EDGE_FACTOR, seed=scale), directed=False)
        rng = np.random.default_rng(scale)
        source = int(rng.choice(np.flatnonzero(g.degrees > 0)))
        out.append((f"kronecker{scale}", g, source))
    out.append((f"grid{grid_side}x{grid_side}", as_graph(grid_2d(grid_side, grid_side), directed=False), 0))
    return out


def _component_edges(g, depth):
    """Undirected edges with both ends reached (each stored twice in the symmetric CSR)."""
    return int(g.degrees[depth >= 0].sum() // 2)


def _row(variant, name, g, edges, seconds, run=None, scope="end_to_end"):
    """A row: Graph500 TEPS (``gteps``: undirected edges of the component per second) and, for the GPU
    searches, the adjacency entries the kernels examined (``arcs_examined``, ``arcs_per_s``) beside them."""
    row = {"variant": variant, "graph": name, "vertices": g.n_vertices, "edges": g.n_arcs // 2,
           "traversed_edges": edges, "scope": scope, "seconds": seconds, "gteps": edges / seconds / 1e9}
    if run is not None:
        rates = teps_rates(edges, run.total_edges_examined, seconds)
        row["iterations"] = run.iterations
        row["edges_examined"] = run.total_edges_examined  # the name of earlier runs
        row.update(arcs_examined=rates["arcs_examined"], arcs_per_s=rates["arcs_per_s"])
    return row


def _cpu_rows(graphs, quick):
    rows = []
    for name, g, source in graphs:
        depth, _ = bfs_cpu(g, source)
        edges = _component_edges(g, depth)
        # float64 CSR is what csgraph works on: converting it up front keeps the copy out of the timing.
        structure = g.structure().astype(np.float64)
        calls = {"cpu_numba_queue": lambda: bfs_cpu(g, source),
                 "cpu_numba_direction_optimizing": lambda: bfs_cpu_parallel(g, source),
                 "scipy_breadth_first_order": lambda: csgraph.breadth_first_order(structure, source, directed=True)}
        extra = {}
        if g.n_vertices <= NETWORKX_UP_TO:
            import networkx as nx

            prepare_seconds, nxg = timed_once(lambda: nx.from_scipy_sparse_array(g.structure()))
            calls["networkx"] = lambda: nx.single_source_shortest_path_length(nxg, source)
            extra["networkx"] = {"prepare_seconds": prepare_seconds}
        repeat = REPEAT if quick or g.n_arcs < 1 << 24 else 3
        timings = paired(calls, course="cpu_numba_queue", repeat=repeat, warmup=1)
        for variant, timing in timings.items():
            rows.append({**_row(variant, name, g, edges, timing["seconds"]), **timing, **extra.get(variant, {})})
    return rows


def _gpu_rows(graphs, quick, bandwidth):
    from numba import cuda

    rows = []
    for name, g, source in graphs:
        on_device = DeviceGraph(g)
        for method in ("direction_optimizing_twc", "frontier_twc", "frontier_atomic", "frontier_scan",
                       "direction_optimizing", "edge_quadratic"):
            run = traverse(g, source, method, on_device=on_device)  # warm-up (compiles the kernels)
            if method == "edge_quadratic" and run.iterations * g.n_arcs > 1 << 34:
                continue  # high-diameter graph: the quadratic search would take minutes
            # End to end: the wall time of traverse() as a user calls it, with its allocations and copies.
            timed = wall_time(lambda: traverse(g, source, method, on_device=on_device), repeat=3 if quick else 5,
                              warmup=0, synchronize=cuda.synchronize)
            row = _row(method, name, g, _component_edges(g, run.depth), timed["seconds"], run)
            row.update(repetitions=timed["repetitions"], seconds_min=timed["seconds_min"],
                       seconds_max=timed["seconds_max"])
            if bandwidth:
                if method == "edge_quadratic":
                    row["roofline_gteps"] = bandwidth / (QUADRATIC_BYTES_PER_EDGE * run.iterations) / 1e9
                else:
                    # The bytes are per examined arc; a TEPS edge costs arcs_examined / traversed_edges arcs
                    # (2 for a top-down search, fewer for a direction-optimising one).
                    arcs = [bandwidth / b for b in BYTES_PER_EDGE[::-1]]
                    per_edge = row["arcs_examined"] / max(row["traversed_edges"], 1)
                    row["roofline_arcs_per_s_range"] = arcs
                    row["roofline_gteps_range"] = [a / per_edge / 1e9 for a in arcs]
            rows.append(row)
        del on_device
    return rows


def run(*, quick=False):
    """Run the benchmark; see the module docstring."""
    graphs = _graphs(quick, device.is_gpu())
    cpu_rows = _cpu_rows(graphs, quick)

    def gpu_part():
        gpu = _gpu_rows(graphs, quick, device.info().memory_bandwidth)
        return gpu, _goal(cpu_rows + gpu), []

    out = bench_results(cpu_rows, gpu_part)
    out["notes"].append(LOADED_NOTE)
    return out


def _goal(rows):
    largest = max(r["vertices"] for r in rows if r["graph"].startswith("kronecker"))
    at_largest = [r for r in rows if r["vertices"] == largest and r["graph"].startswith("kronecker")]
    # The goal is for a top-down BFS; the direction-optimising one is reported beside it (it skips edges).
    best = max((r for r in at_largest if r["variant"].startswith("frontier")), key=lambda r: r["gteps"])
    hybrid = [r for r in at_largest if r["variant"] == "direction_optimizing"]
    scipy_row = next(r for r in at_largest if r["variant"] == "scipy_breadth_first_order")
    best_cpu = max((r for r in at_largest if r["variant"] in CPU_VARIANTS), key=lambda r: r["gteps"])
    quadratic = [r for r in at_largest if r["variant"] == "edge_quadratic"]
    speedup = best["gteps"] / scipy_row["gteps"]
    return {
        "graph": best["graph"],
        "best_frontier": best,
        "edge_quadratic": quadratic[0] if quadratic else None,
        "direction_optimizing": hybrid[0] if hybrid else None,
        "goal_gteps": GOAL_GTEPS,
        "speedup_vs_scipy": speedup,
        "best_cpu": best_cpu["variant"],
        "speedup_vs_best_cpu": best["gteps"] / best_cpu["gteps"],
        "goal_speedup_vs_scipy": GOAL_SPEEDUP_VS_SCIPY,
        "goal_met": (largest >= 1 << GOAL_SCALE and best["gteps"] >= GOAL_GTEPS
                     and speedup >= GOAL_SPEEDUP_VS_SCIPY),
    }


def _format_row(r):
    extra = f"  iterations={r['iterations']} edges examined={r['edges_examined']}" if "iterations" in r else ""
    return (f"{r['variant']:<31} {r['graph']:<14} V={r['vertices']:<9} "
            f"{r['gteps']:.4f} GTEPS ({r['seconds'] * 1e3:.2f} ms){extra}" + timing_suffix(r))


def _goal_line(s):
    return (f"goal ({s['graph']}): {s['best_frontier']['gteps']:.2f} GTEPS (goal {s['goal_gteps']}), "
            f"{s['speedup_vs_scipy']:.1f}x SciPy (goal {s['goal_speedup_vs_scipy']}x), "
            f"{s['speedup_vs_best_cpu']:.1f}x the best CPU variant ({s['best_cpu']}): "
            + ("met" if s["goal_met"] else "not met"))


def summary(results):
    """A few human-readable lines."""
    return summary_text(results, _format_row, goal=_goal_line)


def plot(results, path):
    """GTEPS against the number of vertices on the Kronecker graphs, one line per variant."""
    curves = series(results["rows"], "vertices", "gteps", keep=lambda r: r["graph"].startswith("kronecker"))
    references = [(GOAL_GTEPS, f"goal {GOAL_GTEPS} GTEPS")] if results["backend"] == "gpu" else []
    plot_series(curves, path, xlabel="vertices (Kronecker, edge factor 16)", ylabel="GTEPS",
                references=references, title=f"BFS on {results['device']['name']}")


# --- The GPU probe, the cost model and a committed host cost (declared for course_lib.bench.cases) -----

#: The GPU methods of :func:`~course_lib.bfs.api.traverse` (every method but the CPU one).
GPU_METHODS = tuple(m for m in METHODS if m != "cpu")


def _probe_inputs():
    g = as_graph(kronecker(GOAL_SCALE, EDGE_FACTOR, seed=GOAL_SCALE), directed=False)
    source = int(np.random.default_rng(GOAL_SCALE).choice(np.flatnonzero(g.degrees > 0)))
    return {"graph": g, "source": source, "on_device": DeviceGraph(g) if device.is_gpu() else None}


def _search_counts(run):
    """Levels as the search counts them, and the arcs its kernels examined (counted on the host)."""
    return {"levels": int(run.iterations), "iterations": int(run.iterations),
            "component_edges": _component_edges(run.graph, run.depth), "arcs_examined": int(run.total_edges_examined)}


def _search_case(method):
    def run(inputs):
        g, source, on_device = inputs["graph"], inputs["source"], inputs["on_device"]
        return lambda: traverse(g, source, method, on_device=on_device)

    return Case(method, "traverse() end to end: every level's launches and copies, depth and parent downloaded "
                "(graph on the device already)", f"Kronecker scale {GOAL_SCALE}, edge factor {EDGE_FACTOR}", 2.5,
                "call", run, counts=_search_counts, per=("levels", "level"),
                derive=lambda row: teps_rates(row["component_edges"], row["arcs_examined"], row["seconds"]),
                fields={"graph": f"kronecker{GOAL_SCALE}"})


def _cpu_search(inputs):
    g, source = inputs["graph"], inputs["source"]
    return lambda: bfs_cpu_parallel(g, source)


def _bfs_notes(rows):
    from ..bench.measure import speedup

    default = next(r for r in rows if r.get("default"))
    cpu = [r for r in rows if r.get("device") == "cpu"]
    return [f"default {default['variant']} against the CPU: " + str(speedup(default["seconds"], cpu))] if cpu else []


PROBE = Probe(
    Inputs(f"Kronecker scale {GOAL_SCALE}, edge factor {EDGE_FACTOR} (128M arcs), uploaded once", _probe_inputs, 70.0),
    method_cases(GPU_METHODS, default_gpu_method(traverse, GPU_METHODS), _search_case,
                 teaching={m: dict(repeat=2, expected_seconds=2.0) for m in GPU_METHODS}) + (
        Case("cpu_numba_direction_optimizing", "the compiled direction-optimising BFS on all cores",
             f"Kronecker scale {GOAL_SCALE}", 1.5, "cpu", _cpu_search, repeat=3),
    ), _bfs_notes)

#: The cost model's bytes per examined arc (column index + depth), and the quadratic search's per arc per level.
MODEL_BYTES_PER_ARC, MODEL_QUADRATIC_BYTES_PER_ARC = 8, 12


@functools.lru_cache(maxsize=None)
def _level_counts(method: str) -> dict:
    """Launches and copies per level, and per search outside the levels, of ``traverse`` (simulator)."""
    from ..sim import record

    per = {}
    for side in (3, 5):  # two sizes: the difference per level is the per-level cost
        g = as_graph(grid_2d(side, side), directed=False)
        on_device = DeviceGraph(g)
        with record() as log:
            run = traverse(g, 0, method, on_device=on_device)
        per[side] = (run.iterations, len(log.launches), len(log.transfers))
    (l1, a1, c1), (l2, a2, c2) = per[3], per[5]
    launches_per_level, copies_per_level = (a2 - a1) / (l2 - l1), (c2 - c1) / (l2 - l1)
    return {"launches_per_level": launches_per_level, "copies_per_level": copies_per_level,
            "launches_fixed": max(0.0, a1 - launches_per_level * l1), "copies_fixed": max(0.0, c1 - copies_per_level * l1)}


def _predict(row, run, costs):
    """Launch host time against device bytes (the larger), plus blocking copies and the final download."""
    import math

    if "iterations" not in row:
        return None, "a CPU row"
    c = _level_counts(row["variant"])
    levels = row["iterations"]
    host = (c["launches_fixed"] + c["launches_per_level"] * levels) * costs.launch_seconds
    copies = (c["copies_fixed"] + c["copies_per_level"] * levels) * (costs.copy_seconds or 0.0)
    download = 8 * row["vertices"] / (costs.pageable_bytes_per_s or math.inf)  # depth and parent
    traffic = (levels * 2 * row["edges"] * MODEL_QUADRATIC_BYTES_PER_ARC if row["variant"] == "edge_quadratic"
               else row["edges_examined"] * MODEL_BYTES_PER_ARC)
    device_seconds = traffic / run["device"]["memory_bandwidth"]
    return max(host, device_seconds) + copies + download, {"launch_host": host, "copies": copies,
                                                           "device": device_seconds, "download": download}


def _calibration(row):
    return row["variant"] == "frontier_atomic" and str(row.get("graph", "")).startswith("grid")


COST_MODEL = CostModel(_predict, lambda row: str(row.get("graph", "")), _calibration)


def _copy_seconds(folder, known):
    """One small blocking copy: a grid level of ``frontier_atomic`` is one launch, one small upload and one download."""
    from ..bench.runs import committed_runs

    runs = committed_runs("bfs", kinds=("benchmark",), folder=folder)
    if not runs or known.get("launch_seconds") is None:
        return None
    run = runs[0]
    rows = [r for r in run.rows if _calibration(r) and r.get("iterations")]
    if not rows:
        return None
    per_level = rows[0]["seconds"] / rows[0]["iterations"]
    return (max(0.0, (per_level - known["launch_seconds"]) / 2),
            f"bfs run {run.date}: (seconds / levels of frontier_atomic on {rows[0]['graph']} - launch) / 2 copies "
            "per level", run.device)


HOST_COSTS = {"copy_seconds": _copy_seconds}
