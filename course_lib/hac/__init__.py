"""Unit 5: hierarchical agglomerative clustering, average linkage, of white-matter fiber tracts.

Taught in ``lessons/05_hac.ipynb``. The thesis's sparse algorithm (Valenzuela, 2010,
after nipy's ``average_link_graph``) merges, N - nC times, the pair of clusters with
the largest affinity: matching (argmax), suppression, weighting by populations, then
collection / integration / fusion of the new cluster's duplicate entries. The unit
ports it to the GPU stage by stage: the argmax in array-of-structs and struct-of-arrays
layouts (coalescing), the weighting/relabel kernel, the fusion's scatter-add race
solved three ways (CPU sort, atomics, a segmented reduction), and a loop that keeps
everything on the device against one that round-trips to the host every iteration, and
(:func:`average_link_rounds`, ``method="gpu_rac"``) the merges made in rounds of
reciprocal nearest neighbours, which average linkage allows.

Public entry point: :func:`cluster` (``method=`` picks the version). Input
:func:`as_graph`; output :class:`Dendrogram` (``parent``, ``height``, SciPy's linkage
matrix). References in :mod:`course_lib.hac.reference`, the compiled CPU versions in
:mod:`course_lib.hac.cpu`, data (awkward graphs, a planted generator up to the
thesis's size, real fibers from DIPY) in :mod:`course_lib.hac.data`, comparisons of
dendrograms and the precision study also in :mod:`course_lib.hac.reference`, models (Amdahl,
traffic) in :mod:`course_lib.hac.model`, measurements with the simulator's profiler and
recorder in :mod:`course_lib.hac.profiling`. :mod:`course_lib.hac.plots` and
:mod:`course_lib.hac.widgets` load on first use.
"""

from .._lazy import lazy_submodules
from . import kernels
from ._dendrogram import Dendrogram, to_linkage
from ._graph import AffinityGraph, as_graph, from_pairs
from .api import FUSIONS, GPU_METHODS, LAYOUTS, METHODS, cluster, default_block, precision_study
from .cpu import average_link_cpu, average_link_scan
from .data import (BUNDLE_NAMES, THESIS_M, THESIS_N, FiberGraph, Fibers, complete_graph, components_graph,
                   fiber_bundles, fiber_graph, kmeans, load_fibers, path_graph, planted_graph, random_graph,
                   star_graph, thesis_size_graph, tied_graph)
from .model import THESIS, amdahl_speedup, amdahl_limit, bytes_per_iteration, stage_fractions
from .quiz import QUIZ
from ._rounds import average_link_rounds
from .reference import (STAGES, adjusted_rand_index, average_link_reference, compare_dendrograms,
                        cophenetic_correlation, scipy_average_linkage)

__all__ = [
    "BUNDLE_NAMES",
    "FUSIONS",
    "GPU_METHODS",
    "LAYOUTS",
    "METHODS",
    "QUIZ",
    "STAGES",
    "THESIS",
    "THESIS_M",
    "THESIS_N",
    "AffinityGraph",
    "Dendrogram",
    "FiberGraph",
    "Fibers",
    "adjusted_rand_index",
    "amdahl_limit",
    "amdahl_speedup",
    "as_graph",
    "average_link_cpu",
    "average_link_reference",
    "average_link_rounds",
    "average_link_scan",
    "bytes_per_iteration",
    "cluster",
    "compare_dendrograms",
    "complete_graph",
    "components_graph",
    "cophenetic_correlation",
    "default_block",
    "fiber_bundles",
    "fiber_graph",
    "from_pairs",
    "kmeans",
    "load_fibers",
    "path_graph",
    "planted_graph",
    "precision_study",
    "random_graph",
    "scipy_average_linkage",
    "stage_fractions",
    "star_graph",
    "thesis_size_graph",
    "tied_graph",
    "to_linkage",
]

# plots and widgets import matplotlib / ipywidgets, profiling the simulator's tools: loaded on first use.
__getattr__, __dir__ = lazy_submodules(__name__, ("plots", "widgets", "profiling"), globals())
