"""Figures of Unit 7 (matplotlib, imported on first use)."""

from __future__ import annotations

import numpy as np

from .._validate import check_array
from ._inputs import as_histogram, as_types
from .api import simulate

__all__ = ["histogram_over_time", "memory_per_level", "population_by_type", "simulate_times"]


def simulate_times(histogram, types, times, *, phi_min, seed=0, method="cpu", bins=None):
    """One simulation per tau_max in ``times``, all with the same seed.

    The random numbers are keyed by (cell id, generation), so a run to tau_max = t is the
    beginning of the run to any later time: the results are snapshots of one population.

    Returns
    -------
    list of SimulationResult
    """
    times = check_array(times, "times", ndim=1, dtype="iuf", finite=True, allow_empty=False)
    return [simulate(histogram, types, tau_max=float(t), phi_min=phi_min, seed=seed, method=method, bins=bins)
            for t in times]


def _runs_and_axes(histogram, types, times, phi_min, seed, method, results, ax, figsize):
    """The runs to draw (simulated unless given) and the axes to draw them on (a new figure unless given)."""
    import matplotlib.pyplot as plt

    if results is None:
        results = simulate_times(histogram, types, times, phi_min=phi_min, seed=seed, method=method)
    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return results, ax


def _finish(ax, legend_size):
    ax.legend(fontsize=legend_size)
    ax.figure.tight_layout()
    return ax.figure


def histogram_over_time(histogram, types, times, *, phi_min, seed=0, method="cpu", results=None, ax=None):
    """Fluorescence histogram of the living cells at several times, with the per-generation peaks.

    Generation g sits at phi_0 / 2**g: the dotted lines mark the median initial fluorescence
    halved g times, labelled with g.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    h0 = as_histogram(histogram)
    results, ax = _runs_and_axes(h0, types, times, phi_min, seed, method, results, ax, (8, 4))
    colors = plt.cm.viridis(np.linspace(0, 0.9, len(results)))
    for r, color in zip(results, colors):
        ax.stairs(r.counts, r.edges, color=color, label=f"t = {r.tau_max:g} h ({r.recorded} cells)")
    median = float(np.median(h0.cell_fluorescence()))
    top = max(int(r.counts.max()) for r in results) or 1
    for g in range(results[0].level_counts.shape[0]):
        x = median / 2**g
        if x < results[0].edges[0]:
            break
        ax.axvline(x, color="0.6", ls=":", lw=1)
        ax.text(x, top * 1.02, str(g), ha="center", fontsize=8, color="0.4")
    ax.axvline(results[0].phi_min, color="r", lw=1, label=f"phi_min = {results[0].phi_min:g}")
    ax.set(xscale="log", xlabel="fluorescence (label per cell)", ylabel="cells",
           title="Label dilution: one peak per generation (numbers above)")
    return _finish(ax, 7)


def population_by_type(histogram, types, times, *, phi_min, seed=0, method="cpu", results=None, ax=None):
    """Cells alive (and above phi_min) per type against time.

    Returns
    -------
    matplotlib.figure.Figure
    """
    cell_types = as_types(types)
    results, ax = _runs_and_axes(histogram, cell_types, times, phi_min, seed, method, results, ax, (6, 4))
    t = [r.tau_max for r in results]
    by_type = np.array([r.by_type for r in results])
    for k, name in enumerate(cell_types.names):
        ax.plot(t, by_type[:, k], marker="o", label=name)
    ax.plot(t, by_type.sum(axis=1), color="k", ls="--", label="all")
    ax.set(xlabel="time (h)", ylabel="living cells", title="Population per type")
    return _finish(ax, 8)


def memory_per_level(slots, alive, *, slot_bytes, cell_bytes, ax=None):
    """Bytes per level: the fixed-slot tree (every slot) against the compacted cells (live cells only).

    Parameters
    ----------
    slots, alive : sequence of int
        Slots and live cells per level (:func:`~course_lib.cellsim.profiling.level_populations`).
    slot_bytes, cell_bytes : int
        Bytes per tree slot and per compacted cell.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    slots, alive = np.asarray(slots), np.asarray(alive)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    levels = np.arange(slots.size)
    ax.semilogy(levels, slots * slot_bytes, marker="o", label="fixed-slot tree: L * 2**level slots")
    ax.semilogy(levels, np.maximum(alive, 1) * cell_bytes, marker="s", label="compacted: live cells only")
    ax.set(xlabel="level (generation)", ylabel="bytes", title="Device memory per level")
    return _finish(ax, 8)
