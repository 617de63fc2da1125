"""Benchmark of the primitives: ``python -m course_lib.bench primitives``.

CPU part (runs anywhere): ``numpy.cumsum`` and ``numpy.bincount``, the peers every GPU figure is
set against, timed in paired rounds on float32 values and int32 keys; their effective GB/s
(a scan reads and writes 4 bytes a value, a histogram reads 4 bytes a key).

GPU part (where a GPU is present): every scan method of :func:`course_lib.primitives.scan` and both
GPU histograms, at sizes well past the L2 (2**24 and 2**26 values), timed with CUDA events on data
already on the device (the tile pass, the recursion on the tiles' totals and the offsets' pass,
as the API runs them); GB/s against the device's memory bandwidth, and CuPy's ``cumsum`` and
``bincount`` as the GPU library peers when CuPy is installed. Goal: the padded Blelloch scan reaches
at least half of CuPy's cumsum throughput.
"""

from __future__ import annotations

import numpy as np

from .. import device
from ..bench import LOADED_NOTE, cupy_time, gpu_time, paired, plot_series, results as unit_results, series
from ..bench import summary_text, timing_suffix
from .data import random_values, skewed_keys

GOAL_VS_CUPY = 0.5
BINS = 256
REPEAT = 7


def _sizes(quick):
    return [1 << 20] if quick else [1 << 20, 1 << 22]


def _cpu_rows(quick):
    rows = []
    for n in _sizes(quick):
        x, keys = random_values(n, seed=1), skewed_keys(n, BINS, 0.5, seed=1)
        timings = paired({"numpy_cumsum": lambda: np.cumsum(x), "numpy_bincount": lambda: np.bincount(keys, minlength=BINS)},
                         repeat=REPEAT, warmup=1)
        for variant, timing in timings.items():
            moved = 8 * n if variant == "numpy_cumsum" else 4 * n
            rows.append({"variant": variant, "n": n, "bytes": moved, "gbs": moved / timing["seconds"] / 1e9, **timing})
    return rows


def _gpu_part(quick):
    from numba import cuda

    from . import api, kernels

    bandwidth = device.info().memory_bandwidth
    rows, notes, ratios = [], [], {}
    sizes = [1 << 22] if quick else [1 << 24, 1 << 26]
    block = 256
    for n in sizes:
        x = random_values(n, seed=1)
        keys = skewed_keys(n, BINS, 0.5, seed=1)
        d_x, d_keys = cuda.to_device(x), cuda.to_device(keys)
        for method in ("blelloch_padded", "blelloch", "hillis_steele"):
            seconds = gpu_time(lambda: api._device_scan(d_x, method, block, "float32"))
            rows.append({"variant": f"scan_{method}", "n": n, "seconds": seconds, "bytes": 8 * n,
                         "gbs": 8 * n / seconds / 1e9, "fraction_of_bandwidth": 8 * n / seconds / bandwidth})
        d_counts = cuda.device_array(BINS, np.int32)
        for method, launch in (("atomic", lambda: kernels.histogram_atomic_kernel[-(-n // block), block](d_keys, d_counts)),
                               ("private", lambda: kernels.histogram_private_kernel(BINS)[4 * device.info().sm_count,
                                                                                          block](d_keys, d_counts))):
            seconds = gpu_time(launch)
            rows.append({"variant": f"histogram_{method}", "n": n, "seconds": seconds, "bytes": 4 * n,
                         "gbs": 4 * n / seconds / 1e9, "fraction_of_bandwidth": 4 * n / seconds / bandwidth})
        try:
            import cupy as cp
        except ImportError:
            notes.append("cupy is not installed: no GPU library peer")
            continue
        c_x, c_keys = cp.asarray(x), cp.asarray(keys)
        for variant, fn, moved in (("cupy_cumsum", lambda: cp.cumsum(c_x), 8 * n),
                                   ("cupy_bincount", lambda: cp.bincount(c_keys, minlength=BINS), 4 * n)):
            seconds = cupy_time(fn)
            rows.append({"variant": variant, "n": n, "seconds": seconds, "bytes": moved, "gbs": moved / seconds / 1e9,
                         "fraction_of_bandwidth": moved / seconds / bandwidth})
        mine = next(r for r in rows if r["variant"] == "scan_blelloch_padded" and r["n"] == n)
        peer = next(r for r in rows if r["variant"] == "cupy_cumsum" and r["n"] == n)
        ratios[str(n)] = mine["gbs"] / peer["gbs"]
    summary = {"scan_vs_cupy_cumsum": ratios, "goal_vs_cupy": GOAL_VS_CUPY,
               "gpu_goal_met": bool(ratios) and all(v >= GOAL_VS_CUPY for v in ratios.values())}
    return rows, summary, notes


def run(*, quick=False):
    """Run the benchmark; see the module docstring."""
    out = unit_results(_cpu_rows(quick), lambda: _gpu_part(quick))
    out["notes"].append(LOADED_NOTE)
    return out


def _format_row(r):
    return (f"{r['variant']:<22} n={r['n']:<9} {r['seconds'] * 1e3:8.3f} ms {r['gbs']:7.1f} GB/s"
            + (f"  {100 * r['fraction_of_bandwidth']:.0f}% of bandwidth" if "fraction_of_bandwidth" in r else "")
            + timing_suffix(r))


def summary(results):
    """A few human-readable lines."""
    extra = [f"n = {n}: padded Blelloch scan = {100 * v:.0f}% of CuPy's cumsum"
             for n, v in sorted(results["summary"].get("scan_vs_cupy_cumsum", {}).items())]
    return summary_text(results, _format_row, extra)


def plot(results, path):
    """Effective GB/s of each variant against the number of values."""
    plot_series(series(results["rows"], "n", "gbs"), path, xlabel="values", ylabel="effective GB/s",
                title="Scan and histogram throughput")
