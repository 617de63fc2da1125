"""Reference CUDA kernels of Unit 1 (all-pairs N-body), taught in ``lessons/01_nbody.ipynb``.

Every kernel computes, for each destination body i,

    a_i = sum_j m_j * r_ij / (|r_ij|^2 + eps^2)^(3/2),   r_ij = p_j - p_i,

from ``bodies``, a C-contiguous float32 array of shape (N, 4) holding x, y, z and the
mass of each body, and writes float32 accelerations of shape (N, 3). The softening
makes the j = i term vanish (r_ij = 0), so no branch skips it.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numba import cuda, float32, uint32

from .. import device
from ..registry import course_kernel, register_kernel

__all__ = [
    "BODY_SIG",
    "nbody_blocked_kernel",
    "nbody_naive_kernel",
    "nbody_pxp_kernel",
    "nbody_tiled_kernel",
    "interaction",
]

LESSON = "lessons/01_nbody.ipynb"
#: Source bodies per trip of the register-blocked kernel's unrolled inner loop.
UNROLL = 4
#: Signature used for the ahead-of-time (PTX) compile check.
BODY_SIG = "void(float32[:, ::1], float32, float32[:, ::1])"


if device.is_simulator():

    @cuda.jit(device=True, inline=True)
    def rsqrt(x):
        """1 / sqrt(x); the simulator has no libdevice."""
        return float32(1.0) / math.sqrt(x)

else:
    from numba.cuda import libdevice

    # One hardware instruction (rsqrt.approx) instead of sqrt followed by a division.
    rsqrt = libdevice.rsqrtf


@cuda.jit(device=True, inline=True)
def interaction(xi, yi, zi, xj, yj, zj, mj, softening_sq):
    """Acceleration contributed to body i by body j (20 flops in the usual count).

    Returns
    -------
    (float32, float32, float32)
    """
    dx = xj - xi
    dy = yj - yi
    dz = zj - zi
    r2 = dx * dx + dy * dy + dz * dz + softening_sq
    inv_r = rsqrt(r2)
    s = mj * inv_r * inv_r * inv_r
    return dx * s, dy * s, dz * s


@cuda.jit(device=True, inline=True)
def own_position(bodies, i):
    """x, y, z of destination body ``i``, or zeros for a thread past the end (which still stages sources).

    Returns
    -------
    (float32, float32, float32)
    """
    if i < bodies.shape[0]:
        return bodies[i, 0], bodies[i, 1], bodies[i, 2]
    return float32(0.0), float32(0.0), float32(0.0)


@cuda.jit(device=True, inline=True)
def stage_source(tile_bodies, row, bodies, j):
    """Copy source body ``j`` into row ``row`` of the shared tile, or a zero-mass body past the end.

    The zero-mass padding contributes nothing and keeps the inner loop branch-free. The
    expert kernels share this and the two device functions around it; the lesson's tiled
    kernel writes their bodies out, to be read alone.
    """
    inside = j < bodies.shape[0]
    for c in range(4):  # a constant trip count: unrolled, four loads and four stores
        tile_bodies[row, c] = bodies[j, c] if inside else float32(0.0)


@cuda.jit(device=True, inline=True)
def store_acceleration(acc, i, ax, ay, az):
    """Write body ``i``'s acceleration, unless the thread is past the end."""
    if i < acc.shape[0]:
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az


def _example_bodies(n):
    """Small launch arguments for the checker: n bodies, softening^2, zeroed output."""
    rng = np.random.default_rng(n)
    bodies = rng.random((n, 4), dtype=np.float32)
    return bodies, np.float32(0.01), np.zeros((n, 3), np.float32)


def _example_naive():
    return 2, 32, _example_bodies(37)  # 37 bodies: the second block is partly idle


def _example_tiled(tile, tiles=2):
    # With a single tile a missing second barrier cannot show; tiles * tile - 3 bodies
    # give that many tiles, the last one padded. Each thread computes tiles * tile
    # interactions, so the 256-thread variant uses one tile to stay small.
    n = tiles * tile - 3
    return -(-n // tile), tile, _example_bodies(n)


def _example_blocked(tile, per):
    # 2 B P - 3 bodies: two blocks, the second partly past the end, and 2 B tiles (the last one padded).
    n = 2 * tile * per - 3
    return 2, tile, _example_bodies(n)


def _example_pxp(tile):
    n = tile + 5
    blocks = -(-n // tile)
    return (blocks, blocks), (tile, tile), _example_bodies(n)


@course_kernel(BODY_SIG, lesson=LESSON, example=_example_naive, fastmath=True)
def nbody_naive_kernel(bodies, softening_sq, acc):
    """One thread per destination body; every source body is read from global memory.

    Parameters
    ----------
    bodies : float32 array of shape (N, 4)
        x, y, z, mass.
    softening_sq : float32
        Square of the softening length, > 0.
    acc : float32 array of shape (N, 3)
        Output accelerations.

    Launch with any 1-D grid covering N threads. The kernel fetches N + N^2 body records:
    each body once as a destination (then kept in registers) and N times as a source.
    """
    i = cuda.grid(1)
    n = bodies.shape[0]
    if i >= n:
        return
    xi = bodies[i, 0]
    yi = bodies[i, 1]
    zi = bodies[i, 2]
    ax = float32(0.0)
    ay = float32(0.0)
    az = float32(0.0)
    for j in range(n):
        fx, fy, fz = interaction(xi, yi, zi, bodies[j, 0], bodies[j, 1], bodies[j, 2], bodies[j, 3], softening_sq)
        ax += fx
        ay += fy
        az += fz
    acc[i, 0] = ax
    acc[i, 1] = ay
    acc[i, 2] = az


@lru_cache(maxsize=None)
def nbody_tiled_kernel(tile: int):
    """The final design of the lesson: P = ``tile`` threads per tile.

    Each thread owns one destination body and keeps it (and its running sum) in
    registers. The block walks over the source bodies ``tile`` at a time: each thread
    stages one source body in shared memory, the block synchronises, every thread
    accumulates the ``tile`` interactions from shared memory, and the block
    synchronises again before the next tile overwrites the staging area. Global
    traffic: 2P fetches per P x P tile instead of 2P^2.

    Parameters
    ----------
    tile : int
        Tile size P, also the block size (1 <= P <= 1024).

    Returns
    -------
    numba.cuda kernel
        Launch as ``kernel[ceil(N / tile), tile](bodies, softening_sq, acc)``. N need not
        be a multiple of ``tile``: the last tile is padded with zero-mass bodies.
    """
    if not 1 <= tile <= 1024:
        raise ValueError(f"tile must be between 1 and 1024 (threads per block), got {tile}")

    def nbody_tiled(bodies, softening_sq, acc):
        tile_bodies = cuda.shared.array((tile, 4), float32)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * tile + t
        n = bodies.shape[0]
        # The naive kernel's prologue again, on purpose: the lesson shows each kernel whole, to be read alone.
        # Threads past the end still help to stage tiles, so they must not return early.
        xi = float32(0.0)
        yi = float32(0.0)
        zi = float32(0.0)
        if i < n:
            xi = bodies[i, 0]
            yi = bodies[i, 1]
            zi = bodies[i, 2]
        ax = float32(0.0)
        ay = float32(0.0)
        az = float32(0.0)
        for start in range(0, n, tile):
            j = start + t
            if j < n:
                tile_bodies[t, 0] = bodies[j, 0]
                tile_bodies[t, 1] = bodies[j, 1]
                tile_bodies[t, 2] = bodies[j, 2]
                tile_bodies[t, 3] = bodies[j, 3]
            else:
                # Zero-mass padding contributes nothing and keeps the inner loop branch-free.
                tile_bodies[t, 0] = float32(0.0)
                tile_bodies[t, 1] = float32(0.0)
                tile_bodies[t, 2] = float32(0.0)
                tile_bodies[t, 3] = float32(0.0)
            cuda.syncthreads()  # the tile is staged
            for k in range(tile):
                fx, fy, fz = interaction(
                    xi, yi, zi, tile_bodies[k, 0], tile_bodies[k, 1], tile_bodies[k, 2], tile_bodies[k, 3],
                    softening_sq,
                )
                ax += fx
                ay += fy
                az += fz
            cuda.syncthreads()  # everyone is done with the tile before it is overwritten
        if i < n:
            acc[i, 0] = ax
            acc[i, 1] = ay
            acc[i, 2] = az

    nbody_tiled.__name__ = f"nbody_tiled_{tile}"
    return cuda.jit(fastmath=True)(nbody_tiled)


@lru_cache(maxsize=None)
def nbody_pxp_kernel(tile: int):
    """The first tiling of the lesson, for contrast: P x P threads per P x P tile.

    Thread (tx, ty) of block (bx, by) computes the single force of source
    ``bx * P + tx`` on destination ``by * P + ty``. Both bodies are shared through
    shared memory, then the P forces of each destination are summed by a tree
    reduction in shared memory (threads must communicate), and one thread per
    destination adds the partial sum of the tile with an atomic, because the
    N / P tiles of a row run in different blocks.

    Parameters
    ----------
    tile : int
        P; the block is P x P threads, so P <= 32.

    Returns
    -------
    numba.cuda kernel
        Launch as ``kernel[(ceil(N/P), ceil(N/P)), (P, P)](bodies, softening_sq, acc)`` with
        ``acc`` zeroed first.
    """
    if not 1 <= tile <= 32:
        raise ValueError(f"the P x P kernel needs 1 <= P <= 32 (P^2 threads per block), got {tile}")
    # Tree reduction over a power-of-two width; columns past P hold zeros.
    width = 1 << (tile - 1).bit_length()

    def nbody_pxp(bodies, softening_sq, acc):
        src = cuda.shared.array((tile, 4), float32)
        dst = cuda.shared.array((tile, 3), float32)
        force = cuda.shared.array((tile, width, 3), float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        n = bodies.shape[0]
        j = cuda.blockIdx.x * tile + tx
        i = cuda.blockIdx.y * tile + ty
        # 2P fetches per tile: row 0 of the block loads the sources, column 0 the destinations.
        if ty == 0:
            for c in range(4):
                src[tx, c] = bodies[j, c] if j < n else float32(0.0)
        if tx == 0:
            for c in range(3):
                dst[ty, c] = bodies[i, c] if i < n else float32(0.0)
        cuda.syncthreads()
        fx, fy, fz = interaction(dst[ty, 0], dst[ty, 1], dst[ty, 2], src[tx, 0], src[tx, 1], src[tx, 2], src[tx, 3],
                                 softening_sq)
        force[ty, tx, 0] = fx
        force[ty, tx, 1] = fy
        force[ty, tx, 2] = fz
        if tx + tile < width:
            for c in range(3):
                force[ty, tx + tile, c] = float32(0.0)
        cuda.syncthreads()
        stride = width // 2
        while stride > 0:
            if tx < stride:
                for c in range(3):
                    force[ty, tx, c] += force[ty, tx + stride, c]
            cuda.syncthreads()
            stride //= 2
        if tx == 0 and i < n:
            for c in range(3):
                cuda.atomic.add(acc, (i, c), force[ty, 0, c])

    nbody_pxp.__name__ = f"nbody_pxp_{tile}"
    return cuda.jit(fastmath=True)(nbody_pxp)


@lru_cache(maxsize=None)
def nbody_blocked_kernel(tile: int, bodies_per_thread: int = 2):
    """The tiled kernel with a lean inner loop and ``bodies_per_thread`` destinations per thread.

    The design an expert ships (the CUDA sample's ``bodyBodyInteraction`` loop): the same
    tiling as :func:`nbody_tiled_kernel`, with three changes to the inner loop that cost
    nothing in clarity and remove every instruction the GPU does not need:

    - an unsigned ``while`` counter instead of ``for k in range(tile)``: numba lowers
      ``range`` to a 64-bit "remaining trips" iterator, and indexing with a signed ``k``
      adds the negative-index wrap-around (``k + tile if k < 0``) on every access; ptxas
      cannot remove either (12.75 of 27.75 issue slots per interaction on sm_90);
    - the softening folded into the first fused multiply-add:
      ``dx*dx + (dy*dy + (dz*dz + eps2))`` is three FFMA, not FMUL, FFMA, FFMA, FADD;
    - register blocking: each thread owns ``bodies_per_thread`` destination bodies, so
      one broadcast shared-memory load of a source body feeds that many interactions.

    Parameters
    ----------
    tile : int
        Threads per block and source bodies per shared-memory tile (1 <= P <= 1024).
    bodies_per_thread : int
        Destination bodies per thread, B (1 <= B <= 8). A block covers B * P bodies:
        thread t owns bodies ``block * B * P + t + b * P`` for b < B (coalesced loads).

    Returns
    -------
    numba.cuda kernel
        Launch as ``kernel[ceil(N / (B * P)), P](bodies, softening_sq, acc)``; any N >= 1.
    """
    if not 1 <= tile <= 1024:
        raise ValueError(f"tile must be between 1 and 1024 (threads per block), got {tile}")
    if not 1 <= bodies_per_thread <= 8:
        raise ValueError(f"bodies_per_thread must be between 1 and 8, got {bodies_per_thread}")
    return _blocked_kernel_one(tile) if bodies_per_thread == 1 else _blocked_kernel_many(tile, bodies_per_thread)


def _blocked_kernel_one(tile):
    """:func:`nbody_blocked_kernel` for B = 1: scalars, the form the lesson shows."""
    tile_u = uint32(tile)

    def nbody_lean(bodies, softening_sq, acc):
        tile_bodies = cuda.shared.array((tile, 4), float32)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * tile + t
        n = bodies.shape[0]
        xi, yi, zi = own_position(bodies, i)
        ax = float32(0.0)
        ay = float32(0.0)
        az = float32(0.0)
        for start in range(0, n, tile):
            stage_source(tile_bodies, t, bodies, start + t)
            cuda.syncthreads()
            # Unsigned counter: no 64-bit iterator, no negative-index wrap-around on the loads.
            k = uint32(0)
            while k < tile_u:
                dx = tile_bodies[k, 0] - xi
                dy = tile_bodies[k, 1] - yi
                dz = tile_bodies[k, 2] - zi
                # The softening rides in the first FMA: three FFMA, no separate FADD.
                r2 = dx * dx + (dy * dy + (dz * dz + softening_sq))
                inv_r = rsqrt(r2)
                s = tile_bodies[k, 3] * inv_r * inv_r * inv_r
                ax += dx * s
                ay += dy * s
                az += dz * s
                k += uint32(1)
            cuda.syncthreads()
        store_acceleration(acc, i, ax, ay, az)

    nbody_lean.__name__ = f"nbody_blocked_{tile}x1"
    return cuda.jit(fastmath=True)(nbody_lean)


def _blocked_kernel_many(tile, bodies_per_thread):
    """:func:`nbody_blocked_kernel` for B > 1: the B destinations live in local arrays numba keeps in registers."""
    per = bodies_per_thread
    span = tile * per
    unroll = UNROLL
    unroll_u = uint32(unroll)
    # The shared tile is rounded up to whole trips of the unrolled loop; the extra rows hold zero mass.
    rows = -(-tile // unroll) * unroll
    tile_u = uint32(rows)

    def nbody_blocked(bodies, softening_sq, acc):
        tile_bodies = cuda.shared.array((rows, 4), float32)
        # Constant-size local arrays indexed by unrolled constants: promoted to registers.
        pos = cuda.local.array((per, 3), float32)
        acc_b = cuda.local.array((per, 3), float32)
        t = cuda.threadIdx.x
        first = cuda.blockIdx.x * span + t
        n = bodies.shape[0]
        for b in range(per):
            i = first + b * tile
            for c in range(3):
                pos[b, c] = bodies[i, c] if i < n else float32(0.0)
                acc_b[b, c] = float32(0.0)
        if t < rows - tile:  # never restaged: the first barrier below publishes them
            for c in range(4):
                tile_bodies[tile + t, c] = float32(0.0)
        for start in range(0, n, tile):
            stage_source(tile_bodies, t, bodies, start + t)
            cuda.syncthreads()
            k = uint32(0)
            while k < tile_u:
                # A constant inner trip count is unrolled whole: the loop counter is paid
                # once per ``unroll`` sources, and one broadcast load feeds B interactions.
                for u in range(unroll):
                    ku = k + uint32(u)
                    xj = tile_bodies[ku, 0]
                    yj = tile_bodies[ku, 1]
                    zj = tile_bodies[ku, 2]
                    mj = tile_bodies[ku, 3]
                    for b in range(per):
                        dx = xj - pos[b, 0]
                        dy = yj - pos[b, 1]
                        dz = zj - pos[b, 2]
                        r2 = dx * dx + (dy * dy + (dz * dz + softening_sq))
                        inv_r = rsqrt(r2)
                        s = mj * inv_r * inv_r * inv_r
                        acc_b[b, 0] += dx * s
                        acc_b[b, 1] += dy * s
                        acc_b[b, 2] += dz * s
                k += unroll_u
            cuda.syncthreads()
        for b in range(per):
            i = first + b * tile
            if i < n:
                for c in range(3):
                    acc[i, c] = acc_b[b, c]

    nbody_blocked.__name__ = f"nbody_blocked_{tile}x{per}"
    return cuda.jit(fastmath=True)(nbody_blocked)


for _tile in (128, 256):
    register_kernel(f"nbody.nbody_tiled_kernel[tile={_tile}]", BODY_SIG,
                    (lambda t=_tile: nbody_tiled_kernel(t).py_func), LESSON,
                    example=lambda t=_tile: _example_tiled(t, tiles=2 if t <= 128 else 1), fastmath=True)
register_kernel("nbody.nbody_pxp_kernel[tile=16]", BODY_SIG, lambda: nbody_pxp_kernel(16).py_func, LESSON,
                example=lambda: _example_pxp(16), fastmath=True)
for _tile, _per in ((32, 1), (30, 2)):
    # Two tiles (the second barrier matters), a last block partly past the end, and (P = 30) zero-mass rows
    # rounding the shared tile up to whole unrolled trips.
    register_kernel(f"nbody.nbody_blocked_kernel[tile={_tile},bodies_per_thread={_per}]", BODY_SIG,
                    (lambda t=_tile, b=_per: nbody_blocked_kernel(t, b).py_func), LESSON,
                    example=lambda t=_tile, b=_per: _example_blocked(t, b),
                    fastmath=True)
