"""The explorer widget of Unit 2: from balanced to skewed rows, what each method pays."""

from __future__ import annotations

import numpy as np

from .. import device
from .data import row_length_family
from .model import bell_garland_k, modelled_cost, row_lengths, simt_efficiency
from .plots import MODEL_METHODS, plot_row_lengths

__all__ = ["explorer", "measure_methods"]


def measure_methods(A, methods=MODEL_METHODS, K=None):
    """GPU seconds of one SpMV with each method (an empty dict in the simulator).

    Parameters
    ----------
    A : scipy sparse matrix
    methods : sequence of str
    K : int, optional
        ELL width of ``"hyb"``.

    Returns
    -------
    dict of method -> seconds
    """
    if not device.is_gpu():
        return {}
    from numba import cuda

    from ..bench import gpu_time
    from .api import prepare

    x = cuda.to_device(np.ones(A.shape[1], A.dtype))
    y = cuda.device_array(A.shape[0], A.dtype)
    out = {}
    for method in methods:
        try:
            op = prepare(A, method, K=K if method == "hyb" else None)
        except ValueError:  # ELL with hopeless padding
            continue
        out[method] = gpu_time(lambda: op.launch(x, y))
    return out


def explorer(n_rows=None, seed=0):
    """Pick a row-length distribution and see each method's SIMT efficiency and modelled time.

    A slider moves from balanced rows (every row the same length) to a heavily skewed,
    power-law-like profile with the same mean; another sets the hybrid's K (or follows
    the Bell-Garland rule). On a GPU the methods are also timed.

    Parameters
    ----------
    n_rows : int, optional
        Rows of the generated matrices (default 4096, or 2**20 on a GPU).
    seed : int

    Returns
    -------
    ipywidgets.VBox
    """
    import ipywidgets as widgets
    from ..controls import aligned
    import matplotlib.pyplot as plt

    n_rows = device.pick(sim=4096, gpu=1 << 20) if n_rows is None else n_rows
    skew = widgets.FloatSlider(value=1.0, min=0.0, max=3.0, step=0.25, description="skew",
                               continuous_update=False)
    mean = widgets.IntSlider(value=8, min=1, max=64, description="mean nnz/row", continuous_update=False)
    auto_k = widgets.Checkbox(value=True, description="K by the 1/3 rule")
    k_slider = widgets.IntSlider(value=8, min=0, max=64, description="K", continuous_update=False)
    out = widgets.Output()

    def draw(*_):
        A = row_length_family(n_rows, skew.value, mean_nnz=mean.value, seed=seed)
        lengths = row_lengths(A)
        K = bell_garland_k(lengths) if auto_k.value else k_slider.value
        k_slider.disabled = auto_k.value
        measured = measure_methods(A, K=K)
        with out:
            out.clear_output(wait=True)
            fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
            plot_row_lengths(lengths, ax=axes[0])
            axes[0].axvline(K, color="tab:red", lw=1, label=f"K used = {K}")
            effs = [simt_efficiency(lengths, m, K=K if m == "hyb" else None)["efficiency"] for m in MODEL_METHODS]
            axes[1].bar(MODEL_METHODS, effs, color="tab:green")
            axes[1].set(ylim=(0, 1.05), title="SIMT efficiency (useful / issued lane-steps)")
            costs = [modelled_cost(lengths, m, K=K if m == "hyb" else None) for m in MODEL_METHODS]
            axes[2].bar(MODEL_METHODS, np.array(costs) / max(costs), color="tab:blue", label="model")
            if measured:
                worst = max(measured.values())
                axes[2].scatter([m for m in MODEL_METHODS if m in measured],
                                [measured[m] / worst for m in MODEL_METHODS if m in measured],
                                color="tab:red", zorder=3, label="GPU time")
            axes[2].set(title="Relative time (slowest = 1)")
            axes[2].legend(fontsize=8)
            for ax in axes[1:]:
                ax.tick_params(axis="x", labelrotation=30, labelsize=8)
            fig.tight_layout()
            plt.show()

    for w in (skew, mean, auto_k, k_slider):
        w.observe(draw, names="value")
    draw()
    aligned(skew, mean, auto_k, k_slider)  # whole descriptions, one width
    wrap = {"flex_flow": "row wrap"}
    return widgets.VBox([widgets.HBox([skew, mean], layout=wrap), widgets.HBox([auto_k, k_slider], layout=wrap), out])
