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

__all__ = ["ARCHS", "Arch", "THESIS", "flops_per_step", "launches_per_minibatch", "launches_per_step", "occupancy",
           "simt_efficiency", "times_from_increase"]

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
