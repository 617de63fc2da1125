"""Plots of the primitives: work and span of the scans as the tile grows, measured beside modelled."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .model import scan_adds, scan_steps

__all__ = ["plot_work_and_span"]


def plot_work_and_span(tiles=(32, 64, 128, 256, 512, 1024), measured=None, ax=None):
    """Adds (work) and dependent steps (span) of one tile for the serial loop, Hillis-Steele and Blelloch.

    Parameters
    ----------
    tiles : sequence of int
        Tile sizes (powers of two).
    measured : dict, optional
        ``{method: {tile: adds}}`` measured by the profiler, drawn as markers over the model's lines.
    ax : sequence of two matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    if ax is None:
        fig, ax = plt.subplots(1, 2, figsize=(8, 3.2))
    else:
        fig = ax[0].figure
    tiles = np.asarray(tiles)
    for method, style in (("serial", "k:"), ("hillis_steele", "C0-"), ("blelloch", "C1-")):
        ax[0].plot(tiles, [scan_adds(method, int(t)) for t in tiles], style, label=method)
        ax[1].plot(tiles, [scan_steps(method, int(t)) for t in tiles], style, label=method)
        for tile, adds in (measured or {}).get(method, {}).items():
            ax[0].plot([tile], [adds], style[:2] + "o")
    for a, title in zip(ax, ("work: adds per tile", "span: dependent steps")):
        a.set(xscale="log", yscale="log", xlabel="values per tile", title=title)
    ax[0].legend(fontsize=8)
    fig.tight_layout()
    return fig
