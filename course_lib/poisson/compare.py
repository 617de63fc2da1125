"""The classic two-tolerance image comparison used to check and grade results.

Two 8-bit images "match" when no pixel differs by more than ``max_pixel_diff`` (in any
channel) and at most a fraction ``max_fraction`` of the pixels differ at all. Exact
equality is the special case ``max_pixel_diff=0``. The tolerances exist because a GPU may
sum in another order or contract operations: a float32 iterate then truncates to the
next integer down on a few pixels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["DEFAULT_MAX_FRACTION", "DEFAULT_MAX_PIXEL_DIFF", "ImageComparison", "assert_images_match",
           "compare_images"]

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


def _as_image(a, name):
    a = np.asarray(a)
    if a.dtype != np.uint8:
        raise ValueError(f"{name} must be a uint8 image, got dtype {a.dtype}")
    if a.ndim not in (2, 3):
        raise ValueError(f"{name} must have shape (H, W) or (H, W, C), got {a.shape}")
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
    actual = _as_image(actual, "actual")
    expected = _as_image(expected, "expected")
    if actual.shape != expected.shape:
        raise ValueError(f"images have different shapes: actual {actual.shape}, expected {expected.shape}")
    if max_pixel_diff < 0 or not 0 <= max_fraction <= 1:
        raise ValueError(f"tolerances out of range: max_pixel_diff={max_pixel_diff} must be >= 0 and "
                         f"max_fraction={max_fraction} in [0, 1]")
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
