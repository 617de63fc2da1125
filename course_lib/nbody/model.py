"""Counting models of Unit 1: global fetches, flops and the tile-size trade-offs.

These are the numbers the lesson reasons with; the simulator's profiler
(:mod:`course_lib.sim`) measures the same quantities on the real kernels.
"""

from __future__ import annotations

import math

from .._validate import check_choice, check_float, check_int, check_positive_int

__all__ = ["BYTES_PER_BODY", "FLOPS_PER_INTERACTION", "global_fetches", "tile_report"]

#: Flop convention of the CUDA samples' nbody: 20 flops per interaction (FP32).
FLOPS_PER_INTERACTION = 20
#: x, y, z, mass as float32.
BYTES_PER_BODY = 16


def global_fetches(n, method, tile=None):
    """Body records fetched from global memory by one evaluation of all accelerations.

    Parameters
    ----------
    n : int
        Number of bodies.
    method : {"matrix", "naive", "pxp", "tiled"}
        ``"matrix"``: the N x N view with every force computed on its own, fetching
        both of its bodies (2N fetches per body, 2N^2 in all). ``"naive"``: the course's
        naive kernel, destination kept in registers (N + N^2). ``"pxp"``: P x P tiles,
        2P fetches per tile. ``"tiled"``: P threads per tile, destination loaded once per
        block and P sources per tile.
    tile : int, optional
        P, required for ``"pxp"`` and ``"tiled"``.

    Returns
    -------
    int
    """
    n = check_int(n, "n", minimum=0)
    check_choice(method, "method", ("matrix", "naive", "pxp", "tiled"))
    if method == "matrix":
        return 2 * n * n
    if method == "naive":
        return n * n + n
    if tile is None:
        raise ValueError(f"tile must be given for method {method!r} (a tile size >= 1), got None")
    tile = check_positive_int(tile, "tile")
    tiles_per_side = math.ceil(n / tile)
    if method == "pxp":
        # Guarded loads: only real bodies are fetched, each once per tile it belongs to.
        return 2 * n * tiles_per_side
    return n + n * tiles_per_side  # "tiled"


def tile_report(n, tile, *, sm_count, registers_per_thread=None, max_threads_per_block=1024, max_blocks_per_sm=32,
                max_threads_per_sm=2048, shared_per_sm=228 * 1024, reserved_shared_per_block=1024,
                registers_per_sm=65536, register_unit=256, warps_to_hide=None):
    """The tile-size trade-offs of the lesson for one (N, P) on one device.

    Parameters
    ----------
    n : int
        Number of bodies.
    tile : int
        P, threads per block of the tiled kernel.
    sm_count : int
        Streaming multiprocessors of the device.
    registers_per_thread : int, optional
        Registers the kernel uses per thread (``course_lib.compile_check`` reports them);
        None leaves the register limit out (``limits`` then says so).
    max_threads_per_block, max_blocks_per_sm, max_threads_per_sm : int
        Device limits (defaults: H100, compute capability 9.0).
    shared_per_sm : int
        Shared memory of an SM usable by blocks, in bytes (228 KiB on an H100).
    reserved_shared_per_block : int
        Shared memory the system reserves for each resident block (1 KiB from compute
        capability 8.0 on, in the CUDA occupancy calculation).
    registers_per_sm : int
        Register file of an SM (64 K 32-bit registers).
    register_unit : int
        Registers are allocated per warp in units of this many (256).
    warps_to_hide : float, optional
        Resident warps an SM needs for its schedulers never to wait on a dependency (the
        kernel's latency over its independent work per warp; found by measurement, see the
        lesson). Given, the report adds ``share_of_saturated_rate``.

    Returns
    -------
    dict
        ``fetches`` (body records from global memory), ``bytes`` (fetched bytes),
        ``blocks``, ``blocks_per_sm`` (resident at once: the smallest of the limits),
        ``limits`` (resident blocks allowed by each resource: "blocks", "threads",
        "shared memory" and, if ``registers_per_thread`` is given, "registers"),
        ``limited_by`` (the resource(s) setting ``blocks_per_sm``), ``busy_sms`` (SMs that
        get at least one block), ``fits_block`` (P <= max threads per block) and
        ``shared_bytes`` (the kernel's shared memory per block).

        The grid itself is the other limiter: it holds ceil(N / P) blocks of P threads, about
        N / 32 warps **whatever P**, so at modest N the SMs hold fewer warps than residency
        allows. ``warps_per_sm`` (mean resident warps on each busy SM, float),
        ``occupancy`` (those warps over the SM's maximum, 0..1) and ``occupancy_limited_by``
        (``"grid"`` when the grid has fewer blocks than the SMs could hold at once, else
        ``"residency"``) say so; with ``warps_to_hide``, ``share_of_saturated_rate`` (0..1)
        is the busy SMs' share of the device times ``min(1, warps_per_sm / warps_to_hide)``.

    Examples
    --------
    At N = 32,768 on 132 SMs every tile size leaves about 7.8 warps per SM (12 % of 64),
    because the grid has 1,024 warps in all:

    >>> [round(tile_report(32768, p, sm_count=132)["warps_per_sm"], 1) for p in (64, 128, 256)]
    [7.8, 7.8, 8.0]
    >>> tile_report(32768, 256, sm_count=132)["occupancy_limited_by"]
    'grid'
    """
    n = check_int(n, "n", minimum=0)
    tile = check_positive_int(tile, "tile")
    sm_count = check_positive_int(sm_count, "sm_count")
    if registers_per_thread is not None:
        registers_per_thread = check_int(registers_per_thread, "registers_per_thread", minimum=1, maximum=255)
    max_threads_per_block = check_positive_int(max_threads_per_block, "max_threads_per_block")
    max_blocks_per_sm = check_positive_int(max_blocks_per_sm, "max_blocks_per_sm")
    max_threads_per_sm = check_positive_int(max_threads_per_sm, "max_threads_per_sm")
    shared_per_sm = check_positive_int(shared_per_sm, "shared_per_sm")
    reserved_shared_per_block = check_int(reserved_shared_per_block, "reserved_shared_per_block", minimum=0)
    registers_per_sm = check_positive_int(registers_per_sm, "registers_per_sm")
    register_unit = check_positive_int(register_unit, "register_unit")
    if warps_to_hide is not None:
        warps_to_hide = check_float(warps_to_hide, "warps_to_hide", minimum=0, min_inclusive=False)
    blocks = math.ceil(n / tile)
    shared_bytes = tile * BYTES_PER_BODY
    # Threads and registers are allocated per whole warp.
    warps = math.ceil(tile / 32)
    limits = {
        "blocks": max_blocks_per_sm,
        "threads": max_threads_per_sm // (warps * 32),
        "shared memory": shared_per_sm // (shared_bytes + reserved_shared_per_block),
    }
    if registers_per_thread is not None:
        per_warp = math.ceil(registers_per_thread * 32 / register_unit) * register_unit
        limits["registers"] = registers_per_sm // (per_warp * warps)
    resident = min(limits.values())
    fetches = global_fetches(n, "tiled", tile)
    busy_sms = min(blocks, sm_count)
    # Blocks running at once: the grid's, unless the SMs' residency caps them (then the rest wait for a slot).
    running = min(blocks, sm_count * resident)
    warps_per_sm = running * warps / busy_sms if busy_sms else 0.0
    max_warps = max_threads_per_sm // 32
    report = {
        "n": n,
        "tile": tile,
        "fetches": fetches,
        "bytes": fetches * BYTES_PER_BODY,
        "blocks": blocks,
        "blocks_per_sm": resident,
        "limits": limits,
        "limited_by": [name for name, value in limits.items() if value == resident],
        "busy_sms": busy_sms,
        "sm_count": sm_count,
        "fits_block": tile <= max_threads_per_block,
        "shared_bytes": shared_bytes,
        "warps_per_sm": warps_per_sm,
        "occupancy": min(1.0, warps_per_sm / max_warps),
        "occupancy_limited_by": "grid" if blocks < sm_count * resident else "residency",
    }
    if warps_to_hide is not None:
        report["share_of_saturated_rate"] = busy_sms / sm_count * min(1.0, warps_per_sm / warps_to_hide)
    return report
