"""Measuring the unit's kernels with the simulator's tools: :func:`course_lib.sim.profile` and ``record``.

* :func:`argmax_profile`: the first argmax pass over M weights in either layout under
  the profiler: global sectors per request of the loads (coalescing).
* :func:`transfer_log`: a few iterations of a GPU method under ``record()``: copies and
  launches per iteration, the device-resident loop against the host round trip.
* :func:`stage_times`: seconds per stage of a GPU method (CUDA events on a GPU; in the
  simulator the wall clock, which says nothing about a GPU) or of the NumPy reference.
"""

from __future__ import annotations

import numpy as np

from .api import cluster, default_block

__all__ = ["argmax_launch", "argmax_profile", "per_iteration", "stage_times", "transfer_log"]


def argmax_launch(weights, layout="soa", block=None):
    """The first argmax pass over ``weights`` in one layout: ``(kernel, griddim, blockdim, args)``.

    Parameters
    ----------
    weights : ndarray of shape (M,), float32 or float64
    layout : {"soa", "aos"}
        ``"aos"`` packs each weight with its index in an 8-byte (or 16-byte) struct; its
        arguments are then device arrays (two views of one buffer).
    block : int, optional
        Threads per block, a power of two (default :func:`default_block`).
    """
    from . import kernels

    w = np.ascontiguousarray(weights)
    if w.ndim != 1 or w.dtype not in (np.float32, np.float64):
        raise ValueError(f"weights must be a 1-D float32 or float64 array, got shape {w.shape} dtype {w.dtype}")
    block = default_block() if block is None else block
    grid = max(1, -(-w.size // block))
    if layout == "soa":
        return kernels.argmax_soa_kernel(block), grid, block, (w, np.zeros(grid, w.dtype), np.zeros(grid, np.int32))
    if layout != "aos":
        raise ValueError(f"layout must be one of ('soa', 'aos'), got {layout!r}")
    from numba import cuda

    index_type = np.int32 if w.dtype == np.float32 else np.int64
    structs = np.zeros((w.size, 2), w.dtype)
    structs[:, 0] = w
    structs.view(index_type)[:, 1] = np.arange(w.size)
    # Device arrays: the value view and the index view must share one buffer (two NumPy
    # views passed to a launch would be copied to the device separately).
    d_structs = cuda.to_device(structs)
    d_out = cuda.to_device(np.zeros((grid, 2), w.dtype))
    return kernels.argmax_aos_kernel(block), grid, block, (d_structs, d_structs.view(index_type), d_out,
                                                            d_out.view(index_type))


def argmax_profile(weights, layout="soa", block=None):
    """Profile the first argmax pass (:func:`argmax_launch`) with :func:`course_lib.sim.profile`.

    Returns
    -------
    course_lib.sim.ProfileReport
        ``.total.global_load_sectors``, ``.total.load_sectors_per_request``, per line.
    """
    from ..sim import profile

    kernel, grid, threads, args = argmax_launch(weights, layout, block)
    return profile(kernel, grid, threads, *args)


def transfer_log(graph, method="gpu", n_merges=2, **options):
    """Run ``n_merges`` iterations of a GPU method under :func:`course_lib.sim.record`.

    Parameters
    ----------
    graph : graph accepted by :func:`~course_lib.hac.as_graph`
    method : {"gpu", "gpu_roundtrip"}
    n_merges : int
    **options
        ``fusion``, ``layout``, ``block``, ``dtype`` for :func:`~course_lib.hac.cluster`.

    Returns
    -------
    course_lib.sim.Record
        Everything: the initial uploads, the iterations, the final copies.
    """
    from ..sim import record

    if method not in ("gpu", "gpu_roundtrip"):
        raise ValueError(f"method must be 'gpu' or 'gpu_roundtrip', got {method!r}")
    with record() as log:
        cluster(graph, method, max_merges=n_merges, **options)
    return log


def per_iteration(graph, method="gpu", **options) -> dict:
    """Copies, bytes and launches that one more iteration adds (the difference of 2 and 1 merges).

    Returns
    -------
    dict
        ``HtoD_count``, ``HtoD_bytes``, ``DtoH_count``, ``DtoH_bytes``, ``launches``.
    """
    one = transfer_log(graph, method, 1, **options).summary()
    two = transfer_log(graph, method, 2, **options).summary()
    return {key: two[key] - one[key] for key in one}


def stage_times(graph, method="gpu", **options) -> dict:
    """Seconds per stage of a run.

    ``method="reference"`` times the NumPy reference (a CPU profile like the thesis's
    Cuadro 1); a GPU method times each stage (CUDA events on a GPU, the wall clock of
    the simulator otherwise).
    """
    if method == "reference":
        return cluster(graph, "reference", **options).stage_seconds
    return cluster(graph, method, measure_stages=True, **options).stage_seconds
