"""Unit 4: seamless image cloning with double-buffered Jacobi iterations (``lessons/04_poisson.ipynb``).

Public entry points: :func:`seamless_clone` (``method=`` picks the kernel) and
:func:`clone_history`, the NumPy reference and the exact sparse solve, the fast CPU
version, the images and masks, and the two-tolerance image comparison. Kernels live in
:mod:`course_lib.poisson.kernels`, plots in :mod:`course_lib.poisson.plots`, the
widgets in :mod:`course_lib.poisson.widgets`.
"""

from . import kernels, plots, widgets
from .api import METHODS, CloneHistory, clone_history, default_fused, naive_paste, seamless_clone, validate_inputs
from .compare import (DEFAULT_MAX_FRACTION, DEFAULT_MAX_PIXEL_DIFF, ImageComparison, assert_images_match,
                      compare_images)
from .cpu import jacobi_cpu, seamless_clone_cpu
from .quiz import QUIZ
from .data import (PHOTOS, blob_mask, cat_in_coffee, ellipse_mask, load_photo, nonwhite_mask, object_on_white,
                   polygon_mask, rectangle_mask, synthetic_pair)
from .reference import (BORDER, INTERIOR, OUTSIDE, Prepared, classify_mask, compose, exact_solve, jacobi_reference,
                        jacobi_step_reference, neighbour_counts, opencv_clone, prepare, residual)

__all__ = [
    "BORDER",
    "DEFAULT_MAX_FRACTION",
    "DEFAULT_MAX_PIXEL_DIFF",
    "INTERIOR",
    "METHODS",
    "OUTSIDE",
    "PHOTOS",
    "QUIZ",
    "CloneHistory",
    "ImageComparison",
    "Prepared",
    "assert_images_match",
    "blob_mask",
    "cat_in_coffee",
    "classify_mask",
    "clone_history",
    "compare_images",
    "compose",
    "default_fused",
    "ellipse_mask",
    "exact_solve",
    "jacobi_cpu",
    "jacobi_reference",
    "jacobi_step_reference",
    "load_photo",
    "naive_paste",
    "neighbour_counts",
    "nonwhite_mask",
    "object_on_white",
    "opencv_clone",
    "polygon_mask",
    "prepare",
    "rectangle_mask",
    "residual",
    "seamless_clone",
    "seamless_clone_cpu",
    "synthetic_pair",
    "validate_inputs",
]
