"""Public entry point of Unit 5: :func:`cluster`."""

from __future__ import annotations

import numpy as np

from .. import device
from .._validate import check_block, check_choice, check_dtype, check_int
from ._dendrogram import Dendrogram
from ._device import FUSIONS, LAYOUTS, DeviceClustering
from ._graph import as_graph
from ._persistent import PersistentClustering
from ._rac import RoundsClustering
from . import cpu, reference
from .reference import compare_dendrograms, scipy_average_linkage

__all__ = ["FUSIONS", "GPU_METHODS", "LAYOUTS", "METHODS", "ONE_KERNEL_METHODS", "PersistentClustering",
           "RoundsClustering", "cluster", "default_block", "precision_study"]

#: ``"gpu_persistent"`` (the default): the whole merge loop in one cooperative kernel, grid
#: barriers between its stages (no launch, no copy per merge); ``"gpu_rac"``: every reciprocal
#: nearest-neighbour pair of a round merged at once, all the rounds in one cooperative kernel, the
#: edge list compacted every round (:mod:`course_lib.hac._rac`: the same merges in a few dozen
#: rounds instead of N - nC iterations); ``"gpu"``: the lesson's kernels, a device-resident loop
#: driven by the host (8 launches per merge); ``"gpu_roundtrip"``: the kernels with the thesis's
#: host round trip every iteration; ``"cpu"``: compiled, heap-based (the strong baseline);
#: ``"cpu_scan"``: compiled, the thesis's full scans; ``"reference"``: NumPy; ``"scipy"``: SciPy's
#: UPGMA on D = c - S per component.
#:
#: The default GPU method is the one a GPU run measured fastest. ``"gpu_rac"`` has not run on a
#: GPU yet (the unit's model only predicts its time, :func:`~course_lib.hac.model.predict_rac`),
#: so ``"gpu_persistent"`` stays the default until the probe measures both.
METHODS = ("gpu_persistent", "gpu_rac", "gpu", "gpu_roundtrip", "cpu", "cpu_scan", "reference", "scipy")
GPU_METHODS = METHODS[:4]
#: The GPU methods that run every merge in one launch (no stage to time, no fusion or layout to pick).
ONE_KERNEL_METHODS = ("gpu_persistent", "gpu_rac")
#: The methods whose loop is driven by the host, one stage at a time (fusion, layout, stage timing).
STAGED_METHODS = ("gpu", "gpu_roundtrip")


def default_block() -> int:
    """Threads per block of the unit's kernels: 256 on a GPU, 32 in the simulator."""
    return device.pick(sim=32, gpu=256)


def _dtype(dtype, method):
    if dtype is None:
        return np.dtype(np.float32 if method in GPU_METHODS else np.float64)
    dtype = check_dtype(dtype, "dtype")
    if method == "scipy" and dtype != np.float64:
        raise ValueError("dtype must be float64 (or None) for method 'scipy', which works in float64")
    return dtype


def cluster(graph, method="gpu_persistent", *, dtype=None, fusion=None, layout="soa", block=None, measure_stages=False,
            max_merges=None) -> Dendrogram:
    """Average-linkage hierarchical clustering of a sparse affinity graph (the thesis's algorithm).

    Parameters
    ----------
    graph : scipy.sparse matrix of shape (N, N), tuple (src, dst, weight), or AffinityGraph
        Symmetric, non-negative, finite affinities; no self-loops (see
        :func:`~course_lib.hac.as_graph`). A missing pair has affinity 0, and clusters
        in different connected components are never merged.
    method : {"gpu_persistent", "gpu_rac", "gpu", "gpu_roundtrip", "cpu", "cpu_scan", "reference", "scipy"}
        See :data:`METHODS`. ``"gpu_rac"`` makes the sequential algorithm's merges in rounds; ties
        (equal affinities) go to the pair of smaller slots (a cluster's smallest element), not to
        the lowest entry index, so on exact ties its tree may differ from the other methods'.
    dtype : float32 or float64, optional
        Precision of the affinities during the run. Default: float32 for the GPU
        methods (the thesis's choice), float64 otherwise; ``"scipy"`` is float64 only.
    fusion : {"segmented", "atomic", "cpu_sort"}, optional
        ``"gpu"`` and ``"gpu_roundtrip"`` only (``"gpu_persistent"`` sums with atomics, ``"gpu_rac"``
        in a hash table): how k's
        duplicate entries are summed. Default ``"segmented"``
        (``"gpu"``) or ``"cpu_sort"`` (``"gpu_roundtrip"``, the thesis's); ``"cpu_sort"``
        needs the host, so only ``"gpu_roundtrip"`` takes it.
    layout : {"soa", "aos"}
        ``"gpu"`` and ``"gpu_roundtrip"`` only: weights in their own array, or in {value, index} structs.
    block : int, optional
        GPU methods only: threads per block, a power of two (default :func:`default_block`).
    measure_stages : bool
        ``"gpu"`` and ``"gpu_roundtrip"`` only: time each stage (CUDA events on a GPU; the wall clock in the
        simulator) into ``Dendrogram.stage_seconds``. The reference always measures.
    max_merges : int, optional
        GPU methods but ``"gpu_rac"`` (whose merges are not made in order), and ``"reference"``:
        stop after this many merges (to time part of a large run); the tree is then incomplete.

    Returns
    -------
    Dendrogram
        ``parent`` and ``height`` of length 2N - nC; merge q creates cluster N + q.
        ``.linkage()`` gives SciPy's Z, ``.labels(n_clusters=...)`` flat clusters.

    Raises
    ------
    ValueError
        A graph that is empty, not symmetric, has negative, NaN or infinite
        affinities, self-loops, repeated entries or indices out of range; an unknown
        method, fusion or layout; options the method does not take.

    Examples
    --------
    >>> from course_lib.hac import cluster, path_graph
    >>> cluster(path_graph(4), method="cpu").parent.tolist()
    [4, 4, 5, 6, 5, 6, 6]
    """
    method = check_choice(method, "method", METHODS)
    g = as_graph(graph)
    dtype = _dtype(dtype, method)
    if max_merges is not None:
        max_merges = check_int(max_merges, "max_merges", minimum=0)
        if method not in GPU_METHODS + ("reference",) or method == "gpu_rac":
            raise ValueError(f"max_merges applies to the GPU methods (but 'gpu_rac', which merges in rounds, not in "
                             f"order) and 'reference', not {method!r}")
    if method not in GPU_METHODS:
        if fusion is not None or layout != "soa" or block is not None or measure_stages:
            raise ValueError(f"fusion, layout, block and measure_stages apply to the GPU methods {GPU_METHODS}, "
                             f"not {method!r}")
        if method == "cpu":
            return cpu._average_link(g, dtype, "auto")
        if method == "cpu_scan":
            return cpu._scan_checked(g, dtype)
        if method == "reference":
            return reference._reference_checked(g, dtype, max_merges)
        return scipy_average_linkage(g)
    if method in ONE_KERNEL_METHODS:
        if fusion is not None or layout != "soa" or measure_stages:
            raise ValueError("fusion, layout and measure_stages apply to the host-driven GPU methods "
                             f"{STAGED_METHODS}, not {method!r} (one kernel)")
        block = check_block(default_block() if block is None else block, "block")
        if block & (block - 1):
            raise ValueError(f"block must be a power of two (the reductions halve it), got {block}")
        if method == "gpu_rac":
            return RoundsClustering(g, dtype, block).run()
        return PersistentClustering(g, dtype, block).run(max_merges=max_merges)
    resident = method == "gpu"
    fusion = check_choice(fusion if fusion is not None else ("segmented" if resident else "cpu_sort"), "fusion",
                          FUSIONS)
    if resident and fusion == "cpu_sort":
        raise ValueError("fusion 'cpu_sort' sorts on the host every iteration: use method 'gpu_roundtrip' "
                         "(or fusion 'segmented' or 'atomic' to stay on the device)")
    layout = check_choice(layout, "layout", LAYOUTS)
    block = check_block(default_block() if block is None else block, "block")
    if block & (block - 1):
        raise ValueError(f"block must be a power of two (the reductions halve it), got {block}")
    return DeviceClustering(g, dtype, fusion, layout, block, resident).run(measure_stages=measure_stages,
                                                                           max_merges=max_merges)


def precision_study(graph, method="cpu", cuts=(2, 4, 8, 16, 32)) -> dict:
    """The thesis's study: the same clustering in float32 and in float64.

    Parameters
    ----------
    graph : graph accepted by :func:`~course_lib.hac.as_graph`
    method : str
        A method of :func:`~course_lib.hac.cluster` that takes a dtype (not ``"scipy"``).
    cuts : sequence of int

    Returns
    -------
    dict
        The :func:`~course_lib.hac.reference.compare_dendrograms` of float32 against float64, plus
        ``relative_error`` (array, merge by merge), ``top_relative_error`` (largest over
        the last 10% of the merges, the top of the tree) and ``bottom_relative_error``
        (over the first 90%), and both trees (``float32``, ``float64``).
    """
    if isinstance(method, str) and method == "scipy":
        raise ValueError("method must take a dtype: 'scipy' works in float64 only")
    method = check_choice(method, "method", tuple(m for m in METHODS if m != "scipy"))
    g = as_graph(graph)  # checked once for both runs
    t64 = cluster(g, method, dtype=np.float64)
    t32 = cluster(g, method, dtype=np.float32)
    out = compare_dendrograms(t32, t64, cuts)
    h32, h64 = t32.merge_heights.astype(np.float64), t64.merge_heights
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(h32 == h64, 0.0, np.abs(h32 - h64) / np.abs(h64))
    top = max(1, rel.size // 10) if rel.size else 0
    out.update(relative_error=rel, float32=t32, float64=t64,
               top_relative_error=float(rel[-top:].max()) if top else 0.0,
               bottom_relative_error=float(rel[:-top].max()) if rel.size > top else 0.0)
    return out
