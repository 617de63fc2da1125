"""Trusted float64 NumPy reference for all-pairs accelerations (used by tests and graders)."""

from __future__ import annotations

import numpy as np

from .._docs import fill_doc
from .._validate import check_array, check_float, check_positive_int

__all__ = ["accelerations_reference", "total_energy"]


#: The bodies every all-pairs function takes, for their docstrings (:func:`course_lib._docs.fill_doc`).
BODIES_PARAMETERS = """
Parameters
----------
pos : array_like of shape (N, 3)
    Positions.
mass : array_like of shape (N,)
    Masses.
"""


def _bodies(pos, mass):
    """Validated float64 copies of positions (N, 3) and masses (N,), N >= 1."""
    pos = check_array(pos, "pos", shape=(None, 3), dtype="iuf", finite=True, allow_empty=False)
    mass = check_array(mass, "mass", shape=(pos.shape[0],), dtype="iuf", finite=True)
    return pos.astype(np.float64), mass.astype(np.float64)


@fill_doc(parameters=BODIES_PARAMETERS)
def accelerations_reference(pos, mass, softening, *, chunk=1024):
    """All-pairs softened gravitational accelerations in float64 (G = 1).

    {parameters}
    softening : float
        Softening length eps > 0.
    chunk : int
        Destination bodies per broadcast step; bounds memory to ``chunk * N * 3`` doubles.

    Returns
    -------
    ndarray of shape (N, 3), float64
    """
    pos, mass = _bodies(pos, mass)
    eps2 = check_float(softening, "softening", minimum=0, min_inclusive=False) ** 2
    return _accelerations_checked(pos, mass, eps2, check_positive_int(chunk, "chunk"))


def _accelerations_checked(pos, mass, eps2, chunk=1024):
    """:func:`accelerations_reference` of checked float64 ``pos`` (N, 3), ``mass`` (N,) and eps^2 (for
    :func:`course_lib.nbody.accelerations`, which checks them once)."""
    out = np.empty_like(pos)
    for start in range(0, len(pos), chunk):
        d = pos[None, :, :] - pos[start:start + chunk, None, :]  # (c, N, 3): r_ij = p_j - p_i
        r2 = np.einsum("cnk,cnk->cn", d, d) + eps2
        s = mass[None, :] * r2 ** -1.5
        out[start:start + chunk] = np.einsum("cn,cnk->ck", s, d)
    return out


def total_energy(pos, vel, mass, softening):
    """Kinetic plus softened potential energy, float64.

    The potential matching the softened force is ``-sum_{i<j} m_i m_j / sqrt(r_ij^2 + eps^2)``.

    Parameters
    ----------
    pos, vel : array_like of shape (N, 3)
    mass : array_like of shape (N,)
    softening : float

    Returns
    -------
    float
    """
    pos, mass = _bodies(pos, mass)
    vel = check_array(vel, "vel", shape=pos.shape, dtype="iuf", finite=True).astype(np.float64)
    eps2 = check_float(softening, "softening", minimum=0, min_inclusive=False) ** 2
    kinetic = 0.5 * float(np.sum(mass * np.einsum("nk,nk->n", vel, vel)))
    potential = 0.0
    for i in range(len(pos) - 1):
        d = pos[i + 1:] - pos[i]
        potential -= mass[i] * float(np.sum(mass[i + 1:] / np.sqrt(np.einsum("nk,nk->n", d, d) + eps2)))
    return kinetic + potential
