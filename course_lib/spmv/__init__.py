"""Unit 2: sparse matrix-vector multiply (``lessons/02_spmv.ipynb``).

Thread per row (CSR scalar), warp per row (CSR vector), thread per element (COO with
a segmented reduction, or atomics), ELL, and the hybrid of Bell & Garland (ELL for the
first K entries of each row, COO for the rest, K from the one-third rule).

Public entry points: :func:`spmv` (``method=`` picks the kernel), :func:`prepare` for
repeated products on the device, :func:`hyb_split` and :func:`bell_garland_k`, the
matrix generators, the float64 SciPy reference and the fast CPU version (:class:`CpuSpmv`,
:func:`spmv_cpu`). Kernels live
in :mod:`course_lib.spmv.kernels`, counting models in :mod:`course_lib.spmv.model` (checked
against the simulator's profiler by :mod:`course_lib.spmv.profiling`), plots in
:mod:`course_lib.spmv.plots`, the explorer widget in :mod:`course_lib.spmv.widgets`,
problem set 2 in :mod:`course_lib.spmv.questions`.
"""

from .api import (GPU_METHODS, METHODS, DeviceSpmv, HybMatrix, as_csr, choose_method, default_block, ell_split,
                  has_warp_shuffles, hyb_split, is_device_array, prepare, spmv)
from .cpu import PARALLEL_MIN_NNZ, CpuSpmv, spmv_cpu
from .data import (MATRICES, STENCILS, banded_fem, dense_block, empty_rows_and_long_row, laplacian, make_matrix,
                   power_law_rows, random_balanced, row_length_family)
from .model import (SPEED_RATIO, bell_garland_k, bytes_per_spmv, gflops_roofline, k_sweep, modelled_cost,
                    row_lengths, simt_efficiency)
from .._lazy import lazy_submodules
from . import kernels, profiling
from .quiz import QUIZ
from .reference import spmv_reference

__all__ = [
    "GPU_METHODS",
    "MATRICES",
    "METHODS",
    "PARALLEL_MIN_NNZ",
    "QUIZ",
    "SPEED_RATIO",
    "STENCILS",
    "CpuSpmv",
    "DeviceSpmv",
    "HybMatrix",
    "as_csr",
    "choose_method",
    "banded_fem",
    "bell_garland_k",
    "bytes_per_spmv",
    "default_block",
    "dense_block",
    "ell_split",
    "empty_rows_and_long_row",
    "gflops_roofline",
    "has_warp_shuffles",
    "hyb_split",
    "is_device_array",
    "k_sweep",
    "kernels",
    "laplacian",
    "make_matrix",
    "plots",
    "modelled_cost",
    "power_law_rows",
    "prepare",
    "profiling",
    "random_balanced",
    "row_length_family",
    "row_lengths",
    "simt_efficiency",
    "spmv",
    "spmv_cpu",
    "spmv_reference",
    "widgets",
]

__getattr__, __dir__ = lazy_submodules(__name__, ("plots", "widgets"), globals())
