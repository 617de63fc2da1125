"""Trusted NumPy reference of the source's method, and an exact sparse solve to compare with.

The method (Perez, Gangnet & Blake 2003, solved with Jacobi iterations as in the classic
course problem set), per colour channel:

* the mask splits into the *strict interior* (mask pixels whose in-image 4-neighbours are
  all in the mask) and the *inside border* (the other mask pixels, fixed to the target T);
* starting from the source S on the strict interior, each iteration computes, for every
  strict-interior pixel p,

      I_{k+1}(p) = clamp((A + B + C) / D, 0, 255)
      A = sum of I_k(q) over neighbours q of p in the strict interior
      B = sum of T(q)   over neighbours q of p on the inside border
      C = sum of S(p) - S(q) over all neighbours q of p
      D = number of neighbours of p inside the image (4, or 3/2 at the image edge)

  reading one buffer and writing the other (double buffering);
* the result is a copy of T with the strict interior replaced by the last iterate, cast to
  8 bits by truncation.

B + C does not change between iterations: :func:`prepare` computes it once (``rhs``),
so an iteration is ``(A + rhs) / D``. All float arithmetic is float32, summing A in the
fixed neighbour order up, down, left, right, exactly as the kernels do, so the kernels
and this reference agree bit for bit.

Results are checked with :func:`compare_images`, the classic two-tolerance image comparison
used by tests and graders: two 8-bit images "match" when no pixel differs by more than ``max_pixel_diff`` (in any
channel) and at most a fraction ``max_fraction`` of the pixels differ at all. Exact
equality is the special case ``max_pixel_diff=0``. The tolerances exist because a GPU may
sum in another order or contract operations: a float32 iterate then truncates to the
next integer down on a few pixels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._docs import fill_doc
from .._validate import check_array, check_float, check_int, check_positive_int, describe

__all__ = [
    "BORDER",
    "DEFAULT_MAX_FRACTION",
    "DEFAULT_MAX_PIXEL_DIFF",
    "INTERIOR",
    "ImageComparison",
    "OUTSIDE",
    "Prepared",
    "assert_images_match",
    "check_image",
    "check_labels",
    "check_mask",
    "check_planes",
    "check_problem",
    "classify_mask",
    "compare_images",
    "compose",
    "exact_solve",
    "jacobi_reference",
    "jacobi_step_reference",
    "neighbour_counts",
    "opencv_clone",
    "opencv_inputs",
    "prepare",
    "residual",
]

#: Pixel labels used by every implementation (uint8).
OUTSIDE, BORDER, INTERIOR = 0, 1, 2

# The four neighbours in the fixed order every implementation sums them: up, down, left, right.
_OFFSETS = ((-1, 0), (1, 0), (0, -1), (0, 1))

#: The problem every cloning function takes, for their docstrings (:func:`course_lib._docs.fill_doc`).
_CLONE_PARAMETERS = """
Parameters
----------
source, target : ndarray of shape (H, W, 3), uint8
mask : ndarray of shape (H, W), bool
"""


def _shifted(a, dy, dx, fill):
    """``out[y, x] = a[y + dy, x + dx]`` over the last two axes, ``fill`` outside the image."""
    out = np.full_like(a, fill)
    h, w = a.shape[-2:]
    ys_out = slice(max(-dy, 0), h - max(dy, 0))
    xs_out = slice(max(-dx, 0), w - max(dx, 0))
    ys_in = slice(max(dy, 0), h - max(-dy, 0))
    xs_in = slice(max(dx, 0), w - max(-dx, 0))
    out[..., ys_out, xs_out] = a[..., ys_in, xs_in]
    return out


def check_image(image, name):
    """``image`` as a C-contiguous array, if it is a non-empty 8-bit RGB image of shape (H, W, 3)."""
    if isinstance(image, np.ndarray) and image.dtype != np.uint8 and image.dtype.kind in "biufc":
        raise ValueError(f"{name} must have dtype uint8 (8-bit RGB), got {image.dtype}; "
                         "convert with skimage.util.img_as_ubyte or np.clip(...).astype(np.uint8)")
    image = check_array(image, name, dtype=np.uint8)
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"{name} must have shape (H, W, 3), got shape {image.shape}")
    if image.shape[0] == 0 or image.shape[1] == 0:
        raise ValueError(f"{name} must not be empty, got shape {image.shape}")
    return np.ascontiguousarray(image)


def check_mask(mask, shape, name="mask"):
    """``mask`` as a C-contiguous array, if it is a boolean array of the images' ``shape`` (H, W)."""
    if isinstance(mask, np.ndarray) and mask.dtype != np.bool_ and mask.dtype.kind in "biufc":
        raise ValueError(f"{name} must be a boolean array of shape (H, W), got dtype {mask.dtype}; use e.g. mask > 0")
    mask = check_array(mask, name, dtype=np.bool_)
    if mask.shape != tuple(shape):
        raise ValueError(f"{name} must have the images' shape {tuple(shape)}, got shape {mask.shape}")
    return np.ascontiguousarray(mask)


def check_problem(source, target, mask, what="the mask"):
    """Validated ``(source, target, mask)`` of a clone: two same-size 8-bit RGB images and a mask
    with a strict interior to solve for and an inside border to anchor it.

    Raises
    ------
    ValueError
        Naming the argument: wrong dtype or shape, images of different sizes, an empty
        mask, a mask covering the whole image or one without strict interior.
    """
    source = check_image(source, "source")
    target = check_image(target, "target")
    if source.shape != target.shape:
        raise ValueError(f"source and target must have the same size, got {source.shape[:2]} and {target.shape[:2]}")
    mask = check_mask(mask, source.shape[:2])
    if not mask.any():
        raise ValueError(f"{what} is empty: select at least one pixel to clone")
    if mask.all():
        raise ValueError(f"{what} covers the whole image: there is no inside border to anchor the solution")
    if not (classify_mask(mask) == INTERIOR).any():
        raise ValueError(f"{what} has no strict-interior pixel (every mask pixel touches the outside): "
                         "nothing to solve; use a thicker mask")
    return source, target, mask


def check_planes(planes, shape, name, dtype=np.float32):
    """``planes`` if it is an array of shape (3, H, W) and ``dtype`` (float32; "f" for any float), finite."""
    return check_array(planes, name, shape=(3, *shape), dtype=dtype, finite=True)


def check_labels(labels, name="labels"):
    """``labels`` if it is a uint8 array of shape (H, W) holding OUTSIDE, BORDER or INTERIOR."""
    labels = check_array(labels, name, ndim=2, dtype=np.uint8, allow_empty=False)
    if labels.max() > INTERIOR:
        raise ValueError(f"{name} must hold {OUTSIDE}, {BORDER} or {INTERIOR}, got {labels.max()}")
    return labels


def classify_mask(mask):
    """Label every pixel as outside the mask, inside border or strict interior.

    Parameters
    ----------
    mask : ndarray of shape (H, W), bool

    Returns
    -------
    ndarray of shape (H, W), uint8
        :data:`OUTSIDE` (0), :data:`BORDER` (1) or :data:`INTERIOR` (2). A mask pixel is
        interior when each of its neighbours *inside the image* is in the mask, so a mask
        touching the image edge has interior pixels on the edge.
    """
    mask = check_array(mask, "mask", ndim=2, dtype=np.bool_, allow_empty=False)
    interior = mask.copy()
    for dy, dx in _OFFSETS:
        interior &= _shifted(mask, dy, dx, True)  # out-of-image neighbours do not count
    labels = np.zeros(mask.shape, np.uint8)
    labels[mask] = BORDER
    labels[interior] = INTERIOR
    return labels


def neighbour_counts(shape):
    """D: the number of in-image 4-neighbours of each pixel.

    Parameters
    ----------
    shape : tuple of int
        (H, W).

    Returns
    -------
    ndarray of shape (H, W), float32
        4 inside, 3 on an edge, 2 in a corner (fewer for images one pixel wide).
    """
    if not isinstance(shape, (tuple, list)) or len(shape) != 2:
        raise ValueError(f"shape must be (H, W), two positive integers, got {describe(shape)}")
    shape = tuple(check_positive_int(n, "shape") for n in shape)
    ones = np.ones(shape, np.float32)
    return sum(_shifted(ones, dy, dx, 0.0) for dy, dx in _OFFSETS).astype(np.float32)


@dataclass
class Prepared:
    """What the iterations need, computed once.

    Attributes
    ----------
    labels : ndarray of shape (H, W), uint8
        From :func:`classify_mask`.
    rhs : ndarray of shape (3, H, W), float32
        B + C on strict-interior pixels, 0 elsewhere (one plane per channel).
    guess : ndarray of shape (3, H, W), float32
        The initial iterate I_0: the source image's values.
    """

    labels: np.ndarray
    rhs: np.ndarray
    guess: np.ndarray


@fill_doc(parameters=_CLONE_PARAMETERS)
def prepare(source, target, mask):
    """Labels, right-hand side B + C and initial guess, in float32 planes.

    {parameters}

    Returns
    -------
    Prepared
    """
    return _prepare_checked(*check_problem(source, target, mask))


def _prepare_checked(source, target, mask):
    """:func:`prepare` on inputs :func:`check_problem` has checked (the public doors check them once)."""
    labels = classify_mask(mask)
    s = np.ascontiguousarray(np.moveaxis(np.asarray(source), -1, 0), dtype=np.float32)
    t = np.ascontiguousarray(np.moveaxis(np.asarray(target), -1, 0), dtype=np.float32)
    border = labels == BORDER
    rhs = np.zeros_like(s)
    for dy, dx in _OFFSETS:
        inside = _shifted(np.ones(labels.shape, bool), dy, dx, False)
        s_q = _shifted(s, dy, dx, 0.0)
        t_q = np.where(_shifted(border, dy, dx, False), _shifted(t, dy, dx, 0.0), np.float32(0))
        # Integers below 2^24: exact in float32 whatever the order.
        rhs += np.where(inside, s - s_q, np.float32(0)) + t_q
    rhs[:, labels != INTERIOR] = 0
    return Prepared(labels, rhs, s.copy())


def jacobi_step_reference(prev, prepared, out=None):
    """One double-buffered Jacobi iteration: read ``prev``, return the next iterate.

    Parameters
    ----------
    prev : ndarray of shape (3, H, W), float32
        I_k (only its strict-interior values are read).
    prepared : Prepared
    out : ndarray of shape (3, H, W), float32, optional
        Where to write I_{k+1}; must not be ``prev``. Pixels that are not strict interior
        are copied from ``prev``.

    Returns
    -------
    ndarray of shape (3, H, W), float32
    """
    if out is prev:
        raise ValueError("out must be a different buffer than prev: the update reads neighbours of prev")
    prev = check_planes(prev, prepared.labels.shape, "prev")
    interior = prepared.labels == INTERIOR
    a = np.zeros_like(prev)
    for dy, dx in _OFFSETS:
        q_interior = _shifted(interior, dy, dx, False)
        a += np.where(q_interior, _shifted(prev, dy, dx, 0.0), np.float32(0))
    d = neighbour_counts(interior.shape)
    new = np.clip((a + prepared.rhs) / d, np.float32(0), np.float32(255))
    if out is None:
        out = prev.copy()
    else:
        out[...] = prev
    out[:, interior] = new[:, interior]
    return out


def compose(target, labels, planes):
    """Paste the iterate into a copy of the target at strict-interior pixels.

    Parameters
    ----------
    target : ndarray of shape (H, W, 3), uint8
    labels : ndarray of shape (H, W), uint8
    planes : ndarray of shape (3, H, W), float
        Values already clamped to [0, 255]; they are truncated toward zero.

    Returns
    -------
    ndarray of shape (H, W, 3), uint8
    """
    target = check_image(target, "target")
    labels = check_labels(labels)
    if labels.shape != target.shape[:2]:
        raise ValueError(f"labels must have the target's shape {target.shape[:2]}, got shape {labels.shape}")
    planes = check_planes(planes, labels.shape, "planes", dtype="f")
    out = np.array(target, dtype=np.uint8, copy=True)
    interior = labels == INTERIOR
    out[interior] = np.moveaxis(planes, 0, -1)[interior].astype(np.uint8)
    return out


@fill_doc(parameters=_CLONE_PARAMETERS)
def jacobi_reference(source, target, mask, iterations=800, *, keep=()):
    """The source's method, in NumPy: ``iterations`` double-buffered Jacobi steps.

    {parameters}
    iterations : int
        Number of Jacobi iterations (800 in the classic problem set).
    keep : iterable of int
        Iteration counts whose iterate (float32, shape (3, H, W)) is returned too.

    Returns
    -------
    result : ndarray of shape (H, W, 3), uint8
    snapshots : dict of int to ndarray
        Only when ``keep`` is given.
    """
    iterations = check_int(iterations, "iterations", minimum=0)
    prep = prepare(source, target, mask)
    keep = set(keep)
    snapshots = {0: prep.guess.copy()} if 0 in keep else {}
    current, spare = prep.guess.copy(), prep.guess.copy()
    for k in range(1, iterations + 1):
        jacobi_step_reference(current, prep, out=spare)
        current, spare = spare, current  # swap the two buffers
        if k in keep:
            snapshots[k] = current.copy()
    result = compose(target, prep.labels, current)
    return (result, snapshots) if keep else result


def residual(planes, prepared):
    """How far an iterate is from solving the discrete Poisson equation.

    Parameters
    ----------
    planes : ndarray of shape (3, H, W), float
    prepared : Prepared

    Returns
    -------
    float
        Root mean square over strict-interior pixels and channels of
        ``D * I(p) - A - (B + C)`` (zero at the exact, unclamped solution), in float64.
    """
    planes = check_planes(planes, prepared.labels.shape, "planes", dtype="f")
    interior = prepared.labels == INTERIOR
    if not interior.any():
        return 0.0
    planes = np.asarray(planes, np.float64)
    a = np.zeros_like(planes)
    for dy, dx in _OFFSETS:
        a += np.where(_shifted(interior, dy, dx, False), _shifted(planes, dy, dx, 0.0), 0.0)
    d = neighbour_counts(interior.shape).astype(np.float64)
    r = d * planes - a - prepared.rhs
    return float(np.sqrt(np.mean(r[:, interior] ** 2)))


@fill_doc(parameters=_CLONE_PARAMETERS)
def exact_solve(source, target, mask):
    """The limit of the iterations: solve the sparse linear system directly (float64).

    Each strict-interior pixel p gives one equation ``D I(p) - sum_{q interior} I(q) = B + C``;
    the matrix is symmetric, diagonally dominant and shared by the three channels, so it
    is factorised once (SuperLU via :func:`scipy.sparse.linalg.splu`).

    {parameters}

    Returns
    -------
    result : ndarray of shape (H, W, 3), uint8
        Clamped to [0, 255] and truncated, like the iterations.
    planes : ndarray of shape (3, H, W), float64
        The unclamped solution on the interior (the source's values elsewhere).
    """
    import scipy.sparse as sp
    from scipy.sparse.linalg import splu

    prep = prepare(source, target, mask)
    interior = prep.labels == INTERIOR
    h, w = interior.shape
    index = np.full((h, w), -1, np.int64)
    n = int(interior.sum())
    index[interior] = np.arange(n)
    ys, xs = np.nonzero(interior)
    rows, cols, vals = [np.arange(n)], [np.arange(n)], [neighbour_counts((h, w))[ys, xs].astype(np.float64)]
    for dy, dx in _OFFSETS:
        qy, qx = ys + dy, xs + dx
        ok = (qy >= 0) & (qy < h) & (qx >= 0) & (qx < w)
        ok[ok] &= interior[qy[ok], qx[ok]]
        rows.append(index[ys[ok], xs[ok]])
        cols.append(index[qy[ok], qx[ok]])
        vals.append(-np.ones(int(ok.sum())))
    planes = prep.guess.astype(np.float64)
    if n:
        matrix = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n))
        lu = splu(matrix)
        solution = lu.solve(np.ascontiguousarray(prep.rhs[:, interior].T, dtype=np.float64))
        planes[:, interior] = solution.T
    result = compose(target, prep.labels, np.clip(planes, 0, 255))
    return result, planes


def opencv_clone(source, target, mask):
    """OpenCV's ``seamlessClone`` (NORMAL_CLONE) of the same problem, for comparison.

    OpenCV solves the same Poisson equation directly (a DST-based solver over the mask's
    bounding box) with its own boundary handling, so its result is close to
    :func:`exact_solve` but not identical. OpenCV is imported only here.

    Parameters
    ----------
    source, target : ndarray of shape (H, W, 3), uint8
        RGB; same size, the object already at its place in ``source``.
    mask : ndarray of shape (H, W), bool

    Returns
    -------
    ndarray of shape (H, W, 3), uint8
    """
    import cv2

    src, dst, m, center, pad = opencv_inputs(source, target, mask)
    out = cv2.seamlessClone(src, dst, m, center, cv2.NORMAL_CLONE)
    return np.ascontiguousarray(out[pad:-pad, pad:-pad, ::-1])


def opencv_inputs(source, target, mask):
    """The arguments of ``cv2.seamlessClone`` for a problem, as :func:`opencv_clone` passes them.

    Separate so that a benchmark can time the bare library call on ready input.

    Returns
    -------
    src, dst : ndarray of shape (H + 2 pad, W + 2 pad, 3), uint8
        BGR, padded by edge replication (seamlessClone wants room around the patch).
    mask255 : ndarray of shape (H + 2 pad, W + 2 pad), uint8
    center : tuple of int
        (x, y) where OpenCV centres the mask's bounding box: the object stays in place.
    pad : int
    """
    source, target, mask = check_problem(source, target, mask)
    rows = np.nonzero(mask.any(axis=1))[0]
    cols = np.nonzero(mask.any(axis=0))[0]
    if rows.size == 0:
        raise ValueError("the mask is empty: select at least one pixel to clone")
    # seamlessClone wants the patch inside the destination with room around it: pad both
    # images by edge replication so a mask touching the image edge still works.
    pad = 2
    src = np.pad(np.asarray(source, np.uint8), ((pad, pad), (pad, pad), (0, 0)), mode="edge")
    dst = np.pad(np.asarray(target, np.uint8), ((pad, pad), (pad, pad), (0, 0)), mode="edge")
    m = np.pad(mask, pad).astype(np.uint8) * 255
    # OpenCV centres the mask's bounding box on `center`; this keeps the object in place.
    y0, y1, x0, x1 = rows[0] + pad, rows[-1] + pad, cols[0] + pad, cols[-1] + pad
    center = (int(x0 + (x1 - x0 + 1) // 2), int(y0 + (y1 - y0 + 1) // 2))
    return src[..., ::-1].copy(), dst[..., ::-1].copy(), m, center, pad


# ---- comparing results: the classic two tolerances

#: Default largest allowed difference of one pixel (in any channel), in 8-bit levels.
DEFAULT_MAX_PIXEL_DIFF = 2
#: Default largest fraction of pixels allowed to differ at all.
DEFAULT_MAX_FRACTION = 0.01


@dataclass(frozen=True)
class ImageComparison:
    """Outcome of :func:`compare_images`.

    Attributes
    ----------
    max_diff : int
        Largest absolute difference over pixels and channels.
    fraction_differing : float
        Fraction of pixels where any channel differs.
    differing_pixels : int
    worst_pixel : tuple of int or None
        (row, column) of a pixel with the largest difference, None if the images are equal.
    max_pixel_diff, max_fraction
        The tolerances applied.
    diff : ndarray of shape (H, W), int
        Per-pixel largest channel difference (for heat maps).
    """

    max_diff: int
    fraction_differing: float
    differing_pixels: int
    worst_pixel: tuple | None
    max_pixel_diff: int
    max_fraction: float
    diff: np.ndarray

    @property
    def passed(self) -> bool:
        """Both tolerances hold."""
        return self.max_diff <= self.max_pixel_diff and self.fraction_differing <= self.max_fraction

    def __bool__(self) -> bool:
        return self.passed

    @property
    def message(self) -> str:
        """One sentence saying what matched and what did not."""
        pct = 100 * self.fraction_differing
        head = (f"{self.differing_pixels} pixels differ ({pct:.2f}%, allowed {100 * self.max_fraction:.2f}%); "
                f"largest difference {self.max_diff} (allowed {self.max_pixel_diff})")
        if self.passed:
            return "images match: " + head
        where = f" at row {self.worst_pixel[0]}, column {self.worst_pixel[1]}" if self.worst_pixel else ""
        return "images differ: " + head + where


def _as_8bit_image(a, name):
    """``a`` if it is a uint8 image of shape (H, W) or (H, W, C)."""
    a = check_array(a, name, dtype=np.uint8)
    if a.ndim not in (2, 3):
        raise ValueError(f"{name} must have shape (H, W) or (H, W, C), got shape {a.shape}")
    return a


def compare_images(actual, expected, *, max_pixel_diff=DEFAULT_MAX_PIXEL_DIFF, max_fraction=DEFAULT_MAX_FRACTION):
    """Compare two 8-bit images with the two classic tolerances.

    Parameters
    ----------
    actual, expected : ndarray of shape (H, W, 3) or (H, W), uint8
    max_pixel_diff : int
        Largest allowed difference of any pixel in any channel (>= 0).
    max_fraction : float
        Largest allowed fraction of pixels that differ at all, in [0, 1].

    Returns
    -------
    ImageComparison
        Truthy when both tolerances hold; ``.message`` explains.

    Raises
    ------
    ValueError
        Different shapes, a dtype other than uint8, or tolerances out of range.
    """
    actual = _as_8bit_image(actual, "actual")
    expected = _as_8bit_image(expected, "expected")
    if actual.shape != expected.shape:
        raise ValueError(f"images have different shapes: actual {actual.shape}, expected {expected.shape}")
    max_pixel_diff = check_int(max_pixel_diff, "max_pixel_diff", minimum=0)
    max_fraction = check_float(max_fraction, "max_fraction", minimum=0, maximum=1)
    diff = np.abs(actual.astype(np.int16) - expected.astype(np.int16))
    if diff.ndim == 3:
        diff = diff.max(axis=2)
    max_diff = int(diff.max()) if diff.size else 0
    differing = int(np.count_nonzero(diff))
    worst = tuple(int(i) for i in np.unravel_index(np.argmax(diff), diff.shape)) if max_diff else None
    return ImageComparison(max_diff, differing / diff.size if diff.size else 0.0, differing, worst,
                           int(max_pixel_diff), float(max_fraction), diff)


def assert_images_match(actual, expected, **tolerances):
    """Raise ``AssertionError`` with :attr:`ImageComparison.message` unless the images match."""
    result = compare_images(actual, expected, **tolerances)
    if not result.passed:
        raise AssertionError(result.message)
    return result
