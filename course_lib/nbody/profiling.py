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

__all__ = ["MEASURED_METHODS", "measure_fetches"]

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
