"""Strong CPU path: the course's discrete Poisson system solved directly, on the mask's box only.

The Jacobi iterations (:mod:`course_lib.poisson.cpu`, the kernels) approach the solution
of a sparse linear system, one equation per strict-interior pixel p::

    D(p) I(p) - sum of I(q) over strict-interior neighbours q = B(p) + C(p)

(:mod:`course_lib.poisson.reference` has the notation). :func:`direct_clone` solves that
system itself, exactly: it crops the images to the mask's bounding box (grown by one
pixel, as :func:`~course_lib.poisson.seamless_clone` does), builds the matrix there and
factorises it once for the three channels with SuperLU, in a fill-reducing order for a
symmetric matrix. It is :func:`~course_lib.poisson.reference.exact_solve` (the trusted
reference, which works on the whole image) made fast, and the CPU figure to compare a
GPU's iterations with: it is exact, where 800 iterations are not.

OpenCV's ``seamlessClone`` is faster still, with a sine transform over the bounding box,
but solves another discrete problem (the target's gradients outside the mask, its values
only on the box's edge), whose image differs from this one by several levels near the
mask's edge (lesson 4, section 6).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

from .api import _crop_box, validate_inputs
from .reference import INTERIOR, compose, neighbour_counts, prepare

__all__ = ["direct_clone"]


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


def direct_clone(source, target, mask=None):
    """Seamless clone by an exact solve of the course's discrete Poisson system, on the CPU.

    The image the Jacobi iterations converge to (where the solution stays within
    [0, 255]): the solution clamped to [0, 255] and truncated to 8 bits, pasted on
    strict-interior pixels. Pixels outside the mask's bounding box are not touched.

    Parameters
    ----------
    source, target : ndarray of shape (H, W, 3), uint8
        Same size; ``source`` holds the object at the place it should appear in ``target``.
    mask : ndarray of shape (H, W), bool, optional
        Pixels to clone (default: every non-white source pixel, as for
        :func:`~course_lib.poisson.seamless_clone`).

    Returns
    -------
    ndarray of shape (H, W, 3), uint8
        A new image; the inputs are not modified.

    Raises
    ------
    ValueError
        As :func:`~course_lib.poisson.validate_inputs`: wrong dtype or shape, images of
        different sizes, an empty mask, a mask covering the whole image or one without
        a strict-interior pixel.

    Examples
    --------
    >>> from course_lib.poisson import cat_in_coffee, direct_clone, exact_solve
    >>> source, target, mask = cat_in_coffee((24, 36))
    >>> bool((direct_clone(source, target, mask) == exact_solve(source, target, mask)[0]).all())
    True
    """
    source, target, mask = validate_inputs(source, target, mask)
    box = _crop_box(mask)
    crop_source, crop_target, crop_mask = (np.ascontiguousarray(a[box]) for a in (source, target, mask))
    prepared = prepare(crop_source, crop_target, crop_mask)
    planes = _direct_solve(prepared)
    out = target.copy()
    out[box] = compose(crop_target, prepared.labels, np.clip(planes, 0, 255))
    return out
