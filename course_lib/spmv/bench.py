"""Benchmark of Unit 2: ``python -m course_lib.bench spmv``.

CPU part (runs anywhere): ``scipy.sparse`` CSR against the Numba CPU version (its
parallel and serial modes), on the stencil and power-law families, with the goal that
the better Numba mode is at least as fast as SciPy. Both are timed as their users call
them: the matrix built once from the same CSR arrays (``csr_matrix((data, indices,
indptr))``, :class:`~course_lib.spmv.cpu.CpuSpmv`; each building timed apart, as
``prepare_seconds``), then only the products ``A @ x`` and ``op(x)`` in the paired rounds.

GPU part (where a GPU is present): every kernel method and cuSPARSE
(``cupyx.scipy.sparse``, optional) on every matrix family at Bell & Garland's sizes
(about 1e6 rows), each product's device time from launches queued ahead of the GPU
(:func:`course_lib.bench.measure.device_time`, host cost per launch beside it). Each row reports
GFLOP/s (2 flops per non-zero), the GB/s the CUSP byte model of its format requests (x read once per
non-zero) and, beside it, the DRAM GB/s with x read once, counted only where the working set exceeds
the 50 MB L2 (smaller ones stay in L2 between products: ``l2_resident``). Goals on an H100 in fp32: the best
course method reaches >= 90% of cuSPARSE on the stencils and >= 80% on the power-law
matrices.
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.sparse as sp

from .. import device
from ..bench import (LOADED_NOTE, NO_GPU_NOTE, cupy_time, figure, paired, summary_text, timed_once,
                     timing_suffix)
from ..bench.measure import L2_BYTES, device_time
from ..bench.cases import Case, CostModel, Inputs, Probe, default_gpu_method, method_cases
from .api import GPU_METHODS, as_csr, prepare
from .api import spmv as spmv_function
from .cpu import CpuSpmv
from .data import MATRICES, laplacian, make_matrix, power_law_rows
from .model import bytes_per_spmv
from .reference import spmv_reference

GOAL_CPU_RATIO = 1.0
#: Paired CPU rounds, and products per timed sample (one product takes about a millisecond).
REPEAT, NUMBER = 15, 10
GOAL_STENCIL = 0.90
GOAL_POWER_LAW = 0.80
STENCILS = ["laplacian_3pt", "laplacian_5pt", "laplacian_7pt", "laplacian_9pt", "laplacian_27pt"]
POWER_LAW = ["power_law"]


def _row(variant, matrix, A, seconds, dtype, method_bytes, bandwidth=None):
    """A row: rates from the CUSP model's requested bytes (``bytes``, ``gbs``, ``fraction_of_bandwidth``)
    and, beside them, from the DRAM bytes with x read once (``dram_bytes``, ``dram_gbs``,
    ``dram_fraction_of_bandwidth``: only for a working set past the L2, which repeated products would
    otherwise read from L2; ``l2_resident`` says which)."""
    value_bytes = np.dtype(dtype).itemsize
    # The model reads x once per non-zero; DRAM sees x about once per product, the rest hits L1/L2.
    dram_bytes = int(method_bytes) - value_bytes * A.nnz + value_bytes * A.shape[1]
    row = {"variant": variant, "matrix": matrix, "dtype": np.dtype(dtype).name, "rows": A.shape[0], "nnz": A.nnz,
           "seconds": seconds, "gflops": 2 * A.nnz / seconds / 1e9, "bytes": int(method_bytes),
           "requested_bytes": int(method_bytes), "gbs": method_bytes / seconds / 1e9, "dram_bytes": dram_bytes,
           "dram_gbs": dram_bytes / seconds / 1e9, "l2_resident": dram_bytes <= L2_BYTES}
    if bandwidth:
        row["fraction_of_bandwidth"] = method_bytes / seconds / bandwidth
        row["dram_fraction_of_bandwidth"] = None if row["l2_resident"] else dram_bytes / seconds / bandwidth
    return row


def _cpu_matrices(quick):
    if quick:
        return {"laplacian_5pt": laplacian("5pt", 300), "power_law": power_law_rows(100_000, 8.0, 2.2, seed=1)}
    return {"laplacian_5pt": laplacian("5pt", 1000), "laplacian_27pt": laplacian("27pt", 100),
            "power_law": power_law_rows(1_000_000, 8.0, 2.2, seed=1)}


def _cpu_rows(quick):
    rows = []
    for name, A32 in _cpu_matrices(quick).items():
        for dtype in ([np.float32] if quick else [np.float32, np.float64]):
            A = as_csr(A32, dtype)
            x = np.random.default_rng(0).uniform(-1, 1, A.shape[1]).astype(dtype)
            csr_bytes = bytes_per_spmv(A, "csr_scalar")
            # Each library as its users call it: the matrix built once from the same arrays (SciPy checks
            # the format, CpuSpmv the structure and values), then products only. The buildings are timed
            # apart, after one untimed building each (compilation, first touch of the memory).
            build = {"scipy": lambda: sp.csr_matrix((A.data, A.indices, A.indptr), shape=A.shape),
                     "course": lambda: CpuSpmv(A.indptr, A.indices, A.data, A.shape)}
            prepare_seconds, built = {}, {}
            for who, fn in build.items():
                fn()
                prepare_seconds[who], built[who] = timed_once(fn)
            A_scipy, op = built["scipy"], built["course"]
            calls = {"cpu_numba_parallel": lambda: op(x, parallel=True),
                     "cpu_numba_serial": lambda: op(x, parallel=False),
                     "scipy": lambda: A_scipy @ x}
            # Ratios against the mode a product without parallel= runs.
            course = "cpu_numba_parallel" if op.parallel else "cpu_numba_serial"
            timings = paired(calls, course=course, repeat=REPEAT, warmup=2, number=NUMBER)
            for variant, timing in timings.items():
                rows.append({**_row(variant, name, A, timing["seconds"], dtype, csr_bytes), **timing,
                             "prepare_seconds": prepare_seconds["scipy" if variant == "scipy" else "course"],
                             "default_mode": variant == course})
    return rows


def _gpu_rows(quick, bandwidth):
    from numba import cuda

    rows, notes = [], []
    names = STENCILS + POWER_LAW if quick else list(MATRICES)
    for name in names:
        for dtype in ([np.float32] if quick else [np.float32, np.float64]):
            A = make_matrix(name, "gpu", seed=1, dtype=dtype)
            x = np.random.default_rng(0).uniform(-1, 1, A.shape[1]).astype(dtype)
            expected = spmv_reference(A, x)
            scale = np.abs(A).astype(np.float64) @ np.abs(x).astype(np.float64)
            d_x = cuda.to_device(x)
            d_y = cuda.device_array(A.shape[0], dtype=dtype)
            for method in GPU_METHODS:
                try:
                    op = prepare(A, method)
                except ValueError as exc:  # ELL refuses hopeless padding
                    notes.append(f"{name} {method}: {exc}")
                    continue
                op.launch(d_x, d_y)
                error = float(np.max(np.abs(d_y.copy_to_host() - expected) / np.maximum(scale, 1e-30)))
                correct = bool(error <= (1e-4 if dtype == np.float32 else 1e-10))
                if not correct:
                    notes.append(f"{name} {method} {np.dtype(dtype).name}: relative error {error:.1e} "
                                 "(left out of the comparison with cuSPARSE)")
                timing = device_time(functools.partial(op.launch, d_x, d_y), repeat=10, warmup=2)
                row = _row(method, name, A, timing.device_seconds, dtype, bytes_per_spmv(A, method, K=op.K), bandwidth)
                row.update(K=op.K, relative_error=error, correct=correct, scope="device",
                           host_seconds_per_launch=timing.host_seconds_per_launch,
                           launches_per_sample=timing.launches, queued_ahead=timing.queued)
                rows.append(row)
                del op
            rows.extend(_cusparse_rows(name, A, x, dtype, bandwidth))
    return rows, notes


def _cusparse_rows(name, A, x, dtype, bandwidth):
    try:
        import cupy as cp
        import cupyx.scipy.sparse as cusparse
    except ImportError:
        return []
    d_A = cusparse.csr_matrix(A)
    d_x = cp.asarray(x)
    seconds = cupy_time(lambda: d_A @ d_x, repeat=10, warmup=3)
    return [dict(_row("cusparse", name, A, seconds, dtype, bytes_per_spmv(A, "csr_scalar"), bandwidth), scope="device")]


def _ratio(rows, matrices, dtype="float32"):
    """Best course method / cuSPARSE throughput, for each matrix of ``matrices``.

    Only correct results count: a method whose result failed the check against the
    reference (``row["correct"]`` False) is left out, however fast it ran.
    """
    out = {}
    for name in matrices:
        mine = [r for r in rows if r["matrix"] == name and r["dtype"] == dtype and r["variant"] in GPU_METHODS
                and r.get("correct", True)]
        peer = [r for r in rows if r["matrix"] == name and r["dtype"] == dtype and r["variant"] == "cusparse"]
        if mine and peer:
            best = max(mine, key=lambda r: r["gflops"])
            out[name] = {"best_method": best["variant"], "ratio": best["gflops"] / peer[0]["gflops"]}
    return out


def _gpu_summary(gpu_rows):
    """Ratios to cuSPARSE and whether the goal is met: every stencil and power-law matrix needs a
    correct course result at least the goal's fraction of cuSPARSE's throughput."""
    stencil, power = _ratio(gpu_rows, STENCILS), _ratio(gpu_rows, POWER_LAW)
    return {
        "vs_cusparse_stencils": stencil,
        "vs_cusparse_power_law": power,
        "goal_stencil": GOAL_STENCIL,
        "goal_power_law": GOAL_POWER_LAW,
        "gpu_goal_met": (set(stencil) == set(STENCILS) and set(power) == set(POWER_LAW)
                         and all(v["ratio"] >= GOAL_STENCIL for v in stencil.values())
                         and all(v["ratio"] >= GOAL_POWER_LAW for v in power.values())),
    }


def run(*, quick=False):
    """Run the benchmark; see the module docstring."""
    rows = _cpu_rows(quick)
    notes = []
    cpu = {}
    for name in {r["matrix"] for r in rows}:
        for dtype in {r["dtype"] for r in rows}:
            rounds = {r["variant"]: np.asarray(r["round_seconds"]) for r in rows
                      if r["matrix"] == name and r["dtype"] == dtype}
            if "scipy" in rounds:
                # Both modes of CpuSpmv count: on a busy machine the threads of the parallel
                # loop wait for each other, and the serial loop is the faster one. The ratio is
                # the median over the rounds of each round's ratio: a burst of other work hits
                # a round, in which all three ran, rather than one variant's median.
                best = np.minimum(rounds["cpu_numba_parallel"], rounds["cpu_numba_serial"])
                cpu[f"{name}/{dtype}"] = float(np.median(best / rounds["scipy"]))
    summary = {"cpu_time_over_scipy": cpu, "goal_cpu_ratio": GOAL_CPU_RATIO,
               "cpu_goal_met": all(v <= GOAL_CPU_RATIO for v in cpu.values())}
    if device.is_gpu():
        bandwidth = device.info().memory_bandwidth
        gpu, gpu_notes = _gpu_rows(quick, bandwidth)
        rows += gpu
        notes += gpu_notes
        summary.update(_gpu_summary(gpu))
        if not any(r["variant"] == "cusparse" for r in gpu):
            notes.append("cupy is not installed: no cuSPARSE comparison")
    else:
        notes.append(NO_GPU_NOTE)
    notes.append(LOADED_NOTE)
    return {"rows": rows, "summary": summary, "notes": notes}


def _format_row(r):
    return (f"{r['variant']:<12} {r['matrix']:<20} {r['dtype']:<8} nnz={r['nnz']:<9} "
            f"{r['seconds'] * 1e3:8.3f} ms {r['gflops']:7.2f} GFLOP/s {r['gbs']:7.1f} GB/s"
            + (f"  {100 * r['fraction_of_bandwidth']:.0f}% of bandwidth" if "fraction_of_bandwidth" in r else "")
            + (f"  (building the matrix: {r['prepare_seconds'] * 1e3:.3g} ms once)" if "prepare_seconds" in r else "")
            + timing_suffix(r))


def summary(results):
    """A few human-readable lines."""
    s = results["summary"]
    extra = [f"CPU {key}: best Numba time / scipy time = {ratio:.2f}, median of the rounds "
             f"(goal <= {s['goal_cpu_ratio']})"
             for key, ratio in sorted(s["cpu_time_over_scipy"].items())]
    for key in ("vs_cusparse_stencils", "vs_cusparse_power_law"):
        extra += [f"{name}: best course method {v['best_method']} = {100 * v['ratio']:.0f}% of cuSPARSE"
                  for name, v in sorted(s.get(key, {}).items())]
    return summary_text(results, _format_row, extra)


def plot(results, path):
    """GFLOP/s of each variant on each matrix (fp32), with the CSR roofline on a GPU."""
    rows = [r for r in results["rows"] if r["dtype"] == "float32"]
    matrices = sorted({r["matrix"] for r in rows})
    variants = sorted({r["variant"] for r in rows})
    width = 0.8 / max(len(variants), 1)
    with figure(path, figsize=(max(7, 1.2 * len(matrices) + 3), 4.5)) as ax:
        for i, variant in enumerate(variants):
            values = [next((r["gflops"] for r in rows if r["matrix"] == m and r["variant"] == variant), 0.0)
                      for m in matrices]
            ax.bar(np.arange(len(matrices)) + i * width, values, width, label=variant)
        bandwidth = results["device"].get("memory_bandwidth")
        if bandwidth:
            roof = [2 * next(r["nnz"] for r in rows if r["matrix"] == m) * bandwidth / 1e9
                    / next(r["bytes"] for r in rows if r["matrix"] == m and r["variant"] in ("cusparse", "csr_scalar"))
                    for m in matrices]
            ax.scatter(np.arange(len(matrices)) + 0.4 - width / 2, roof, marker="_", s=400, color="k",
                       label="CSR roofline")
        ax.set_xticks(np.arange(len(matrices)) + 0.4 - width / 2, matrices, rotation=30, ha="right", fontsize=8)
        where = results["device"]["name"] if results["backend"] == "gpu" else results["cpu"]
        ax.set(ylabel="GFLOP/s (fp32, 2 flops per non-zero)", title=f"SpMV on {where}")


# --- The GPU probe and the cost model (declared for course_lib.bench.cases) -----------------------

#: The probe's matrices: the 27-point stencil (float64) and the power-law rows (float32), each with the
#: methods whose device time per product it measures; the teaching rows' smaller power-law matrix.
PROBE_MATRICES = {"laplacian_27pt": ("ell", "hyb"), "power_law": ("hyb", "merge_path")}
TEACHING_ROWS = 500_000
#: What a user's ``spmv(A, x)`` may take: ``"auto"`` (the default) or any GPU method.
PROBE_METHODS = ("auto",) + GPU_METHODS


def _probe_inputs():
    return {"laplacian_27pt": laplacian("27pt", 160, dtype=np.float64),
            "power_law": power_law_rows(4_000_000, 8.0, 2.2, seed=1),
            "teaching": power_law_rows(TEACHING_ROWS, 8.0, 2.2, seed=1)}


def _spmv_call_case(method):
    """``op(x)`` of an operator prepared once (``prepare(A, method)``), x and y on the host: upload, product, download."""
    default = default_gpu_method(spmv_function, PROBE_METHODS)

    def run(inputs):
        A = inputs["power_law" if method == default else "teaching"]
        x = np.random.default_rng(0).uniform(-1, 1, A.shape[1]).astype(A.dtype)
        op = prepare(A, method)
        return lambda: op(x)

    rows = "4,000,000" if method == default else f"{TEACHING_ROWS:,}"
    return Case(method, "a prepared operator's product op(x), x uploaded and y downloaded (preparation apart)",
                f"power-law rows ({rows} rows, float32)", 3.0, "call", run, repeat=5)


def _device_rows(inputs):
    """Device time per product (launches queued, x and y on the device), DRAM bytes with x read once."""
    from numba import cuda

    from ..bench.measure import dram_rate

    bandwidth = device.info().memory_bandwidth
    rows = []
    for name, methods in PROBE_MATRICES.items():
        A = inputs[name]
        value = A.dtype.itemsize
        x = np.random.default_rng(0).uniform(-1, 1, A.shape[1]).astype(A.dtype)
        d_x, d_y = cuda.to_device(x), cuda.device_array(A.shape[0], A.dtype)

        def row_of(variant, fields, requested):
            dram = requested - value * A.nnz + value * A.shape[1]  # x read once
            return {"variant": variant, "matrix": name, "dtype": A.dtype.name, "rows": A.shape[0], "nnz": A.nnz,
                    **fields, **dram_rate(dram, fields["seconds"], working_set=dram, peak=bandwidth,
                                          requested_bytes=requested), "gflops": 2 * A.nnz / fields["seconds"] / 1e9}

        for method in methods:
            op = prepare(A, method)
            rows.append(row_of(method, device_time(lambda: op.launch(d_x, d_y), repeat=5, warmup=2).fields(),
                               bytes_per_spmv(A, method, K=op.K)))
            del op
        try:
            import cupyx.scipy.sparse as cusparse
            import cupy as cp

            from ..bench.measure import CupyGPU

            c_A, c_x = cusparse.csr_matrix(A), cp.asarray(x)
            timing = device_time(lambda: c_A @ c_x, repeat=5, warmup=2, gpu=CupyGPU())
            rows.append(row_of("cusparse", timing.fields(), bytes_per_spmv(A, "csr_scalar")))
        except ImportError:
            pass
    return rows


def _spmv_notes(rows):
    peers = {r["matrix"]: r["seconds"] for r in rows if r["variant"] == "cusparse"}
    return [f"{r['matrix']} {r['variant']}: {peers[r['matrix']] / r['seconds']:.2f}x cuSPARSE (device time)"
            for r in rows if r.get("scope") == "device" and r["variant"] != "cusparse" and r.get("matrix") in peers]


PROBE = Probe(
    Inputs("27-pt Laplacian 160^3 (4.1M rows, 110M nnz) float64; power-law rows 4M and 500k float32",
           _probe_inputs, 32.0),
    method_cases(PROBE_METHODS, default_gpu_method(spmv_function, PROBE_METHODS), _spmv_call_case,
                 teaching={m: dict(expected_seconds=2.0) for m in GPU_METHODS}) + (
        Case("device", "device time per product, queued launches, DRAM bytes with x read once; cuSPARSE beside",
             "27-pt f64 (ell, hyb), power law 4M f32 (hyb, merge_path)", 12.0, "rows", _device_rows),
    ), _spmv_notes)


@functools.lru_cache(maxsize=None)
def _launches(matrix: str, method: str) -> int:
    """Launches of one product of ``method`` on a small matrix of the family (simulator's record)."""
    from numba import cuda

    from ..sim import record

    A = make_matrix(matrix, "sim", seed=1, dtype=np.float32)
    op = prepare(A, method)
    d_x, d_y = cuda.to_device(np.ones(A.shape[1], np.float32)), cuda.device_array(A.shape[0], np.float32)
    with record() as log:
        op.launch(d_x, d_y)
    return len(log.launches)


def _predict(row, run, costs):
    """Launches at the committed host cost plus the DRAM bytes (x read once) at the datasheet bandwidth."""
    value = np.dtype(row["dtype"]).itemsize
    dram = row["bytes"] - value * row["nnz"] + value * row["rows"]
    launches = 1 if row["variant"] == "cusparse" else _launches(row["matrix"], row["variant"])
    return launches * costs.launch_seconds + dram / run["device"]["memory_bandwidth"], {"launches": launches,
                                                                                         "dram_bytes": dram}


COST_MODEL = CostModel(_predict, lambda row: " ".join(str(row.get(k)) for k in ("matrix", "dtype")
                                                       if row.get(k) is not None))
