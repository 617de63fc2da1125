"""Inputs for the simulations: the thesis's illustrative type table and seeded generators.

No laboratory measurement ships with the course; :func:`lognormal_histogram` makes an
initial histogram of the shape a flow cytometer reports for a freshly labelled
population (fluorescence roughly log-normal, a few hundred distinct values), and
:func:`random_types` makes type tables, both reproducible from a seed.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_flag, check_float, check_int, check_positive_int, check_seed
from ._inputs import MAX_TYPES, CellTypes, InitialHistogram

__all__ = ["THESIS_TYPES", "THESIS_TYPES_TEXT", "lognormal_histogram", "random_types", "single_value_histogram"]

#: The type file of the thesis's example: proportion, mean and std of the division time (hours);
#: ``-1 -1`` is the quiescent type.
THESIS_TYPES_TEXT = """\
# proportion  mean(h)  std(h)
0.53 48.33 21.6
0.29 86.3 26.8
0.18 -1 -1
"""

#: :data:`THESIS_TYPES_TEXT` parsed: a fast type, a slow type and quiescent cells.
THESIS_TYPES = CellTypes.from_text(THESIS_TYPES_TEXT, names=("fast", "slow", "quiescent"))


def lognormal_histogram(n_cells, *, seed=0, median=1000.0, sigma=0.35, n_values=200) -> InitialHistogram:
    """An initial histogram H(0) with log-normal fluorescence.

    Parameters
    ----------
    n_cells : int
        L, the number of initial cells (>= 1).
    seed : int
        Seed of NumPy's generator.
    median : float
        Median fluorescence (arbitrary units, > 0).
    sigma : float
        Standard deviation of log10(fluorescence) (> 0).
    n_values : int
        Distinct fluorescence values: cells are counted on a grid of at most this many
        log-spaced values over +-4 sigma (the instrument's channels); empty channels are dropped.

    Returns
    -------
    InitialHistogram
    """
    n_cells = check_positive_int(n_cells, "n_cells")
    seed = check_seed(seed)
    median = check_float(median, "median", minimum=0, min_inclusive=False)
    sigma = check_float(sigma, "sigma", minimum=0, min_inclusive=False)
    n_values = check_int(n_values, "n_values", minimum=1, maximum=100_000)
    rng = np.random.default_rng(seed)
    log_phi = rng.normal(np.log10(median), sigma, n_cells)
    grid = np.log10(median) + np.linspace(-4 * sigma, 4 * sigma, n_values)
    step = grid[1] - grid[0] if n_values > 1 else 1.0
    channel = np.clip(np.rint((log_phi - grid[0]) / step), 0, n_values - 1).astype(np.int64)
    counts = np.bincount(channel, minlength=n_values)
    keep = counts > 0
    return InitialHistogram.from_arrays(np.round(10.0 ** grid[keep], 6), counts[keep])


def single_value_histogram(n_cells, fluorescence=1000.0) -> InitialHistogram:
    """All n_cells initial cells with the same fluorescence (each generation is then one value)."""
    n_cells = check_positive_int(n_cells, "n_cells")
    fluorescence = check_float(fluorescence, "fluorescence", minimum=0, min_inclusive=False)
    return InitialHistogram.from_arrays([fluorescence], [n_cells])


def random_types(n_types, *, seed=0, quiescent=True, mean_range=(20.0, 100.0), cv_range=(0.1, 0.5)) -> CellTypes:
    """A random type table: Dirichlet proportions, uniform means and coefficients of variation.

    Parameters
    ----------
    n_types : int
        Number of types, quiescent one included (1 .. 16).
    seed : int
    quiescent : bool
        Make the last type quiescent (needs n_types >= 2).
    mean_range : (float, float)
        Division-time means are uniform in this range (hours).
    cv_range : (float, float)
        std / mean is uniform in this range.

    Returns
    -------
    CellTypes
    """
    n_types = check_int(n_types, "n_types", minimum=1, maximum=MAX_TYPES)
    quiescent = check_flag(quiescent, "quiescent")
    if quiescent and n_types < 2:
        raise ValueError("n_types must be at least 2 when one type is quiescent")
    lo, hi = (check_float(v, "mean_range", minimum=0, min_inclusive=False) for v in mean_range)
    cv_lo, cv_hi = (check_float(v, "cv_range", minimum=0) for v in cv_range)
    if lo > hi or cv_lo > cv_hi:
        raise ValueError(f"mean_range and cv_range must be (low, high), got {mean_range} and {cv_range}")
    rng = np.random.default_rng(check_seed(seed))
    proportions = rng.dirichlet(np.full(n_types, 2.0))
    proportions[-1] = 1.0 - proportions[:-1].sum()
    means = rng.uniform(lo, hi, n_types)
    stds = means * rng.uniform(cv_lo, cv_hi, n_types)
    if quiescent:
        means[-1] = stds[-1] = -1.0
    return CellTypes.from_arrays(proportions, means, stds)
