"""Counting models of Unit 1: global fetches, flops and the tile-size trade-offs.

These are the numbers the lesson reasons with; the simulator's profiler
(:mod:`course_lib.sim`) measures the same quantities on the real kernels.
"""

from __future__ import annotations

import math

from .._validate import check_choice, check_int, check_positive_int

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


def tile_report(n, tile, *, sm_count, max_threads_per_block=1024, max_blocks_per_sm=32,
                max_threads_per_sm=2048, shared_per_sm=228 * 1024):
    """The tile-size trade-offs of the lesson for one (N, P) on one device.

    Parameters
    ----------
    n : int
        Number of bodies.
    tile : int
        P, threads per block of the tiled kernel.
    sm_count : int
        Streaming multiprocessors of the device.
    max_threads_per_block, max_blocks_per_sm, max_threads_per_sm, shared_per_sm : int
        Device limits (defaults: H100).

    Returns
    -------
    dict
        ``fetches`` (body records from global memory), ``bytes`` (fetched bytes),
        ``blocks``, ``blocks_per_sm`` (resident at once, from the thread and shared
        memory limits), ``busy_sms`` (SMs that get at least one block),
        ``fits_block`` (P <= max threads per block) and ``shared_bytes`` per block.
    """
    n = check_int(n, "n", minimum=0)
    tile = check_positive_int(tile, "tile")
    sm_count = check_positive_int(sm_count, "sm_count")
    max_threads_per_block = check_positive_int(max_threads_per_block, "max_threads_per_block")
    max_blocks_per_sm = check_positive_int(max_blocks_per_sm, "max_blocks_per_sm")
    max_threads_per_sm = check_positive_int(max_threads_per_sm, "max_threads_per_sm")
    shared_per_sm = check_positive_int(shared_per_sm, "shared_per_sm")
    blocks = math.ceil(n / tile)
    shared_bytes = tile * BYTES_PER_BODY
    resident = min(max_blocks_per_sm, max_threads_per_sm // tile,
                   shared_per_sm // shared_bytes)
    fetches = global_fetches(n, "tiled", tile)
    return {
        "n": n,
        "tile": tile,
        "fetches": fetches,
        "bytes": fetches * BYTES_PER_BODY,
        "blocks": blocks,
        "blocks_per_sm": resident,
        "busy_sms": min(blocks, sm_count),
        "sm_count": sm_count,
        "fits_block": tile <= max_threads_per_block,
        "shared_bytes": shared_bytes,
    }
