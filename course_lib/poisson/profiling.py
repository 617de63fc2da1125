"""Measured behaviour of one Jacobi iteration: the simulator's profiler on the real kernel.

:func:`measure_step` launches :func:`course_lib.poisson.kernels.jacobi_step_kernel` once
under :func:`course_lib.sim.profile` on a small clone and reports what a GPU would
issue: warp instructions, the SIMT efficiency of the whole launch and of the update line
(lanes whose pixel is not strict interior sit idle), the 32-byte sectors per warp-level
global request (about 4 for a warp reading 32 consecutive float32 of a row), and the
global bytes the threads request per strict-interior pixel, beside the DRAM model of
:mod:`course_lib.poisson.model` (neighbour reads are requests that the caches serve).
"""

from __future__ import annotations

import math

import numpy as np

from .._validate import check_int
from .model import BYTES_PER_PIXEL_ITERATION
from .reference import INTERIOR, prepare

__all__ = ["UPDATE_LINE", "measure_step"]

#: The line of the step kernel that computes and stores one channel of a pixel.
UPDATE_LINE = "nxt[c, y, x] = jacobi_update"


def measure_step(source, target, mask, *, block_x=32, block_y=8):
    """Profile one launch of the one-iteration kernel on ``(source, target, mask)``.

    Parameters
    ----------
    source, target : ndarray of shape (H, W, 3), uint8
    mask : ndarray of shape (H, W), bool
        Keep the images small (a few hundred pixels): every simulated thread is traced.
    block_x, block_y : int
        Block shape (threads along a row, rows).

    Returns
    -------
    dict
        ``interior_pixels``, ``warp_instructions``, ``simt_efficiency`` (whole launch),
        ``update_simt_efficiency`` (the update line), ``sectors_per_request``,
        ``requested_bytes_per_pixel`` (global loads and stores the threads issued, per
        strict-interior pixel), ``model_bytes_per_pixel``
        (:data:`~course_lib.poisson.model.BYTES_PER_PIXEL_ITERATION`) and ``report``.

    Examples
    --------
    >>> from course_lib.poisson import cat_in_coffee
    >>> m = measure_step(*cat_in_coffee((12, 16)), block_x=16, block_y=4)
    >>> m["requested_bytes_per_pixel"] >= m["model_bytes_per_pixel"] == 37
    True
    """
    from ..sim import profile
    from .api import validate_inputs
    from .kernels import jacobi_step_kernel

    source, target, mask = validate_inputs(source, target, mask)
    block_x = check_int(block_x, "block_x", minimum=1, maximum=1024)
    block_y = check_int(block_y, "block_y", minimum=1, maximum=1024 // block_x)
    prep = prepare(source, target, mask)
    h, w = mask.shape
    grid = (math.ceil(w / block_x), math.ceil(h / block_y))
    report = profile(jacobi_step_kernel, grid, (block_x, block_y), prep.guess, prep.rhs, prep.labels,
                     prep.guess.copy())
    interior = int(np.count_nonzero(prep.labels == INTERIOR))
    total = report.total
    update = report.line(UPDATE_LINE)
    return {
        "interior_pixels": interior,
        "warp_instructions": total.warp_instructions,
        "simt_efficiency": total.simt_efficiency,
        "update_simt_efficiency": update.simt_efficiency,
        "sectors_per_request": total.sectors_per_request,
        "requested_bytes_per_pixel": (total.global_load_bytes + total.global_store_bytes) / interior,
        "model_bytes_per_pixel": BYTES_PER_PIXEL_ITERATION,
        "report": report,
    }
