"""Plots of Unit 1: the N x N force matrix, tile trade-offs, energy and snapshots."""

from __future__ import annotations

import numpy as np

from .model import tile_report
from .reference import total_energy

__all__ = ["plot_energy", "plot_force_matrix", "plot_snapshots", "plot_tile_tradeoffs"]


def plot_force_matrix(pos, mass, softening, *, tile=None, ax=None):
    """The N x N view: entry (destination i, source j) shows |force of j on i| (log scale).

    With ``tile`` given, draws the P x P tile grid over it.
    """
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    pos = np.asarray(pos, np.float64)
    mass = np.asarray(mass, np.float64)
    d = pos[None, :, :] - pos[:, None, :]
    mag = mass[None, :] * np.sqrt(np.sum(d * d, axis=2)) / (np.sum(d * d, axis=2) + softening**2) ** 1.5
    mag[mag == 0] = np.nan
    ax = ax or plt.subplots(figsize=(4.5, 4))[1]
    im = ax.imshow(mag, norm=LogNorm(), cmap="viridis", interpolation="nearest")
    ax.set(xlabel="source body j", ylabel="destination body i", title="|force of j on i|")
    if tile:
        for k in range(0, len(pos) + 1, tile):
            ax.axhline(k - 0.5, color="w", lw=0.6)
            ax.axvline(k - 0.5, color="w", lw=0.6)
    ax.figure.colorbar(im, ax=ax, shrink=0.8)
    return ax


def plot_tile_tradeoffs(n, tiles, *, sm_count, axes=None, **limits):
    """Global traffic and SM occupancy against the tile size P, for N bodies."""
    import matplotlib.pyplot as plt

    reports = [tile_report(n, p, sm_count=sm_count, **limits) for p in tiles]
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    axes[0].plot(tiles, [r["bytes"] / 2**20 for r in reports], "o-")
    axes[0].set(xscale="log", yscale="log", xlabel="tile size P", ylabel="MiB fetched from global memory",
                title=f"N = {n:,}: larger tiles, less traffic")
    axes[1].plot(tiles, [r["blocks"] for r in reports], "o-", label="blocks")
    axes[1].axhline(sm_count, color="r", ls="--", label=f"{sm_count} SMs")
    axes[1].set(xscale="log", yscale="log", xlabel="tile size P", ylabel="blocks",
                title="...but enough blocks for every SM")
    axes[1].legend()
    for ax in axes:
        ax.set_xticks(tiles, [str(t) for t in tiles])
        ax.minorticks_off()
    return axes


def plot_energy(positions, velocities, mass, softening, *, dt, every=1, ax=None):
    """Relative energy drift |E(t) - E(0)| / |E(0)| of a run of :func:`leapfrog`."""
    import matplotlib.pyplot as plt

    energies = np.array([total_energy(p, v, mass, softening) for p, v in zip(positions, velocities)])
    times = np.arange(len(energies)) * dt * every
    ax = ax or plt.subplots(figsize=(5, 3))[1]
    ax.plot(times, np.abs(energies - energies[0]) / abs(energies[0]))
    ax.set(xlabel="time", ylabel="|E - E0| / |E0|", title="energy drift (leapfrog)")
    return ax, energies


def plot_snapshots(positions, *, count=4, axes=None):
    """Scatter plots (x, y) of ``count`` snapshots spread over a run."""
    import matplotlib.pyplot as plt

    picks = np.linspace(0, len(positions) - 1, count).round().astype(int)
    if axes is None:
        _, axes = plt.subplots(1, count, figsize=(3 * count, 3), sharex=True, sharey=True)
    lim = np.percentile(np.abs(positions[0][:, :2]), 98) * 1.6
    for ax, k in zip(np.atleast_1d(axes), picks):
        ax.scatter(positions[k][:, 0], positions[k][:, 1], s=3)
        ax.set(title=f"snapshot {k}", xlim=(-lim, lim), ylim=(-lim, lim), aspect="equal")
    return axes
