"""Measured global traffic of the N-body kernels: the simulator's profiler on a real launch.

:func:`measure_fetches` launches one kernel (naive, P x P or tiled) under
:func:`course_lib.sim.profile` and reports the bytes it loaded from global memory, the
body records that makes (16 bytes each), the count the model of
:func:`course_lib.nbody.global_fetches` predicts, and the 32-byte sectors per warp-level
load request. A destination body is read without its mass (12 bytes), so the measured
records fall short of the model by a quarter record per destination load; the sources,
which dominate, match it exactly.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_block, check_choice, check_float, check_positive_int, check_seed
from .api import pack_bodies
from .data import plummer_sphere
from .model import BYTES_PER_BODY, global_fetches

__all__ = ["MEASURED_METHODS", "SLOT_METHODS", "inner_loop_slots", "measure_fetches"]

#: Methods whose inner loop :func:`inner_loop_slots` counts.
SLOT_METHODS = ("tiled", "lean", "blocked")

MEASURED_METHODS = ("naive", "pxp", "tiled")


def measure_fetches(n, method, tile=8, *, softening=0.05, seed=7):
    """Profile one evaluation of all accelerations in the simulator and count its global loads.

    Parameters
    ----------
    n : int
        Number of bodies; keep it small (tens): every simulated thread is traced.
    method : {"naive", "pxp", "tiled"}
    tile : int
        P for ``"pxp"`` (P x P threads per block, P <= 32) and ``"tiled"`` (P threads per
        block); ``"naive"`` runs 32 threads per block.
    softening : float
        Softening length eps > 0.
    seed : int or None
        Seed of the Plummer sphere the bodies come from.

    Returns
    -------
    dict
        ``loaded_bytes`` (global load bytes the launch executed), ``records``
        (``loaded_bytes / 16``), ``model`` (:func:`~course_lib.nbody.global_fetches`),
        ``records_per_interaction`` and ``sectors_per_request`` (32-byte sectors per
        warp-level global load request), and ``report`` (the profiler's report).

    Examples
    --------
    12 bodies in tiles of 4: 12 destination loads (12 bytes each) and 3 tiles of 4
    sources for each of them (16 bytes each), against the model's 12 + 12 x 3 records:

    >>> m = measure_fetches(12, "tiled", 4)
    >>> m["model"], m["loaded_bytes"] == 12 * 12 + 12 * 3 * 16
    (48, True)
    """
    from ..sim import profile
    from . import kernels

    n = check_positive_int(n, "n")
    check_choice(method, "method", MEASURED_METHODS)
    tile = check_block(tile, "tile", maximum=32 if method == "pxp" else 1024)
    eps = check_float(softening, "softening", minimum=0, min_inclusive=False)
    pos, _, mass = plummer_sphere(n, seed=check_seed(seed))
    bodies = pack_bodies(pos, mass)
    blocks = -(-n // tile)
    if method == "naive":
        kernel, grid, block = kernels.nbody_naive_kernel, -(-n // 32), 32
    elif method == "pxp":
        kernel, grid, block = kernels.nbody_pxp_kernel(tile), (blocks, blocks), (tile, tile)
    else:
        kernel, grid, block = kernels.nbody_tiled_kernel(tile), blocks, tile
    report = profile(kernel, grid, block, bodies, np.float32(eps * eps), np.zeros((n, 3), np.float32))
    loaded = report.total.global_load_bytes
    return {
        "loaded_bytes": loaded,
        "records": loaded // BYTES_PER_BODY,
        "model": global_fetches(n, method, None if method == "naive" else tile),
        "records_per_interaction": loaded / BYTES_PER_BODY / n**2,
        "sectors_per_request": report.total.load_sectors_per_request,
        "report": report,
    }


def _ptx_inner_loop(ptx):
    """The instructions of the innermost loop holding the interactions (the ``rsqrt``), as PTX opcodes."""
    lines = ptx.splitlines()
    rsqrt = [i for i, line in enumerate(lines) if "rsqrt.approx" in line]
    if not rsqrt:
        raise ValueError("no rsqrt.approx in the PTX: not an N-body interaction loop")
    start = max(i for i in range(rsqrt[0]) if lines[i].startswith("$L__BB"))
    label = lines[start].rstrip(":")
    end = min(i for i in range(rsqrt[-1], len(lines)) if "bra" in lines[i] and label in lines[i])
    ops = []
    for line in lines[start + 1:end + 1]:
        words = line.split()
        if not words or words[0].startswith(("$", "//", "{", "}")):
            continue
        ops.append(words[1] if words[0].startswith("@") else words[0])
    return ops


def inner_loop_slots(method="blocked", tile=256, bodies_per_thread=4, *, source="sass"):
    """Issue slots per interaction of a kernel's inner loop on sm_90, counted without a GPU.

    On Hopper a scheduler issues one warp instruction per clock and its FP32 pipe is as wide as
    the issue rate, so every instruction of the loop (integer, control and shared loads
    included) takes the slot of an FP32 one: slots per interaction bound the kernel.

    ``source="sass"`` counts the machine code itself with :func:`course_lib.sass.instruction_mix`
    (numba-cuda, ``ptxas -O3``, ``nvdisasm``: the ``cu13``/``cu12`` extras). ``source="ptx"``
    estimates the count from numba's PTX alone, for machines without those tools: FP32
    ``add/sub/mul/fma`` and ``rsqrt.approx`` one slot each, the four ``ld.shared.f32`` of a
    16-byte body row one LDS.128 (a quarter each), 64-bit integer ops two slots (a 32-bit
    pair), other integer and control ops one, ``ld.param`` none (a constant-bank operand).
    The estimate is within a quarter slot of the SASS for the lean loops (15.75 against 15.5,
    13.69 against 13.69) and overstates the committed tiled kernel (36.75 against 27.75: ptxas
    folds part of numba's 64-bit index arithmetic).

    Parameters
    ----------
    method : {"tiled", "lean", "blocked"}
        ``"tiled"``: :func:`~course_lib.nbody.kernels.nbody_tiled_kernel`; ``"lean"``
        and ``"blocked"``: :func:`~course_lib.nbody.kernels.nbody_blocked_kernel` with one
        body per thread or ``bodies_per_thread``.
    tile : int
        Tile size P.
    bodies_per_thread : int
        B of ``"blocked"``.
    source : {"sass", "ptx"}

    Returns
    -------
    dict
        ``interactions`` per loop trip (the loop's MUFU.RSQ / ``rsqrt.approx`` count: one per
        interaction), ``slots`` per trip, ``slots_per_interaction`` (float), and ``mix``
        (slots per instruction class).
    """
    from ..compile_check import compile_kernel
    from . import kernels

    check_choice(method, "method", SLOT_METHODS)
    check_choice(source, "source", ("sass", "ptx"))
    tile = check_block(tile, "tile")
    if method == "tiled":
        kernel = kernels.nbody_tiled_kernel(tile)
    else:
        kernel = kernels.nbody_blocked_kernel(tile, 1 if method == "lean" else bodies_per_thread)
    if source == "sass":
        from ..sass import instruction_mix

        mix = instruction_mix(kernel, kernels.BODY_SIG, arch="sm_90")
        interactions = int(mix.counts["MUFU"])
        return {"interactions": interactions, "slots": mix.slots, "slots_per_interaction": mix.slots / interactions,
                "mix": {kind: count for kind, count in mix.counts.items() if count}}
    ptx = compile_kernel(kernel, kernels.BODY_SIG, cc=(9, 0), fastmath=True).ptx
    mix = {"fp32": 0.0, "mufu": 0.0, "lds": 0.0, "integer": 0.0, "other": 0.0}
    for op in _ptx_inner_loop(ptx):
        if op.startswith("rsqrt.approx"):
            mix["mufu"] += 1
        elif op.startswith(("add.", "sub.", "mul.", "fma.")) and op.endswith(".f32"):
            mix["fp32"] += 1
        elif op.startswith("ld.shared"):
            mix["lds"] += 0.25 if op.endswith(".f32") else 1
        elif op.startswith("ld.param"):
            continue
        elif ".s64" in op or ".u64" in op or ".b64" in op:
            mix["integer"] += 2
        elif any(t in op for t in (".s32", ".u32", ".b32", ".pred")) or op.startswith(("selp", "setp")):
            mix["integer"] += 1
        else:
            mix["other"] += 1
    interactions = int(mix["mufu"])
    slots = sum(mix.values())
    return {"interactions": interactions, "slots": slots, "slots_per_interaction": slots / interactions,
            "mix": mix}
