"""Unit 4: seamless image cloning with double-buffered Jacobi iterations (``lessons/04_poisson.ipynb``).

Public entry points: :func:`seamless_clone` (``method=`` picks the kernel) and
:func:`clone_history`, the NumPy reference and the exact sparse solve, the fast CPU
versions (Jacobi iterations in Numba; :func:`direct_clone`, the exact solve on the mask's
box), the images and masks, and the two-tolerance image comparison. Kernels live in
:mod:`course_lib.poisson.kernels`, the traffic model in :mod:`course_lib.poisson.model`,
the profiler's measurements in :mod:`course_lib.poisson.profiling`, plots in
:mod:`course_lib.poisson.plots` and the widgets in :mod:`course_lib.poisson.widgets`
(both loaded on first use).
"""

from .._lazy import lazy_submodules
from . import kernels, profiling
from .api import (METHODS, CloneHistory, DeviceSolver, PersistentSolver, clone_history, default_block, default_fused, direct_clone,
                  naive_paste, seamless_clone, validate_inputs)
from .model import BYTES_PER_PIXEL_ITERATION, bandwidth_bound_seconds, bytes_per_iteration
from .cpu import jacobi_cpu, seamless_clone_cpu
from .quiz import QUIZ
from .data import (PHOTOS, blob_mask, cat_in_coffee, ellipse_mask, load_photo, nonwhite_mask, object_on_white,
                   polygon_mask, rectangle_mask, synthetic_pair)
from .reference import (BORDER, DEFAULT_MAX_FRACTION, DEFAULT_MAX_PIXEL_DIFF, INTERIOR, OUTSIDE, ImageComparison,
                        Prepared, assert_images_match, classify_mask, compare_images, compose, exact_solve,
                        jacobi_reference, jacobi_step_reference, neighbour_counts, opencv_clone, prepare, residual)

__all__ = [
    "BORDER",
    "BYTES_PER_PIXEL_ITERATION",
    "DEFAULT_MAX_FRACTION",
    "DEFAULT_MAX_PIXEL_DIFF",
    "INTERIOR",
    "METHODS",
    "OUTSIDE",
    "PHOTOS",
    "QUIZ",
    "CloneHistory",
    "DeviceSolver",
    "PersistentSolver",
    "ImageComparison",
    "Prepared",
    "assert_images_match",
    "bandwidth_bound_seconds",
    "blob_mask",
    "bytes_per_iteration",
    "cat_in_coffee",
    "classify_mask",
    "clone_history",
    "compare_images",
    "compose",
    "default_block",
    "default_fused",
    "direct_clone",
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

__getattr__, __dir__ = lazy_submodules(__name__, ("plots", "widgets"), globals())
