"""Figures of Unit 5 (matplotlib, imported on first use): dendrograms, bundles in 3-D, stage times, scaling."""

from __future__ import annotations

import numpy as np

from ._dendrogram import Dendrogram
from .model import amdahl_speedup

__all__ = ["cut_distance", "plot_amdahl", "plot_bundles", "plot_dendrogram", "plot_precision", "plot_scaling",
           "plot_stage_times", "scaling_series"]


def _axes(ax, projection=None, figsize=(6, 4)):
    import matplotlib.pyplot as plt

    if ax is not None:
        return ax
    fig = plt.figure(figsize=figsize)
    return fig.add_subplot(111, projection=projection)


def cut_distance(tree: Dendrogram, n_clusters) -> tuple[float, bool]:
    """The distance at which a horizontal cut of ``tree.linkage()`` leaves ``n_clusters`` clusters.

    Cutting into k clusters applies the first N - k merges (rows 0 .. N - k - 1 of Z, in increasing
    distance) and none of the others, so the cut lies halfway between row N - k - 1 and row N - k.
    When those two rows tie (two merges at the same affinity) no single height separates them:
    the tree's order (the lowest entry first) decides, and the cut is drawn at the tie.

    Parameters
    ----------
    tree : Dendrogram
    n_clusters : int
        From nC (the components) to N.

    Returns
    -------
    distance : float
        ``scipy.cluster.hierarchy.fcluster(Z, distance, "distance")`` gives ``n_clusters`` clusters
        whenever ``exact``.
    exact : bool
        False when a tie makes the cut ambiguous.
    """
    from .._validate import check_int

    n = tree.n_elements
    n_clusters = check_int(n_clusters, "n_clusters", minimum=max(1, tree.n_components), maximum=n)
    z = tree.linkage()
    if z.shape[0] == 0:
        return 0.0, True
    d = z[:, 2]
    applied = n - n_clusters  # merges below the cut
    gap = max(float(d[-1]) * 0.02, 1e-9)
    below = float(d[applied - 1]) if applied > 0 else float(d[0]) - 2 * gap
    above = float(d[applied]) if applied < d.size else float(d[-1]) + 2 * gap
    return (below + above) / 2, below < above


def plot_dendrogram(tree: Dendrogram, ax=None, *, n_clusters=None, max_leaves=60, labels=None):
    """Draw the tree with SciPy's ``dendrogram`` (distance = c - affinity, c the largest merge affinity).

    Parameters
    ----------
    tree : Dendrogram
    ax : matplotlib Axes, optional
    n_clusters : int, optional
        Colour the branches of exactly this many clusters (those of ``tree.labels(n_clusters)``)
        and draw the cut (:func:`cut_distance`; dotted where a tie leaves it ambiguous).
    max_leaves : int
        Trees with more leaves are truncated to their top ``max_leaves`` clusters.
    labels : sequence of str, optional

    Returns
    -------
    dict
        SciPy's dendrogram output (``ivl``, ``leaves``, ...), plus ``cut`` (the distance of the
        cut line, or None) and ``cut_exact``.
    """
    from scipy.cluster.hierarchy import dendrogram

    ax = _axes(ax, figsize=(8, 4))
    z = tree.linkage()
    n = tree.n_elements
    cut, exact, link_color = None, True, None
    if n_clusters is not None and z.size:
        cut, exact = cut_distance(tree, n_clusters)
        ax.axhline(cut, color="k", ls="--" if exact else ":", lw=1)
        # Colour by the clusters themselves, not by height: exact even where merges tie.
        applied = n - n_clusters
        cluster_of = tree.labels(n_clusters=n_clusters)
        first_leaf = np.zeros(2 * n - 1, np.int64)
        first_leaf[:n] = np.arange(n)
        for q in range(z.shape[0]):
            first_leaf[n + q] = first_leaf[int(z[q, 0])]
        palette = [f"C{i}" for i in range(10)]

        def link_color(link):
            if link - n >= applied:
                return "0.6"
            return palette[int(cluster_of[first_leaf[link]]) % len(palette)]
    truncate = {"truncate_mode": "lastp", "p": max_leaves} if n > max_leaves else {}
    out = dendrogram(z, ax=ax, labels=labels, no_labels=n > max_leaves, link_color_func=link_color, **truncate)
    ax.set_ylabel("distance = c - affinity")
    title = f"{tree.method}: {n} elements, {tree.n_merges} merges"
    if n_clusters is not None:
        title += f"; cut into {n_clusters} clusters" + ("" if exact else " (merges tie at the cut)")
    ax.set_title(title)
    out["cut"], out["cut_exact"] = cut, exact
    return out


def plot_bundles(fiber_graph, fiber_labels, ax=None, *, title=None, max_fibers=600):
    """Fibers in 3-D, coloured by bundle.

    Parameters
    ----------
    fiber_graph : FiberGraph or Fibers
    fiber_labels : ndarray of shape (F,)
        Bundle of each fiber (e.g. :func:`~course_lib.hac.fiber_bundles`).
    ax : 3-D matplotlib Axes, optional
    """
    import matplotlib.pyplot as plt

    fibers = getattr(fiber_graph, "fibers", fiber_graph)
    labels = np.asarray(fiber_labels)
    if labels.shape != (fibers.n_fibers,):
        raise ValueError(f"fiber_labels must have shape ({fibers.n_fibers},), got {labels.shape}")
    ax = _axes(ax, projection="3d", figsize=(6, 5))
    colours = plt.get_cmap("tab10" if labels.max(initial=0) < 10 else "tab20")
    for f in range(min(fibers.n_fibers, max_fibers)):
        s = fibers.streamlines[f]
        ax.plot(s[:, 0], s[:, 1], s[:, 2], color=colours(int(labels[f]) % colours.N), lw=0.8)
    ax.set(xlabel="x (mm)", ylabel="y (mm)", zlabel="z (mm)")
    ax.set_title(title or f"{fibers.name}: {len(np.unique(labels))} bundles")
    return ax


def plot_stage_times(times: dict, ax=None, *, title="time per stage", unit="s"):
    """Grouped bars: seconds per stage for each version.

    Parameters
    ----------
    times : dict
        ``{version label: {stage: seconds}}``.
    """
    from .reference import STAGES

    ax = _axes(ax, figsize=(7, 3.5))
    labels = list(times)
    width = 0.8 / max(len(labels), 1)
    x = np.arange(len(STAGES))
    for n, label in enumerate(labels):
        ax.bar(x + n * width, [times[label].get(s, 0.0) for s in STAGES], width, label=label)
    ax.set_xticks(x + width * (len(labels) - 1) / 2, STAGES, rotation=20)
    ax.set_ylabel(unit)
    ax.set_title(title)
    ax.legend(fontsize=8)
    return ax


def plot_precision(study: dict, ax=None):
    """Relative height error of float32 against float64, merge by merge (the thesis's Figure 6)."""
    ax = _axes(ax, figsize=(7, 3.5))
    rel = np.asarray(study["relative_error"])
    merges = np.arange(rel.size)
    shown = rel > 0
    ax.semilogy(merges[shown], rel[shown], ".", ms=3)
    ax.set(xlabel="merge (the top of the tree on the right)", ylabel="relative height error",
           title=f"float32 vs float64: max {study['max_relative_height_error']:.1e}, "
                 f"{study['parents_differing']:.1%} of parents differ")
    return ax


def plot_amdahl(fraction, ax=None, *, max_speedup=1000, label=None):
    """Overall speedup against the speedup of the accelerated part, with the limit 1 / (1 - f)."""
    ax = _axes(ax, figsize=(6, 3.5))
    s = np.logspace(0, np.log10(max_speedup), 200)
    ax.semilogx(s, amdahl_speedup(fraction, s), label=label or f"f = {fraction:.3f}")
    if fraction < 1:
        ax.axhline(1 / (1 - fraction), color="k", ls="--", lw=1)
    ax.set(xlabel="speedup of the accelerated part", ylabel="overall speedup", title="Amdahl's law")
    ax.legend()
    return ax


def scaling_series(results: dict) -> dict:
    """Measured seconds against N per variant of a HAC benchmark run, with each growth exponent.

    Parameters
    ----------
    results : dict
        A results file of ``python -m course_lib.bench hac`` (read with ``json.load``).

    Returns
    -------
    dict
        ``{label: {"n": [...], "seconds": [...], "low": [...], "high": [...], "exponent": k}}`` for every
        variant timed (not estimated) at two sizes or more, sizes ascending; ``low`` and ``high`` are the
        fastest and slowest rounds where the run kept them; ``k`` fits seconds ~ N^k
        (:func:`course_lib.bench.growth_exponent`). The course's version is labelled ``cpu float64``
        and ``cpu float32``.
    """
    from ..bench import growth_exponent

    series = {}
    for r in results["rows"]:
        if r.get("estimated"):  # the NumPy reference's extrapolation: not a measurement
            continue
        label = r["variant"] + (f" {r['dtype']}" if r["variant"] == "cpu" else "")
        series.setdefault(label, []).append((r["n_elements"], r["seconds"], r.get("seconds_min", r["seconds"]),
                                             r.get("seconds_max", r["seconds"])))
    out = {}
    for label, pts in series.items():
        pts.sort()
        n, seconds, low, high = (list(col) for col in zip(*pts))
        exponent = growth_exponent(n, seconds)
        if exponent is not None:
            out[label] = {"n": n, "seconds": seconds, "low": low, "high": high, "exponent": exponent}
    return out


def plot_scaling(results: dict, ax=None):
    """Seconds against N on log-log axes: the course's CPU version and its peers, each with its exponent.

    Bars span the fastest to the slowest round of the paired measurement. Returns ``(ax, series)``
    with ``series`` from :func:`scaling_series`.
    """
    ax = _axes(ax, figsize=(7, 4.5))
    series = scaling_series(results)
    for label, s in sorted(series.items()):
        course = label.startswith("cpu ")
        n, sec = np.asarray(s["n"]), np.asarray(s["seconds"])
        err = [sec - np.asarray(s["low"]), np.asarray(s["high"]) - sec]
        ax.errorbar(n, sec, yerr=err, marker="o", lw=2.5 if course else 1.2, capsize=3,
                    label=f"{label}: ~N^{s['exponent']:.2f}")
    ax.set(xscale="log", yscale="log", xlabel="N (elements)", ylabel="seconds, one clustering",
           title=f"average linkage on {results['cpu']} ({results['date'][:10]})")
    ax.legend(fontsize=8)
    return ax, series
