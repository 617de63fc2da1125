"""Plots of Unit 4: images side by side, the mask's regions, convergence, and the diff viewer."""

from __future__ import annotations

import numpy as np

from .reference import DEFAULT_MAX_FRACTION, DEFAULT_MAX_PIXEL_DIFF, compare_images
from .reference import BORDER, INTERIOR, classify_mask

__all__ = ["diff_viewer", "plot_convergence", "show_images", "show_regions"]


def show_images(images, *, titles=None, size=3.2):
    """Show images side by side.

    Parameters
    ----------
    images : dict of str to ndarray, or list of ndarray
        Each of shape (H, W, 3) uint8 or (H, W) (shown in grey / as a mask).
    titles : list of str, optional
        Used when ``images`` is a list.
    size : float
        Width in inches of each panel.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if isinstance(images, dict):
        titles, images = list(images), list(images.values())
    titles = titles or [""] * len(images)
    h, w = np.asarray(images[0]).shape[:2]
    fig, axes = plt.subplots(1, len(images), figsize=(size * len(images), size * h / w + 0.5), squeeze=False)
    for ax, image, title in zip(axes[0], images, titles):
        image = np.asarray(image)
        ax.imshow(image, cmap="gray" if image.ndim == 2 else None, interpolation="nearest")
        ax.set_title(title, fontsize=9)
        ax.axis("off")
    fig.tight_layout()
    return fig


def show_regions(mask, target=None, ax=None):
    """The mask's strict interior (unknowns) and inside border (fixed to the target), in colour.

    Parameters
    ----------
    mask : ndarray of shape (H, W), bool
    target : ndarray of shape (H, W, 3), uint8, optional
        Drawn faintly underneath.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    labels = classify_mask(mask)
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 5 * mask.shape[0] / mask.shape[1]))
    base = np.full(mask.shape + (3,), 1.0) if target is None else 0.35 + 0.65 * np.asarray(target) / 255
    colours = base.copy()
    colours[labels == BORDER] = (0.85, 0.15, 0.1)
    colours[labels == INTERIOR] = (0.2, 0.45, 0.9)
    ax.imshow(colours, interpolation="nearest")
    ax.set_title(f"inside border (red, = target): {int((labels == BORDER).sum())} px\n"
                 f"strict interior (blue, unknowns): {int((labels == INTERIOR).sum())} px", fontsize=9)
    ax.axis("off")
    return ax


def plot_convergence(iterations, residuals, ax=None, label=None):
    """Residual of the Poisson equation against the iteration count (log scale).

    Parameters
    ----------
    iterations : sequence of int
    residuals : sequence of float
        From :func:`course_lib.poisson.clone_history` or
        :func:`course_lib.poisson.reference.residual`.
    ax : matplotlib Axes, optional
    label : str, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5))
    its = np.asarray(iterations)
    res = np.asarray(residuals, float)
    keep = res > 0
    ax.plot(its[keep], res[keep], marker="o", ms=3, label=label)
    ax.set(yscale="log", xlabel="Jacobi iterations", ylabel="RMS residual (8-bit levels)",
           title="Convergence of the Jacobi iterations")
    if its.max(initial=0) > 10:
        ax.set_xscale("symlog", linthresh=1)  # logarithmic, with room for iteration 0
    if label:
        ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    return ax


def diff_viewer(student, reference, *, max_pixel_diff=DEFAULT_MAX_PIXEL_DIFF, max_fraction=DEFAULT_MAX_FRACTION,
                titles=("yours", "reference")):
    """Student image, reference image and a heat map of their difference, with the tolerance readout.

    Parameters
    ----------
    student, reference : ndarray of shape (H, W, 3), uint8
    max_pixel_diff, max_fraction
        The two tolerances of :func:`course_lib.poisson.compare_images`.
    titles : tuple of str

    Returns
    -------
    fig : matplotlib.figure.Figure
    comparison : ImageComparison
    """
    import matplotlib.pyplot as plt

    result = compare_images(student, reference, max_pixel_diff=max_pixel_diff, max_fraction=max_fraction)
    h, w = result.diff.shape
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.6 * h / w + 0.9))
    for ax, image, title in zip(axes, (student, reference), titles):
        ax.imshow(image, interpolation="nearest")
        ax.set_title(title, fontsize=9)
        ax.axis("off")
    heat = axes[2].imshow(result.diff, cmap="magma", vmin=0, vmax=max(result.max_diff, max_pixel_diff, 1),
                          interpolation="nearest")
    if result.worst_pixel is not None:
        axes[2].plot(result.worst_pixel[1], result.worst_pixel[0], "c+", ms=12, mew=2)
    axes[2].set_title("|difference| (largest channel)", fontsize=9)
    axes[2].axis("off")
    fig.colorbar(heat, ax=axes[2], fraction=0.046, pad=0.04)
    verdict = "PASS" if result.passed else "FAIL"
    fig.suptitle(f"{verdict}: largest difference {result.max_diff} (allowed {max_pixel_diff}), "
                 f"{100 * result.fraction_differing:.2f}% of pixels differ (allowed {100 * max_fraction:.2f}%)",
                 fontsize=10, color="tab:green" if result.passed else "tab:red")
    fig.tight_layout()
    return fig, result
