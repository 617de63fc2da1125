"""Explorer widget of Unit 7: tau_max, phi_min and the type proportions -> output histogram."""

from __future__ import annotations

import numpy as np

from .._validate import check_float
from ._inputs import as_histogram, as_types
from .api import simulate
from .data import THESIS_TYPES, lognormal_histogram

__all__ = ["explorer", "explorer_result"]


def explorer_result(histogram, types, tau_max, phi_min, weights, seed=0):
    """What the explorer computes: the proportions are ``weights`` normalised to sum to 1.

    Returns
    -------
    (SimulationResult, CellTypes)
    """
    weights = np.asarray(weights, dtype=np.float64)
    cell_types = as_types(types)
    if weights.shape != (cell_types.n_types,) or np.any(weights < 0) or weights.sum() <= 0:
        raise ValueError(f"weights must be {cell_types.n_types} non-negative numbers, not all zero, got {weights}")
    mixed = cell_types.with_proportions(weights / weights.sum())
    tau_max = check_float(tau_max, "tau_max", minimum=0)
    result = simulate(histogram, mixed, tau_max=tau_max, phi_min=phi_min, seed=seed, method="cpu")
    return result, mixed


def explorer(histogram=None, types=THESIS_TYPES, *, seed=0):
    """Sliders for tau_max, phi_min and one weight per type; shows the output histogram.

    Runs the compiled CPU simulator (the same numbers as the kernels), so it stays responsive.

    Parameters
    ----------
    histogram : InitialHistogram, optional
        Default: :func:`~course_lib.cellsim.lognormal_histogram` of 2,000 cells.
    types : CellTypes
    seed : int
    """
    import ipywidgets as widgets
    from ..controls import aligned
    import matplotlib.pyplot as plt

    h0 = lognormal_histogram(2000, seed=1) if histogram is None else as_histogram(histogram)
    cell_types = as_types(types)
    style = {"description_width": "initial"}
    tau = widgets.FloatSlider(value=240.0, min=0.0, max=720.0, step=12.0, description="tau_max (h)",
                              continuous_update=False, style=style)
    phi = widgets.FloatSlider(value=11.0, min=1.0, max=100.0, step=0.1, description="phi_min",
                              continuous_update=False, style=style)
    weights = [widgets.FloatSlider(value=float(p), min=0.0, max=1.0, step=0.01, description=name,
                                   continuous_update=False, style=style)
               for p, name in zip(cell_types.proportions, cell_types.names)]
    text = widgets.HTML()
    out = widgets.Output()

    def update(_=None):
        try:
            result, mixed = explorer_result(h0, cell_types, tau.value, phi.value, [w.value for w in weights], seed)
        except ValueError as exc:
            text.value = f"<pre>{exc}</pre>"
            return
        shares = ", ".join(f"{n} {p:.2f}" for n, p in zip(mixed.names, mixed.proportions))
        text.value = (f"<pre>proportions (normalised): {shares}\n{result.recorded} cells alive at tau_max, "
                      f"{result.divisions} divisions, {result.discarded} discarded below phi_min</pre>")
        with out:
            out.clear_output(wait=True)
            fig, ax = plt.subplots(figsize=(7, 3.5))
            ax.stairs(result.counts, result.edges, fill=True, alpha=0.6)
            ax.set(xscale="log", xlabel="fluorescence", ylabel="cells", title=f"t = {result.tau_max:g} h")
            plt.show()

    for w in [tau, phi, *weights]:
        w.observe(update, "value")
    update()
    aligned(tau, phi, *weights)  # whole descriptions, one width
    wrap = {"flex_flow": "row wrap"}
    return widgets.VBox([widgets.HBox([tau, phi], layout=wrap), widgets.HBox(weights, layout=wrap), text, out])
