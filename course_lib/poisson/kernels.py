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
from numba import cuda, float32, int32, uint8

from .. import device
from ..registry import course_kernel, register_kernel
from .reference import BORDER, INTERIOR, OUTSIDE, prepare

__all__ = [
    "FUSED_SIG",
    "compose_kernel",
    "classify_mask_kernel",
    "jacobi_cooperative_kernel",
    "jacobi_fused_kernel",
    "jacobi_persistent_kernel",
    "jacobi_in_place_racy_kernel",
    "jacobi_step_kernel",
    "in_place_example_launch",
    "poisson_setup_kernel",
]

LESSON = "lessons/04_poisson.ipynb"
PLANES = "float32[:, :, ::1]"
IMAGE = "uint8[:, :, ::1]"
LABELS = "uint8[:, ::1]"
STEP_SIG = f"void({PLANES}, {PLANES}, {LABELS}, {PLANES})"
#: Signature of the kernels made by :func:`jacobi_fused_kernel` (the last argument is the step count).
FUSED_SIG = f"void({PLANES}, {PLANES}, {LABELS}, {PLANES}, int32)"


# Example launches for the race and barrier checker (tests/sim/test_reference_kernels.py):
# an 11 x 13 image (not a multiple of the 8 x 8 block) with a blob mask.
_EXAMPLE_SHAPE = (11, 13)
_EXAMPLE_BLOCK = (8, 8)
_EXAMPLE_GRID = (2, 2)


def _example_problem():
    from .data import synthetic_pair

    source, target, mask = synthetic_pair(*_EXAMPLE_SHAPE, seed=11, fill=0.5)
    return source, target, mask, prepare(source, target, mask)


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


# ---- One launch for the whole clone: setup, every sweep and the compose in a single kernel.
#
# Both kernels read one packed upload, ``packed`` (uint8, shape (H, W, 7): source RGB, target
# RGB, mask), and write the cloned crop ``out`` (uint8, (H, W, 3)) and the last iterate
# ``planes`` (float32, (3, H, W)). Non-interior pixels hold 0 in the iterate, so the
# neighbour sum needs no label test: adding +0.0 is exact and the order up, down, left,
# right is kept, so the results stay bit-identical to the reference.

#: Channels of ``packed``: source RGB, target RGB, then the mask.
PACKED_CHANNELS = 7
PACKED = "uint8[:, :, ::1]"
PERSISTENT_SIG = f"void({PACKED}, int32, {IMAGE}, {PLANES})"
COOPERATIVE_SIG = f"void({PACKED}, int32, {LABELS}, {PLANES}, {PLANES}, {PLANES}, {IMAGE}, {PLANES})"


@cuda.jit(device=True, inline=True)
def packed_label(packed, y, x, h, w):
    """:data:`OUTSIDE`, :data:`BORDER` or :data:`INTERIOR` of (y, x), from the mask in ``packed[..., 6]``."""
    if packed[y, x, 6] == 0:
        return OUTSIDE
    if y > 0 and packed[y - 1, x, 6] == 0:
        return BORDER
    if y < h - 1 and packed[y + 1, x, 6] == 0:
        return BORDER
    if x > 0 and packed[y, x - 1, 6] == 0:
        return BORDER
    if x < w - 1 and packed[y, x + 1, 6] == 0:
        return BORDER
    return INTERIOR


@cuda.jit(device=True, inline=True)
def _packed_term(packed, c, y, x, qy, qx, h, w):
    """S(p) - S(q), plus T(q) when q is on the inside border (as :func:`poisson_setup_kernel`)."""
    term = float32(packed[y, x, c]) - float32(packed[qy, qx, c])
    if packed_label(packed, qy, qx, h, w) == BORDER:
        term += float32(packed[qy, qx, 3 + c])
    return term


@cuda.jit(device=True, inline=True)
def packed_rhs(packed, c, y, x, h, w):
    """B + C of channel c at the strict-interior pixel (y, x), neighbours up, down, left, right."""
    total = float32(0.0)
    if y > 0:
        total += _packed_term(packed, c, y, x, y - 1, x, h, w)
    if y < h - 1:
        total += _packed_term(packed, c, y, x, y + 1, x, h, w)
    if x > 0:
        total += _packed_term(packed, c, y, x, y, x - 1, h, w)
    if x < w - 1:
        total += _packed_term(packed, c, y, x, y, x + 1, h, w)
    return total


@lru_cache(maxsize=None)
def jacobi_persistent_kernel(capacity: int, threads: int):
    """The whole clone in one launch: one block per colour channel, the crop in shared memory.

    The three channels are independent, and one channel of a cropped clone is small
    (8,418 pixels for the classic 333 x 500 cat: 34 KB of float32), so a block can hold it
    in shared memory and run every sweep without leaving the SM: no launch per sweep,
    no global-memory traffic per sweep, two barriers per sweep. Block c labels the
    pixels, forms B + C and the initial guess of channel c from the packed upload, sweeps
    ``iterations`` times and writes channel c of the result.

    Double buffering costs no second shared buffer: each thread computes the new values
    of its pixels into registers, the block synchronises (every read of I_k is done),
    then writes them back, and synchronises again.

    Parameters
    ----------
    capacity : int
        Shared-memory floats: the padded crop ``(H + 2) * (W + 2)`` must fit (the one-pixel
        frame of zeros stands for the neighbours beyond the image edge). 12,288 fills the
        48 KB of static shared memory.
    threads : int
        Threads per block (1..1024); each owns entries ``t, t + threads, ...`` of the padded
        crop, at most ``ceil(capacity / threads)`` of them, their constants kept in registers
        (at most 65,536 / ``threads`` registers per thread, so a block can always launch).

    Returns
    -------
    numba.cuda kernel
        ``kernel[3, threads](packed, iterations, out, planes)``: ``packed`` uint8 (H, W, 7),
        ``iterations`` int32, ``out`` uint8 (H, W, 3), ``planes`` float32 (3, H, W) (the
        last iterate, 0 off the strict interior).
    """
    if capacity < 9:
        raise ValueError(f"capacity must hold at least a 1 x 1 crop with its frame (9 floats), got {capacity}")
    if capacity * 4 > 48 * 1024:
        raise ValueError(f"capacity {capacity} floats exceeds the 48 KB of static shared memory (12,288 floats)")
    if not 1 <= threads <= 1024:
        raise ValueError(f"threads must be between 1 and 1024, got {threads}")
    per = -(-capacity // threads)

    def jacobi_persistent(packed, iterations, out, planes):
        frame = cuda.shared.array(capacity, float32)
        rhs = cuda.local.array(per, float32)
        count = cuda.local.array(per, float32)  # D at strict-interior pixels, 0 elsewhere (frame included)
        fresh = cuda.local.array(per, float32)
        c = cuda.blockIdx.x
        t = cuda.threadIdx.x
        h = packed.shape[0]
        w = packed.shape[1]
        pw = w + 2
        size = (h + 2) * pw
        # Thread t owns the frame entries t, t + threads, ...: it zeroes them, sets their I_0 = S and
        # keeps their D and B + C in registers, so no barrier is needed before the first sweep reads
        # its own entries, only before it reads its neighbours'.
        for q in range(per):
            i = t + q * threads
            count[q] = float32(0.0)
            rhs[q] = float32(0.0)
            if i < size:
                value = float32(0.0)
                y = i // pw - 1
                x = i - (y + 1) * pw - 1
                if 0 <= y < h and 0 <= x < w and packed_label(packed, y, x, h, w) == INTERIOR:
                    count[q] = neighbour_count(y, x, h, w)
                    rhs[q] = packed_rhs(packed, c, y, x, h, w)
                    value = float32(packed[y, x, c])
                frame[i] = value
        cuda.syncthreads()
        for _ in range(iterations):
            for q in range(per):
                if count[q] > float32(0.0):
                    i = t + q * threads
                    a = float32(0.0)
                    a += frame[i - pw]
                    a += frame[i + pw]
                    a += frame[i - 1]
                    a += frame[i + 1]
                    fresh[q] = clamp_255((a + rhs[q]) / count[q])
            cuda.syncthreads()  # every read of I_k is done before I_{k+1} is written
            for q in range(per):
                if count[q] > float32(0.0):
                    frame[t + q * threads] = fresh[q]
            cuda.syncthreads()
        for q in range(per):
            i = t + q * threads
            if i < size:
                y = i // pw - 1
                x = i - (y + 1) * pw - 1
                if 0 <= y < h and 0 <= x < w:
                    v = frame[i]
                    planes[c, y, x] = v
                    out[y, x, c] = uint8(v) if count[q] > float32(0.0) else packed[y, x, 3 + c]

    jacobi_persistent.__name__ = f"jacobi_persistent_{capacity}_{threads}"
    # A block of 1024 threads may use at most 64 registers each (64 K per SM): the per-thread arrays
    # must fit, spilling to the L1-cached local memory rather than failing to launch.
    options = {} if device.is_simulator() else {"max_registers": min(255, 65536 // threads)}
    return cuda.jit(**options)(jacobi_persistent)


@cuda.jit
def jacobi_cooperative_kernel(packed, iterations, labels, rhs, buf_a, buf_b, out, planes):
    """The whole clone in one cooperative launch, for crops too large for one block's shared memory.

    Every phase walks all pixels (x channels) with a grid-stride loop, and
    ``cuda.cg.this_grid().sync()`` separates them: labels; B + C and the initial guess;
    each sweep (double-buffered in global memory, ``buf_a`` -> ``buf_b`` -> ``buf_a`` ...);
    then the compose. A grid barrier costs about a microsecond on a recent GPU against
    ~50 us of host time for a launch from Python.

    Parameters
    ----------
    packed : uint8 array of shape (H, W, 7)
        Source RGB, target RGB, mask.
    iterations : int32
    labels : uint8 array of shape (H, W)
        Workspace.
    rhs, buf_a, buf_b : float32 arrays of shape (3, H, W)
        Workspace.
    out : uint8 array of shape (H, W, 3)
        The cloned crop.
    planes : float32 array of shape (3, H, W)
        The last iterate (0 off the strict interior).

    Launch with at most ``max_cooperative_grid_blocks`` blocks (all resident at once).
    """
    grid = cuda.cg.this_grid()
    h, w = labels.shape
    n = h * w
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for p in range(start, n, stride):
        y = p // w
        x = p - y * w
        labels[y, x] = packed_label(packed, y, x, h, w)
    grid.sync()
    for e in range(start, 3 * n, stride):
        c = e // n
        y = (e - c * n) // w
        x = e - c * n - y * w
        v = float32(0.0)
        r = float32(0.0)
        if labels[y, x] == INTERIOR:
            v = float32(packed[y, x, c])
            r = packed_rhs(packed, c, y, x, h, w)
        rhs[c, y, x] = r
        buf_a[c, y, x] = v
        buf_b[c, y, x] = v
    grid.sync()
    for s in range(iterations):
        src = buf_a if s % 2 == 0 else buf_b
        dst = buf_b if s % 2 == 0 else buf_a
        for e in range(start, 3 * n, stride):
            c = e // n
            y = (e - c * n) // w
            x = e - c * n - y * w
            if labels[y, x] == INTERIOR:
                a = float32(0.0)  # non-interior values are 0: no label test per neighbour
                if y > 0:
                    a += src[c, y - 1, x]
                if y < h - 1:
                    a += src[c, y + 1, x]
                if x > 0:
                    a += src[c, y, x - 1]
                if x < w - 1:
                    a += src[c, y, x + 1]
                dst[c, y, x] = clamp_255((a + rhs[c, y, x]) / neighbour_count(y, x, h, w))
        grid.sync()  # I_{k+1} is complete everywhere before anyone reads it
    last = buf_a if iterations % 2 == 0 else buf_b
    for e in range(start, 3 * n, stride):
        c = e // n
        y = (e - c * n) // w
        x = e - c * n - y * w
        v = last[c, y, x]
        planes[c, y, x] = v
        out[y, x, c] = uint8(v) if labels[y, x] == INTERIOR else packed[y, x, 3 + c]


def _example_packed():
    source, target, mask, _ = _example_problem()
    h, w = mask.shape
    packed = np.empty((h, w, PACKED_CHANNELS), np.uint8)
    packed[..., :3], packed[..., 3:6], packed[..., 6] = source, target, mask
    return packed


def _example_persistent():
    packed = _example_packed()
    h, w = packed.shape[:2]
    return 3, 32, (packed, np.int32(3), np.zeros((h, w, 3), np.uint8), np.zeros((3, h, w), np.float32))


def _example_cooperative():
    packed = _example_packed()
    h, w = packed.shape[:2]
    planes = lambda: np.zeros((3, h, w), np.float32)  # noqa: E731
    return 3, 32, (packed, np.int32(3), np.zeros((h, w), np.uint8), planes(), planes(), planes(),
                   np.zeros((h, w, 3), np.uint8), planes())


#: Shared-memory floats and threads of the persistent kernel on a GPU (48 KB, 1024 threads).
PERSISTENT_GPU = (12288, 1024)
#: Threads of the persistent kernel in the simulator, where every thread at a barrier costs time
#: (800 sweeps of a small crop: ~3 s with 8 threads, ~35 s with 64); its capacity follows the crop.
PERSISTENT_SIM_THREADS = 8
register_kernel(f"poisson.jacobi_persistent_kernel[capacity={PERSISTENT_GPU[0]},threads={PERSISTENT_GPU[1]}]",
                PERSISTENT_SIG, lambda: jacobi_persistent_kernel(*PERSISTENT_GPU).py_func, LESSON)
register_kernel("poisson.jacobi_persistent_kernel[capacity=256,threads=32]", PERSISTENT_SIG,
                lambda: jacobi_persistent_kernel(256, 32).py_func, LESSON, example=_example_persistent)
register_kernel("poisson.jacobi_cooperative_kernel", COOPERATIVE_SIG, lambda: jacobi_cooperative_kernel.py_func, LESSON,
                example=_example_cooperative)
