"""Statistical validation of a stochastic simulator.

Two implementations with different random streams never give equal histograms; they
simulate the same model when their *distributions* agree over many runs. The unit of
independence is the run (cells of one tree are correlated: sisters share a fluorescence
and a birth time), so the tests here compare groups of runs:

* :func:`hellinger` distance between the pooled, normalised histograms (0 = identical,
  1 = disjoint), required below :data:`HELLINGER_MAX`;
* a permutation two-sample test on that distance: runs are shuffled between the two
  groups, and the p-value is the fraction of shuffles at least as far apart as the
  observed groups; required above :data:`ALPHA`;
* the same for the recorded cells per (generation, type), and a Mann-Whitney test on the
  number of recorded cells per run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validate import check_float, check_int

__all__ = ["ALPHA", "HELLINGER_MAX", "Comparison", "compare_runs", "hellinger", "permutation_pvalue"]

#: A two-sample test passes when its p-value is at least this.
ALPHA = 0.01
#: Pooled histograms of two groups of runs must be at most this far apart (Hellinger distance).
HELLINGER_MAX = 0.05


def hellinger(p, q) -> float:
    """Hellinger distance between two histograms (normalised here): sqrt(1 - sum sqrt(p_i q_i)), in [0, 1]."""
    p = np.asarray(p, dtype=np.float64).ravel()
    q = np.asarray(q, dtype=np.float64).ravel()
    if p.shape != q.shape:
        raise ValueError(f"histograms must have the same number of bins, got {p.size} and {q.size}")
    if p.sum() <= 0 or q.sum() <= 0:
        raise ValueError("histograms must not be empty")
    p, q = p / p.sum(), q / q.sum()
    return float(np.sqrt(max(0.0, 1.0 - np.sum(np.sqrt(p * q)))))


def permutation_pvalue(group_a, group_b, *, permutations=999, seed=0) -> tuple:
    """Permutation test of "same distribution" for two groups of per-run histograms.

    Parameters
    ----------
    group_a, group_b : array_like of shape (runs, bins)
        One histogram per run.
    permutations : int
    seed : int
        Seed of the shuffles (the test is reproducible).

    Returns
    -------
    (distance, pvalue)
        Hellinger distance of the pooled groups, and (1 + shuffles at least as far) / (1 + permutations).
    """
    a = np.asarray(group_a, dtype=np.float64)
    b = np.asarray(group_b, dtype=np.float64)
    permutations = check_int(permutations, "permutations", minimum=1)
    runs = np.concatenate([a.reshape(a.shape[0], -1), b.reshape(b.shape[0], -1)])
    n_a = a.shape[0]
    observed = hellinger(runs[:n_a].sum(0), runs[n_a:].sum(0))
    rng = np.random.default_rng(seed)
    total = runs.sum(0)
    at_least = 0
    for _ in range(permutations):
        pick = rng.permutation(runs.shape[0])[:n_a]
        pooled_a = runs[pick].sum(0)
        if hellinger(pooled_a, total - pooled_a) >= observed - 1e-15:
            at_least += 1
    return observed, (1 + at_least) / (1 + permutations)


@dataclass(frozen=True)
class Comparison:
    """Outcome of :func:`compare_runs`.

    Attributes
    ----------
    hellinger_fluorescence, pvalue_fluorescence : float
        Distance of the pooled output histograms and its permutation p-value.
    hellinger_generation_type, pvalue_generation_type : float
        The same for the recorded cells per (generation, type).
    pvalue_population : float
        Mann-Whitney p-value of the number of recorded cells per run.
    runs : (int, int)
    alpha, hellinger_max : float
        The thresholds used.
    """

    hellinger_fluorescence: float
    pvalue_fluorescence: float
    hellinger_generation_type: float
    pvalue_generation_type: float
    pvalue_population: float
    runs: tuple
    alpha: float
    hellinger_max: float

    @property
    def agree(self) -> bool:
        """Every distance at most ``hellinger_max`` and every p-value at least ``alpha``."""
        return (self.hellinger_fluorescence <= self.hellinger_max
                and self.hellinger_generation_type <= self.hellinger_max
                and min(self.pvalue_fluorescence, self.pvalue_generation_type, self.pvalue_population) >= self.alpha)

    def __str__(self):
        verdict = "agree" if self.agree else "DIFFER"
        return (f"{self.runs[0]} vs {self.runs[1]} runs: {verdict} "
                f"(fluorescence: Hellinger {self.hellinger_fluorescence:.4f}, p = {self.pvalue_fluorescence:.3f}; "
                f"generation x type: Hellinger {self.hellinger_generation_type:.4f}, "
                f"p = {self.pvalue_generation_type:.3f}; population: p = {self.pvalue_population:.3f}; "
                f"thresholds: Hellinger <= {self.hellinger_max}, p >= {self.alpha})")


def compare_runs(runs_a, runs_b, *, alpha=ALPHA, hellinger_max=HELLINGER_MAX, permutations=999,
                 seed=0) -> Comparison:
    """Do two groups of simulation results come from the same model?

    Parameters
    ----------
    runs_a, runs_b : sequence of SimulationResult
        Runs with the same bin edges and the same number of generations and types
        (e.g. one implementation with seeds 0 .. 19, the other with seeds 100 .. 119).
    alpha, hellinger_max : float
        Thresholds (defaults :data:`ALPHA`, :data:`HELLINGER_MAX`).
    permutations : int
    seed : int

    Returns
    -------
    Comparison
    """
    from scipy.stats import mannwhitneyu

    runs_a, runs_b = list(runs_a), list(runs_b)
    if len(runs_a) < 2 or len(runs_b) < 2:
        raise ValueError(f"each group needs at least 2 runs, got {len(runs_a)} and {len(runs_b)}")
    alpha = check_float(alpha, "alpha", minimum=0, maximum=1)
    hellinger_max = check_float(hellinger_max, "hellinger_max", minimum=0, maximum=1)
    first = runs_a[0]
    for r in runs_a + runs_b:
        if not np.array_equal(r.edges, first.edges) or r.level_counts.shape != first.level_counts.shape:
            raise ValueError("all runs must share the bin edges and the number of generations and types")
    fluo_a = [np.append(r.counts, r.outside) for r in runs_a]
    fluo_b = [np.append(r.counts, r.outside) for r in runs_b]
    h_f, p_f = permutation_pvalue(fluo_a, fluo_b, permutations=permutations, seed=seed)
    h_g, p_g = permutation_pvalue([r.level_counts.ravel() for r in runs_a],
                                  [r.level_counts.ravel() for r in runs_b], permutations=permutations, seed=seed)
    pop = mannwhitneyu([r.recorded for r in runs_a], [r.recorded for r in runs_b], alternative="two-sided")
    return Comparison(h_f, p_f, h_g, p_g, float(pop.pvalue), (len(runs_a), len(runs_b)), alpha, hellinger_max)
