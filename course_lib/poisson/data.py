"""Images and masks for seamless cloning, all available offline.

Photos come from the files shipped inside scikit-image's wheel (no download); masks are
drawn (ellipses, rectangles, polygons) or generated (seeded random blobs). The classic
pair is :func:`cat_in_coffee`: the face of scikit-image's cat (``chelsea``) cloned into
the crema of its coffee cup (``coffee``), the course's "bear in the swimming pool".
"""

from __future__ import annotations

import numpy as np

from .._validate import (check_array, check_choice, check_float, check_int, check_positive_int, check_seed,
                         describe)

__all__ = [
    "PHOTOS",
    "blob_mask",
    "cat_in_coffee",
    "ellipse_mask",
    "load_photo",
    "nonwhite_mask",
    "object_on_white",
    "polygon_mask",
    "rectangle_mask",
    "synthetic_pair",
]

#: Colour photos shipped with scikit-image that :func:`load_photo` accepts.
PHOTOS = ("astronaut", "chelsea", "coffee", "rocket", "hubble_deep_field", "retina", "motorcycle_left")


def _check_shape(shape, name="shape"):
    """(H, W) as two ints, if ``shape`` is a pair of positive integers."""
    if not isinstance(shape, (tuple, list)) or len(shape) != 2:
        raise ValueError(f"{name} must be (H, W), two positive integers, got {describe(shape)}")
    return tuple(check_positive_int(s, name) for s in shape)


def load_photo(name, size=None):
    """A colour photo from scikit-image's shipped data, optionally resized.

    Parameters
    ----------
    name : str
        One of :data:`PHOTOS`.
    size : tuple of int, optional
        (H, W) to resize to (with anti-aliasing).

    Returns
    -------
    ndarray of shape (H, W, 3), uint8
    """
    import skimage.data

    check_choice(name, "name", PHOTOS)
    image = getattr(skimage.data, name)()[..., :3]
    if size is not None:
        image = _resize(image, _check_shape(size, "size"))
    return np.ascontiguousarray(image, dtype=np.uint8)


def _resize(image, size):
    from skimage.transform import resize

    out = resize(image, size + image.shape[2:], anti_aliasing=True, preserve_range=True)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def ellipse_mask(shape, center=None, radii=None):
    """An elliptical mask.

    Parameters
    ----------
    shape : tuple of int
        (H, W).
    center : tuple of float, optional
        (row, column); the image centre by default.
    radii : tuple of float, optional
        (row radius, column radius); a third of the image by default.

    Returns
    -------
    ndarray of shape (H, W), bool
    """
    from skimage.draw import ellipse

    h, w = _check_shape(shape)
    center = ((h - 1) / 2, (w - 1) / 2) if center is None else center
    radii = (h / 3, w / 3) if radii is None else radii
    mask = np.zeros((h, w), bool)
    rr, cc = ellipse(center[0], center[1], radii[0], radii[1], shape=(h, w))
    mask[rr, cc] = True
    return mask


def rectangle_mask(shape, top, left, height, width):
    """A rectangular mask of ``height`` x ``width`` pixels whose top-left pixel is (top, left).

    Returns
    -------
    ndarray of shape (H, W), bool
        Clipped to the image.
    """
    h, w = _check_shape(shape)
    # A rectangle reaching past the image is clipped to it.
    top, left = check_int(top, "top"), check_int(left, "left")
    height, width = check_positive_int(height, "height"), check_positive_int(width, "width")
    mask = np.zeros((h, w), bool)
    mask[max(top, 0):max(top + height, 0), max(left, 0):max(left + width, 0)] = True
    return mask


def polygon_mask(shape, rows, cols):
    """A hand-drawn mask: the inside of the polygon with vertices (rows[i], cols[i]).

    Returns
    -------
    ndarray of shape (H, W), bool
    """
    from skimage.draw import polygon

    h, w = _check_shape(shape)
    rows = check_array(rows, "rows", ndim=1, dtype="iuf", finite=True, allow_empty=False)
    cols = check_array(cols, "cols", shape=rows.shape, dtype="iuf", finite=True)
    mask = np.zeros((h, w), bool)
    rr, cc = polygon(np.asarray(rows, float), np.asarray(cols, float), shape=(h, w))
    mask[rr, cc] = True
    return mask


def blob_mask(shape, seed=0, *, fill=0.3, smoothness=None):
    """A random, smooth, connected blob (seeded): thresholded smoothed noise.

    Parameters
    ----------
    shape : tuple of int
        (H, W).
    seed : int
    fill : float
        Approximate fraction of the image the blob covers, in (0, 1).
    smoothness : float, optional
        Standard deviation of the Gaussian smoothing in pixels; min(H, W) / 6 by default.

    Returns
    -------
    ndarray of shape (H, W), bool
        The largest connected component of the thresholded field (never empty).
    """
    from scipy import ndimage

    h, w = _check_shape(shape)
    fill = check_float(fill, "fill", minimum=0, maximum=1, min_inclusive=False, max_inclusive=False)
    if smoothness is not None:
        smoothness = check_float(smoothness, "smoothness", minimum=0, min_inclusive=False)
    rng = np.random.default_rng(check_seed(seed))
    field = ndimage.gaussian_filter(rng.normal(size=(h, w)), smoothness or max(min(h, w) / 6, 1.0))
    mask = field >= np.quantile(field, 1 - fill)
    labels, count = ndimage.label(mask)
    if count > 1:
        sizes = ndimage.sum(mask, labels, range(1, count + 1))
        mask = labels == 1 + int(np.argmax(sizes))
    return mask


def nonwhite_mask(source):
    """The classic mask: every source pixel that is not pure white (R + G + B < 3 * 255).

    Parameters
    ----------
    source : ndarray of shape (H, W, 3), uint8

    Returns
    -------
    ndarray of shape (H, W), bool
    """
    source = check_array(source, "source", ndim=3, dtype=np.uint8, allow_empty=False)
    if source.shape[2] != 3:
        raise ValueError(f"source must have shape (H, W, 3), got shape {source.shape}")
    return source[..., :3].astype(np.int32).sum(axis=-1) < 3 * 255


def object_on_white(patch, patch_mask, shape, top, left):
    """Place an object on a white canvas, the classic way to give a source and its mask.

    Parameters
    ----------
    patch : ndarray of shape (h, w, 3), uint8
    patch_mask : ndarray of shape (h, w), bool
        The object's pixels; they are kept off pure white so the mask survives.
    shape : tuple of int
        (H, W) of the canvas.
    top, left : int
        Where the patch's top-left pixel goes (the patch must fit).

    Returns
    -------
    ndarray of shape (H, W, 3), uint8
    """
    h, w = _check_shape(shape)
    patch = check_array(patch, "patch", ndim=3, dtype=np.uint8, allow_empty=False)
    patch_mask = check_array(patch_mask, "patch_mask", shape=patch.shape[:2], dtype=np.bool_)
    top = check_int(top, "top", minimum=0)
    left = check_int(left, "left", minimum=0)
    ph, pw = patch_mask.shape
    if top < 0 or left < 0 or top + ph > h or left + pw > w:
        raise ValueError(f"a {ph}x{pw} patch at ({top}, {left}) does not fit a {h}x{w} canvas")
    canvas = np.full((h, w, 3), 255, np.uint8)
    region = canvas[top:top + ph, left:left + pw]
    region[patch_mask] = np.minimum(patch[patch_mask], 254)
    return canvas


def cat_in_coffee(size=(333, 500)):
    """The classic "object pasted into a scene" pair: a cat's face into a cup of coffee.

    Parameters
    ----------
    size : tuple of int
        (H, W) of both images; (333, 500) is the benchmark's size. Small sizes such as
        (24, 36) suit the simulator.

    Returns
    -------
    source : ndarray of shape (H, W, 3), uint8
        The cat's face on a white canvas, placed over the crema of the cup.
    target : ndarray of shape (H, W, 3), uint8
        The coffee photo.
    mask : ndarray of shape (H, W), bool
        :func:`nonwhite_mask` of the source: an ellipse over the crema.
    """
    h, w = _check_shape(size, "size")
    if h < 8 or w < 8:
        raise ValueError(f"cat_in_coffee needs at least 8 x 8 pixels, got {size}")
    target = load_photo("coffee", (h, w))
    # The crema of the cup, measured on the 400 x 600 original: centre (130, 290), radii (46, 82).
    cy, cx, ry, rx = 130 / 400 * h, 290 / 600 * w, 40 / 400 * h, 72 / 600 * w
    top, left = int(round(cy - ry)), int(round(cx - rx))
    ph, pw = max(int(round(2 * ry)), 3), max(int(round(2 * rx)), 3)
    # The cat's face in the 300 x 451 original, rows 40..260 and columns 100..380.
    face = load_photo("chelsea")[40:260, 100:380]
    patch = _resize(face, (ph, pw))
    patch_mask = ellipse_mask((ph, pw), radii=(ph / 2, pw / 2))
    source = object_on_white(patch, patch_mask, (h, w), top, left)
    return source, target, nonwhite_mask(source)


def synthetic_pair(height, width, seed=0, *, fill=0.35):
    """Smooth random source and target images with a blob mask, for tests at any size.

    The source has a strong texture (so a naive paste shows a seam) and the target a
    different smooth colour field.

    Parameters
    ----------
    height, width : int
    seed : int
    fill : float
        Approximate fraction of the image covered by the mask.

    Returns
    -------
    source, target : ndarray of shape (height, width, 3), uint8
    mask : ndarray of shape (height, width), bool
    """
    h, w = check_positive_int(height, "height"), check_positive_int(width, "width")
    fill = check_float(fill, "fill", minimum=0, maximum=1, min_inclusive=False, max_inclusive=False)
    rng = np.random.default_rng(check_seed(seed))
    yy, xx = np.mgrid[0:h, 0:w] / max(h, w)

    def field(freq, base, amp, noise):
        phase = rng.uniform(0, 2 * np.pi, size=(3, 1, 1))
        f = base + amp * np.sin(2 * np.pi * freq * (xx + 0.7 * yy)[None] + phase)
        f = f + noise * rng.normal(size=f.shape)
        return np.ascontiguousarray(np.clip(np.moveaxis(f, 0, -1), 0, 254).astype(np.uint8))

    source = field(3.0, rng.uniform(60, 200, (3, 1, 1)), 50.0, 12.0)
    target = field(0.7, rng.uniform(40, 220, (3, 1, 1)), 30.0, 3.0)
    return source, target, blob_mask((h, w), seed, fill=fill)
