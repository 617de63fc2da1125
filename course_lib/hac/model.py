"""Models the lesson predicts with: the thesis's numbers, Amdahl's law, memory traffic per iteration."""

from __future__ import annotations

import numpy as np

from .._validate import check_array, check_choice, check_dtype, check_float, check_int

__all__ = ["GRID_SYNC_SECONDS", "PERSISTENT_RUN", "RAC_GRID_THREADS", "THESIS", "amdahl_limit", "amdahl_speedup",
           "bytes_per_iteration", "predict_rac", "stage_fractions"]

#: Figures of the thesis (Valenzuela, 2010): seconds per stage (its Cuadros 1 and 9) and totals.
THESIS = {
    "n_elements": 12_119,
    "n_entries": 705_352,
    "python_seconds": 1274.37,
    "c_seconds": 293.5,
    "cuda_seconds": 24.77,
    "gpu": "GeForce 9600GT (64 cores, compute capability 1.1)",
    "cores": 64,
    # Its scaling test (section 7.4): a GeForce 9800GTX, 128 cores by NVIDIA's specification (the thesis
    # writes 256 and "quadrupling", a slip: twice the 9600GT's 64), ran the same program in 19.85 s.
    "cuda_seconds_9800gtx": 19.85,
    "cores_9800gtx": 128,
    "cpu_stage_seconds": {"matching": 42.92, "suppression": 63.17, "weighting": 116.21, "collection": 70.24,
                          "integration": 0.10, "fusion": 0.15},
    "gpu_stage_seconds": {"matching": 12.76, "suppression": 1.84, "weighting": 2.50, "collection": 4.21,
                          "integration": 0.11, "fusion": 0.61},
    "kernel_fraction": 0.776,
    # 1 / (1 - 0.776): the most that faster kernels could speed up the CUDA run itself (24.77 s), which
    # already ran 11.85x faster than the C version.
    "amdahl_limit": 4.471,
    "max_relative_height_error_gpu": 0.015,
    "max_relative_height_error_float32": 1.5e-4,
    "parents_differing_gpu": 0.10,
}


def amdahl_speedup(fraction, speedup):
    """Amdahl's law: overall speedup when a ``fraction`` of the time runs ``speedup`` times faster.

    ``1 / ((1 - f) + f / s)``; works on arrays.
    """
    f = check_array(fraction, "fraction", dtype="fiu", finite=True, allow_empty=False).astype(np.float64)
    s = check_array(speedup, "speedup", dtype="fiu", finite=True, allow_empty=False).astype(np.float64)
    if np.any((f < 0) | (f > 1)):
        raise ValueError(f"fraction must be between 0 and 1, got {fraction!r}")
    if np.any(s <= 0):
        raise ValueError(f"speedup must be positive, got {speedup!r}")
    out = 1.0 / ((1.0 - f) + f / s)
    return float(out) if out.ndim == 0 else out


def amdahl_limit(fraction):
    """The largest overall speedup when only ``fraction`` of the time can be accelerated: 1 / (1 - f)."""
    f = check_float(fraction, "fraction", minimum=0, maximum=1)
    return float("inf") if f == 1 else 1.0 / (1.0 - f)


def stage_fractions(stage_seconds: dict) -> dict:
    """Each stage's share of the total time."""
    if not isinstance(stage_seconds, dict):
        raise ValueError(f"stage_seconds must be a dict of stage -> seconds, got {type(stage_seconds).__name__}")
    stage_seconds = {name: check_float(t, f"stage_seconds[{name!r}]", minimum=0) for name, t in stage_seconds.items()}
    total = float(sum(stage_seconds.values()))
    if total <= 0:
        raise ValueError("stage_seconds must contain some positive time")
    return {name: float(t) / total for name, t in stage_seconds.items()}


def bytes_per_iteration(n_entries, *, dtype=np.float32, layout="soa", fusion="segmented") -> dict:
    """Global memory bytes one iteration of the GPU loop reads over the M entries, per stage.

    Every full pass reads ``src`` and ``dst`` (8 bytes per entry); the argmax reads the
    weights (4 or 8 bytes) or, with structs, whole {value, index} structs (twice that).
    Entries that a stage writes (those of i, j and k) are few and not counted, nor are
    the fusion's own lists (k's entries only).

    Returns
    -------
    dict
        Bytes per stage and ``"total"``.
    """
    m = check_int(n_entries, "n_entries", minimum=0)
    value = check_dtype(dtype, "dtype").itemsize
    layout = check_choice(layout, "layout", ("soa", "aos"))
    fusion = check_choice(fusion, "fusion", ("segmented", "atomic", "cpu_sort"))
    read_weight = 2 * value if layout == "aos" else value
    out = {"matching": m * read_weight, "suppression": 8 * m, "weighting": 8 * m, "collection": 8 * m,
           "integration": 0, "fusion": 16 * m if fusion == "atomic" else 0}
    out["total"] = sum(out.values())
    return out


#: The run the per-entry cost of a grid-strided pass is read from: ``cluster(g)`` (``"gpu_persistent"``, float32)
#: on the planted graph at the thesis's size, NVIDIA H200, 2026-11-28, best of 3 (the GPU run recorded in the
#: course's ``gpu-runs`` notes, ``h200_2026-11-28_persistent-defaults.jsonl``, row ``hac_gpu_persistent``). Each of
#: its 12,118 merges is 3 grid syncs and 3 grid-strided passes over all 705,352 entries, on 256 blocks of 256 threads.
PERSISTENT_RUN = {"device": "NVIDIA H200", "date": "2026-11-28", "seconds": 0.2425, "merges": 12_118,
                  "entries": 705_352, "syncs_per_merge": 3, "passes_per_merge": 3, "threads": 256 * 256}
#: One grid-synced step of a cooperative kernel on an H200: a published figure (RRZE-HPC gpu-benches), not a
#: course measurement; the probe has not timed numba's grid sync apart yet.
GRID_SYNC_SECONDS = 1.26e-6
#: Threads of the ``"gpu_rac"`` launch on an H200: one block of 256 per SM (162 registers per thread at
#: block 256 in the compile check, sm_90: 65,536 / (162 x 256) < 2) on 132 SMs.
RAC_GRID_THREADS = 132 * 256
#: Entry passes per round of ``"gpu_rac"`` (stages A, B, D, E, F read every live entry) and the extra
#: entry-pass equivalents of an entry with an end in a merging cluster (one insertion, up to three look-ups).
RAC_PASSES_PER_ROUND = 5
RAC_EXTRA_PASSES_PER_TOUCHED = 4


def predict_rac(stats, n_elements, n_entries, *, dtype=np.float32, costs=None,
                grid_threads=RAC_GRID_THREADS) -> dict:
    """A prediction (not a measurement) of one ``cluster(g, "gpu_rac")`` on the GPU of the committed runs.

    Device time: one grid sync per round stage (:data:`GRID_SYNC_SECONDS`, published) plus the entry
    passes, each entry visit costing what one visit cost in the measured ``"gpu_persistent"`` run
    (:data:`PERSISTENT_RUN`: its seconds less its syncs, over its entry visits), scaled by the ratio
    of the two launches' threads (the passes wait on memory latency, so fewer threads in flight
    cost proportionally more). Host time: one launch, the allocations, the uploads and the
    download, at the committed host costs (:func:`course_lib.bench.costs.committed_costs`). The
    host's NumPy numbering of the merges (a sort of N - nC records) is not included.

    Parameters
    ----------
    stats : RoundStats
        The rounds of this graph (:func:`course_lib.hac.average_link_rounds` with ``stats=True``).
    n_elements, n_entries : int
        N and M of the graph.
    dtype : float32 or float64
        Of the affinities uploaded.
    costs : HostCosts, optional
        Default: :func:`course_lib.bench.costs.committed_costs`.
    grid_threads : int
        Threads of the launch (default: the H200's, :data:`RAC_GRID_THREADS`).

    Returns
    -------
    dict
        ``seconds`` (the predicted total), ``device_seconds``, ``sync_seconds``, ``pass_seconds``,
        ``host_seconds`` (None without committed host costs), ``rounds``, ``grid_syncs``,
        ``entry_visits``, ``seconds_per_entry_visit``, ``label`` and ``sources``.
    """
    from ..bench.costs import committed_costs
    from ._rac import GRID_SYNCS_PER_ROUND, RoundsClustering

    n = check_int(n_elements, "n_elements", minimum=1)
    m = check_int(n_entries, "n_entries", minimum=0)
    value = check_dtype(dtype, "dtype").itemsize
    threads = check_int(grid_threads, "grid_threads", minimum=1)
    costs = committed_costs() if costs is None else costs
    run = PERSISTENT_RUN
    visits_run = run["merges"] * run["passes_per_merge"] * run["entries"]
    per_visit = (run["seconds"] - run["merges"] * run["syncs_per_merge"] * GRID_SYNC_SECONDS) / visits_run
    per_visit *= run["threads"] / threads
    visits = (RAC_PASSES_PER_ROUND * int(stats.entries.sum()) + RAC_EXTRA_PASSES_PER_TOUCHED * int(stats.touched.sum())
              + 2 * m + 4 * n)  # + the initialisation: the hash table (2M slots), the per-slot arrays
    syncs = 1 + GRID_SYNCS_PER_ROUND * stats.rounds if m else 0
    sync_seconds = syncs * GRID_SYNC_SECONDS
    pass_seconds = visits * per_visit if m else 0.0
    host = None
    if m:
        merges = int(stats.merges.sum())
        copy_bytes = 8 * m + value * m + 7 * 8 * merges
        host = costs.modelled_host_seconds(RoundsClustering.LAUNCHES, RoundsClustering.UPLOADS
                                           + RoundsClustering.DOWNLOADS, copy_bytes, RoundsClustering.ALLOCATIONS)
    elif costs.launch_seconds is not None:
        host = 0.0
    device_seconds = sync_seconds + pass_seconds
    return {"seconds": None if host is None else device_seconds + host, "device_seconds": device_seconds,
            "sync_seconds": sync_seconds, "pass_seconds": pass_seconds, "host_seconds": host,
            "rounds": stats.rounds, "grid_syncs": syncs, "entry_visits": visits, "seconds_per_entry_visit": per_visit,
            "label": f"prediction for {costs.device or 'no committed GPU run'}, not a measurement: check it against "
                     "the probe's next run",
            "sources": {"seconds_per_entry_visit": f"gpu_persistent, {run['device']}, {run['date']}: "
                                                   f"{run['seconds']} s for {run['merges']} merges",
                        "grid_sync_seconds": "published H200 figure (RRZE-HPC gpu-benches)", **costs.sources}}
