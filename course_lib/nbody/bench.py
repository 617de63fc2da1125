"""Benchmark of Unit 1: ``python -m course_lib.bench nbody``.

Reports interactions per second and GFLOP/s (20 flops per interaction) for the naive,
tiled, lean and register-blocked kernels (sweeping N and the tile size), CuPy
broadcasting (the naive GPU peer), a CuPy ``RawKernel`` port of the CUDA sample's
``bodyBodyInteraction`` (the expert GPU peer, compiled by NVRTC with ``-use_fast_math``)
and the Numba ``parallel=True`` CPU version, with the fraction of the device's FP32
peak. Goal on an H200: >= 2.0e12 interactions/s at N >= 2^20 and at least the CUDA
sample's rate.
"""

from __future__ import annotations

import numpy as np

from .. import device
from ..bench import LOADED_NOTE, cupy_time, gpu_time, paired, plot_series, series, summary_text, timing_suffix
from ..bench import results as bench_results
from ..bench.cases import Case, CostModel, Inputs, Probe, default_gpu_method, method_cases
from .api import DEFAULT_BODIES_PER_THREAD, METHODS, accelerations, pack_bodies
from .cpu import accelerations_cpu
from .data import plummer_sphere
from .model import FLOPS_PER_INTERACTION
from .reference import accelerations_reference

SOFTENING = 0.01
GOAL_INTERACTIONS_PER_S = 2.0e12
#: Timed rounds of the paired CPU measurement.
REPEAT = 5


def _row(variant, n, seconds, tile=None, peak=None):
    rate = n * n / seconds
    row = {"variant": variant, "n": n, "tile": tile, "seconds": seconds, "interactions_per_s": rate,
           "gflops": rate * FLOPS_PER_INTERACTION / 1e9}
    if peak:
        row["fraction_of_fp32_peak"] = rate * FLOPS_PER_INTERACTION / peak
    return row


def _cpu_rows(quick):
    rows = []
    for n in ([512, 2048] if quick else [1024, 4096, 16384, 32768]):
        pos, _, mass = plummer_sphere(n, seed=1)
        bodies = pack_bodies(pos, mass)
        calls = {"cpu_numba_parallel": lambda: accelerations_cpu(bodies, SOFTENING**2)}
        if n <= 4096:  # the NumPy peer (all pairs, broadcast in float64) on the same bodies
            calls["numpy_float64"] = lambda: accelerations_reference(pos, mass, SOFTENING)
        timings = paired(calls, course="cpu_numba_parallel", repeat=REPEAT, warmup=1)
        for variant, timing in timings.items():
            rows.append({**_row(variant, n, timing["seconds"]), **timing})
    return rows


def _gpu_rows(quick, peak):
    from numba import cuda

    from . import kernels

    rows = []
    sizes = [1 << 14, 1 << 16] if quick else [1 << 14, 1 << 16, 1 << 18, 1 << 20]
    tiles = [128, 256] if quick else [64, 128, 256, 512, 1024]
    eps2 = np.float32(SOFTENING**2)
    for n in sizes:
        pos, _, mass = plummer_sphere(n, seed=1)
        d_bodies = cuda.to_device(pack_bodies(pos, mass))
        d_acc = cuda.device_array((n, 3), np.float32)
        if n <= 1 << 18:
            blocks = (n + 127) // 128
            t = gpu_time(lambda: kernels.nbody_naive_kernel[blocks, 128](d_bodies, eps2, d_acc), repeat=5)
            rows.append(_row("naive", n, t, peak=peak))
        for tile in tiles:
            kernel = kernels.nbody_tiled_kernel(tile)
            grid = (n + tile - 1) // tile
            t = gpu_time(lambda: kernel[grid, tile](d_bodies, eps2, d_acc), repeat=5)
            rows.append(_row("tiled", n, t, tile=tile, peak=peak))
        for tile in (128, 256):
            for variant, per in (("lean", 1), ("blocked", DEFAULT_BODIES_PER_THREAD)):
                kernel = kernels.nbody_blocked_kernel(tile, per)
                grid = -(-n // (tile * per))
                t = gpu_time(lambda: kernel[grid, tile](d_bodies, eps2, d_acc), repeat=5)
                rows.append(_row(variant, n, t, tile=tile, peak=peak))
        rows.extend(_cuda_sample_rows(pos, mass, n, peak))
        if n <= 1 << 16:
            rows.extend(_cupy_rows(pos, mass, n, peak))
    return rows


def _cupy_rows(pos, mass, n, peak):
    try:
        import cupy as cp
    except ImportError:
        return []
    p = cp.asarray(pos)
    m = cp.asarray(mass)

    def broadcast():
        out = cp.empty((n, 3), cp.float32)
        for s in range(0, n, 4096):  # chunks bound memory to 4096 x N x 3 floats
            d = p[None, :, :] - p[s:s + 4096, None, :]
            r2 = (d * d).sum(axis=2) + np.float32(SOFTENING**2)
            out[s:s + 4096] = ((m[None, :] * r2 ** np.float32(-1.5))[:, :, None] * d).sum(axis=1)
        return out

    return [_row("cupy_broadcast", n, cupy_time(broadcast, repeat=1, warmup=1), peak=peak)]


#: The CUDA sample's ``bodyBodyInteraction`` and tile loop (``Samples/5_Domain_Specific/nbody``,
#: ``bodysystemcuda.cu``), float32, one body per thread, float4 positions with the mass in w.
CUDA_SAMPLE_SOURCE = r"""
__device__ __forceinline__ float3 bodyBodyInteraction(float3 ai, float4 bi, float4 bj, float softeningSquared) {
    float3 r;
    r.x = bj.x - bi.x;
    r.y = bj.y - bi.y;
    r.z = bj.z - bi.z;
    float distSqr = r.x * r.x + r.y * r.y + r.z * r.z;
    distSqr += softeningSquared;
    float invDist = rsqrtf(distSqr);
    float invDistCube = invDist * invDist * invDist;
    float s = bj.w * invDistCube;
    ai.x += r.x * s;
    ai.y += r.y * s;
    ai.z += r.z * s;
    return ai;
}

extern "C" __global__ void integrateBodies(const float4 *__restrict__ pos, float3 *__restrict__ acc,
                                           int numBodies, float softeningSquared) {
    extern __shared__ float4 sharedPos[];
    int index = blockIdx.x * blockDim.x + threadIdx.x;
    float4 bodyPos = pos[min(index, numBodies - 1)];
    float3 a = {0.0f, 0.0f, 0.0f};
    for (int tile = 0; tile < gridDim.x; tile++) {
        int j = tile * blockDim.x + threadIdx.x;
        sharedPos[threadIdx.x] = j < numBodies ? pos[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();
#pragma unroll 128
        for (unsigned int counter = 0; counter < blockDim.x; counter++) {
            a = bodyBodyInteraction(a, bodyPos, sharedPos[counter], softeningSquared);
        }
        __syncthreads();
    }
    if (index < numBodies) acc[index] = a;
}
"""


def _cuda_sample_rows(pos, mass, n, peak, block=256):
    """The CUDA sample's kernel through CuPy ``RawKernel`` on the same bodies ([] without CuPy)."""
    try:
        import cupy as cp
    except ImportError:
        return []
    kernel = cp.RawKernel(CUDA_SAMPLE_SOURCE, "integrateBodies", options=("-use_fast_math",))
    d_pos = cp.asarray(pack_bodies(pos, mass))
    d_acc = cp.empty((n, 3), cp.float32)
    grid = -(-n // block)  # the sample's grid is whole tiles: every block walks gridDim.x tiles

    def launch():
        kernel((grid,), (block,), (d_pos, d_acc, np.int32(n), np.float32(SOFTENING**2)), shared_mem=16 * block)

    t = cupy_time(launch, repeat=5)
    return [_row("cuda_sample_rawkernel", n, t, tile=block, peak=peak)]


def run(*, quick=False):
    """Run the benchmark; see the module docstring."""
    cpu_rows = _cpu_rows(quick)

    def gpu_part():
        gpu = _gpu_rows(quick, device.info().fp32_peak_flops)
        best = max((r for r in gpu if r["variant"] in ("tiled", "lean", "blocked")),
                   key=lambda r: (r["n"], r["interactions_per_s"]))
        sample = [r["interactions_per_s"] for r in gpu if r["variant"] == "cuda_sample_rawkernel" and r["n"] == best["n"]]
        best_cpu = max((r for r in cpu_rows if r["variant"] == "cpu_numba_parallel"),
                       key=lambda r: r["interactions_per_s"])
        summary = {
            "best_tiled": best,
            "vs_cuda_sample": best["interactions_per_s"] / max(sample) if sample else None,
            "goal_interactions_per_s": GOAL_INTERACTIONS_PER_S,
            "goal_met": best["interactions_per_s"] >= GOAL_INTERACTIONS_PER_S and best["n"] >= 1 << 20,
            "speedup_vs_cpu": best["interactions_per_s"] / best_cpu["interactions_per_s"],
        }
        return gpu, summary, []

    out = bench_results(cpu_rows, gpu_part)
    out["notes"].append(LOADED_NOTE)
    return out


def _format_row(r):
    return (f"{r['variant']:<20} N={r['n']:<8} tile={r['tile'] or '-':<5} "
            f"{r['interactions_per_s']:.3e} interactions/s  {r['gflops']:.1f} GFLOP/s"
            + (f"  {100 * r['fraction_of_fp32_peak']:.0f}% of FP32 peak" if "fraction_of_fp32_peak" in r else "")
            + timing_suffix(r))


def summary(results):
    """A few human-readable lines."""
    return summary_text(results, _format_row)


def plot(results, path):
    """Interactions per second against N, one line per variant (and tile size)."""
    curves = series(results["rows"], "n", "interactions_per_s",
                    label=lambda r: r["variant"] + (f" P={r['tile']}" if r["tile"] else ""))
    peak = results["device"].get("fp32_peak_flops")
    references = [(peak / FLOPS_PER_INTERACTION, "FP32 peak / 20 flops")] if peak else []
    plot_series(curves, path, xlabel="N bodies", ylabel="interactions / s", references=references,
                title=f"All-pairs N-body on {results['device']['name']}")


# --- The GPU probe, the cost model and the simulator's benchmark cases (declared for the shared layers) ---


def simulator_cases(quick):
    """This unit's kernels that the simulator's benchmark times (``python -m course_lib.bench sim``).

    Returns
    -------
    list of tuple
        ``(name, kernel, griddim, blockdim, make_args)`` at simulator sizes (61 or 125 bodies).
    """
    from . import kernels

    rng = np.random.default_rng(0)
    n = 61 if quick else 125

    def bodies():
        return rng.random((n, 4), dtype=np.float32), np.float32(0.01), np.zeros((n, 3), np.float32)

    return [("nbody naive", kernels.nbody_naive_kernel, -(-n // 32), 32, bodies),
            ("nbody tiled P=32", kernels.nbody_tiled_kernel(32), -(-n // 32), 32, bodies)]


#: Found by :func:`course_lib.registry.declared` for :mod:`course_lib.sim.bench`.
SIMULATOR_CASES = simulator_cases

#: The GPU methods of :func:`~course_lib.nbody.api.accelerations` (every method but the CPU ones).
GPU_METHODS = tuple(m for m in METHODS if m not in ("numpy", "cpu"))
PROBE_N, TEACHING_N = 1 << 20, 1 << 18


def _probe_inputs():
    pos, _, mass = plummer_sphere(PROBE_N, seed=1)
    return {"pos": pos, "mass": mass, "small": (pos[:TEACHING_N].copy(), mass[:TEACHING_N].copy())}


def _interactions(n):
    return lambda result: {"n": n, "interactions": n * n}


def _call_case(method):
    def run(inputs):
        pos, mass = (inputs["pos"], inputs["mass"]) if method == default else inputs["small"]
        return lambda: accelerations(pos, mass, softening=SOFTENING, method=method)

    default = default_gpu_method(accelerations, GPU_METHODS)
    n = PROBE_N if method == default else TEACHING_N
    return Case(method, "accelerations() end to end (pack, upload, kernel, download)", f"Plummer sphere N = {n:,}",
                5.0, "call", run, counts=_interactions(n), per=("interactions", "interaction"), repeat=3)


def _kernel_rows(inputs):
    """Device time of queued launches of the default kernel and the first tiled one, with their SASS slots."""
    from numba import cuda

    from ..bench.measure import device_time
    from . import kernels
    from .kernels import BODY_SIG

    info = device.info()
    bodies = pack_bodies(inputs["pos"], inputs["mass"])
    eps2 = np.float32(SOFTENING**2)
    d_bodies, d_acc = cuda.to_device(bodies), cuda.device_array((PROBE_N, 3), np.float32)
    rows = []
    per_thread = DEFAULT_BODIES_PER_THREAD
    for variant, kernel, tile, per in (("tiled_1024", kernels.nbody_tiled_kernel(1024), 1024, 1),
                                       (f"blocked_256x{per_thread}", kernels.nbody_blocked_kernel(256, per_thread),
                                        256, per_thread)):
        grid = -(-PROBE_N // (tile * per))
        timing = device_time(lambda: kernel[grid, tile](d_bodies, eps2, d_acc), repeat=3, warmup=1)
        rate = PROBE_N * PROBE_N / timing.device_seconds
        row = {"variant": variant, "n": PROBE_N, **timing.fields(), "interactions_per_s": rate,
               "fraction_of_fp32_peak": FLOPS_PER_INTERACTION * rate / info.fp32_peak_flops
               if info.fp32_peak_flops else None}
        try:
            from ..sass import instruction_mix

            mix = instruction_mix(kernel, BODY_SIG, "sm_90", per=1)
            unroll = max(1, mix.counts["MUFU"])  # one rsqrt per interaction: the unroll factor
            row.update(sass_slots_per_interaction=mix.slots / unroll, sass_counts=mix.counts)
        except Exception as exc:  # no ptxas/nvdisasm here: the row goes without its SASS figures
            row["sass_missing"] = f"{type(exc).__name__}: {str(exc)[:200]}"
        rows.append(row)
    return rows


def _sample_rows(inputs):
    """The CUDA sample's tiled kernel (CuPy RawKernel) on the same bodies: the library peer."""
    try:
        import cupy  # noqa: F401
    except ImportError:
        return []
    from ..bench.measure import CupyGPU, device_time

    import cupy as cp

    sample = cp.RawKernel(CUDA_SAMPLE_SOURCE, "nbody_sample", options=("--use_fast_math",))
    bodies = pack_bodies(inputs["pos"], inputs["mass"])
    c_bodies, c_acc = cp.asarray(bodies), cp.empty(3 * PROBE_N, cp.float32)
    eps2, block = np.float32(SOFTENING**2), 256
    timing = device_time(lambda: sample((-(-PROBE_N // block),), (block,), (c_bodies, eps2, c_acc, np.int32(PROBE_N)),
                                        shared_mem=16 * block), repeat=3, warmup=1, gpu=CupyGPU())
    peak = device.info().fp32_peak_flops
    rate = PROBE_N * PROBE_N / timing.device_seconds
    return [{"variant": "cuda_sample", "n": PROBE_N, **timing.fields(), "interactions_per_s": rate,
             "fraction_of_fp32_peak": FLOPS_PER_INTERACTION * rate / peak if peak else None}]


PROBE = Probe(
    Inputs(f"Plummer sphere N = 2^20 (teaching rows: its first {TEACHING_N:,} bodies)", _probe_inputs, 1.0),
    method_cases(GPU_METHODS, default_gpu_method(accelerations, GPU_METHODS), _call_case,
                 teaching={"lean": dict(expected_seconds=3.0), "tiled": dict(expected_seconds=3.0),
                           "naive": dict(expected_seconds=4.0), "pxp": dict(expected_seconds=4.0)}) + (
        Case("kernels", "device time per launch, queued (no host), and SASS issue slots per interaction",
             "N = 2^20", 10.0, "rows", _kernel_rows),
        Case("cuda_sample", "library peer: the CUDA sample's tiled kernel (CuPy RawKernel), device time", "N = 2^20",
             4.0, "rows", _sample_rows),
    ))


def _nbody_slots(kernel: str) -> float:
    """Issue slots per interaction of the inner loop (one MUFU.RSQ per interaction sets the unroll)."""
    from ..sass import instruction_mix
    from .kernels import BODY_SIG, nbody_naive_kernel, nbody_tiled_kernel

    mix = instruction_mix(nbody_tiled_kernel(256) if kernel == "tiled" else nbody_naive_kernel, BODY_SIG, "sm_90")
    return mix.slots / max(1, mix.counts["MUFU"])


_SLOTS: dict = {}


def _predict(row, run, costs):
    """Launch plus issue slots at the device's issue rate, scaled down when the grid has too few warps."""
    from ..bench.model import issue_rate
    from ..sass import SassToolsMissing

    v = row["variant"]
    if v not in ("naive", "tiled"):
        return None, "no model of CuPy's broadcasting peer"
    device_fields = run["device"]
    n = row["n"]
    rate = issue_rate(device_fields) * min(1.0, (n / 32) / (device_fields["sm_count"] * 4))
    try:
        if v not in _SLOTS:
            _SLOTS[v] = _nbody_slots(v)
    except SassToolsMissing as exc:
        return None, f"no SASS: {exc}"
    issue = n * n * _SLOTS[v] / rate
    return costs.launch_seconds + issue, {"launch": costs.launch_seconds, "issue": issue}


COST_MODEL = CostModel(_predict, lambda row: " ".join(str(row.get(k)) for k in ("n", "tile") if row.get(k) is not None))
