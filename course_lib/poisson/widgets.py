"""ipywidgets explorers of Unit 4: scrub through the iterations; compare two images with tolerances."""

from __future__ import annotations

from .reference import DEFAULT_MAX_FRACTION, DEFAULT_MAX_PIXEL_DIFF

__all__ = ["diff_explorer", "iteration_scrubber"]


def iteration_scrubber(history, *, reference=None):
    """A slider over the snapshots of :func:`course_lib.poisson.clone_history`.

    Shows the image after the chosen number of iterations, its residual, and (if a
    ``reference`` image is given, e.g. the exact solve) how many pixels still differ.

    Parameters
    ----------
    history : CloneHistory
    reference : ndarray of shape (H, W, 3), uint8, optional

    Returns
    -------
    ipywidgets.VBox
        The slider and an output area; the output is drawn once at creation.
    """
    import ipywidgets as widgets
    import matplotlib.pyplot as plt
    import numpy as np

    slider = widgets.SelectionSlider(options=list(history.iterations), value=history.iterations[-1],
                                     description="iterations", continuous_update=False,
                                     style={"description_width": "initial"}, layout={"width": "420px"})
    out = widgets.Output()

    def draw(change=None):
        k = slider.value
        i = history.iterations.index(k)
        image = history.images[i]
        with out:
            out.clear_output(wait=True)
            panels = 2 if reference is not None else 1
            fig, axes = plt.subplots(1, panels, figsize=(4.2 * panels, 3.4), squeeze=False)
            axes[0, 0].imshow(image, interpolation="nearest")
            axes[0, 0].set_title(f"after {k} iterations, residual {history.residuals[i]:.3g}", fontsize=9)
            axes[0, 0].axis("off")
            if reference is not None:
                diff = np.abs(image.astype(np.int16) - reference.astype(np.int16)).max(axis=2)
                heat = axes[0, 1].imshow(diff, cmap="magma", vmin=0, vmax=max(int(diff.max()), 1))
                axes[0, 1].set_title(f"|difference| from the reference: max {int(diff.max())}, "
                                     f"{100 * np.count_nonzero(diff) / diff.size:.1f}% of pixels differ", fontsize=9)
                axes[0, 1].axis("off")
                fig.colorbar(heat, ax=axes[0, 1], fraction=0.046, pad=0.04, label="levels")
            fig.tight_layout()
            plt.show()

    slider.observe(draw, names="value")
    draw()
    return widgets.VBox([slider, out])


def diff_explorer(student, reference, *, titles=("yours", "reference")):
    """The diff viewer with sliders for the two tolerances.

    The largest-difference slider reaches 255 and the fraction slider 1, so every
    comparison can be made to pass (and the explorer shows what that would accept).

    Parameters
    ----------
    student, reference : ndarray of shape (H, W, 3), uint8
    titles : tuple of str
        Titles of the two images (e.g. ``("100 iterations", "800 iterations")``).

    Returns
    -------
    ipywidgets.VBox
    """
    import ipywidgets as widgets
    from ..controls import aligned
    import matplotlib.pyplot as plt

    from .plots import diff_viewer

    style = {"description_width": "initial"}
    max_diff = widgets.IntSlider(value=DEFAULT_MAX_PIXEL_DIFF, min=0, max=255, description="largest difference allowed",
                                 style=style, layout={"width": "420px"}, continuous_update=False)
    fraction = widgets.FloatLogSlider(value=DEFAULT_MAX_FRACTION, base=10, min=-4, max=0, step=0.25,
                                      description="fraction of pixels allowed to differ", style=style,
                                      layout={"width": "420px"}, continuous_update=False, readout_format=".4f")
    out = widgets.Output()

    def draw(change=None):
        with out:
            out.clear_output(wait=True)
            diff_viewer(student, reference, max_pixel_diff=max_diff.value, max_fraction=fraction.value, titles=titles)
            plt.show()

    for w in (max_diff, fraction):
        w.observe(draw, names="value")
    draw()
    aligned(max_diff, fraction)  # whole descriptions, one width
    return widgets.VBox([max_diff, fraction, out])
