"""Benchmark of Unit 8: ``python -m course_lib.bench colocation [--quick]``.

CPU part (anywhere): the compiled grid-based miner against the reference (SciPy k-d tree and
Python sets) on the planted data with 20 features. GPU part (on a GPU only): every version of
the source's optimisation sequence end to end (upload included), pinned vs pageable copy
bandwidth, and the goal: the batched GPU version >= 50x the compiled CPU miner at 1e6 instances.
"""

from __future__ import annotations

import time

import numpy as np

from .. import device
from .api import VERSIONS, mine
from .data import planted_colocations

__all__ = ["GOAL_SPEEDUP", "plot", "run", "summary"]

#: The issue's goal: GPU end to end >= 50x the strong CPU version at 1e6 instances, 20 features.
GOAL_SPEEDUP = 50.0
N_FEATURES = 20
GROUPS = ((0, 1), (2, 3, 4), (5, 6, 7, 8))
R, THRESHOLD = 1.0, 0.3


def _timed(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _data(n):
    return planted_colocations(n, N_FEATURES, groups=GROUPS, r=R, seed=n)


def _cpu_rows(sizes, reference_up_to):
    rows = []
    for n in sizes:
        d = _data(n)
        mine(d.points[:50], d.features[:50], R, THRESHOLD, method="cpu")  # compile outside the timing
        seconds, result = _timed(lambda: mine(d.points, d.features, R, THRESHOLD, method="cpu"), 3)
        rows.append(dict(method="cpu (numba, all cores)", instances=n, seconds=seconds,
                         patterns=len(result.patterns)))
        if n <= reference_up_to:
            seconds, ref = _timed(lambda: mine(d.points, d.features, R, THRESHOLD, method="reference"), 1)
            rows.append(dict(method="reference (cKDTree + sets)", instances=n, seconds=seconds,
                             patterns=len(ref.patterns), agrees=ref.patterns == result.patterns))
    return rows


def _gpu_rows(sizes):
    from numba import cuda

    rows = []
    for n in sizes:
        d = _data(n)
        for name, opts in VERSIONS.items():
            def run():
                out = mine(d.points, d.features, R, THRESHOLD, method="gpu", **opts)
                cuda.synchronize()
                return out

            run()  # compile and warm up
            seconds, result = _timed(run, 3)
            rows.append(dict(method=f"gpu {name.split(':')[0]}", version=name, instances=n, seconds=seconds,
                             patterns=len(result.patterns)))
    return rows


def _bandwidth_rows(quick):
    """Host-to-device copy bandwidth from pageable and pinned memory (CUDA events)."""
    from numba import cuda

    rows = []
    for mib in ([16] if quick else [1, 16, 256]):
        n = mib * 2**20 // 8
        pageable = np.ones(n)
        pinned = cuda.pinned_array(n, np.float64)
        pinned[:] = 1.0
        d = cuda.device_array(n)
        for kind, host in (("pageable", pageable), ("pinned", pinned)):
            d.copy_to_device(host)
            start, stop = cuda.event(), cuda.event()
            start.record()
            for _ in range(5):
                d.copy_to_device(host)
            stop.record()
            stop.synchronize()
            seconds = cuda.event_elapsed_time(start, stop) / 1e3 / 5
            rows.append(dict(memory=kind, mib=mib, gb_per_s=host.nbytes / seconds / 1e9))
    return rows


def run(*, quick: bool) -> dict:
    """Measure; returns ``{"rows": [...], "bandwidth": [...], "goal": {...}, "notes": [...]}``."""
    sizes = [20_000, 100_000] if quick else [100_000, 1_000_000]
    rows = _cpu_rows(sizes, reference_up_to=20_000)
    notes, bandwidth, goal = [], [], {}
    if device.is_gpu():
        rows += _gpu_rows(sizes)
        bandwidth = _bandwidth_rows(quick)
        n = sizes[-1]
        cpu = next(r["seconds"] for r in rows if r["method"].startswith("cpu") and r["instances"] == n)
        gpu = next(r["seconds"] for r in rows if r["method"] == "gpu v3" and r["instances"] == n)
        goal = dict(instances=n, speedup=cpu / gpu, goal=GOAL_SPEEDUP, met=cpu / gpu >= GOAL_SPEEDUP)
    else:
        notes.append("no GPU: CPU part only; the GPU versions, the copy bandwidth and the 50x goal need a GPU")
    return {"rows": rows, "bandwidth": bandwidth, "goal": goal, "notes": notes,
            "parameters": dict(n_features=N_FEATURES, groups=GROUPS, r=R, threshold=THRESHOLD)}


def summary(results) -> str:
    lines = [f"{r['method']:<32} N = {r['instances']:>9,}: {r['seconds'] * 1e3:10.1f} ms, "
             f"{r['patterns']} prevalent patterns" for r in results["rows"]]
    lines += [f"copy from {b['memory']:<8} memory, {b['mib']:>4} MiB: {b['gb_per_s']:.1f} GB/s" for b in results["bandwidth"]]
    if results["goal"]:
        g = results["goal"]
        lines.append(f"goal: GPU >= {g['goal']:.0f}x the CPU miner at N = {g['instances']:,}: "
                     f"{g['speedup']:.1f}x ({'met' if g['met'] else 'not met'})")
    return "\n".join(lines + results["notes"])


def plot(results, path):
    from .plots import plot_bench

    plot_bench(results, path)
