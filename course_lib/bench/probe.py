"""One GPU probe, minutes long: ``python -m course_lib.bench probe [units...] [--dry-run] [--out DIR]``.

For each of the eight units it measures the headline kernels and the library peer with the rules of
:mod:`course_lib.bench.measure` (device time from launches queued ahead of the GPU, the host cost per
launch beside it, end to end as wall time), and, for the host-driven units (bfs, hac, ica, cellsim,
colocation), the split of a public call's wall time into device time, launches, copies and allocations
(:mod:`course_lib.bench.split`). The whole probe is planned to take at most :data:`BUDGET_SECONDS` on an
H100 or H200; each unit's JSON goes to ``benchmarks/results/probe-<unit>_<device>_<date>.json`` with the
device, the SM clock sampled during the unit's run, the driver, the versions and the date.

``--dry-run`` prints the plan (sizes, variants, expected seconds) on any machine and measures nothing.
The expected seconds are estimates from the committed H200 runs of each unit's benchmark (their wall
times and the per-call figures they record), graph and matrix building on the host included.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import device
from . import RESULTS_DIR, load_note, stamp, write_results
from .measure import CupyGPU, bfs_rates, device_time, dram_rate, speedup, wall_time

__all__ = ["BUDGET_SECONDS", "PLAN", "ClockSampler", "Step", "format_plan", "main", "plan_seconds", "probe_unit"]

#: The probe's budget on an H100/H200, all eight units.
BUDGET_SECONDS = 480
UNITS = ("nbody", "spmv", "bfs", "poisson", "hac", "ica", "cellsim", "colocation")
#: Units whose public call is a loop driven from the host: the probe splits their wall time.
HOST_DRIVEN = ("bfs", "hac", "ica", "cellsim", "colocation")


@dataclass(frozen=True)
class Step:
    """One measurement of the plan: what is timed, at which size, which variants, and how long it takes."""

    name: str
    size: str
    variants: tuple
    expected_seconds: float


#: The plan, unit by unit (expected seconds include input building and compilation).
PLAN = {
    "nbody": (
        Step("tiled kernel, device time (one launch per sample)", "N = 2^20",
             ("tiled_1024", "tiled_256", "lean_256", "blocked_256x4"), 30),
        Step("library peer: CUDA sample's tiled kernel (CuPy RawKernel)", "N = 2^20", ("cuda_sample",), 8),
        Step("SASS issue slots per interaction (ptxas, no GPU time)", "sm_90",
             ("tiled_1024", "tiled_256", "lean_256", "blocked_256x4"), 6),
    ),
    "spmv": (
        Step("build matrices on the host", "27-pt Laplacian 160^3 (4.1M rows, 110M nnz) f64; power law 4M rows f32",
             (), 30),
        Step("device time per product, DRAM bytes with x read once", "as built",
             ("ell", "hyb", "csr_vector", "coo", "merge_path"), 14),
        Step("library peer: cuSPARSE (CuPy)", "as built", ("cusparse",), 6),
    ),
    "bfs": (
        Step("build the graph on the host", "Kronecker scale 22, edge factor 16 (128M arcs)", (), 70),
        Step("end to end (traverse), Graph500 TEPS and arcs examined, wall-time split", "scale 22",
             ("frontier_scan", "frontier_atomic", "direction_optimizing", "edge_quadratic", "frontier_twc",
              "direction_optimizing_twc"), 12),
        Step("CPU paths (the fastest one is the speed-up's base)", "scale 22",
             ("scipy_breadth_first_order", "cpu_numba_direction_optimizing"), 12),
    ),
    "poisson": (
        Step("800 iterations on the mask's box: device time, host cost per launch", "333x500",
             ("jacobi", "jacobi_fused halo=12 32x32"), 6),
        Step("end to end (seamless_clone) and its wall-time split", "333x500",
             ("jacobi", "jacobi_fused halo=12 32x32", "persistent"), 5),
        Step("CPU paths", "333x500", ("opencv_seamlessClone", "cpu_direct", "cpu_numba_parallel"), 4),
    ),
    "hac": (
        Step("build the thesis-size graph", "N = 12,119, M = 705,352", (), 10),
        Step("1,000 merges end to end, wall-time split, extrapolated per clustering", "thesis size",
             ("gpu[segmented,soa]",), 25),
        Step("CPU path (the course's heap version)", "thesis size", ("cpu",), 5),
    ),
    "ica": (
        Step("3 steps end to end, wall-time split, extrapolated to 84 steps", "64 x 180,000 float64",
             ("fused",), 25),
        Step("CPU path, 2 steps", "64 x 180,000 float64", ("cpu",), 5),
    ),
    "cellsim": (
        Step("end to end (simulate), wall-time split", "L = 1e6, tau_max 720 h", ("compact",), 12),
        Step("CPU path (compiled, all cores)", "L = 1e6", ("cpu_numba_parallel",), 8),
    ),
    "colocation": (
        Step("end to end (mine), wall-time split", "1e6 instances, 20 features", ("gpu v4 pageable",), 10),
        Step("CPU path (compiled, all cores)", "1e6 instances", ("cpu",), 6),
    ),
}


def plan_seconds(units=UNITS) -> float:
    """Expected seconds of the probe of ``units``."""
    return float(sum(step.expected_seconds for unit in units for step in PLAN[unit]))


def format_plan(units=UNITS) -> str:
    """The plan as text: one line per step, a total per unit and the probe's total against the budget."""
    lines = [f"GPU probe plan ({len(units)} units; budget {BUDGET_SECONDS} s on an H100/H200)"]
    for unit in units:
        lines.append(f"{unit}  ({plan_seconds([unit]):.0f} s"
                     + (", host-driven: wall time split into device, launches, copies, allocations)"
                        if unit in HOST_DRIVEN else ")"))
        for step in PLAN[unit]:
            variants = ", ".join(step.variants) or "-"
            lines.append(f"  {step.expected_seconds:5.0f} s  {step.name}  [{step.size}]  variants: {variants}")
    total = plan_seconds(units)
    lines.append(f"total {total:.0f} s of {BUDGET_SECONDS} s" + ("" if total <= BUDGET_SECONDS else "  OVER BUDGET"))
    return "\n".join(lines)


class ClockSampler:
    """The SM clock (MHz) sampled in a background thread while a unit runs.

    Parameters
    ----------
    query : callable, optional
        Returns the current SM clock in MHz, or None; default: ``nvidia-smi --query-gpu=clocks.sm``.
    interval : float
        Seconds between samples.
    """

    def __init__(self, query=None, interval=0.5):
        self.query = query or _nvidia_smi_clock
        self.interval = interval
        self.samples: list = []
        self._stop = threading.Event()
        self._thread = None

    def __enter__(self):
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self):
        while True:
            value = self.query()
            if value is not None:
                self.samples.append(float(value))
            if self._stop.wait(self.interval):
                return

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        return False

    def summary(self) -> dict:
        """``{"median_mhz", "min_mhz", "max_mhz", "samples"}``; empty where nothing could be read."""
        if not self.samples:
            return {}
        arr = np.asarray(self.samples)
        return {"median_mhz": float(np.median(arr)), "min_mhz": float(arr.min()), "max_mhz": float(arr.max()),
                "samples": int(arr.size)}


def _nvidia_smi_clock():
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, "--query-gpu=clocks.sm", "--format=csv,noheader,nounits"], capture_output=True,
                             text=True, timeout=5).stdout.split()
        return float(out[0]) if out else None
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def _split_row(variant, call, *, calls=1, **extra):
    """End to end of ``call()``, timed plain, and the split of its wall time (see :mod:`course_lib.bench.split`).

    The split costs the host time at every launch (two CUDA events made and recorded around it), so its wall
    time is longer than the call's: the row's ``seconds`` and ``plain_wall_seconds`` are a plain run's, per
    call; ``wall_seconds`` and its parts are the split run's, and ``split_overhead_seconds`` is the difference.
    """
    from numba import cuda

    from .split import split

    def timed():
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        cuda.synchronize()
        return time.perf_counter() - t0

    call()  # warm up (compilation)
    cuda.synchronize()
    plain = timed()
    with split() as s:
        wall = timed()
    row = {"variant": variant, **s.report(wall, calls), **extra}
    row["plain_wall_seconds"] = row["seconds"] = plain / calls
    row["split_overhead_seconds"] = (wall - plain) / calls
    return row


def _cpu_row(variant, call, *, repeat=3, warmup=1, **extra):
    timed = wall_time(call, repeat=repeat, warmup=warmup)
    return {"variant": variant, **timed, "scope": "end_to_end", "device": "cpu", **extra}


# --- one function per unit: rows and notes ---------------------------------------------------------

_SAMPLE_NBODY = r"""
extern "C" __global__ void nbody_sample(const float4* __restrict__ bodies, float eps2, float* acc, int n) {
    extern __shared__ float4 tile[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 me = i < n ? bodies[i] : make_float4(0.f, 0.f, 0.f, 0.f);
    float ax = 0.f, ay = 0.f, az = 0.f;
    for (int start = 0; start < n; start += blockDim.x) {
        int j = start + threadIdx.x;
        tile[threadIdx.x] = j < n ? bodies[j] : make_float4(0.f, 0.f, 0.f, 0.f);
        __syncthreads();
#pragma unroll 32
        for (int k = 0; k < blockDim.x; ++k) {
            float4 b = tile[k];
            float dx = b.x - me.x, dy = b.y - me.y, dz = b.z - me.z;
            float inv = rsqrtf(dx * dx + (dy * dy + (dz * dz + eps2)));
            float s = b.w * inv * inv * inv;
            ax += dx * s; ay += dy * s; az += dz * s;
        }
        __syncthreads();
    }
    if (i < n) { acc[3 * i] = ax; acc[3 * i + 1] = ay; acc[3 * i + 2] = az; }
}
"""


def _nbody():
    from numba import cuda

    from ..nbody import kernels
    from ..nbody.api import pack_bodies
    from ..nbody.data import plummer_sphere
    from ..nbody.kernels import BODY_SIG
    from ..nbody.model import FLOPS_PER_INTERACTION

    info = device.info()
    n = 1 << 20
    pos, _, mass = plummer_sphere(n, seed=1)
    bodies = pack_bodies(pos, mass)
    eps2 = np.float32(0.01**2)
    d_bodies, d_acc = cuda.to_device(bodies), cuda.device_array((n, 3), np.float32)
    rows, notes = [], []
    variants = [(f"tiled_{tile}", kernels.nbody_tiled_kernel(tile), tile, 1) for tile in (1024, 256)]
    variants += [("lean_256", kernels.nbody_blocked_kernel(256, 1), 256, 1),
                 ("blocked_256x4", kernels.nbody_blocked_kernel(256, 4), 256, 4)]
    for variant, kernel, tile, per in variants:
        grid = -(-n // (tile * per))
        timing = device_time(lambda: kernel[grid, tile](d_bodies, eps2, d_acc), repeat=3, warmup=1)
        rate = n * n / timing.device_seconds
        row = {"variant": variant, "n": n, **timing.fields(), "interactions_per_s": rate,
               "fraction_of_fp32_peak": FLOPS_PER_INTERACTION * rate / info.fp32_peak_flops
               if info.fp32_peak_flops else None}
        try:
            from ..sass import instruction_mix

            mix = instruction_mix(kernel, BODY_SIG, "sm_90", per=1)
            per = max(1, mix.counts["MUFU"])  # one rsqrt per interaction: the unroll factor
            row.update(sass_slots_per_interaction=mix.slots / per, sass_counts=mix.counts)
        except Exception as exc:  # no ptxas/nvdisasm here: the row goes without its SASS figures
            notes.append(f"nbody SASS not counted: {type(exc).__name__}: {str(exc)[:200]}")
        rows.append(row)
    try:
        import cupy as cp

        sample = cp.RawKernel(_SAMPLE_NBODY, "nbody_sample", options=("--use_fast_math",))
        c_bodies, c_acc = cp.asarray(bodies), cp.empty(3 * n, cp.float32)
        block = 256
        timing = device_time(lambda: sample((-(-n // block),), (block,), (c_bodies, eps2, c_acc, np.int32(n)),
                                            shared_mem=16 * block), repeat=3, warmup=1, gpu=CupyGPU())
        rate = n * n / timing.device_seconds
        rows.append({"variant": "cuda_sample", "n": n, **timing.fields(), "interactions_per_s": rate,
                     "fraction_of_fp32_peak": FLOPS_PER_INTERACTION * rate / info.fp32_peak_flops
                     if info.fp32_peak_flops else None})
    except ImportError:
        notes.append("CuPy is not installed: no CUDA-sample peer")
    return rows, notes


def _spmv():
    from numba import cuda

    from ..spmv.api import prepare
    from ..spmv.data import laplacian, power_law_rows
    from ..spmv.model import bytes_per_spmv

    bandwidth = device.info().memory_bandwidth
    rows, notes = [], []
    matrices = {"laplacian_27pt": (laplacian("27pt", 160, dtype=np.float64), ("ell", "hyb", "csr_vector")),
                "power_law": (power_law_rows(4_000_000, 8.0, 2.2, seed=1), ("hyb", "csr_vector", "coo", "merge_path"))}
    for name, (A, methods) in matrices.items():
        dtype = A.dtype
        value_bytes = dtype.itemsize
        x = np.random.default_rng(0).uniform(-1, 1, A.shape[1]).astype(dtype)
        d_x, d_y = cuda.to_device(x), cuda.device_array(A.shape[0], dtype)

        def row_of(variant, timing_fields, requested):
            dram = requested - value_bytes * A.nnz + value_bytes * A.shape[1]  # x read once
            rates = dram_rate(dram, timing_fields["seconds"], working_set=dram, peak=bandwidth,
                              requested_bytes=requested)
            return {"variant": variant, "matrix": name, "dtype": dtype.name, "rows": A.shape[0], "nnz": A.nnz,
                    **timing_fields, **rates, "gflops": 2 * A.nnz / timing_fields["seconds"] / 1e9}

        for method in methods:
            try:
                op = prepare(A, method)
            except ValueError as exc:
                notes.append(f"{name} {method}: {exc}")
                continue
            timing = device_time(lambda: op.launch(d_x, d_y), repeat=5, warmup=2)
            rows.append(row_of(method, timing.fields(), bytes_per_spmv(A, method, K=op.K)))
            del op
        try:
            import cupy as cp
            import cupyx.scipy.sparse as cusparse

            c_A, c_x = cusparse.csr_matrix(A), cp.asarray(x)
            timing = device_time(lambda: c_A @ c_x, repeat=5, warmup=2, gpu=CupyGPU())
            rows.append(row_of("cusparse", timing.fields(), bytes_per_spmv(A, "csr_scalar")))
            del c_A
        except ImportError:
            notes.append("CuPy is not installed: no cuSPARSE peer")
    return rows, notes


def _bfs():
    from scipy.sparse import csgraph

    from ..bfs.api import DeviceGraph, traverse
    from ..bfs.cpu import bfs_cpu_parallel
    from ..bfs.data import as_graph, kronecker

    scale = 22
    g = as_graph(kronecker(scale, 16, seed=scale), directed=False)
    source = int(np.random.default_rng(scale).choice(np.flatnonzero(g.degrees > 0)))
    on_device = DeviceGraph(g)
    rows = []
    cpu_rows = [_cpu_row("cpu_numba_direction_optimizing", lambda: bfs_cpu_parallel(g, source), repeat=3)]
    structure = g.structure().astype(np.float64)
    cpu_rows.append(_cpu_row("scipy_breadth_first_order",
                             lambda: csgraph.breadth_first_order(structure, source, directed=True), repeat=1))
    for method in ("frontier_scan", "frontier_atomic", "direction_optimizing", "edge_quadratic", "frontier_twc",
                   "direction_optimizing_twc"):
        run = traverse(g, source, method, on_device=on_device)
        edges = int(g.degrees[run.depth >= 0].sum() // 2)
        row = _split_row(method, lambda: traverse(g, source, method, on_device=on_device), calls=3,
                         graph=f"kronecker{scale}", levels=run.iterations)
        row.update(bfs_rates(edges, run.total_edges_examined, row["seconds"]))
        rows.append(row)
    for row in cpu_rows:
        row["teps"] = rows[0]["component_edges"] / row["seconds"]
    best = min(rows, key=lambda r: r["seconds"])
    return rows + cpu_rows, [f"fastest GPU variant {best['variant']}: "
                             + json.dumps(speedup(best["seconds"], cpu_rows))]


def _poisson():
    import cv2
    from numba import cuda

    from ..poisson.api import DeviceSolver, _cropped, direct_clone, seamless_clone
    from ..poisson.data import cat_in_coffee
    from ..poisson.reference import opencv_inputs

    source, target, mask = cat_in_coffee((333, 500))
    crops = _cropped(source, target, mask)[2]
    solved = int(crops[2].size)
    rows = []
    for method, fused in (("jacobi", None), ("jacobi_fused", (12, 32, 32))):
        solver = DeviceSolver(*crops, method, fused)
        launches = 800 if method == "jacobi" else -(-800 // 12)
        timing = device_time(lambda: solver.run(800), repeat=3, warmup=1)
        rows.append({"variant": method, "config": fused, "solved_pixels": solved, **timing.fields(),
                     "launches_per_call": launches,
                     "host_seconds_per_launch": timing.host_seconds_per_launch / launches})
        rows.append(_split_row(method, lambda: seamless_clone(source, target, mask, iterations=800, method=method,
                                                              fused=fused), calls=3, config=fused,
                               solved_pixels=solved))
    rows.append(_split_row("persistent", lambda: seamless_clone(source, target, mask, iterations=800,
                                                                method="persistent"), calls=3, config=None,
                           solved_pixels=solved))
    src, dst, m, center, _ = opencv_inputs(source, target, mask)
    cpu_rows = [_cpu_row("opencv_seamlessClone", lambda: cv2.seamlessClone(src, dst, m, center, cv2.NORMAL_CLONE)),
                _cpu_row("cpu_direct", lambda: direct_clone(source, target, mask)),
                _cpu_row("cpu_numba_parallel", lambda: seamless_clone(source, target, mask, method="cpu"))]
    best = min((r for r in rows if r["scope"] == "end_to_end"), key=lambda r: r["seconds"])
    cuda.synchronize()
    return rows + cpu_rows, [f"fastest GPU end to end {best['variant']}: " + json.dumps(speedup(best["seconds"], cpu_rows))]


def _hac():
    from ..hac.api import cluster
    from ..hac.data import THESIS_M, THESIS_N, planted_graph

    g, _ = planted_graph(THESIS_N, THESIS_M, n_groups=THESIS_N // 300, n_subgroups=8, seed=THESIS_N)
    merges = g.n_elements - g.n_components
    sample = min(1000, merges)
    cluster(g, "gpu", max_merges=2)  # compile
    row = _split_row("gpu[segmented,soa]", lambda: cluster(g, "gpu", max_merges=sample), merges_timed=sample,
                     merges=merges)
    row["seconds_per_merge"] = row["seconds"] / sample
    row["extrapolated_seconds"] = row["seconds_per_merge"] * merges  # labelled: a linear extrapolation
    cpu = _cpu_row("cpu", lambda: cluster(g, "cpu"), repeat=1)
    return [row, cpu], [f"gpu extrapolated to {merges} merges: {row['extrapolated_seconds']:.2f} s "
                        f"(from {sample} merges); the fastest CPU path ({cpu['variant']}) {cpu['seconds']:.2f} s"]


def _ica():
    from ..ica.api import infomax
    from ..ica.data import simulate_eeg

    eeg = simulate_eeg(64, 180_000, seed=0)
    steps, converged_steps = 3, 84  # 84: the steps the CPU run needed to converge (committed CPU run)
    infomax(eeg.data[:, :3000], "fused", seed=0, max_steps=2)  # compile
    row = _split_row("fused", lambda: infomax(eeg.data, "fused", seed=0, max_steps=steps, tol=1e-300),
                     steps_timed=steps)
    row["seconds_per_step"] = row["seconds"] / steps
    row["extrapolated_seconds"] = row["seconds_per_step"] * converged_steps
    cpu = _cpu_row("cpu", lambda: infomax(eeg.data, "cpu", seed=0, max_steps=2, tol=1e-300), repeat=1, warmup=0,
                   steps_timed=2)
    cpu["seconds_per_step"] = cpu["seconds"] / 2
    return [row, cpu], [f"per step: gpu fused {row['seconds_per_step']:.3f} s, cpu {cpu['seconds_per_step']:.3f} s; "
                        f"{converged_steps} steps extrapolated: {row['extrapolated_seconds']:.2f} s"]


def _cellsim():
    from ..cellsim.api import prepare_problem, simulate
    from ..cellsim.cpu import simulate_cpu
    from ..cellsim.data import THESIS_TYPES, lognormal_histogram

    h0 = lognormal_histogram(1_000_000, seed=1)
    args = dict(tau_max=720.0, phi_min=11.0, seed=1)
    row = _split_row("compact", lambda: simulate(h0, THESIS_TYPES, method="compact", **args), calls=3,
                     n_initial=1_000_000)
    problem = prepare_problem(h0, THESIS_TYPES, **args)
    cpu = _cpu_row("cpu_numba_parallel", lambda: simulate_cpu(problem, parallel=True), repeat=1, n_initial=1_000_000)
    return [row, cpu], ["compact vs the compiled CPU: " + json.dumps(speedup(row["seconds"], [cpu]))]


def _colocation():
    from ..colocation.api import mine
    from ..colocation.data import planted_colocations

    n = 1_000_000
    d = planted_colocations(n, 20, groups=((0, 1), (2, 3, 4), (5, 6, 7, 8)), r=1.0, seed=n)
    row = _split_row("gpu v4 pageable", lambda: mine(d.points, d.features, 1.0, 0.3, method="gpu",
                                                      host_memory="pageable"), calls=3, instances=n)
    cpu = _cpu_row("cpu", lambda: mine(d.points, d.features, 1.0, 0.3, method="cpu"), repeat=1, instances=n)
    return [row, cpu], ["gpu v4 vs the compiled CPU: " + json.dumps(speedup(row["seconds"], [cpu]))]


RUNNERS = {"nbody": _nbody, "spmv": _spmv, "bfs": _bfs, "poisson": _poisson, "hac": _hac, "ica": _ica,
           "cellsim": _cellsim, "colocation": _colocation}


def probe_unit(unit: str, out_dir=None) -> Path:
    """Run the probe of one unit on the GPU and write its JSON; returns the file's path."""
    results = stamp(f"probe-{unit}")
    results["probe_plan_seconds"] = plan_seconds([unit])
    start = time.perf_counter()
    with ClockSampler() as clock:
        try:
            rows, notes = RUNNERS[unit]()
        except Exception as exc:  # one unit's failure must not cost the others their measurement
            traceback.print_exc()  # the log keeps where it failed; the JSON keeps what failed
            rows, notes = [], [f"the probe of {unit} failed: {type(exc).__name__}: {exc}"]
    results.update(rows=rows, notes=notes, sm_clock=clock.summary(), seconds=time.perf_counter() - start, quick=False)
    results["load_average_end"] = list(os.getloadavg())
    results["notes"].append(load_note(results))
    return write_results(results, RESULTS_DIR if out_dir is None else out_dir)[0]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_lib.bench probe",
                                     description="The GPU probe: every unit's headline kernels in minutes.")
    parser.add_argument("units", nargs="*", default=[], metavar="unit",
                        help=f"units to probe (default: all eight: {', '.join(UNITS)})")
    parser.add_argument("--dry-run", action="store_true", help="print the plan (any machine); measure nothing")
    parser.add_argument("--out", default=None, help="output folder (default: the checkout's benchmarks/results)")
    ns = parser.parse_args(argv)
    unknown = sorted(set(ns.units) - set(UNITS))
    if unknown:
        parser.error(f"unknown unit(s) {', '.join(unknown)}; choose from {', '.join(UNITS)}")
    units = tuple(dict.fromkeys(ns.units)) or UNITS
    print(format_plan(units))
    if ns.dry_run:
        return 0 if plan_seconds(units) <= BUDGET_SECONDS else 1
    if not device.is_gpu():
        print("the probe needs an NVIDIA GPU (nothing was measured); --dry-run prints the plan anywhere",
              file=sys.stderr)
        return 2
    for unit in units:
        t0 = time.perf_counter()
        path = probe_unit(unit, ns.out)
        print(f"{unit}: {time.perf_counter() - t0:.0f} s (planned {plan_seconds([unit]):.0f} s) -> {path}", flush=True)
    return 0

