"""Benchmark of Unit 5: ``python -m course_lib.bench hac``.

Planted affinity graphs (:func:`~course_lib.hac.planted_graph`) up to the thesis's size
(N = 12,119, M = 705,352). Every row is one complete clustering, end to end (the graph
given on the host, ``parent`` and ``height`` returned on the host).

CPU part (runs anywhere): the compiled heap version (``cpu``, the strong baseline) in
float32 and float64; the compiled full-scan version (``cpu_scan``, the thesis's C design)
on the smaller graphs; the peers SciPy ``linkage(method="average")`` and fastcluster's
``average`` on the dense D = c - S (they need the N x N form: building it is included);
and the NumPy reference (the "Python original") timed over its first iterations and
extrapolated to all N - nC, marked ``estimated``: its iterations all cost the same (full
passes over the M entries).

GPU part (where a GPU is present): the device-resident loop with each fusion and
layout, and the thesis's host round trip, timed end to end with CUDA events; plus the
time per stage (events around each stage) and a roofline bound from the bytes each
iteration streams (:func:`~course_lib.hac.bytes_per_iteration`) and the device's
memory bandwidth.

Goals (reported, never asserted in tests): at the thesis size, the ``cpu`` version
within 2x of the best CPU peer measured on the same machine; the GPU end to end under
1 s (the thesis: 24.77 s on a GeForce 9600GT; its Python original 1274 s).
"""

from __future__ import annotations

import time

import numpy as np

from .. import device
from ..bench import time_call
from .api import cluster
from .data import THESIS_M, THESIS_N, planted_graph
from .model import THESIS, bytes_per_iteration
from .reference import average_link_reference, scipy_average_linkage

GOAL_CPU_RATIO = 2.0
GOAL_GPU_SECONDS = 1.0
#: Iterations of the NumPy reference timed for its estimate.
REFERENCE_SAMPLE = 200
GPU_VARIANTS = (("gpu", "segmented", "soa"), ("gpu", "atomic", "soa"), ("gpu", "segmented", "aos"),
                ("gpu_roundtrip", "cpu_sort", "soa"), ("gpu_roundtrip", "cpu_sort", "aos"))


def _graphs(quick):
    if quick:
        sizes = [(400, 8_000), (1_000, 30_000)]
    else:
        sizes = [(2_000, 60_000), (6_000, 300_000), (THESIS_N, THESIS_M)]
    out = []
    for n, m in sizes:
        groups = max(2, n // 300)
        g, _ = planted_graph(n, m, n_groups=groups, n_subgroups=8, seed=n)
        out.append((f"planted_{n}", g))
    return out


def _row(variant, name, g, seconds, *, estimated=False, dtype="float64", **extra):
    row = {"variant": variant, "graph": name, "n_elements": g.n_elements, "n_entries": g.n_entries,
           "merges": g.n_elements - g.n_components, "dtype": dtype, "seconds": float(seconds), "estimated": estimated}
    row.update(extra)
    return row


def _cpu_rows(graphs, quick):
    import fastcluster

    rows = []
    cluster(graphs[0][1], "cpu")  # compile
    cluster(graphs[0][1], "cpu", dtype=np.float32)
    for name, g in graphs:
        repeat = 3 if g.n_entries < 100_000 else 1
        for dtype in (np.float32, np.float64):
            t = time_call(lambda: cluster(g, "cpu", dtype=dtype), repeat=repeat, warmup=0, min_time=0)
            rows.append(_row("cpu", name, g, t, dtype=np.dtype(dtype).name))
        if g.n_entries <= 300_000:
            t = time_call(lambda: cluster(g, "cpu_scan", dtype=np.float32), repeat=1, warmup=1, min_time=0)
            rows.append(_row("cpu_scan", name, g, t, dtype="float32"))
        t = time_call(lambda: scipy_average_linkage(g), repeat=1, warmup=0, min_time=0)
        rows.append(_row("scipy_linkage_dense", name, g, t))
        t = time_call(lambda: scipy_average_linkage(g, linkage_function=fastcluster.average), repeat=1, warmup=0,
                      min_time=0)
        rows.append(_row("fastcluster_dense", name, g, t))
        merges = g.n_elements - g.n_components
        sample = min(merges, 40 if quick else REFERENCE_SAMPLE)
        start = time.perf_counter()
        average_link_reference(g, max_merges=sample)
        per_iteration = (time.perf_counter() - start) / max(sample, 1)
        rows.append(_row("python_original", name, g, per_iteration * merges, estimated=sample < merges,
                         iterations_timed=sample))
    return rows


def _gpu_rows(graphs, bandwidth):
    from numba import cuda

    rows = []
    cluster(graphs[0][1], "gpu")  # compile the kernels
    for name, g in graphs:
        for method, fusion, layout in GPU_VARIANTS:
            cluster(g, method, fusion=fusion, layout=layout, max_merges=2)  # compile this variant
            samples = []
            for _ in range(3):
                start, stop = cuda.event(), cuda.event()
                start.record()
                cluster(g, method, fusion=fusion, layout=layout)  # ends with copies to the host: synchronous
                stop.record()
                stop.synchronize()
                samples.append(cuda.event_elapsed_time(start, stop) / 1e3)
            stages = cluster(g, method, fusion=fusion, layout=layout, measure_stages=True).stage_seconds
            merges = g.n_elements - g.n_components
            traffic = bytes_per_iteration(g.n_entries, dtype=np.float32, layout=layout, fusion=fusion)["total"]
            extra = {"stage_seconds": stages, "bytes_streamed": traffic * merges}
            if bandwidth:
                extra["roofline_seconds"] = traffic * merges / bandwidth
            rows.append(_row(f"{method}[{fusion},{layout}]", name, g, float(np.median(samples)), dtype="float32",
                             **extra))
    return rows


def run(*, quick=False):
    """Run the benchmark; see the module docstring."""
    graphs = _graphs(quick)
    rows = _cpu_rows(graphs, quick)
    notes = ["timings of a shared machine: compare rows of one run, not across runs"]
    if device.is_gpu():
        rows += _gpu_rows(graphs, device.info().memory_bandwidth)
    else:
        notes.append("no GPU: only the CPU variants were measured")
    return {"rows": rows, "summary": _goal(rows), "notes": notes, "thesis": THESIS}


def _goal(rows):
    largest = max(r["n_elements"] for r in rows)
    at = [r for r in rows if r["n_elements"] == largest]
    cpu = min((r for r in at if r["variant"] == "cpu"), key=lambda r: r["seconds"])
    peers = [r for r in at if r["variant"] in ("scipy_linkage_dense", "fastcluster_dense")]
    best_peer = min(peers, key=lambda r: r["seconds"])
    python = next(r for r in at if r["variant"] == "python_original")
    out = {"graph": cpu["graph"], "n_elements": largest, "cpu_seconds": cpu["seconds"],
           "best_cpu_peer": best_peer["variant"], "best_cpu_peer_seconds": best_peer["seconds"],
           "cpu_over_best_peer": cpu["seconds"] / best_peer["seconds"], "goal_cpu_ratio": GOAL_CPU_RATIO,
           "python_original_seconds": python["seconds"], "python_original_estimated": python["estimated"],
           "cpu_speedup_over_python": python["seconds"] / cpu["seconds"],
           "cpu_goal_met": cpu["seconds"] <= GOAL_CPU_RATIO * best_peer["seconds"] and largest == THESIS_N}
    gpu = [r for r in at if r["variant"].startswith("gpu")]
    if gpu:
        best = min(gpu, key=lambda r: r["seconds"])
        out.update(best_gpu=best["variant"], gpu_seconds=best["seconds"], goal_gpu_seconds=GOAL_GPU_SECONDS,
                   gpu_speedup_over_cpu=cpu["seconds"] / best["seconds"],
                   gpu_goal_met=best["seconds"] < GOAL_GPU_SECONDS and largest == THESIS_N)
    return out


def summary(results):
    """A few human-readable lines."""
    lines = []
    for r in results["rows"]:
        mark = " (estimated)" if r["estimated"] else ""
        lines.append(f"{r['variant']:<34} {r['graph']:<15} N={r['n_elements']:<6} M={r['n_entries']:<7} "
                     f"{r['dtype']:<8} {r['seconds']:10.3f} s{mark}")
    s = results["summary"]
    lines.append(f"at N={s['n_elements']}: cpu {s['cpu_seconds']:.2f} s = {s['cpu_over_best_peer']:.2f}x the best "
                 f"CPU peer ({s['best_cpu_peer']}, {s['best_cpu_peer_seconds']:.2f} s; goal <= {GOAL_CPU_RATIO}x): "
                 + ("met" if s["cpu_goal_met"] else "not met")
                 + f"; {s['cpu_speedup_over_python']:.0f}x the Python original "
                 f"({s['python_original_seconds']:.0f} s{', estimated' if s['python_original_estimated'] else ''})")
    if "gpu_seconds" in s:
        lines.append(f"GPU end to end: {s['best_gpu']} {s['gpu_seconds']:.3f} s (goal < {GOAL_GPU_SECONDS} s): "
                     + ("met" if s["gpu_goal_met"] else "not met"))
    return "\n".join(lines + results["notes"])


def plot(results, path):
    """Seconds against N for every variant (log scale); per-stage bars of the GPU variants if any."""
    import matplotlib.pyplot as plt

    from .plots import plot_stage_times

    gpu_rows = [r for r in results["rows"] if "stage_seconds" in r]
    fig, axes = plt.subplots(1, 2 if gpu_rows else 1, figsize=(12 if gpu_rows else 7, 4.5), squeeze=False)
    ax = axes[0, 0]
    series = {}
    for r in results["rows"]:
        key = (r["variant"], r["dtype"])
        series.setdefault(key, []).append((r["n_elements"], r["seconds"]))
    for (variant, dtype), pts in sorted(series.items()):
        pts.sort()
        ax.plot(*zip(*pts), marker="o", label=f"{variant} {dtype}")
    ax.set(xscale="log", yscale="log", xlabel="N (planted graphs)", ylabel="seconds, end to end",
           title=f"average linkage on {results['device']['name']}")
    ax.legend(fontsize=7)
    if gpu_rows:
        largest = max(r["n_elements"] for r in gpu_rows)
        plot_stage_times({r["variant"]: r["stage_seconds"] for r in gpu_rows if r["n_elements"] == largest},
                         axes[0, 1], title=f"GPU time per stage, N={largest}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
