"""One launch for the whole clone (Unit 4): setup, every sweep and the compose in a single kernel.

Split from :mod:`course_lib.poisson.kernels` (the per-sweep kernels the lesson teaches), which
re-exports every name here. Both kernels read one packed upload, ``packed`` (uint8, shape
(H, W, 7): source RGB, target RGB, mask), and write the cloned crop ``out`` (uint8, (H, W, 3))
and the last iterate ``planes`` (float32, (3, H, W)). Non-interior pixels hold 0 in the iterate,
so the neighbour sum needs no label test: adding +0.0 is exact and the order up, down, left,
right is kept, so the results stay bit-identical to the reference.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import cuda, float32, int32, uint8

from .. import device
from ..registry import register_kernel
from ._stencil import IMAGE, LABELS, LESSON, PLANES, _example_problem, clamp_255, neighbour_count
from .reference import BORDER, INTERIOR, OUTSIDE

__all__ = ["BANDED_SIG", "COOPERATIVE_SIG", "PACKED", "PACKED_CHANNELS", "PERSISTENT_GPU", "PERSISTENT_SIG",
           "PERSISTENT_SIM_THREADS", "jacobi_banded_kernel", "jacobi_cooperative_kernel", "jacobi_persistent_kernel",
           "packed_label", "packed_rhs"]

#: Channels of ``packed``: source RGB, target RGB, then the mask.
PACKED_CHANNELS = 7
PACKED = "uint8[:, :, ::1]"
PERSISTENT_SIG = f"void({PACKED}, int32, {IMAGE}, {PLANES})"
COOPERATIVE_SIG = f"void({PACKED}, int32, {LABELS}, {PLANES}, {PLANES}, {PLANES}, {IMAGE}, {PLANES})"
BANDED_SIG = f"void({PACKED}, int32, int32, float32[:, :, :, :, ::1], {IMAGE}, {PLANES})"


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


@cuda.jit(device=True, inline=True)
def jacobi_update(frame, i, pw, rhs, d):
    """I_(k+1) of the interior pixel at ``frame[i]`` (rows ``pw`` entries apart, a frame of 0 around the image).

    The four neighbours are added up, down, left, right (the reference's order), then B + C (``rhs``), then
    the sum is divided by D (``d``, 2 to 4) and clamped to [0, 255]. x * 0.25 and x * 0.5 round exactly as
    x / 4 and x / 2 (powers of two): no IEEE divide, with its slow-path call, but for pixels with 3
    neighbours (at the image edge).
    """
    a = float32(0.0)
    a += frame[i - pw]
    a += frame[i + pw]
    a += frame[i - 1]
    a += frame[i + 1]
    s = a + rhs
    if d == 4:
        s = s * float32(0.25)
    elif d == 2:
        s = s * float32(0.5)
    elif d == 3:
        s = s / float32(3.0)
    return clamp_255(s)


@cuda.jit(device=True, inline=True)
def packed_count(codes, q):
    """D of a thread's q-th pixel, from ``codes`` (int32, ten 3-bit counts a word; 0: not interior)."""
    return (codes[q // 10] >> ((q % 10) * 3)) & 7


@cuda.jit(device=True, inline=True)
def write_pixel(planes, out, packed, c, y, x, v, interior):
    """Write channel c of pixel (y, x): the last iterate ``v`` to ``planes``, and to ``out`` the iterate
    truncated to uint8 on the strict interior, the target (``packed[..., 3:6]``) elsewhere."""
    planes[c, y, x] = v
    out[y, x, c] = uint8(v) if interior else packed[y, x, 3 + c]


def _per_thread(capacity: int, threads: int, what: str):
    """Check a one-block frame of ``capacity`` floats (shared memory) for ``threads`` threads, and return
    (per, words): the frame entries each thread owns, and the int32 words of their codes (3 bits of D per
    owned entry, 10 entries per word)."""
    if capacity < 9:
        raise ValueError(f"capacity must hold at least a 1 x 1 {what} with its frame (9 floats), got {capacity}")
    if capacity * 4 > 48 * 1024:
        raise ValueError(f"capacity {capacity} floats exceeds the 48 KB of static shared memory (12,288 floats)")
    if not 1 <= threads <= 1024:
        raise ValueError(f"threads must be between 1 and 1024, got {threads}")
    per = -(-capacity // threads)
    return per, -(-per // 10)


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
    per, words = _per_thread(capacity, threads, "crop")

    def jacobi_persistent(packed, iterations, out, planes):
        frame = cuda.shared.array(capacity, float32)
        rhs = cuda.local.array(per, float32)
        # Per owned entry, 3 bits: D (1 .. 4 neighbours) at strict-interior pixels, 0 elsewhere. Packed
        # 10 to a word, they take a register per 10 entries instead of a float per entry (no spills).
        codes = cuda.local.array(words, int32)
        fresh = cuda.local.array(per, float32)
        c = cuda.blockIdx.x
        t = cuda.threadIdx.x
        h = packed.shape[0]
        w = packed.shape[1]
        pw = w + 2
        size = (h + 2) * pw
        for k in range(words):
            codes[k] = 0
        # Thread t owns the frame entries t, t + threads, ...: it zeroes them, sets their I_0 = S and
        # keeps their code and B + C in registers, so no barrier is needed before the first sweep reads
        # its own entries, only before it reads its neighbours'.
        for q in range(per):
            i = t + q * threads
            rhs[q] = float32(0.0)
            if i < size:
                value = float32(0.0)
                y = i // pw - 1
                x = i - (y + 1) * pw - 1
                if 0 <= y < h and 0 <= x < w and packed_label(packed, y, x, h, w) == INTERIOR:
                    codes[q // 10] |= int32(neighbour_count(y, x, h, w)) << ((q % 10) * 3)
                    rhs[q] = packed_rhs(packed, c, y, x, h, w)
                    value = float32(packed[y, x, c])
                frame[i] = value
        cuda.syncthreads()
        for _ in range(iterations):
            for q in range(per):
                d = packed_count(codes, q)
                if d != 0:
                    fresh[q] = jacobi_update(frame, t + q * threads, pw, rhs[q], d)
            cuda.syncthreads()  # every read of I_k is done before I_{k+1} is written
            for q in range(per):
                if packed_count(codes, q) != 0:
                    frame[t + q * threads] = fresh[q]
            cuda.syncthreads()
        for q in range(per):
            i = t + q * threads
            if i < size:
                y = i // pw - 1
                x = i - (y + 1) * pw - 1
                if 0 <= y < h and 0 <= x < w:
                    write_pixel(planes, out, packed, c, y, x, frame[i], packed_count(codes, q) != 0)

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


@lru_cache(maxsize=None)
def jacobi_banded_kernel(capacity: int, threads: int):
    """The whole clone in one cooperative launch, each block a band of rows of one channel in shared memory.

    :func:`jacobi_persistent_kernel` runs on three SMs, one block per channel. Here the rows of
    the crop are cut into bands of ``band_rows`` rows, and block ``c * bands + b`` holds band b of
    channel c in shared memory, with one more row above and below (the *halo*: the last row of
    the band above and the first row of the band below, or the zero frame beyond the image
    edge). Each sweep, a block reads its halo rows from the global array ``edges``, where the
    neighbouring bands left their boundary rows in the previous sweep, computes its band's
    new values, and writes its own two boundary rows for the next sweep: ``edges`` is double
    buffered (sweep s reads half ``s % 2`` and writes the other), so **one grid barrier per
    sweep** separates a sweep's writes from the next sweep's reads. The per-pixel update is
    :func:`jacobi_persistent_kernel`'s, in the same order: the result is bit-identical.

    Parameters
    ----------
    capacity : int
        Shared-memory floats of a block: ``(band_rows + 2) * (W + 2)`` must fit; at most 12,288 (48 KB).
    threads : int
        Threads per block (1..1024); each owns entries ``t, t + threads, ...`` of its band's rows.

    Returns
    -------
    numba.cuda kernel
        ``kernel[3 * bands, threads](packed, iterations, band_rows, edges, out, planes)``:
        ``packed`` uint8 (H, W, 7), ``iterations`` and ``band_rows`` int32, ``edges`` float32
        (2, 3, bands, 2, W) (workspace), ``out`` uint8 (H, W, 3), ``planes`` float32 (3, H, W).
        A cooperative launch: at most ``max_cooperative_grid_blocks(threads)`` blocks.
    """
    per, words = _per_thread(capacity, threads, "band")

    def jacobi_banded(packed, iterations, band_rows, edges, out, planes):
        tile = cuda.shared.array(capacity, float32)
        rhs = cuda.local.array(per, float32)
        codes = cuda.local.array(words, int32)  # 3 bits of D per owned entry, as in jacobi_persistent_kernel
        fresh = cuda.local.array(per, float32)
        grid = cuda.cg.this_grid()
        h = packed.shape[0]
        w = packed.shape[1]
        pw = w + 2
        bands = edges.shape[2]
        c = cuda.blockIdx.x // bands
        b = cuda.blockIdx.x - c * bands
        t = cuda.threadIdx.x
        y0 = b * band_rows
        rows = min(band_rows, h - y0)
        end = (rows + 1) * pw  # tile row 0 is the upper halo, rows 1 .. rows the band, row rows + 1 the lower halo
        for k in range(words):
            codes[k] = 0
        # Thread t owns the band's entries pw + t, pw + t + threads, ...: I_0 = S, its code and B + C, and it
        # leaves the band's first and last rows of I_0 in edges for the neighbouring bands.
        for q in range(per):
            i = pw + t + q * threads
            rhs[q] = float32(0.0)
            if i < end:
                value = float32(0.0)
                r = i // pw
                y = y0 - 1 + r
                x = i - r * pw - 1
                if 0 <= x < w:
                    if packed_label(packed, y, x, h, w) == INTERIOR:
                        codes[q // 10] |= int32(neighbour_count(y, x, h, w)) << ((q % 10) * 3)
                        rhs[q] = packed_rhs(packed, c, y, x, h, w)
                        value = float32(packed[y, x, c])
                    for half in range(2):  # both halves: a pixel no sweep writes stays 0 in either
                        if r == 1:
                            edges[half, c, b, 0, x] = value
                        if r == rows:
                            edges[half, c, b, 1, x] = value
                tile[i] = value
        for s in range(iterations):
            grid.sync()  # the boundary rows of I_s are written everywhere, and every read of I_(s-1) is done
            half = s % 2
            for e in range(t, 2 * pw, threads):  # the halo rows of I_s
                lower = e >= pw
                x = e - pw - 1 if lower else e - 1
                v = float32(0.0)
                if 0 <= x < w:
                    if lower and b + 1 < bands:
                        v = edges[half, c, b + 1, 0, x]
                    elif not lower and b > 0:
                        v = edges[half, c, b - 1, 1, x]
                tile[end + x + 1 if lower else e] = v
            cuda.syncthreads()
            for q in range(per):
                d = packed_count(codes, q)
                if d != 0:
                    fresh[q] = jacobi_update(tile, pw + t + q * threads, pw, rhs[q], d)
            cuda.syncthreads()  # every read of I_s in the tile is done before I_(s+1) is written
            for q in range(per):
                if packed_count(codes, q) != 0:
                    i = pw + t + q * threads
                    tile[i] = fresh[q]
                    r = i // pw
                    x = i - r * pw - 1
                    if r == 1:
                        edges[1 - half, c, b, 0, x] = fresh[q]
                    if r == rows:
                        edges[1 - half, c, b, 1, x] = fresh[q]
        for q in range(per):
            i = pw + t + q * threads
            if i < end:
                r = i // pw
                y = y0 - 1 + r
                x = i - r * pw - 1
                if 0 <= x < w:
                    write_pixel(planes, out, packed, c, y, x, tile[i], packed_count(codes, q) != 0)

    jacobi_banded.__name__ = f"jacobi_banded_{capacity}_{threads}"
    options = {} if device.is_simulator() else {"max_registers": min(255, 65536 // threads)}
    return cuda.jit(**options)(jacobi_banded)


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


def _example_banded():
    packed = _example_packed()
    h, w = packed.shape[:2]
    band_rows = 4  # 11 rows: bands of 4, 4 and 3
    bands = -(-h // band_rows)
    return 3 * bands, 64, (packed, np.int32(3), np.int32(band_rows), np.zeros((2, 3, bands, 2, w), np.float32),
                           np.zeros((h, w, 3), np.uint8), np.zeros((3, h, w), np.float32))


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
# The classic 333 x 500 crop's configuration on a GPU (band_plan: bands of 2 rows, 256 threads), and the
# checker's example; the launch block is in the names (a cooperative kernel's, for the compile check).
register_kernel("poisson.jacobi_banded_kernel[capacity=512,threads=256,block=256]", BANDED_SIG,
                lambda: jacobi_banded_kernel(512, 256).py_func, LESSON)
register_kernel("poisson.jacobi_banded_kernel[capacity=256,threads=64,block=64]", BANDED_SIG,
                lambda: jacobi_banded_kernel(256, 64).py_func, LESSON, example=_example_banded)
