"""Unit 8: spatial co-location pattern mining on the GPU (``lessons/08_colocation.ipynb``).

Which event types (features) appear together in space? The grid-based algorithm (preprocessing
into a grid of cell side r, a filter that bounds the participation index from cell counts, a
refine step that builds instance tables) is memory-bound: the unit teaches measuring before
optimising, with transfers, launches, allocations and bytes counted by
:func:`course_lib.sim.record`. Public entry point: :func:`mine` (``method=`` and the options of
:data:`VERSIONS`); the reference (SciPy k-d tree) in :mod:`~course_lib.colocation.reference`,
the compiled CPU miner in :mod:`~course_lib.colocation.cpu`, kernels in
:mod:`~course_lib.colocation.kernels`, the grid and the filter's bound in
:mod:`~course_lib.colocation.model`, measurements in :mod:`~course_lib.colocation.profiling`.
Plots (:mod:`~course_lib.colocation.plots`), the explorer
(:mod:`~course_lib.colocation.widgets`) and problem set 8 (:mod:`~course_lib.colocation.questions`)
load on first use.
"""

from .._lazy import lazy_submodules
# _fused_kernels and _per_level register their kernels beside the lesson's.
from . import _fused_kernels, _per_level, kernels, profiling  # noqa: F401
from .api import HOST_MEMORY, METHODS, VERSIONS, LevelStats, MiningResult, check_inputs, default_block, mine
from .cpu import mine_cpu
from .data import SpatialData, planted_colocations, uniform_features
from .model import Grid, count_map, filter_launches, grid_for, pi_upper_bound, qualifying_cells
from .quiz import QUIZ
from .reference import (
    apriori_candidates,
    instance_table_reference,
    mine_reference,
    neighbour_pairs_reference,
    participation_index_reference,
)

__all__ = [
    "HOST_MEMORY",
    "METHODS",
    "QUIZ",
    "VERSIONS",
    "Grid",
    "LevelStats",
    "MiningResult",
    "SpatialData",
    "apriori_candidates",
    "check_inputs",
    "count_map",
    "default_block",
    "filter_launches",
    "grid_for",
    "instance_table_reference",
    "mine",
    "mine_cpu",
    "mine_reference",
    "neighbour_pairs_reference",
    "participation_index_reference",
    "pi_upper_bound",
    "planted_colocations",
    "qualifying_cells",
    "uniform_features",
]

# Plots and widgets pull in matplotlib and ipywidgets; the problem set and the benchmark are
# only needed by their own commands: all load on first access.
__getattr__, __dir__ = lazy_submodules(__name__, ("plots", "widgets", "questions", "bench"), globals())
