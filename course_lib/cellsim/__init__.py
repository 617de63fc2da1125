"""Unit 7: stochastic simulation of cell proliferation on the GPU (``lessons/07_cellsim.ipynb``).

A labelled cell population divides: every division halves the fluorescent label
(phi / 2), division times are random per cell type, and the simulation stops at tau_max
or when a cell's daughters would fall below phi_min. The output is the histogram of the
fluorescence of the cells alive at tau_max. The unit teaches a GPU simulator for it:
the thesis's fixed-slot binary tree and why its memory grows as L * 2**level; level by
level simulation with stream compaction by prefix sum; counter-based random numbers
keyed by (cell id, generation), so a run is the same on any launch configuration and
backend; histograms built on the device in shared memory; batching under a memory
budget; and validation of a stochastic simulator by statistics.

Public entry points: :func:`simulate` (``method=`` picks the simulator), the input
classes :class:`InitialHistogram` and :class:`CellTypes` (text format and validation),
the data generators, the event-driven reference and the compiled CPU version.
Kernels live in :mod:`course_lib.cellsim.kernels`, memory models in
:mod:`course_lib.cellsim.model`, measurements in :mod:`course_lib.cellsim.profiling`,
the statistical comparison of runs (:func:`compare_runs`) in
:mod:`course_lib.cellsim.reference`; plots (:mod:`~course_lib.cellsim.plots`) and
widgets (:mod:`~course_lib.cellsim.widgets`) load on first use.
"""

from .._lazy import lazy_submodules
from ._core import FATE_RULE, THESIS_FATE_RULE
from ._inputs import MAX_TYPES, CellTypes, InitialHistogram
from ._result import SimulationResult, default_edges
from .api import DEVICE_METHODS, METHODS, default_block, default_memory_budget, prepare_problem, simulate
from . import _pooled_kernels  # noqa: F401 (registers the pooled method's kernels)
from .data import THESIS_TYPES, THESIS_TYPES_TEXT, lognormal_histogram, random_types, single_value_histogram
from .model import depth_bound, depth_estimate
from .quiz import QUIZ
from .reference import compare_runs, simulate_reference

__all__ = [
    "DEVICE_METHODS",
    "FATE_RULE",
    "MAX_TYPES",
    "METHODS",
    "QUIZ",
    "THESIS_FATE_RULE",
    "THESIS_TYPES",
    "THESIS_TYPES_TEXT",
    "CellTypes",
    "InitialHistogram",
    "SimulationResult",
    "compare_runs",
    "default_block",
    "default_edges",
    "default_memory_budget",
    "depth_bound",
    "depth_estimate",
    "lognormal_histogram",
    "prepare_problem",
    "random_types",
    "simulate",
    "simulate_reference",
    "single_value_histogram",
]

# Submodules that import matplotlib, ipywidgets or numba.cuda load on first access.
__getattr__, __dir__ = lazy_submodules(
    __name__, ("plots", "widgets", "kernels", "profiling", "model", "cpu", "bench", "questions"), globals())
