"""Measuring the GPU pipeline: transfers, bytes and launches of each version with ``record()``.

Everything here runs the real kernels (in the simulator or on a GPU) under
:func:`course_lib.sim.record`, which logs every host<->device copy and every launch.
Counts and bytes are the same on both backends; times are only meaningful on a GPU.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from .api import VERSIONS, mine

__all__ = ["FILTER_KERNELS", "PHASES", "REFINE_KERNELS", "kernel_launches", "measure_features", "measure_versions",
           "phase_breakdown", "phase_traffic", "table_bytes_per_level"]

#: The phases of the GPU miner, in order (the rows of the source's Table 5.1).
PHASES = ("preprocess", "filter", "refine")

#: The kernels of the filter step and of the refine step (one launch each per level when batched).
FILTER_KERNELS = ("quadruplet_filter_kernel", "candidate_bound_kernel")
REFINE_KERNELS = ("extend_count_kernel", "extend_fill_kernel", "participation_kernel")


def kernel_launches(log) -> Counter:
    """Launches per kernel name in a :class:`~course_lib.sim.Record`."""
    return Counter(launch.kernel for launch in log.launches)


def measure_versions(points, features, r, threshold, *, versions=None, **options):
    """Run :func:`mine` once per version under ``record()``.

    Parameters
    ----------
    points, features, r, threshold
        As for :func:`~course_lib.colocation.mine`.
    versions : dict, optional
        Name -> keyword arguments (default :data:`~course_lib.colocation.VERSIONS`).
    **options
        Passed to every run (e.g. ``block=``).

    Returns
    -------
    list of dict
        Per version: ``version``, ``launches``, ``filter_launches``, ``refine_launches``, ``HtoD_count``,
        ``HtoD_bytes``, ``DtoH_count``, ``DtoH_bytes``, ``patterns`` (the prevalent patterns found),
        ``levels``, and the miner's ``uploads``, ``pinned_allocations`` and ``pinned_bytes``.
    """
    from ..sim import record

    rows = []
    for name, kwargs in (VERSIONS if versions is None else versions).items():
        with record() as log:
            result = mine(points, features, r, threshold, method="gpu", **kwargs, **options)
        per_kernel = kernel_launches(log)
        rows.append(dict(version=name, **log.summary(),
                         filter_launches=sum(per_kernel[k] for k in FILTER_KERNELS),
                         refine_launches=sum(per_kernel[k] for k in REFINE_KERNELS),
                         patterns=result.patterns, levels=result.levels, **result.stats))
    return rows


def phase_traffic(points, features, r, threshold, *, n_features=None, max_size=None, **version):
    """What crosses the bus in each phase of one GPU run: the source's Table 5.1, measured.

    Parameters
    ----------
    points, features, r, threshold, n_features, max_size
        As for :func:`~course_lib.colocation.mine`.
    **version
        Keyword arguments of one version (``preprocess``, ``batched``, ``host_memory``, ``block``) and the
        options of :func:`~course_lib.colocation.mine` that change the copies and launches (``filter``,
        ``search``, ``copies``); default: the batched, device-preprocessing, pageable version, as ``mine``
        runs it.

    Returns
    -------
    dict
        ``{phase: {"HtoD_count", "HtoD_bytes", "DtoH_count", "DtoH_bytes", "DtoD_count", "DtoD_bytes",
        "launches", "runs"}}`` for each phase of :data:`PHASES` (``runs``: how many times the phase
        ran, e.g. once per level for the filter), and ``"result"``: the :class:`MiningResult`.
    """
    from .._validate import check_choice
    from .api import COPIES, FILTERS, SEARCHES, _DeviceMiner, check_inputs, default_block
    from .model import grid_for

    points, features, r, threshold, n_features, max_size = check_inputs(points, features, r, threshold,
                                                                        n_features, max_size)
    options = dict(preprocess="device", batched=True, host_memory="pageable", block=default_block(),
                   filter="two_step", search="twice", copies="per_phase")
    unknown = set(version) - set(options)
    if unknown:
        raise ValueError(f"phase_traffic takes the options {sorted(options)}, got {sorted(unknown)}")
    options.update(version)
    for name, choices in (("filter", FILTERS), ("search", SEARCHES), ("copies", COPIES)):
        check_choice(options[name], name, choices)
    if options["copies"] == "per_level" and not options["batched"]:
        raise ValueError("copies='per_level' needs batched=True")
    if len(features) == 0:
        raise ValueError("phase_traffic needs at least one instance")
    miner = _DeviceMiner(points, features, r, n_features, grid_for(points, r, n_features), **options)
    miner.phase_logs = {}
    result = miner.run(threshold, max_size)
    out = {}
    for phase in PHASES:
        logs = miner.phase_logs.get(phase, [])
        row = dict.fromkeys(("HtoD_count", "HtoD_bytes", "DtoH_count", "DtoH_bytes", "DtoD_count", "DtoD_bytes",
                             "launches"), 0)
        for log in logs:
            row["launches"] += len(log.launches)
            for t in log.transfers:
                row[f"{t.direction}_count"] += 1
                row[f"{t.direction}_bytes"] += t.nbytes
        row["runs"] = len(logs)
        out[phase] = row
    out["result"] = result
    return out


def phase_breakdown(points, features, r, threshold, *, n_features=None, max_size=None, traffic=None, **version):
    """Where one GPU run's time goes: device seconds per phase against launches, copies and allocations.

    Two runs of the same mining: :func:`phase_traffic` (copies and launches per phase, with
    ``record()``), then one timed per phase (CUDA events on a GPU; the wall clock in the
    simulator, which says nothing about a GPU) and end to end.

    Parameters
    ----------
    points, features, r, threshold, n_features, max_size, **version
        As for :func:`phase_traffic`.
    traffic : dict, optional
        What :func:`phase_traffic` returned for the same arguments, to spare the counting run.

    Returns
    -------
    dict
        ``wall_seconds`` (end to end, the timed run), ``phase_seconds`` ({phase: seconds} over
        :data:`PHASES`), ``device_seconds`` (their sum), per phase ``launches``, ``copies``
        (both directions) and ``runs``, and for the run ``device_allocations``, ``device_bytes``,
        ``synchronisations`` (one per scan: the host reads its total) and ``pinned_allocations``;
        ``result``.
    """
    import time

    from .. import device
    from ..cellsim.api import PhaseClock
    from .api import _DeviceMiner, check_inputs, default_block
    from .model import grid_for

    if traffic is None:
        traffic = phase_traffic(points, features, r, threshold, n_features=n_features, max_size=max_size, **version)
    points, features, r, threshold, n_features, max_size = check_inputs(points, features, r, threshold,
                                                                        n_features, max_size)
    options = dict(preprocess="device", batched=True, host_memory="pageable", block=default_block())
    options.update(version)
    start = time.perf_counter()
    miner = _DeviceMiner(points, features, r, n_features, grid_for(points, r, n_features), **options)
    miner.clock = PhaseClock(phases=PHASES)
    result = miner.run(threshold, max_size)
    if device.is_gpu():
        from numba import cuda

        cuda.synchronize()
    wall = time.perf_counter() - start
    if result.patterns != traffic["result"].patterns:
        raise RuntimeError("the timed run and the counted run found different patterns")
    seconds = miner.clock.finish()
    stats = result.stats
    return {"wall_seconds": wall, "phase_seconds": seconds, "device_seconds": sum(seconds.values()),
            "launches": {p: traffic[p]["launches"] for p in PHASES},
            "copies": {p: traffic[p]["HtoD_count"] + traffic[p]["DtoH_count"] for p in PHASES},
            "runs": {p: traffic[p]["runs"] for p in PHASES},
            "device_allocations": stats["device_allocations"], "device_bytes": stats["device_bytes"],
            "synchronisations": stats["synchronisations"], "pinned_allocations": stats["pinned_allocations"],
            "result": result}


def table_bytes_per_level(result) -> list:
    """Device bytes of the instance tables each level builds: rows x (k + 1) int32 (k instance ids
    and the pattern's id), from a GPU :class:`MiningResult`'s ``levels``."""
    return [level.rows * (level.size + 1) * 4 for level in result.levels]


# ----------------------------------------------------------------------------- the problems of problem set 8
def measure_features(n, n_features):
    """The instances measured in q2: n features drawn in [0, F), seeded by n and F (the notebook makes the same).

    Returns
    -------
    numpy.ndarray
        int32, shape (n,).
    """
    return np.random.default_rng(1000 * int(n) + int(n_features)).integers(0, int(n_features), int(n)).astype(
        np.int32)
