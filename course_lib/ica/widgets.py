"""Explorer of Unit 6: channels, minibatch size and learning rate -> time per step and convergence."""

from __future__ import annotations

import time
import warnings


from .api import infomax
from .data import simulate_eeg
from .model import flops_per_step, launches_per_step
from .reference import ConvergenceWarning, amari_index, default_batch_size, default_lrate

__all__ = ["convergence_explorer", "explore"]


def explore(n_channels=8, n_samples=5000, *, batch=None, lrate=None, max_steps=200, seed=0, method="cpu"):
    """One explorer reading: run Infomax on simulated EEG and report time and convergence.

    Returns
    -------
    dict
        ``seconds_per_step`` (measured, this machine), ``n_steps``, ``converged``,
        ``amari`` (against the true mixing), ``batch``, ``lrate``, the model's
        ``launches_per_step`` of the fused and drop-in kernel methods and
        ``gflop_per_step``, and the ``result``.
    """
    eeg = simulate_eeg(n_channels, n_samples, seed=seed)
    size = default_batch_size(n_samples) if batch is None else batch
    rate = default_lrate(n_channels) if lrate is None else lrate
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # reported in the readout instead
        result = infomax(eeg.data, method, batch=size, lrate=rate, max_steps=max_steps, seed=seed + 1, history=True)
    seconds = time.perf_counter() - start
    return {"seconds_per_step": seconds / max(1, result.n_steps), "n_steps": result.n_steps,
            "converged": result.converged, "restarts": result.restarts,
            "amari": amari_index(result.full_unmixing, eeg.mixing), "batch": size, "lrate": rate,
            "launches_per_step": {m: launches_per_step(m, n_samples, size) for m in ("fused", "blas")},
            "gflop_per_step": flops_per_step(n_channels, n_samples, size) / 1e9, "result": result, "eeg": eeg}


def _text(r):
    return (f"minibatch B = {r['batch']}, lrate = {r['lrate']:.4g}: {r['n_steps']} steps, "
            f"{'converged' if r['converged'] else 'NOT converged'}, {r['restarts']} restart(s), "
            f"Amari index {r['amari']:.4f}\n"
            f"time per step (CPU, this machine): {r['seconds_per_step'] * 1e3:.2f} ms, "
            f"{r['gflop_per_step']:.4f} GFLOP per step\n"
            f"kernel launches per step: fused {r['launches_per_step']['fused']:,}, "
            f"drop-in BLAS {r['launches_per_step']['blas']:,}")


def convergence_explorer(n_samples=5000):
    """Sliders for channels, minibatch size (relative to the default) and learning rate.

    Shows the measured CPU time per step, steps to convergence, the Amari index, the
    launches a GPU step would need, and the convergence plot.
    """
    import ipywidgets as widgets
    from ..controls import aligned
    import matplotlib.pyplot as plt
    from IPython.display import display

    from .plots import plot_convergence

    channels = widgets.IntSlider(value=8, min=4, max=32, step=4, description="channels", continuous_update=False)
    batch_factor = widgets.FloatLogSlider(value=1.0, base=2, min=-3, max=3, description="B / default",
                                          continuous_update=False)
    lrate_factor = widgets.FloatLogSlider(value=1.0, base=2, min=-3, max=4, description="lrate / default",
                                          continuous_update=False)
    text = widgets.HTML()
    plot = widgets.Output()

    def update(_=None):
        batch = max(1, int(round(default_batch_size(n_samples) * batch_factor.value)))
        r = explore(channels.value, n_samples, batch=batch, lrate=default_lrate(channels.value) * lrate_factor.value)
        text.value = "<pre>" + _text(r) + "</pre>"
        with plot:
            plot.clear_output(wait=True)
            ax = plot_convergence(r["result"], r["eeg"].mixing)
            display(ax.figure)
            plt.close(ax.figure)

    for w in (channels, batch_factor, lrate_factor):
        w.observe(update, "value")
    update()
    aligned(channels, batch_factor, lrate_factor)  # whole descriptions, one width
    sliders = widgets.HBox([channels, batch_factor, lrate_factor], layout={"flex_flow": "row wrap"})
    return widgets.VBox([sliders, text, plot])
