"""Measuring the GPU pipeline: transfers, bytes and launches of each version with ``record()``.

Everything here runs the real kernels (in the simulator or on a GPU) under
:func:`course_lib.sim.record`, which logs every host<->device copy and every launch.
Counts and bytes are the same on both backends; times are only meaningful on a GPU.
"""

from __future__ import annotations

from collections import Counter

from .api import VERSIONS, mine

__all__ = ["FILTER_KERNELS", "REFINE_KERNELS", "kernel_launches", "measure_versions"]

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
        Per version: ``version``, ``launches``, ``filter_launches``, ``HtoD_count``, ``HtoD_bytes``,
        ``DtoH_count``, ``DtoH_bytes``, ``patterns`` (the prevalent patterns found).
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
                         patterns=result.patterns, levels=result.levels))
    return rows
