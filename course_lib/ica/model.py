"""Analytic models of Unit 6: launches, work per step, SIMT efficiency and occupancy.

The lesson predicts with these and measures with :mod:`course_lib.ica.profiling` (the
simulator's recorder and profiler, and the compile check's registers and shared memory).

Occupancy is the CUDA calculator's rule: the resident blocks per SM are the fewest allowed
by the block limit, the warp limit, the registers (allocated per warp, rounded up) and the
shared memory (per block, rounded up); occupancy = resident warps / maximum warps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._validate import check_choice, check_int

__all__ = ["ARCHS", "Arch", "SPLIT_ASSUMED", "THESIS", "flops_per_step", "launches_per_minibatch", "launches_per_step",
           "occupancy", "simt_efficiency", "split_step_prediction", "times_from_increase"]

WARP = 32

#: Figures of the thesis (Raimondo, 2011). Its speed-ups are written as *increases* of performance:
#: "+350 %" is "4.5 veces" (its section 7.2), so an increase of p % is a factor of 1 + p / 100.
#: Its CUDA kernels computed in float (its Ejemplos 9 and 14), the BLAS it beat in double (dgemv, dgemm).
THESIS = {
    "gemv_increase_percent": {32: 260, 96: 460},  # custom matrix-vector vs BLAS on an i7 (section 6.1)
    "gemm_increase_percent": {32: (350, 380), 96: 485},  # custom matrix-matrix vs BLAS (section 6.2)
    "full_increase_percent_96_channels": 350,  # whole Infomax vs BLAS on an i7, "4.5 veces" (section 7.2)
    "full_times_128_channels": {"i5": 6.0, "i7": 3.5},  # whole Infomax, CUDA vs BLAS (section 7.1)
    "hours_256_channels_105_min": {"blas": 87 + 14 / 60, "cuda": 24 + 9 / 60},  # 512 steps (section 7.1)
    "cublas_active_warps_below": 0.12,  # cuBLAS matrix-vector: < 12 % active warps, heavy DRAM reads
    "occupancy_32_channels": 0.17,
}


def times_from_increase(percent):
    """The factor an increase of ``percent`` % means: 1 + percent / 100 (the thesis's convention).

    >>> times_from_increase(350)
    4.5
    """
    from .._validate import check_float

    return 1.0 + check_float(percent, "percent", minimum=-100) / 100.0


@dataclass(frozen=True)
class Arch:
    """Per-SM limits of a GPU generation (CUDA C Programming Guide, compute capabilities table).

    Attributes
    ----------
    name : str
    max_warps, max_blocks : int
        Resident warps and blocks per SM.
    registers : int
        32-bit registers per SM.
    register_unit : int
        Registers are allocated per warp in multiples of this.
    shared_bytes : int
        Shared memory per SM usable by blocks.
    shared_unit : int
        Shared memory is allocated per block in multiples of this.
    shared_reserved : int
        Bytes the system reserves per block (1 KiB from compute capability 8.0 on).
    """

    name: str
    max_warps: int
    max_blocks: int
    registers: int
    register_unit: int
    shared_bytes: int
    shared_unit: int
    shared_reserved: int


ARCHS = {
    # Fermi (GTX 480, Tesla C2070: the thesis's GPUs)
    "sm_20": Arch("sm_20 (Fermi)", 48, 8, 32768, 64, 48 * 1024, 128, 0),
    # Ampere A100
    "sm_80": Arch("sm_80 (A100)", 64, 32, 65536, 256, 164 * 1024, 128, 1024),
    # Hopper H100
    "sm_90": Arch("sm_90 (H100)", 64, 32, 65536, 256, 228 * 1024, 128, 1024),
}


def occupancy(threads_per_block, registers_per_thread, shared_bytes_per_block, arch="sm_90"):
    """Resident blocks and warps per SM, what limits them, and the occupancy.

    Parameters
    ----------
    threads_per_block : int
    registers_per_thread : int
        From the compile check.
    shared_bytes_per_block : int
        Static shared memory, from the compile check.
    arch : {"sm_20", "sm_80", "sm_90"} or Arch

    Returns
    -------
    dict
        ``blocks_per_sm``, ``warps_per_sm``, ``occupancy`` (0..1), ``limiter`` (``"blocks"``,
        ``"warps"``, ``"registers"`` or ``"shared memory"``) and the bound each gives
        (``by_blocks``, ``by_warps``, ``by_registers``, ``by_shared``).

    Examples
    --------
    The thesis's 32-channel GEMV on Fermi: 1-warp blocks, at most 8 per SM, 8 of 48 warps.

    >>> round(occupancy(32, 29, 2048, "sm_20")["occupancy"], 3)
    0.167
    """
    threads_per_block = check_int(threads_per_block, "threads_per_block", minimum=1, maximum=1024)
    registers_per_thread = check_int(registers_per_thread, "registers_per_thread", minimum=0, maximum=255)
    shared_bytes_per_block = check_int(shared_bytes_per_block, "shared_bytes_per_block", minimum=0)
    a = arch if isinstance(arch, Arch) else ARCHS[check_choice(arch, "arch", tuple(ARCHS))]
    warps = -(-threads_per_block // WARP)
    regs_per_warp = -(-registers_per_thread * WARP // a.register_unit) * a.register_unit
    by_regs = a.registers // (regs_per_warp * warps) if regs_per_warp else a.max_blocks
    shared = -(-(shared_bytes_per_block + a.shared_reserved) // a.shared_unit) * a.shared_unit
    by_shared = a.shared_bytes // shared if shared else a.max_blocks
    bounds = {"blocks": a.max_blocks, "warps": a.max_warps // warps, "registers": by_regs,
              "shared memory": by_shared}
    limiter = min(bounds, key=lambda k: (bounds[k], list(bounds).index(k)))
    blocks = bounds[limiter]
    return {"arch": a.name, "blocks_per_sm": blocks, "warps_per_sm": blocks * warps,
            "occupancy": blocks * warps / a.max_warps, "limiter": limiter, "by_blocks": bounds["blocks"],
            "by_warps": bounds["warps"], "by_registers": by_regs, "by_shared": by_shared}


def simt_efficiency(n_channels):
    """Lanes doing work / lanes issued in a block of one thread per channel: ``C / (32 ceil(C / 32))``."""
    n_channels = check_int(n_channels, "n_channels", minimum=1)
    return n_channels / (WARP * math.ceil(n_channels / WARP))


_METHODS = ("blas", "custom", "fused", "cupy")


def launches_per_minibatch(method, batch):
    """Kernel launches per minibatch: ``B + 5`` (blas), 6 (custom), 2 (fused).

    ``"cupy"`` counts the CuPy calls that launch kernels: GEMM, bias add, scale, tanh,
    GEMM, add, GEMM, scale, add, column sum, scale, add (12, a few of them fused by
    CuPy's elementwise kernels in practice: a lower bound of the drop-in library's cost).
    """
    method = check_choice(method, "method", _METHODS)
    batch = check_int(batch, "batch", minimum=1)
    return {"blas": batch + 5, "custom": 6, "fused": 2, "cupy": 12}[method]


def launches_per_step(method, n_samples, batch):
    """Launches of one step: ``floor(N / B)`` minibatches times :func:`launches_per_minibatch`."""
    n_samples = check_int(n_samples, "n_samples", minimum=1)
    return (n_samples // check_int(batch, "batch", minimum=1)) * launches_per_minibatch(method, batch)


def flops_per_step(n_channels, n_samples, batch):
    """Floating-point operations of one step (multiply-adds count 2).

    Per minibatch: ``U = W X_b`` (2 C^2 B), ``Y U^T`` (2 C^2 B), ``(Y U^T + B I) W`` (2 C^3),
    the update and the elementwise work (~C B + C^2, ignored).
    """
    c = check_int(n_channels, "n_channels", minimum=1)
    n = check_int(n_samples, "n_samples", minimum=1)
    b = check_int(batch, "batch", minimum=1)
    return (n // b) * (4 * c * c * b + 2 * c ** 3)


#: Figures of the split step's prediction that no committed run of the course measured yet: the grid
#: barrier is RRZE gpu-benches' ``cg::this_grid().sync()`` on an H200 (C++, as ``TOOLCHAIN.md`` cites it;
#: numba's ``cudaCGSynchronize`` may cost more), the latencies are assumed orders of magnitude of an
#: L2 hit and of a DRAM access. The next probe run checks them.
SPLIT_ASSUMED = {"grid_sync_seconds": 1.26e-6, "l2_seconds": 0.2e-6, "dram_seconds": 0.6e-6}


def _committed_gpu_inputs():
    """Launch and small-copy host costs, pinned bandwidth, FP64 rate and SMs of the committed H200 runs."""
    import json

    from ..bench import RESULTS_DIR
    from ..bench.costs import committed_costs

    costs = committed_costs()
    probes = sorted(RESULTS_DIR.glob("probe-ica_*.json"))
    device = json.loads(probes[-1].read_text())["device"] if probes else {}
    fp32 = device.get("fp32_peak_flops")
    fp64_source = f"fp32_peak_flops / 2 of {probes[-1].name if probes else '-'}"
    return {"launch_seconds": costs.launch_seconds, "copy_seconds": costs.copy_seconds,
            "pinned_bytes_per_s": costs.pinned_bytes_per_s, "pageable_bytes_per_s": costs.pageable_bytes_per_s,
            # Hopper and Ampere data-centre GPUs run FP64 at half their FP32 rate.
            "fp64_flops_per_s": None if fp32 is None else fp32 / 2.0, "sm_count": device.get("sm_count"),
            "device": device.get("name"), "sources": dict(costs.sources, fp64=fp64_source)}


def split_step_prediction(n_channels=64, n_samples=180_000, batch=None, *, threads=256, per_block=4, steps=84,
                          blown_minibatches=0, slots=8, inputs=None, assumed=None):
    """A *prediction* of ``method="persistent_split"`` on a GPU, to check against the next measured run.

    The critical path of one minibatch (:mod:`course_lib.ica._split_step`): stage A on an owner
    block (the permutation index and the sample from DRAM, one after the other; the dot products
    ``W x`` with eight loads of ``W^T`` in flight; its FP64 work on one SM), a grid barrier, stage B
    on a row block (the column sums of the partial products with four loads in flight, the row
    times W with four in flight, its FP64 work), a grid barrier. Per step: one launch, one small
    download, a permutation upload every ``slots`` steps (pinned), the host's permutation draws
    overlapped with the device. Per call: the data's upload (pageable).

    Parameters
    ----------
    n_channels, n_samples, batch : int
        C, N and B (default ``floor(sqrt(N / 3))``).
    threads, per_block, slots : int
        The launch's threads per block, samples per owner block, permutations per upload.
    steps : int
        Steps to convergence (84 at 64 x 180,000, seed 1).
    blown_minibatches : int
        Minibatches of the passes that blew up.
    inputs : dict, optional
        ``launch_seconds``, ``copy_seconds``, ``pinned_bytes_per_s``, ``pageable_bytes_per_s``,
        ``fp64_flops_per_s``, ``sm_count``;
        default: the committed H200 runs.
    assumed : dict, optional
        ``grid_sync_seconds``, ``l2_seconds``, ``dram_seconds``; default :data:`SPLIT_ASSUMED`.

    Returns
    -------
    dict
        ``minibatch_seconds`` with its terms (``stage_a_seconds``, ``stage_b_seconds``,
        ``grid_sync_seconds``), ``step_device_seconds``, ``step_host_seconds``,
        ``convergence_seconds``, ``launches_per_step`` (1), ``grid_syncs_per_minibatch`` (2),
        ``label`` and ``sources``.
    """
    from .reference import default_batch_size

    c = check_int(n_channels, "n_channels", minimum=2)
    n = check_int(n_samples, "n_samples", minimum=1)
    b = default_batch_size(n) if batch is None else check_int(batch, "batch", minimum=1)
    inputs = _committed_gpu_inputs() if inputs is None else dict(inputs)
    assumed = dict(SPLIT_ASSUMED, **(assumed or {}))
    l2, dram, sync = assumed["l2_seconds"], assumed["dram_seconds"], assumed["grid_sync_seconds"]
    per_sm = inputs["fp64_flops_per_s"] / inputs["sm_count"]
    owners = -(-b // per_block)
    s = min(per_block, b)
    stage_a = 2 * dram + math.ceil(c / 8) * l2 + (2 * s * c * c + 2 * s * (c * c + c)) / per_sm
    groups = max(1, threads // (c + 1))
    groups_w = max(1, threads // c)
    stage_b = (math.ceil(math.ceil(owners / groups) / 4) + math.ceil(math.ceil(c / groups_w) / 4) + 1) * l2 \
        + (2 * c * c + (c + 1) * owners) / per_sm
    minibatch = stage_a + stage_b + 2 * sync
    minibatches = n // b
    device = sync + minibatches * minibatch
    host = inputs["launch_seconds"] + inputs["copy_seconds"] + 4.0 * n / inputs["pinned_bytes_per_s"]  # K perms / K
    upload = 8.0 * c * n / inputs["pageable_bytes_per_s"]  # the data, once per call
    total = steps * (device + host) + blown_minibatches * minibatch + upload
    return {"label": "prediction (model), not a measurement: check against the next GPU run",
            "stage_a_seconds": stage_a, "stage_b_seconds": stage_b, "grid_sync_seconds": sync,
            "minibatch_seconds": minibatch, "minibatches_per_step": minibatches, "step_device_seconds": device,
            "step_host_seconds": host, "upload_seconds": upload, "convergence_seconds": total,
            "not_included": "centring, sphering and the sources on the host (as in every method); the first "
                            f"{slots} permutations drawn before the first step", "launches_per_step": 1,
            "grid_syncs_per_minibatch": 2, "owners": owners, "device": inputs.get("device"),
            "sources": {**inputs.get("sources", {}), "assumed": assumed}}
