"""Public entry points of Unit 1: :func:`accelerations` and the leapfrog integrator."""

from __future__ import annotations

import math

import numpy as np

from .. import device
from .cpu import accelerations_cpu
from .reference import accelerations_reference

__all__ = ["METHODS", "accelerations", "default_tile", "leapfrog", "pack_bodies"]

METHODS = ("tiled", "naive", "pxp", "numpy", "cpu")
NAIVE_BLOCK = 128


def default_tile() -> int:
    """Tile size used when none is given: 256 on a GPU, 64 in the simulator."""
    return device.pick(sim=64, gpu=256)


def pack_bodies(pos, mass):
    """Validate positions and masses and pack them as the kernels expect.

    Parameters
    ----------
    pos : array_like of shape (N, 3)
        Positions; any real dtype NumPy can convert to float32.
    mass : array_like of shape (N,)
        Masses.

    Returns
    -------
    ndarray of shape (N, 4), float32, C-contiguous
        Columns x, y, z, mass.

    Raises
    ------
    ValueError
        Wrong shapes, dtypes that do not convert to float32, non-finite values, or N = 0.
    """
    pos = _as_float32(pos, "pos")
    mass = _as_float32(mass, "mass")
    if pos.ndim != 2 or pos.shape[1] != 3:
        raise ValueError(f"pos must have shape (N, 3), got {pos.shape}")
    if mass.ndim != 1:
        raise ValueError(f"mass must have shape (N,), got {mass.shape}")
    if mass.shape[0] != pos.shape[0]:
        raise ValueError(f"pos has {pos.shape[0]} bodies but mass has {mass.shape[0]}")
    if pos.shape[0] == 0:
        raise ValueError("there are no bodies (N = 0): accelerations need at least one body")
    for name, arr in (("pos", pos), ("mass", mass)):
        if not np.all(np.isfinite(arr)):
            bad = np.argwhere(~np.isfinite(arr))[0]
            raise ValueError(f"{name} contains NaN or infinity (first at index {tuple(int(b) for b in bad)})")
    bodies = np.empty((pos.shape[0], 4), dtype=np.float32)
    bodies[:, :3] = pos
    bodies[:, 3] = mass
    return bodies


def _as_float32(a, name):
    try:
        arr = np.asarray(a)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"{name} cannot be converted to an array: {exc}") from None
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.dtype.kind in "iuf" and arr.size:
        finite = arr[np.isfinite(arr)] if arr.dtype.kind == "f" else arr
        if finite.size and np.max(np.abs(finite.astype(np.float64))) > np.finfo(np.float32).max:
            raise ValueError(f"{name} has values too large for float32 (|x| > {np.finfo(np.float32).max:.3g})")
    return arr.astype(np.float32, copy=False)


def _check_softening(softening):
    try:
        eps = float(softening)
    except (TypeError, ValueError):
        raise ValueError(f"softening must be a positive number, got {softening!r}") from None
    if not math.isfinite(eps) or eps <= 0:
        raise ValueError(f"softening must be positive and finite, got {softening!r}")
    return eps


def accelerations(pos, mass, *, softening, method="tiled", tile=None):
    """All-pairs softened gravitational accelerations (G = 1).

    Parameters
    ----------
    pos : array_like of shape (N, 3)
        Positions.
    mass : array_like of shape (N,)
        Masses.
    softening : float
        Softening length eps > 0 (also removes the self-interaction).
    method : {"tiled", "naive", "pxp", "numpy", "cpu"}
        ``"tiled"``: P threads per tile, sources staged in shared memory (the lesson's
        final design); ``"naive"``: one thread per body, all reads from global memory;
        ``"pxp"``: P x P threads per tile with a shared-memory reduction; ``"numpy"``:
        the float64 reference; ``"cpu"``: the Numba ``parallel=True`` CPU version.
    tile : int, optional
        Tile size P for ``"tiled"`` (1..1024, default :func:`default_tile`) and ``"pxp"``
        (1..32, default 16).

    Returns
    -------
    ndarray of shape (N, 3), float32

    Raises
    ------
    ValueError
        Bad shapes, non-finite values, N = 0, non-positive softening, unknown method or
        a tile size the method cannot use.

    Examples
    --------
    >>> from course_lib.nbody import accelerations, plummer_sphere
    >>> pos, vel, mass = plummer_sphere(100, seed=1)
    >>> accelerations(pos, mass, softening=0.05).shape
    (100, 3)
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {METHODS}")
    eps = _check_softening(softening)
    bodies = pack_bodies(pos, mass)
    if tile is not None and method not in ("tiled", "pxp"):
        raise ValueError(f"tile only applies to the 'tiled' and 'pxp' methods, not {method!r}")
    if method == "numpy":
        return accelerations_reference(bodies[:, :3], bodies[:, 3], eps).astype(np.float32)
    if method == "cpu":
        return accelerations_cpu(bodies, eps * eps)
    return _launch(bodies, eps * eps, method, tile)


def _launch(bodies, softening_sq, method, tile):
    from numba import cuda

    from . import kernels

    n = bodies.shape[0]
    d_bodies = cuda.to_device(bodies)
    d_acc = cuda.device_array((n, 3), dtype=np.float32)
    eps2 = np.float32(softening_sq)
    if method == "naive":
        blocks = (n + NAIVE_BLOCK - 1) // NAIVE_BLOCK
        kernels.nbody_naive_kernel[blocks, NAIVE_BLOCK](d_bodies, eps2, d_acc)
    elif method == "tiled":
        tile = default_tile() if tile is None else _check_tile(tile, 1024)
        kernel = kernels.nbody_tiled_kernel(tile)
        kernel[(n + tile - 1) // tile, tile](d_bodies, eps2, d_acc)
    else:  # pxp
        tile = 16 if tile is None else _check_tile(tile, 32)
        d_acc = cuda.to_device(np.zeros((n, 3), dtype=np.float32))
        tiles = (n + tile - 1) // tile
        kernels.nbody_pxp_kernel(tile)[(tiles, tiles), (tile, tile)](d_bodies, eps2, d_acc)
    return d_acc.copy_to_host()


def _check_tile(tile, largest):
    if isinstance(tile, bool) or int(tile) != tile or not 1 <= tile <= largest:
        raise ValueError(f"tile must be an integer between 1 and {largest}, got {tile!r}")
    return int(tile)


def leapfrog(pos, vel, mass, *, dt, steps, softening, method="tiled", tile=None, every=1):
    """Integrate with kick-drift-kick leapfrog (symplectic, second order).

    Parameters
    ----------
    pos, vel : array_like of shape (N, 3)
        Initial positions and velocities.
    mass : array_like of shape (N,)
    dt : float
        Time step.
    steps : int
        Number of steps.
    softening : float
    method, tile
        Passed to :func:`accelerations`.
    every : int
        Keep a snapshot every ``every`` steps.

    Returns
    -------
    positions : ndarray of shape (S, N, 3), float32
        Snapshots, the initial state first.
    velocities : ndarray of shape (S, N, 3), float32
    """
    for label, value, least in (("steps", steps, 0), ("every", every, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            raise ValueError(f"{label} must be an integer >= {least}, got {value!r}")
    try:
        dt = float(dt)
    except (TypeError, ValueError):
        raise ValueError(f"dt must be a positive number, got {dt!r}") from None
    if not math.isfinite(dt) or dt <= 0:
        raise ValueError(f"dt must be positive and finite, got {dt!r}")
    pos = pack_bodies(pos, mass)[:, :3].copy()
    vel = _as_float32(vel, "vel")
    if vel.shape != pos.shape:
        raise ValueError(f"vel must have the shape of pos {pos.shape}, got {vel.shape}")
    if not np.all(np.isfinite(vel)):
        raise ValueError("vel contains NaN or infinity")
    vel = vel.copy()
    acc = accelerations(pos, mass, softening=softening, method=method, tile=tile)
    snaps_pos, snaps_vel = [pos.copy()], [vel.copy()]
    half = np.float32(dt / 2)
    for step in range(1, steps + 1):
        vel += half * acc
        pos += np.float32(dt) * vel
        acc = accelerations(pos, mass, softening=softening, method=method, tile=tile)
        vel += half * acc
        if step % every == 0:
            snaps_pos.append(pos.copy())
            snaps_vel.append(vel.copy())
    return np.stack(snaps_pos), np.stack(snaps_vel)
