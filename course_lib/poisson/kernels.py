"""Reference CUDA kernels of Unit 4 (seamless cloning), taught in ``lessons/04_poisson.ipynb``.

Layout used by every kernel: images are uint8 arrays of shape (H, W, 3) as loaded; the
iterates and the right-hand side are float32 *planes* of shape (3, H, W), so that
neighbouring threads (consecutive x) read consecutive addresses; ``labels`` is a uint8
array of shape (H, W) holding :data:`OUTSIDE`, :data:`BORDER` or :data:`INTERIOR`.
Launch every kernel on a 2-D grid with x along the columns and y along the rows; each
thread owns one pixel and its three channels.

The arithmetic is float32 and the four neighbours are always summed in the order up,
down, left, right, as in :mod:`course_lib.poisson.reference`, so results agree bit for bit.
None of these kernels uses ``fastmath``: its approximate division would break that.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numba import cuda, float32, uint8

from ..registry import course_kernel, register_kernel
from ._stencil import _EXAMPLE_SHAPE, IMAGE, LABELS, LESSON, PLANES, _example_problem, clamp_255, neighbour_count
from .reference import BORDER, INTERIOR, OUTSIDE, prepare  # noqa: F401

__all__ = [
    "FUSED_SIG",
    "compose_kernel",
    "classify_mask_kernel",
    "jacobi_banded_kernel",
    "jacobi_cooperative_kernel",
    "jacobi_fused_kernel",
    "jacobi_persistent_kernel",
    "jacobi_in_place_racy_kernel",
    "jacobi_step_kernel",
    "in_place_example_launch",
    "poisson_setup_kernel",
]

STEP_SIG = f"void({PLANES}, {PLANES}, {LABELS}, {PLANES})"
#: Signature of the kernels made by :func:`jacobi_fused_kernel` (the last argument is the step count).
FUSED_SIG = f"void({PLANES}, {PLANES}, {LABELS}, {PLANES}, int32)"


# Example launches for the race and barrier checker (tests/sim/test_reference_kernels.py):
# an 11 x 13 image (not a multiple of the 8 x 8 block) with a blob mask.
_EXAMPLE_BLOCK = (8, 8)
_EXAMPLE_GRID = (2, 2)


def _example_classify():
    _, _, mask, prep = _example_problem()
    return _EXAMPLE_GRID, _EXAMPLE_BLOCK, (mask.view(np.uint8), np.zeros_like(prep.labels))


def _example_setup():
    source, target, _, prep = _example_problem()
    return _EXAMPLE_GRID, _EXAMPLE_BLOCK, (source, target, prep.labels, np.zeros_like(prep.rhs),
                                           np.zeros_like(prep.rhs))


def _example_step():
    _, _, _, prep = _example_problem()
    return _EXAMPLE_GRID, _EXAMPLE_BLOCK, (prep.guess, prep.rhs, prep.labels, prep.guess.copy())


def in_place_example_launch():
    """``(griddim, blockdim, args)`` of one launch of :func:`jacobi_in_place_racy_kernel`.

    Deliberately not registered as its example: the checker must flag this kernel, and
    ``tests/poisson`` checks that it does.
    """
    _, _, _, prep = _example_problem()
    return _EXAMPLE_GRID, _EXAMPLE_BLOCK, (prep.guess, prep.rhs, prep.labels)


def _example_compose():
    _, target, _, prep = _example_problem()
    return _EXAMPLE_GRID, _EXAMPLE_BLOCK, (prep.guess, prep.labels, target, np.zeros_like(target))


def _example_fused(halo, block_x, block_y, steps):
    _, _, _, prep = _example_problem()
    h, w = _EXAMPLE_SHAPE
    grid = (math.ceil(w / (block_x - 2 * halo)), math.ceil(h / (block_y - 2 * halo)))
    return grid, (block_x, block_y), (prep.guess, prep.rhs, prep.labels, prep.guess.copy(), np.int32(steps))


@course_kernel(f"void({LABELS}, {LABELS})", lesson=LESSON, example=_example_classify)
def classify_mask_kernel(mask, labels):
    """Label each pixel: outside the mask, inside border, or strict interior.

    Parameters
    ----------
    mask : uint8 array of shape (H, W)
        Nonzero inside the mask.
    labels : uint8 array of shape (H, W)
        Output: 0 outside, 1 inside border, 2 strict interior (all in-image neighbours
        in the mask; neighbours beyond the image edge do not count).
    """
    x, y = cuda.grid(2)
    h, w = mask.shape
    if y >= h or x >= w:
        return
    if mask[y, x] == 0:
        labels[y, x] = OUTSIDE
        return
    interior = True
    if y > 0 and mask[y - 1, x] == 0:
        interior = False
    if y < h - 1 and mask[y + 1, x] == 0:
        interior = False
    if x > 0 and mask[y, x - 1] == 0:
        interior = False
    if x < w - 1 and mask[y, x + 1] == 0:
        interior = False
    labels[y, x] = INTERIOR if interior else BORDER


@cuda.jit(device=True, inline=True)
def _rhs_term(source, target, labels, c, y, x, qy, qx):
    """C's term S(p) - S(q) plus B's term T(q) when q is on the inside border."""
    term = float32(source[y, x, c]) - float32(source[qy, qx, c])
    if labels[qy, qx] == BORDER:
        term += float32(target[qy, qx, c])
    return term


@course_kernel(f"void({IMAGE}, {IMAGE}, {LABELS}, {PLANES}, {PLANES})", lesson=LESSON, example=_example_setup)
def poisson_setup_kernel(source, target, labels, rhs, guess):
    """Compute the constant part B + C of every update, and the initial guess I_0 = S.

    Parameters
    ----------
    source, target : uint8 arrays of shape (H, W, 3)
    labels : uint8 array of shape (H, W)
    rhs : float32 array of shape (3, H, W)
        Output: B + C at strict-interior pixels, 0 elsewhere. The terms are integers,
        exact in float32.
    guess : float32 array of shape (3, H, W)
        Output: the source's values.
    """
    x, y = cuda.grid(2)
    h, w = labels.shape
    if y >= h or x >= w:
        return
    interior = labels[y, x] == INTERIOR
    for c in range(3):
        guess[c, y, x] = float32(source[y, x, c])
        total = float32(0.0)
        if interior:
            if y > 0:
                total += _rhs_term(source, target, labels, c, y, x, y - 1, x)
            if y < h - 1:
                total += _rhs_term(source, target, labels, c, y, x, y + 1, x)
            if x > 0:
                total += _rhs_term(source, target, labels, c, y, x, y, x - 1)
            if x < w - 1:
                total += _rhs_term(source, target, labels, c, y, x, y, x + 1)
        rhs[c, y, x] = total


@cuda.jit(device=True, inline=True)
def jacobi_update(image, rhs, labels, c, y, x, h, w):
    """(A + B + C) / D for pixel (y, x) of channel c, clamped, reading ``image``."""
    a = float32(0.0)
    if y > 0 and labels[y - 1, x] == INTERIOR:
        a += image[c, y - 1, x]
    if y < h - 1 and labels[y + 1, x] == INTERIOR:
        a += image[c, y + 1, x]
    if x > 0 and labels[y, x - 1] == INTERIOR:
        a += image[c, y, x - 1]
    if x < w - 1 and labels[y, x + 1] == INTERIOR:
        a += image[c, y, x + 1]
    return clamp_255((a + rhs[c, y, x]) / neighbour_count(y, x, h, w))


@course_kernel(STEP_SIG, lesson=LESSON, example=_example_step)
def jacobi_step_kernel(prev, rhs, labels, nxt):
    """One Jacobi iteration, double-buffered: read I_k from ``prev``, write I_{k+1} to ``nxt``.

    No thread writes what another thread reads, so the result does not depend on the
    order in which threads run. The host swaps ``prev`` and ``nxt`` between launches.

    Parameters
    ----------
    prev : float32 array of shape (3, H, W)
        I_k.
    rhs : float32 array of shape (3, H, W)
        B + C, from :func:`poisson_setup_kernel`.
    labels : uint8 array of shape (H, W)
    nxt : float32 array of shape (3, H, W)
        I_{k+1} at strict-interior pixels (other pixels are not written). Must not be
        ``prev``.
    """
    x, y = cuda.grid(2)
    h, w = labels.shape
    if y >= h or x >= w or labels[y, x] != INTERIOR:
        return
    for c in range(3):
        nxt[c, y, x] = jacobi_update(prev, rhs, labels, c, y, x, h, w)


# No example launch: the checker of the reference kernels requires clean reports, and this one races.
@course_kernel(f"void({PLANES}, {PLANES}, {LABELS})", lesson=LESSON)
def jacobi_in_place_racy_kernel(image, rhs, labels):
    """DELIBERATELY WRONG: one buffer, updated in place. Shown in the lesson as a data race.

    A thread reads its neighbours' values while the neighbouring threads may already
    have overwritten them with the next iterate, so each pixel sees a mix of I_k and
    I_{k+1} that depends on the order in which threads (and blocks) happen to run. The
    race checker flags the read/write conflict; :func:`jacobi_step_kernel` is the fix.

    Parameters
    ----------
    image : float32 array of shape (3, H, W)
        Read and overwritten.
    rhs : float32 array of shape (3, H, W)
    labels : uint8 array of shape (H, W)
    """
    # jacobi_step_kernel with one buffer, written out on purpose: the lesson sets the two side by side.
    x, y = cuda.grid(2)
    h, w = labels.shape
    if y >= h or x >= w or labels[y, x] != INTERIOR:
        return
    for c in range(3):
        image[c, y, x] = jacobi_update(image, rhs, labels, c, y, x, h, w)


@course_kernel(f"void({PLANES}, {LABELS}, {IMAGE}, {IMAGE})", lesson=LESSON, example=_example_compose)
def compose_kernel(planes, labels, target, out):
    """Write the result: the target, with the iterate (truncated to uint8) on the strict interior.

    Parameters
    ----------
    planes : float32 array of shape (3, H, W)
        The last iterate, already in [0, 255].
    labels : uint8 array of shape (H, W)
    target : uint8 array of shape (H, W, 3)
    out : uint8 array of shape (H, W, 3)
        Output; may be ``target`` itself (each thread reads and writes only its own pixel).
    """
    x, y = cuda.grid(2)
    h, w = labels.shape
    if y >= h or x >= w:
        return
    interior = labels[y, x] == INTERIOR
    for c in range(3):
        out[y, x, c] = uint8(planes[c, y, x]) if interior else target[y, x, c]


@lru_cache(maxsize=None)
def jacobi_fused_kernel(halo: int, block_x: int = 32, block_y: int = 16):
    """Several Jacobi iterations per launch, in shared memory (overlapped temporal blocking).

    800 launches of a kernel that runs for a few microseconds are bound by launch
    latency on a modern GPU. Here each block loads a (block_y, block_x) tile of the
    iterate *with a halo* of ``halo`` pixels on every side, iterates up to ``halo`` times
    in shared memory (two shared buffers, a barrier between iterations), and writes back
    only the tile's centre of (block_y - 2 halo, block_x - 2 halo) pixels, which stays
    exact: after s iterations the values are still right at distance >= s from the tile's
    edge. The halo is recomputed by the neighbouring blocks, the price of fewer launches.

    Parameters
    ----------
    halo : int
        Halo width K, the most iterations one launch may do (>= 1).
    block_x, block_y : int
        Threads per block (one per tile pixel); each must exceed ``2 * halo``.

    Returns
    -------
    numba.cuda kernel
        ``kernel[grid, (block_x, block_y)](prev, rhs, labels, nxt, steps)`` with
        ``grid = (ceil(W / (block_x - 2K)), ceil(H / (block_y - 2K)))`` and
        ``1 <= steps <= K``: reads I_k from ``prev`` and writes I_{k+steps} at the
        strict-interior pixels of ``nxt`` (not ``prev``: blocks read each other's halo).
    """
    if halo < 1:
        raise ValueError(f"halo must be at least 1, got {halo}")
    if block_x <= 2 * halo or block_y <= 2 * halo or block_x * block_y > 1024:
        raise ValueError(f"block ({block_x}, {block_y}) must exceed 2 * halo = {2 * halo} on each side "
                         "and hold at most 1024 threads")
    out_x = block_x - 2 * halo
    out_y = block_y - 2 * halo

    def jacobi_fused(prev, rhs, labels, nxt, steps):
        buf = cuda.shared.array((2, 3, block_y, block_x), float32)
        lab = cuda.shared.array((block_y, block_x), uint8)
        r = cuda.local.array(3, float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        x = cuda.blockIdx.x * out_x - halo + tx
        y = cuda.blockIdx.y * out_y - halo + ty
        h, w = labels.shape
        inside = 0 <= x < w and 0 <= y < h
        label = labels[y, x] if inside else uint8(OUTSIDE)
        lab[ty, tx] = label
        for c in range(3):
            buf[0, c, ty, tx] = prev[c, y, x] if inside else float32(0.0)
            r[c] = rhs[c, y, x] if label == INTERIOR else float32(0.0)
        d = neighbour_count(y, x, h, w)
        # Tile-edge pixels lack a neighbour in the tile: they keep stale values, which
        # only ever reach the halo, never the centre that is written back.
        active = label == INTERIOR and 0 < tx < block_x - 1 and 0 < ty < block_y - 1
        cuda.syncthreads()
        for s in range(steps):
            src = s & 1
            dst = 1 - src
            for c in range(3):
                v = buf[src, c, ty, tx]
                if active:
                    a = float32(0.0)
                    if lab[ty - 1, tx] == INTERIOR:
                        a += buf[src, c, ty - 1, tx]
                    if lab[ty + 1, tx] == INTERIOR:
                        a += buf[src, c, ty + 1, tx]
                    if lab[ty, tx - 1] == INTERIOR:
                        a += buf[src, c, ty, tx - 1]
                    if lab[ty, tx + 1] == INTERIOR:
                        a += buf[src, c, ty, tx + 1]
                    v = clamp_255((a + r[c]) / d)
                buf[dst, c, ty, tx] = v
            cuda.syncthreads()  # the whole tile of I_{k+1} is written before anyone reads it
        centre = halo <= tx < block_x - halo and halo <= ty < block_y - halo
        if centre and inside and label == INTERIOR:
            last = steps & 1
            for c in range(3):
                nxt[c, y, x] = buf[last, c, ty, tx]

    jacobi_fused.__name__ = f"jacobi_fused_k{halo}_{block_x}x{block_y}"
    return cuda.jit(jacobi_fused)


#: (halo, block_x, block_y) of the registered fused kernels: the GPU configurations and the
#: simulator's default (:func:`course_lib.poisson.default_fused`).
FUSED_CONFIGS = ((4, 32, 16), (8, 32, 32), (2, 12, 12))
for _halo, _bx, _by in FUSED_CONFIGS:
    register_kernel(f"poisson.jacobi_fused_kernel[halo={_halo},block={_bx}x{_by}]", FUSED_SIG,
                    (lambda k=_halo, bx=_bx, by=_by: jacobi_fused_kernel(k, bx, by).py_func), LESSON,
                    example=lambda k=_halo, bx=_bx, by=_by: _example_fused(k, bx, by, k))


# The one-launch kernels live in their own module; their names stay importable from here.
from ._persistent_kernels import (BANDED_SIG, COOPERATIVE_SIG, PACKED, PACKED_CHANNELS,  # noqa: E402,F401
                                 PERSISTENT_GPU, PERSISTENT_SIG, PERSISTENT_SIM_THREADS, jacobi_banded_kernel,
                                 jacobi_cooperative_kernel, jacobi_persistent_kernel, packed_label, packed_rhs)
