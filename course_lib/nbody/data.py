"""Seeded initial conditions for N-body experiments (G = 1, total mass 1)."""

from __future__ import annotations

import numpy as np

from .._validate import check_choice, check_float, check_positive_int, check_seed

__all__ = ["colliding_clusters", "initial_conditions", "plummer_sphere", "uniform_cube"]


def uniform_cube(n, seed=0, *, side=1.0):
    """Bodies at rest, uniformly distributed in a cube of the given side centred at 0.

    Returns
    -------
    pos : ndarray of shape (n, 3), float32
    vel : ndarray of shape (n, 3), float32 (zeros)
    mass : ndarray of shape (n,), float32 (equal masses summing to 1)
    """
    n = check_positive_int(n, "n")
    rng = np.random.default_rng(check_seed(seed))
    side = check_float(side, "side", minimum=0, min_inclusive=False)
    pos = rng.uniform(-side / 2, side / 2, size=(n, 3))
    return pos.astype(np.float32), np.zeros((n, 3), np.float32), np.full(n, 1.0 / n, np.float32)


def plummer_sphere(n, seed=0, *, scale=1.0):
    """A Plummer sphere in virial equilibrium (Aarseth, Henon & Wielen 1974 sampling).

    Radii follow the Plummer cumulative mass ``M(r) = r^3 / (r^2 + a^2)^(3/2)``; speeds
    are drawn from the isotropic distribution function by rejection, so the cluster is
    in equilibrium and its energy stays nearly constant under a good integrator.

    Returns
    -------
    pos, vel : ndarray of shape (n, 3), float32
    mass : ndarray of shape (n,), float32
    """
    n = check_positive_int(n, "n")
    rng = np.random.default_rng(check_seed(seed))
    scale = check_float(scale, "scale", minimum=0, min_inclusive=False)
    # Cap the mass fraction to avoid the few bodies at enormous radii.
    x = rng.uniform(0.0, 0.999, size=n)
    r = scale / np.sqrt(x ** (-2.0 / 3.0) - 1.0)
    pos = r[:, None] * _random_directions(rng, n)
    escape = np.sqrt(2.0) * (r**2 + scale**2) ** -0.25
    q = np.empty(n)
    todo = np.arange(n)
    while todo.size:
        a = rng.uniform(0, 1, todo.size)
        b = rng.uniform(0, 0.1, todo.size)
        ok = b < a**2 * (1 - a**2) ** 3.5
        q[todo[ok]] = a[ok]
        todo = todo[~ok]
    vel = (q * escape)[:, None] * _random_directions(rng, n)
    pos -= pos.mean(axis=0)
    vel -= vel.mean(axis=0)
    return pos.astype(np.float32), vel.astype(np.float32), np.full(n, 1.0 / n, np.float32)


def colliding_clusters(n, seed=0, *, separation=6.0, speed=0.3):
    """Two Plummer spheres of n/2 bodies each, approaching each other along x.

    Returns
    -------
    pos, vel : ndarray of shape (n, 3), float32
    mass : ndarray of shape (n,), float32
    """
    n = check_positive_int(n, "n")
    seed = check_seed(seed)
    separation = check_float(separation, "separation", minimum=0)
    speed = check_float(speed, "speed")
    sizes = (n // 2, n - n // 2)
    offsets = (-np.array([separation / 2, 0.5, 0.0]), np.array([separation / 2, -0.5, 0.0]))
    pos, vel = [], []
    for k, (size, offset) in enumerate(zip(sizes, offsets)):
        if size == 0:
            continue
        p, v, _ = plummer_sphere(size, None if seed is None else seed + k)
        pos.append(p + offset)
        vel.append(v - np.sign(offset[0]) * np.array([speed, 0.0, 0.0]))
    return (np.concatenate(pos).astype(np.float32), np.concatenate(vel).astype(np.float32),
            np.full(n, 1.0 / n, np.float32))


def _random_directions(rng, n):
    v = rng.normal(size=(n, 3))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


_GENERATORS = {"uniform": uniform_cube, "plummer": plummer_sphere, "collision": colliding_clusters}


def initial_conditions(kind, n, seed=0):
    """Initial conditions by name: ``"uniform"``, ``"plummer"`` or ``"collision"``."""
    return _GENERATORS[check_choice(kind, "kind", sorted(_GENERATORS))](n, seed)
