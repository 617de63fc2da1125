"""Plots of Unit 6: true and recovered sources, topographic maps, convergence (Amari index per step)."""

from __future__ import annotations

import numpy as np

from .reference import amari_index, match_sources

__all__ = ["amari_per_step", "plot_convergence", "plot_sources", "plot_topomaps"]


def plot_sources(eeg, result, *, seconds=4.0, axes=None):
    """True sources (left) and the matched recovered components (right), aligned in sign and scale.

    Parameters
    ----------
    eeg : SimulatedEEG
    result : InfomaxResult
    seconds : float
        Length of the excerpt shown.

    Returns
    -------
    ndarray of matplotlib Axes, shape (C, 2)
    """
    import matplotlib.pyplot as plt

    order, corr, signs = match_sources(result.sources, eeg.sources)
    n = eeg.n_channels
    length = min(eeg.n_samples, int(seconds * eeg.sfreq))
    t = np.arange(length) / eeg.sfreq
    if axes is None:
        _, axes = plt.subplots(n, 2, figsize=(10, 0.8 * n + 1), sharex=True, squeeze=False)
    for j in range(n):
        comp = signs[j] * result.sources[order[j], :length]
        comp = comp / (comp.std() or 1.0)
        axes[j, 0].plot(t, eeg.sources[j, :length], lw=0.7, color="k")
        axes[j, 1].plot(t, comp, lw=0.7, color="tab:blue")
        axes[j, 0].set_ylabel(eeg.kinds[j], rotation=0, ha="right", fontsize=8)
        axes[j, 1].set_ylabel(f"IC {order[j]}\n|r|={corr[j]:.3f}", rotation=0, ha="right", fontsize=8)
        for ax in axes[j]:
            ax.set_yticks([])
    axes[0, 0].set_title("true sources")
    axes[0, 1].set_title(f"recovered ({result.method}), matched")
    axes[-1, 0].set_xlabel("time (s)")
    axes[-1, 1].set_xlabel("time (s)")
    return axes


def plot_topomaps(eeg, mixing=None, *, columns=None, titles=None, axes=None):
    """Topographic maps of mixing columns on the recording's electrode layout (MNE's ``plot_topomap``).

    Parameters
    ----------
    eeg : SimulatedEEG
        Gives the electrode positions.
    mixing : ndarray of shape (C, C), optional
        Default: the true mixing matrix. Pass ``result.mixing`` for the recovered one.
    columns : sequence of int, optional
        Which columns (default: all, at most 10).
    titles : sequence of str, optional
    """
    import matplotlib.pyplot as plt
    from mne.viz import plot_topomap

    mixing = eeg.mixing if mixing is None else np.asarray(mixing)
    columns = list(range(min(10, mixing.shape[1]))) if columns is None else list(columns)
    if axes is None:
        _, axes = plt.subplots(1, len(columns), figsize=(1.8 * len(columns), 2.0), squeeze=False)
        axes = axes[0]
    info = eeg.info()
    for ax, j, k in zip(axes, columns, range(len(columns))):
        plot_topomap(mixing[:, j], info, axes=ax, show=False, contours=0, sensors=True)
        ax.set_title(titles[k] if titles is not None else f"{j}", fontsize=8)
    return axes


def amari_per_step(result, true_mixing):
    """Amari index of the unmixing after each step (needs ``history=True``)."""
    if result.history is None:
        raise ValueError("result has no history: run infomax(..., history=True)")
    return np.array([amari_index(W @ result.sphere, true_mixing) for W in result.history])


def plot_convergence(result, true_mixing=None, *, ax=None):
    """Weight change per step (log scale) and, with the true mixing and a history, the Amari index."""
    import matplotlib.pyplot as plt

    ax = ax or plt.subplots(figsize=(6, 3.2))[1]
    steps = np.arange(1, len(result.changes) + 1)
    ax.semilogy(steps, result.changes, label="weight change ||dW||^2", color="tab:blue")
    ax.set_xlabel("step")
    if true_mixing is not None and result.history is not None:
        ax.semilogy(steps, amari_per_step(result, true_mixing), label="Amari index", color="tab:red")
    anneal = [s for s, a in zip(steps, result.angles) if a > 60.0]
    for s in anneal:
        ax.axvline(s, color="0.8", lw=0.6, zorder=0)
    ax.set_title(f"{result.method}: {result.n_steps} steps, {'converged' if result.converged else 'NOT converged'}"
                 f" (grey: annealed, {len(anneal)}x)")
    ax.legend(fontsize=8)
    return ax
