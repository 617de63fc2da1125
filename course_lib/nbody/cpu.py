"""Fast CPU baseline: a Numba ``parallel=True`` double loop (all cores, SIMD, float32).

This is the CPU side of every "GPU vs CPU" figure of Unit 1: the same float32
arithmetic as the kernels, one destination body per ``prange`` iteration.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .._validate import check_array, check_float

__all__ = ["accelerations_cpu"]


@numba.njit(parallel=True, fastmath=True, cache=True)
def _accelerations_cpu(bodies, softening_sq, acc):
    n = bodies.shape[0]
    for i in numba.prange(n):
        xi = bodies[i, 0]
        yi = bodies[i, 1]
        zi = bodies[i, 2]
        ax = np.float32(0.0)
        ay = np.float32(0.0)
        az = np.float32(0.0)
        for j in range(n):
            dx = bodies[j, 0] - xi
            dy = bodies[j, 1] - yi
            dz = bodies[j, 2] - zi
            r2 = dx * dx + dy * dy + dz * dz + softening_sq
            inv_r = np.float32(1.0) / math.sqrt(r2)
            s = bodies[j, 3] * inv_r * inv_r * inv_r
            ax += dx * s
            ay += dy * s
            az += dz * s
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az


def accelerations_cpu(bodies, softening_sq):
    """All-pairs accelerations on the CPU, all cores.

    Parameters
    ----------
    bodies : ndarray of shape (N, 4), float32, C-contiguous
        x, y, z, mass.
    softening_sq : float
        Square of the softening length.

    Returns
    -------
    ndarray of shape (N, 3), float32
    """
    bodies = check_array(bodies, "bodies", shape=(None, 4), dtype=np.float32, finite=True, allow_empty=False)
    if not bodies.flags.c_contiguous:
        raise ValueError("bodies must be C-contiguous (use pack_bodies), got a strided view")
    return _accelerations_checked(bodies, check_float(softening_sq, "softening_sq", minimum=0, min_inclusive=False))


def _accelerations_checked(bodies, softening_sq):
    """:func:`accelerations_cpu` of checked, C-contiguous float32 ``bodies`` (for
    :func:`course_lib.nbody.accelerations`, which checks them once)."""
    acc = np.empty((bodies.shape[0], 3), dtype=np.float32)
    _accelerations_cpu(bodies, np.float32(softening_sq), acc)
    return acc
