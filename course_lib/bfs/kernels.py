"""Reference CUDA kernels of Unit 3 (breadth-first search), taught in ``lessons/03_bfs.ipynb``.

Conventions shared by every kernel:

- a graph is a CSR adjacency structure: ``indptr`` (int32, shape (V + 1,)) and
  ``indices`` (int32, shape (E,)); the out-neighbours of ``u`` are
  ``indices[indptr[u]:indptr[u + 1]]``. The quadratic kernel reads an edge list
  ``edge_u``, ``edge_v`` (int32, shape (E,)) instead;
- ``depth`` (int32, shape (V,)) holds the number of hops from the source, ``UNVISITED``
  (-1) for vertices not reached yet; ``parent`` (int32, shape (V,)) the vertex a
  vertex was discovered from (the source is its own parent);
- the kernels do only the search: what a search cost (edges examined, depths written)
  is counted on the host from what it produced (:mod:`course_lib.bfs.model`) and
  measured on these kernels by the simulator's profiler
  (:mod:`course_lib.bfs.profiling`), never by counters inside them.

The sequence of the lesson: :func:`bfs_init_kernel` and :func:`bfs_edge_quadratic_kernel`
(the edge-parallel "try #1", O(V * E) work), then the frontier kernels (O(V + E) work):
:func:`bfs_frontier_atomic_kernel` builds the next frontier with atomics, and the scan
pipeline (:func:`frontier_degree_kernel`, :func:`expand_frontier_kernel`,
:func:`claim_candidates_kernel`, :func:`block_exclusive_scan_kernel`,
:func:`add_block_offsets_kernel`, :func:`compact_kernel`) builds it with a stream
compaction and no atomics on the frontier. Direction-optimising BFS adds the bottom-up
step :func:`bfs_bottom_up_kernel` and :func:`level_flags_kernel`.

The search the library ships (``"frontier_twc"``, ``"direction_optimizing_twc"``):
:func:`bfs_bitmap_init_kernel`, then per level one launch of :func:`bfs_twc_kernel`
(top-down, lists shared out by degree: block, warp or scan gathering) or
:func:`bfs_bottom_up_bitmap_kernel` (bottom-up on the frontier bitmap), on a workspace
allocated once per graph.

The kernels live in one module per strategy: :mod:`course_lib.bfs._kernels_edge` (edge-parallel),
:mod:`course_lib.bfs._kernels_frontier` (frontier with atomics or a scan, and the lesson's bottom-up step)
and :mod:`course_lib.bfs._kernels_bitmap` (the bitmap search); this module gathers them.
"""

from . import _kernels_bitmap, _kernels_edge, _kernels_frontier
from ._kernels_bitmap import (FULL_MASK, TWC_BLOCK, WARP, bfs_bitmap_init_kernel, bfs_bottom_up_bitmap_kernel,
                              bfs_twc_kernel)
from ._kernels_common import LESSON, UNVISITED
from ._kernels_edge import bfs_edge_quadratic_kernel, bfs_init_kernel
from ._kernels_frontier import (add_block_offsets_kernel, bfs_bottom_up_kernel, bfs_frontier_atomic_kernel,
                                block_exclusive_scan_kernel, claim_candidates_kernel, compact_kernel,
                                expand_frontier_kernel, frontier_degree_kernel, level_flags_kernel)

# Every strategy module's kernels (the bitmap search's constants stay in its own module's list).
__all__ = ["UNVISITED", *sorted(name for module in (_kernels_bitmap, _kernels_edge, _kernels_frontier)
                                for name in module.__all__ if name.endswith("_kernel"))]
