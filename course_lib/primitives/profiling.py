"""Measured counts of the primitives' kernels: the simulator's profiler on one launch.

:func:`measure_scan` runs one tile-per-block scan (or the reduction) under
:func:`course_lib.sim.profile` and reads the figures the lesson predicts with
:mod:`course_lib.primitives.model`: the adds (lanes that ran the line that adds), the span
(the most statements one thread ran), the barriers per block, and the shared-memory
wavefronts against the ideal (one per warp-wide access). The tests check that the adds and
barriers equal the model and that the padding brings the wavefronts to the ideal.
"""

from __future__ import annotations

import numpy as np

from . import kernels

__all__ = ["MEASURED", "measure_scan"]

#: The kernels :func:`measure_scan` measures, and the source text of the line that adds in each.
MEASURED = {
    "reduce": ("tile[t] += tile[t + stride]",),
    "hillis_steele": ("value += buffers[source * block + t - offset]",),
    "blelloch": ("temp[right] += temp[left]", "temp[right] += carried"),
    "blelloch_padded": ("temp[right] += temp[left]", "temp[right] += carried"),
    "warp_reduce": ("acc += cuda.shfl_down_sync(FULL_MASK, acc, offset)",),
    "warp_scan": ("value += below", "total += below"),
}


def measure_scan(method: str, n: int, block: int = 32, seed: int = 0) -> dict:
    """Profile one launch of a tile-per-block kernel on ``n`` random float32 values.

    Parameters
    ----------
    method : {"reduce", "hillis_steele", "blelloch", "blelloch_padded", "warp_reduce", "warp_scan"}
    n : int
        Values; keep it small (a few hundred): every simulated thread is traced.
    block : int
        Threads per block, one of :data:`course_lib.primitives.kernels.BLOCKS`.
    seed : int

    Returns
    -------
    dict
        ``adds`` (lanes that ran the adding lines), ``span`` (the most statements of one thread),
        ``barriers_per_block``, ``shared_wavefronts`` and ``shared_ideal_wavefronts`` (all shared
        accesses), ``conflict_ratio`` (their quotient: 1 without bank conflicts), ``tiles`` and
        ``report`` (the profiler's report).
    """
    from ..sim import profile

    if method not in MEASURED:
        raise ValueError(f"method must be one of {', '.join(map(repr, MEASURED))}, got {method!r}")
    x = np.random.default_rng(seed).uniform(-1, 1, n).astype(np.float32)
    if method == "reduce":
        kernel, per_block = kernels.block_reduce_kernel(block), block
    elif method == "warp_reduce":  # one tile per block here, to compare with the tree (the kernel takes any grid)
        kernel, per_block = kernels.warp_reduce_kernel(block), block
    elif method == "warp_scan":
        kernel, per_block = kernels.warp_scan_kernel(block), block
    elif method == "hillis_steele":
        kernel, per_block = kernels.hillis_steele_scan_kernel(block), block
    else:
        kernel, per_block = kernels.blelloch_scan_kernel(block, "float32", method == "blelloch_padded"), 2 * block
    tiles = max(1, -(-n // per_block))
    reduces = method in ("reduce", "warp_reduce")
    out = np.zeros(tiles if reduces else n, np.float32)
    args = (x, out) if reduces else (x, out, np.zeros(tiles, np.float32))
    report = profile(kernel, tiles, block, *args)
    adds = sum(report.line(text).active_lanes for text in MEASURED[method])
    total = report.total
    return {"adds": int(adds), "span": int(report.max_thread_instructions),
            "barriers_per_block": float(report.barriers_per_block),
            "shared_wavefronts": int(total.shared_wavefronts), "shared_ideal_wavefronts": int(total.shared_ideal_wavefronts),
            "conflict_ratio": total.shared_wavefronts / max(total.shared_ideal_wavefronts, 1), "tiles": tiles,
            "report": report}
