"""Unit 3: breadth-first search on the GPU (``lessons/03_bfs.ipynb``).

From the source's edge-parallel "try #1" (one thread per edge every iteration,
O(V * E) work) to linear-work frontier BFS (the next frontier built with atomics or
with a scan-based stream compaction). Public entry points: :func:`bfs` (``method=``
picks the variant) and :func:`traverse` (the same search with its work per level,
counted on the host by :mod:`course_lib.bfs.model`); references and the parent-tree
validator in :mod:`course_lib.bfs.reference`; graph generators and NetworkX's small
real graphs in :mod:`course_lib.bfs.data`. Kernels live in :mod:`course_lib.bfs.kernels`
(they do only the search), plots in :mod:`course_lib.bfs.plots`, the level-stepping
explorer in :mod:`course_lib.bfs.widgets`, replaying levels under the simulator's
profiler (which measures the work on the kernels themselves) in
:mod:`course_lib.bfs.profiling`, the problem set's questions in
:mod:`course_lib.bfs.questions`.
"""

from .._lazy import lazy_submodules
from . import kernels, profiling
from .api import BITMAP_METHODS, METHODS, BFSRun, DeviceGraph, bfs, default_block, exclusive_scan, traverse
from .cpu import bfs_cpu, bfs_cpu_parallel
from .data import __all__ as _data_names
from .data import (
    REAL_GRAPHS,
    Graph,
    as_graph,
    chain,
    disconnected,
    from_edges,
    grid_2d,
    kronecker,
    random_graph,
    real_graph,
    star,
    with_self_loops_and_duplicates,
)
from .model import level_warp_efficiency, warp_efficiency
from .quiz import QUIZ
from .reference import bfs_reference, bfs_scipy, check_parent_tree, parent_tree_problems

# The graphs and generators are listed once, in data.__all__ (check_source is the unit's own validator).
__all__ = [
    "BITMAP_METHODS",
    "METHODS",
    "QUIZ",
    "BFSRun",
    "DeviceGraph",
    "bfs",
    "bfs_cpu",
    "default_block",
    "bfs_cpu_parallel",
    "bfs_reference",
    "bfs_scipy",
    "check_parent_tree",
    "exclusive_scan",
    "traverse",
    "parent_tree_problems",
    "level_warp_efficiency",
    "warp_efficiency",
    *(name for name in _data_names if name != "check_source"),
]

__getattr__, __dir__ = lazy_submodules(__name__, ("plots", "widgets"), globals())
