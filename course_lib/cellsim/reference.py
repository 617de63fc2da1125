"""Trusted reference: a sequential, event-driven simulator in float64 Python.

Every cell is an event in a priority queue, keyed by the time of its next division
(infinite for a quiescent cell). The earliest event is processed first, by the unit's one
rule (:data:`course_lib.cellsim.FATE_RULE`), time checked first:

* after tau_max -> the cell is alive at the end of the simulation: recorded with its
  fluorescence (every later event is after tau_max too);
* else daughters with phi / 2 < phi_min -> discarded;
* otherwise -> two daughters with phi / 2, born at the division time, each with a new
  timer, are queued.

Two sources of random numbers:

* ``streams="philox"``: the counter-based numbers of the kernels (cell id, generation),
  so the result must equal theirs *exactly*; the rules above are written here again,
  independently of the kernels' ``fate``;
* ``streams="numpy"``: NumPy's PCG64 generator drawn in event order, types with
  ``Generator.random`` and timers by rejection from ``Generator.normal`` - an
  independent implementation of the model, compared with the others statistically.

This is also the "straightforward Python event loop" the benchmark measures.

Statistical validation of a stochastic simulator against this reference: two
implementations with different random streams never give equal histograms; they
simulate the same model when their *distributions* agree over many runs. The unit of
independence is the run (cells of one tree are correlated: sisters share a fluorescence
and a birth time), so :func:`compare_runs` compares groups of runs:

* :func:`hellinger` distance between the pooled, normalised histograms (0 = identical,
  1 = disjoint), required below :data:`HELLINGER_MAX`;
* a permutation two-sample test on that distance (:func:`permutation_pvalue`): runs are
  shuffled between the two groups, and the p-value is the fraction of shuffles at least
  as far apart as the observed groups; required above :data:`ALPHA`;
* the same for the recorded cells per (generation, type), and a Mann-Whitney test on the
  number of recorded cells per run.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from .._validate import check_array, check_choice, check_flag, check_float, check_int, check_seed
from . import _core
from ._inputs import simulation_inputs
from ._result import SimulationResult, bin_counts, resolve_edges
from .model import depth_bound

__all__ = ["ALPHA", "HELLINGER_MAX", "STREAMS", "Comparison", "compare_runs", "hellinger", "permutation_pvalue",
           "simulate_reference"]

STREAMS = ("philox", "numpy")

_python = None


def _core_python():
    global _python
    if _python is None:
        _python = _core.build("python")
    return _python


def _truncated_normal(rng, mean, std):
    """Normal(mean, std) conditioned on > 0, by rejection."""
    if std == 0.0:
        return mean
    while True:
        x = rng.normal(mean, std)
        if x > 0.0:
            return x


def simulate_reference(histogram, types, *, tau_max, phi_min, seed=0, bins=None, streams="philox",
                       return_cells=False):
    """Simulate with the event-driven reference.

    Parameters
    ----------
    histogram : InitialHistogram, str, (fluorescence, counts) or array of shape (B, 2)
    types : CellTypes, str or array of shape (T, 3)
    tau_max : float
        Hours simulated (>= 0).
    phi_min : float
        Smallest fluorescence a cell may have (> 0).
    seed : int
    bins : None, int or array
        Output bin edges (see :func:`~course_lib.cellsim.simulate`).
    streams : {"philox", "numpy"}
        Counter-based numbers shared with the kernels, or NumPy's generator.
    return_cells : bool
        Also return the recorded cells.

    Returns
    -------
    SimulationResult, or (SimulationResult, dict) with ``return_cells``
        The dict holds arrays of the recorded cells: ``id`` (int64), ``generation``
        (int64), ``fluorescence`` and ``birth`` (float64), ``type`` (int64), in the order
        they were recorded.
    """
    hist, cell_types, tau_max, phi_min, seed = simulation_inputs(histogram, types, tau_max, phi_min, seed)
    streams = check_choice(streams, "streams", STREAMS)
    return_cells = check_flag(return_cells, "return_cells")
    return _simulate_checked(hist, cell_types, tau_max, phi_min, seed, resolve_edges(bins, hist, phi_min), streams,
                             return_cells)


def _simulate_checked(hist, cell_types, tau_max, phi_min, seed, edges, streams="philox", return_cells=False):
    """:func:`simulate_reference` of checked inputs (``simulate`` checks them once, in ``prepare_problem``)."""
    depth = depth_bound(hist.fluorescence.max(), phi_min)
    params = cell_types.params()
    core = _core_python()
    table = _core.normal_table()
    k0, k1 = _core.seed_words(seed)
    rng = np.random.default_rng(seed) if streams == "numpy" else None
    cumulative = hist.cumulative
    means, stds = cell_types.means, cell_types.stds

    def timer(cell_id, generation, cell_type):
        if means[cell_type] < 0:
            return math.inf
        if rng is not None:
            return _truncated_normal(rng, means[cell_type], stds[cell_type])
        u = core.cell_uniform(cell_id, generation, _core.STREAM_TIMER, k0, k1)
        return float(core.division_timer(u, params[cell_type, 1], params[cell_type, 2], params[cell_type, 3], table))

    queue = []  # (division time, tie-break, id, generation, fluorescence, birth, type)
    order = 0
    bin_of_cell = np.repeat(np.arange(hist.fluorescence.size), hist.counts)
    for cell_id in range(hist.n_cells):
        if rng is not None:
            cell_type = min(int(np.searchsorted(params[:, 0], rng.random(), side="right")), cell_types.n_types - 1)
        else:
            u = core.cell_uniform(cell_id, 0, _core.STREAM_TYPE, k0, k1)
            cell_type = int(core.initial_type(u, params))
        phi = float(hist.fluorescence[bin_of_cell[cell_id]])
        when = 0.0 + timer(cell_id, 0, cell_type)
        queue.append((when, order, cell_id, 0, phi, 0.0, cell_type))
        order += 1
    heapq.heapify(queue)

    recorded = {"id": [], "generation": [], "fluorescence": [], "birth": [], "type": []}
    divisions = discarded = 0
    while queue:
        when, _, cell_id, generation, phi, birth, cell_type = heapq.heappop(queue)
        if when > tau_max:  # alive at tau_max (the queue's earliest event is after the end)
            for key, value in zip(recorded, (cell_id, generation, phi, birth, cell_type)):
                recorded[key].append(value)
            continue
        if phi * 0.5 < phi_min:
            discarded += 1
            continue
        divisions += 1
        for daughter in (2 * cell_id, 2 * cell_id + 1):
            daughter_when = when + timer(daughter, generation + 1, cell_type)
            heapq.heappush(queue, (daughter_when, order, daughter, generation + 1, phi * 0.5, when, cell_type))
            order += 1

    cells = {
        "id": np.array(recorded["id"], dtype=np.int64),
        "generation": np.array(recorded["generation"], dtype=np.int64),
        "fluorescence": np.array(recorded["fluorescence"], dtype=np.float64),
        "birth": np.array(recorded["birth"], dtype=np.float64),
        "type": np.array(recorded["type"], dtype=np.int64),
    }
    counts, outside = bin_counts(cells["fluorescence"], edges)
    level_counts = np.zeros((depth + 1, cell_types.n_types), dtype=np.int64)
    np.add.at(level_counts, (cells["generation"], cells["type"]), 1)
    result = SimulationResult(edges, counts, outside, level_counts, divisions, discarded, tau_max, phi_min, seed,
                              f"reference[{streams}]", {"events": divisions + discarded + len(cells["id"])})
    return (result, cells) if return_cells else result


# ----------------------------------------------------------------------------------------------
# Statistical validation: do two groups of runs simulate the same model?
# ----------------------------------------------------------------------------------------------

#: A two-sample test passes when its p-value is at least this.
ALPHA = 0.01
#: Pooled histograms of two groups of runs must be at most this far apart (Hellinger distance).
HELLINGER_MAX = 0.05


def _counts(value, name, ndim=None):
    """A histogram (or one per run) as float64: finite, non-negative, real."""
    array = check_array(value, name, ndim=ndim, dtype="iuf", finite=True, allow_empty=False)
    if np.any(array < 0):
        raise ValueError(f"{name} must hold counts >= 0, got {array.min()}")
    return array.astype(np.float64)


def hellinger(p, q) -> float:
    """Hellinger distance between two histograms (normalised here): sqrt(1 - sum sqrt(p_i q_i)), in [0, 1]."""
    p = _counts(p, "p").ravel()
    q = _counts(q, "q").ravel()
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
    a = _counts(group_a, "group_a", ndim=2)
    b = _counts(group_b, "group_b", ndim=2)
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"group_a and group_b must have the same number of bins, got {a.shape[1]} and {b.shape[1]}")
    permutations = check_int(permutations, "permutations", minimum=1)
    seed = check_seed(seed)
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


def _runs(value, name):
    """A group of at least 2 SimulationResult, as a list."""
    if isinstance(value, (list, tuple)) and all(isinstance(r, SimulationResult) for r in value):
        if len(value) < 2:
            raise ValueError(f"{name} needs at least 2 runs, got {len(value)}")
        return list(value)
    raise ValueError(f"{name} must be a list of SimulationResult (one per run), got {type(value).__name__}")


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

    runs_a, runs_b = _runs(runs_a, "runs_a"), _runs(runs_b, "runs_b")
    alpha = check_float(alpha, "alpha", minimum=0, maximum=1)
    hellinger_max = check_float(hellinger_max, "hellinger_max", minimum=0, maximum=1)
    permutations = check_int(permutations, "permutations", minimum=1)
    seed = check_seed(seed)
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
