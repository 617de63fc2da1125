"""Figures of Unit 2: row-length profiles, SIMT efficiency, modelled cost and the K sweep."""

from __future__ import annotations

import numpy as np

from .model import WARP, bell_garland_k, k_sweep, modelled_cost, row_lengths, simt_efficiency

__all__ = ["MODEL_METHODS", "plot_k_sweep", "plot_method_comparison", "plot_row_lengths", "plot_warp_lanes"]

#: The kernel methods the models describe, in the lesson's order.
MODEL_METHODS = ("csr_scalar", "csr_vector", "coo", "ell", "hyb")


def _axes(ax, figsize=(6, 3.5)):
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return ax


def plot_row_lengths(A, ax=None, label=None):
    """Histogram of the non-zeros per row (log counts), with the Bell-Garland K marked.

    Parameters
    ----------
    A : scipy sparse matrix or array_like of shape (R,)
        The matrix or its row lengths.
    ax : matplotlib Axes, optional
    label : str, optional
    """
    ax = _axes(ax)
    lengths = row_lengths(A)
    top = int(lengths.max(initial=0))
    ax.hist(lengths, bins=np.arange(top + 2) - 0.5 if top < 60 else 60, label=label, alpha=0.8)
    K = bell_garland_k(lengths)
    ax.axvline(K, color="k", ls="--", lw=1, label=f"Bell-Garland K = {K}")
    ax.set(yscale="log", xlabel="non-zeros in the row", ylabel="rows", title="Row-length distribution")
    ax.legend(fontsize=8)
    return ax


def plot_warp_lanes(A, warp_index=0, ax=None, warp=WARP):
    """The lanes of one warp under thread per row: work done and time spent idle.

    Each bar is a lane (a row); the dark part is its row's entries, the light part the
    steps it waits for the warp's longest row.
    """
    ax = _axes(ax)
    lengths = row_lengths(A)[warp_index * warp:(warp_index + 1) * warp]
    lanes = np.arange(lengths.size)
    longest = int(lengths.max(initial=0))
    ax.bar(lanes, lengths, color="tab:blue", label="useful steps")
    ax.bar(lanes, longest - lengths, bottom=lengths, color="tab:red", alpha=0.3, label="idle steps")
    eff = lengths.sum() / (warp * longest) if longest else 1.0
    ax.set(xlabel="lane (row) of the warp", ylabel="loop steps",
           title=f"Thread per row, warp {warp_index}: runs {longest} steps, SIMT efficiency {eff:.0%}")
    ax.legend(fontsize=8)
    return ax


def plot_method_comparison(matrices, methods=MODEL_METHODS, axes=None):
    """SIMT efficiency and modelled cost of each method on each matrix.

    Parameters
    ----------
    matrices : dict of name -> scipy sparse matrix
    methods : sequence of str
    axes : pair of matplotlib Axes, optional

    Returns
    -------
    pair of Axes
    """
    import matplotlib.pyplot as plt

    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        fig.subplots_adjust(bottom=0.3, wspace=0.3)
    names = list(matrices)
    width = 0.8 / len(methods)
    for i, method in enumerate(methods):
        eff = [simt_efficiency(matrices[n], method)["efficiency"] for n in names]
        # Cost per non-zero relative to a perfectly balanced thread-per-row loop (1 / 32).
        cost = [modelled_cost(matrices[n], method) * WARP / max(matrices[n].nnz, 1) for n in names]
        axes[0].bar(np.arange(len(names)) + i * width, eff, width, label=method)
        axes[1].bar(np.arange(len(names)) + i * width, cost, width, label=method)
    for ax in axes:
        ax.set_xticks(np.arange(len(names)) + 0.4 - width / 2, names, rotation=25, ha="right", fontsize=8)
    axes[0].set(ylabel="useful / issued lane-steps", title="SIMT efficiency", ylim=(0, 1.05))
    axes[1].set(ylabel="modelled cost per non-zero", yscale="log",
                title="Modelled time (1 = balanced thread per row)")
    axes[0].legend(fontsize=7)
    return axes


def plot_k_sweep(A, ax=None, measured=None, k_max=None):
    """Modelled cost of the hybrid for every K, both failure modes and the rule's K.

    Parameters
    ----------
    A : scipy sparse matrix
    ax : matplotlib Axes, optional
    measured : dict of K -> seconds, optional
        GPU times to draw on a second axis.
    k_max : int, optional
        Largest K shown; default the longest row, or 8 x the rule's K (at least 16) when
        a few very long rows would flatten the picture.
    """
    ax = _axes(ax, (6.5, 3.8))
    lengths = row_lengths(A)
    if k_max is None:
        k_max = min(int(lengths.max(initial=0)), max(8 * bell_garland_k(lengths), 16))
    sweep = k_sweep(lengths, Ks=range(int(k_max) + 1))
    Ks, cost = sweep["K"], sweep["cost"] / max(int(lengths.sum()), 1)
    ax.plot(Ks, cost, marker=".", label="modelled cost per non-zero")
    best = sweep["best_K"]
    ax.axvline(best, color="k", ls="--", lw=1, label=f"Bell-Garland K = {best}")
    ax.annotate("too small: regular entries\non the slow COO path", (Ks[0], cost[0]), fontsize=8,
                xytext=(10, 10), textcoords="offset points")
    ax.annotate("too large: padding,\nload imbalance", (Ks[-1], cost[-1]), fontsize=8, ha="right",
                xytext=(-5, -25), textcoords="offset points")
    ax.set(xlabel="K (ELL width)", ylabel="cost per non-zero", title="Choosing K for the hybrid")
    if measured:
        twin = ax.twinx()
        ks = sorted(k for k in measured if k <= k_max)
        twin.plot(ks, [measured[k] * 1e6 for k in ks], color="tab:red", marker="o", label="measured (GPU)")
        twin.set_ylabel("GPU time (us)")
        twin.legend(fontsize=8, loc="upper center")
    ax.legend(fontsize=8)
    return ax
