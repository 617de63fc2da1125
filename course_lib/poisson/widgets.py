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
                                     description="iterations", continuous_update=False)
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
                axes[0, 1].imshow(diff, cmap="magma", vmin=0, vmax=max(int(diff.max()), 1))
                axes[0, 1].set_title(f"vs reference: max diff {int(diff.max())}, "
                                     f"{100 * np.count_nonzero(diff) / diff.size:.1f}% differ", fontsize=9)
                axes[0, 1].axis("off")
            fig.tight_layout()
            plt.show()

    slider.observe(draw, names="value")
    draw()
    return widgets.VBox([slider, out])


def diff_explorer(student, reference):
    """The diff viewer with sliders for the two tolerances.

    Parameters
    ----------
    student, reference : ndarray of shape (H, W, 3), uint8

    Returns
    -------
    ipywidgets.VBox
    """
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    from .plots import diff_viewer

    max_diff = widgets.IntSlider(value=DEFAULT_MAX_PIXEL_DIFF, min=0, max=32, description="max diff")
    fraction = widgets.FloatLogSlider(value=DEFAULT_MAX_FRACTION, base=10, min=-4, max=0, step=0.25,
                                      description="max fraction")
    out = widgets.Output()

    def draw(change=None):
        with out:
            out.clear_output(wait=True)
            diff_viewer(student, reference, max_pixel_diff=max_diff.value, max_fraction=fraction.value)
            plt.show()

    for w in (max_diff, fraction):
        w.observe(draw, names="value")
    draw()
    return widgets.VBox([widgets.HBox([max_diff, fraction]), out])
