"""Fast CPU baseline: Numba ``parallel=True`` Jacobi iterations (all cores, float32).

The CPU side of every "GPU vs CPU" figure of Unit 4. Same float32 arithmetic and
neighbour order as the kernels (so the results agree bit for bit), rows of the image
spread over the cores with ``prange``, two buffers swapped after each iteration. Only the
rows between the first and last strict-interior row are visited.

Beside the iterations, :func:`_direct_solve` solves the sparse linear system they approach
(one equation per strict-interior pixel p: ``D(p) I(p) - sum of I(q) over strict-interior
neighbours q = B(p) + C(p)``) exactly, factorising it once for the three channels with
SuperLU; :func:`~course_lib.poisson.direct_clone` runs it on the mask's bounding box. It is
:func:`~course_lib.poisson.reference.exact_solve` (the trusted reference, on the whole image)
made fast, and the CPU figure to compare a GPU's iterations with: it is exact, where 800
iterations are not. OpenCV's ``seamlessClone`` is faster still, with a sine transform over the
bounding box, but solves another discrete problem (the target's gradients outside the mask,
its values only on the box's edge), whose image differs from this one by several levels near
the mask's edge (lesson 4, section 6).
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

from .._validate import check_int
from .reference import INTERIOR, check_labels, check_planes, compose, neighbour_counts, prepare

__all__ = ["jacobi_cpu", "seamless_clone_cpu"]


@numba.njit(parallel=True, cache=True)
def _jacobi_iterations(current, spare, rhs, labels, iterations, row_start, row_stop):
    # The update of course_lib.poisson.kernels.jacobi_update, written again on purpose: the CPU baseline
    # the lesson times against the kernels must be a compiled loop of its own, not the device function.
    h, w = labels.shape
    one, zero, top = np.float32(1.0), np.float32(0.0), np.float32(255.0)
    for _ in range(iterations):
        for y in numba.prange(row_start, row_stop):
            for x in range(w):
                if labels[y, x] != INTERIOR:
                    continue
                d = zero
                if y > 0:
                    d += one
                if y < h - 1:
                    d += one
                if x > 0:
                    d += one
                if x < w - 1:
                    d += one
                for c in range(3):
                    a = zero
                    if y > 0 and labels[y - 1, x] == INTERIOR:
                        a += current[c, y - 1, x]
                    if y < h - 1 and labels[y + 1, x] == INTERIOR:
                        a += current[c, y + 1, x]
                    if x > 0 and labels[y, x - 1] == INTERIOR:
                        a += current[c, y, x - 1]
                    if x < w - 1 and labels[y, x + 1] == INTERIOR:
                        a += current[c, y, x + 1]
                    spare[c, y, x] = min(max((a + rhs[c, y, x]) / d, zero), top)
        current, spare = spare, current
    return current


def jacobi_cpu(planes, rhs, labels, iterations):
    """Run ``iterations`` double-buffered Jacobi steps on all CPU cores.

    Parameters
    ----------
    planes : ndarray of shape (3, H, W), float32
        I_0; not modified.
    rhs : ndarray of shape (3, H, W), float32
        B + C (see :func:`course_lib.poisson.reference.prepare`).
    labels : ndarray of shape (H, W), uint8
    iterations : int

    Returns
    -------
    ndarray of shape (3, H, W), float32
        I_iterations.
    """
    labels = check_labels(labels)
    planes = check_planes(planes, labels.shape, "planes")
    rhs = check_planes(rhs, labels.shape, "rhs")
    iterations = check_int(iterations, "iterations", minimum=0)
    rows = np.nonzero((labels == INTERIOR).any(axis=1))[0]
    if rows.size == 0 or iterations == 0:
        return planes.copy()
    current = np.ascontiguousarray(planes, dtype=np.float32).copy()
    spare = current.copy()
    return _jacobi_iterations(current, spare, np.ascontiguousarray(rhs, dtype=np.float32),
                              np.ascontiguousarray(labels, dtype=np.uint8), int(iterations),
                              int(rows[0]), int(rows[-1]) + 1)


def seamless_clone_cpu(source, target, mask, iterations=800):
    """The whole method on the CPU: prepare (NumPy), iterate (Numba), compose.

    Parameters
    ----------
    source, target : ndarray of shape (H, W, 3), uint8
    mask : ndarray of shape (H, W), bool
    iterations : int

    Returns
    -------
    ndarray of shape (H, W, 3), uint8
    """
    iterations = check_int(iterations, "iterations", minimum=0)
    prep = prepare(source, target, mask)
    return compose(target, prep.labels, jacobi_cpu(prep.guess, prep.rhs, prep.labels, iterations))


def _direct_solve(prepared):
    """Solve the discrete Poisson system of a prepared problem exactly (float64, not clamped).

    Parameters
    ----------
    prepared : Prepared
        From :func:`~course_lib.poisson.reference.prepare`.

    Returns
    -------
    ndarray of shape (3, H, W), float64
        The solution on strict-interior pixels, the initial guess (the source) elsewhere.
    """
    labels = prepared.labels
    interior = labels == INTERIOR
    h, w = labels.shape
    planes = prepared.guess.astype(np.float64)
    n = int(interior.sum())
    if n == 0:
        return planes
    number = np.full(h * w, -1, np.int64)  # unknown of each pixel, row by row; -1: not an unknown
    flat = np.flatnonzero(interior)
    number[flat] = np.arange(n)
    ys, xs = np.divmod(flat, w)
    rows, cols = [np.arange(n)], [np.arange(n)]
    vals = [neighbour_counts((h, w)).ravel()[flat].astype(np.float64)]
    for dy, dx, inside in ((-1, 0, ys > 0), (1, 0, ys < h - 1), (0, -1, xs > 0), (0, 1, xs < w - 1)):
        neighbour = np.where(inside, number[np.where(inside, flat + dy * w + dx, 0)], -1)
        keep = neighbour >= 0  # only strict-interior neighbours are unknowns; the others are in B + C
        rows.append(np.flatnonzero(keep))
        cols.append(neighbour[keep])
        vals.append(np.full(int(keep.sum()), -1.0))
    matrix = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n))
    # Symmetric and diagonally dominant: a minimum-degree order of A + A^T and the diagonal pivots
    # (SymmetricMode) factorise it about 1.5x faster than SuperLU's default order.
    lu = splu(matrix, permc_spec="MMD_AT_PLUS_A", options={"SymmetricMode": True})
    solution = lu.solve(np.ascontiguousarray(prepared.rhs[:, interior].T, dtype=np.float64))
    planes[:, interior] = solution.T
    return planes
