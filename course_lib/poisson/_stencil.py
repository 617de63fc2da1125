"""What the Jacobi kernels of :mod:`course_lib.poisson.kernels` and the one-launch kernels of
:mod:`course_lib.poisson._persistent_kernels` share: the lesson, the array signatures, the per-pixel device
functions and the checker's example problem."""

from __future__ import annotations

from numba import cuda, float32

from .reference import prepare

__all__ = ["IMAGE", "LABELS", "LESSON", "PLANES", "clamp_255", "neighbour_count"]

LESSON = "lessons/04_poisson.ipynb"
PLANES = "float32[:, :, ::1]"
IMAGE = "uint8[:, :, ::1]"
LABELS = "uint8[:, ::1]"

# An 11 x 13 image (not a multiple of the 8 x 8 block) with a blob mask: the checker's example launches.
_EXAMPLE_SHAPE = (11, 13)


def _example_problem():
    from .data import synthetic_pair

    source, target, mask = synthetic_pair(*_EXAMPLE_SHAPE, seed=11, fill=0.5)
    return source, target, mask, prepare(source, target, mask)


@cuda.jit(device=True, inline=True)
def neighbour_count(y, x, h, w):
    """D: how many of the 4 neighbours of (y, x) lie inside an h x w image (float32)."""
    d = 0
    if y > 0:
        d += 1
    if y < h - 1:
        d += 1
    if x > 0:
        d += 1
    if x < w - 1:
        d += 1
    return float32(d)


@cuda.jit(device=True, inline=True)
def clamp_255(v):
    """Clamp to [0, 255] as the classic method does after every iteration."""
    return min(max(v, float32(0.0)), float32(255.0))
