"""Public entry points of Unit 1: :func:`accelerations` and the leapfrog integrator."""

from __future__ import annotations

import numpy as np

from .. import device
from .._docs import fill_doc
from .._validate import check_array, check_block, check_choice, check_float, check_int
from . import cpu, reference
from .reference import BODIES_PARAMETERS

__all__ = ["DEFAULT_BODIES_PER_THREAD", "METHODS", "TILED_METHODS", "accelerations", "default_block", "leapfrog", "pack_bodies"]

METHODS = ("blocked", "lean", "tiled", "naive", "pxp", "numpy", "cpu")
#: Methods that take a tile size P (threads per block).
TILED_METHODS = ("blocked", "lean", "tiled")
#: Destination bodies per thread of ``"blocked"`` when none is given: with 4, the sm_90 inner loop
#: spends 13.7 issue slots per interaction (one broadcast shared load feeds 4), at 48 registers.
DEFAULT_BODIES_PER_THREAD = 4
#: Largest P of the P x P kernel (P^2 threads per block).
PXP_MAX_TILE = 32
#: P of the P x P kernel when none is given.
PXP_DEFAULT_TILE = 16


def default_block() -> int:
    """Threads per block of the naive and tiled kernels (the tile size P of ``"tiled"``).

    256 on a GPU, 64 in the simulator (where every simulated thread costs time).
    """
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
    pos = _as_float32(check_array(pos, "pos", shape=(None, 3), dtype="iuf", finite=True, allow_empty=False), "pos")
    mass = _as_float32(check_array(mass, "mass", shape=(None,), dtype="iuf", finite=True), "mass")
    if mass.shape[0] != pos.shape[0]:
        raise ValueError(f"mass must hold one value per body of pos ({pos.shape[0]}), got {mass.shape[0]}")
    bodies = np.empty((pos.shape[0], 4), dtype=np.float32)
    bodies[:, :3] = pos
    bodies[:, 3] = mass
    return bodies


def _as_float32(arr, name):
    """``arr`` (already checked: real and finite) as float32, refusing values float32 cannot hold."""
    if arr.size and np.max(np.abs(arr.astype(np.float64))) > np.finfo(np.float32).max:
        raise ValueError(f"{name} has values too large for float32 (|x| > {np.finfo(np.float32).max:.3g})")
    return arr.astype(np.float32, copy=False)


def check_softening(softening) -> float:
    """The softening length eps as a float, if it is finite and > 0 (ValueError naming ``softening``)."""
    return check_float(softening, "softening", minimum=0, min_inclusive=False)


@fill_doc(parameters=BODIES_PARAMETERS)
def accelerations(pos, mass, *, softening, method="blocked", tile=None, bodies_per_thread=None):
    """All-pairs softened gravitational accelerations (G = 1).

    {parameters}
    softening : float
        Softening length eps > 0 (also removes the self-interaction).
    method : {"blocked", "lean", "tiled", "naive", "pxp", "numpy", "cpu"}
        ``"blocked"`` (the default): the tiled design with a lean inner loop (unsigned
        counter, softening folded into an FMA) and several destination bodies per thread;
        ``"lean"``: the same loop with one body per thread; ``"tiled"``: P threads per
        tile, sources staged in shared memory (the lesson's final design); ``"naive"``: one thread per body, all reads from global memory;
        ``"pxp"``: P x P threads per tile with a shared-memory reduction; ``"numpy"``:
        the float64 reference; ``"cpu"``: the Numba ``parallel=True`` CPU version.
    tile : int, optional
        Tile size P for ``"blocked"``, ``"lean"`` and ``"tiled"`` (1..1024, default
        :func:`default_block`) and ``"pxp"`` (1..32, default 16).
    bodies_per_thread : int, optional
        Destination bodies per thread of ``"blocked"`` (1..8, default 4).

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
    check_choice(method, "method", METHODS)
    eps = check_softening(softening)
    tile, bodies_per_thread = _check_launch(method, tile, bodies_per_thread)
    return _accelerations(pack_bodies(pos, mass), eps, method, tile, bodies_per_thread)


def _check_launch(method, tile, bodies_per_thread):
    """``tile`` and ``bodies_per_thread`` checked against ``method`` (a method of :data:`METHODS`)."""
    if tile is not None:
        if method not in TILED_METHODS + ("pxp",):
            raise ValueError(f"tile only applies to the {TILED_METHODS + ('pxp',)} methods, not {method!r}")
        tile = check_block(tile, "tile", maximum=PXP_MAX_TILE if method == "pxp" else 1024)
    if bodies_per_thread is not None:
        if method != "blocked":
            raise ValueError(f"bodies_per_thread only applies to the 'blocked' method, not {method!r}")
        bodies_per_thread = check_int(bodies_per_thread, "bodies_per_thread", minimum=1, maximum=8)
    return tile, bodies_per_thread


def _accelerations(bodies, eps, method, tile, bodies_per_thread):
    """:func:`accelerations` of checked, packed ``bodies`` (N, 4) and softening ``eps``."""
    if method == "numpy":
        pos, mass = bodies[:, :3].astype(np.float64), bodies[:, 3].astype(np.float64)
        return reference._accelerations_checked(pos, mass, float(eps) ** 2).astype(np.float32)
    if method == "cpu":
        return cpu._accelerations_checked(bodies, eps * eps)
    return _launch(bodies, eps * eps, method, tile, bodies_per_thread)


def _launch(bodies, softening_sq, method, tile, bodies_per_thread=None):
    from numba import cuda

    from . import kernels

    n = bodies.shape[0]
    d_bodies = cuda.to_device(bodies)
    d_acc = cuda.device_array((n, 3), dtype=np.float32)
    eps2 = np.float32(softening_sq)
    if method == "naive":
        block = default_block()
        kernels.nbody_naive_kernel[(n + block - 1) // block, block](d_bodies, eps2, d_acc)
    elif method in ("blocked", "lean"):
        tile = default_block() if tile is None else tile
        per = 1 if method == "lean" else (bodies_per_thread or DEFAULT_BODIES_PER_THREAD)
        span = tile * per
        kernels.nbody_blocked_kernel(tile, per)[(n + span - 1) // span, tile](d_bodies, eps2, d_acc)
    elif method == "tiled":
        tile = default_block() if tile is None else tile
        kernel = kernels.nbody_tiled_kernel(tile)
        kernel[(n + tile - 1) // tile, tile](d_bodies, eps2, d_acc)
    else:  # pxp
        tile = PXP_DEFAULT_TILE if tile is None else tile
        d_acc = cuda.to_device(np.zeros((n, 3), dtype=np.float32))
        tiles = (n + tile - 1) // tile
        kernels.nbody_pxp_kernel(tile)[(tiles, tiles), (tile, tile)](d_bodies, eps2, d_acc)
    return d_acc.copy_to_host()


def leapfrog(pos, vel, mass, *, dt, steps, softening, method="blocked", tile=None, every=1):
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
    steps = check_int(steps, "steps", minimum=0)
    every = check_int(every, "every", minimum=1)
    dt = check_float(dt, "dt", minimum=0, min_inclusive=False)
    bodies = pack_bodies(pos, mass)
    pos = bodies[:, :3].copy()
    vel = _as_float32(check_array(vel, "vel", shape=pos.shape, dtype="iuf", finite=True), "vel").copy()
    check_choice(method, "method", METHODS)
    eps = check_softening(softening)
    tile, _ = _check_launch(method, tile, None)

    def accelerations_now(step=0):  # the bodies, checked above, at the positions reached
        if not np.isfinite(pos).all():  # a blow-up: refuse, as checking the bodies again at every step would
            raise ValueError(f"leapfrog: the positions are no longer finite after step {step} (the integration "
                             "blew up: try a smaller dt or a larger softening)")
        bodies[:, :3] = pos
        return _accelerations(bodies, eps, method, tile, None)

    acc = accelerations_now()
    snaps_pos, snaps_vel = [pos.copy()], [vel.copy()]
    half = np.float32(dt / 2)
    for step in range(1, steps + 1):
        vel += half * acc
        pos += np.float32(dt) * vel
        acc = accelerations_now(step)
        vel += half * acc
        if step % every == 0:
            snaps_pos.append(pos.copy())
            snaps_vel.append(vel.copy())
    return np.stack(snaps_pos), np.stack(snaps_vel)
