"""What a simulation returns, and the bins of its output histogram."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._validate import check_array, check_float, check_int
from ._inputs import InitialHistogram, as_histogram

__all__ = ["SimulationResult", "default_edges", "resolve_edges"]

#: Output histograms have at most this many bins (the kernels keep them in shared memory).
MAX_BINS = 4096


def default_edges(histogram: InitialHistogram, phi_min: float, per_octave: int = 8) -> np.ndarray:
    """Log2-spaced bin edges covering every fluorescence a recorded cell can have.

    A recorded cell has phi_0 (never divided) or phi_0 / 2**g >= phi_min, so the edges go
    from min(phi_min, min phi_0) to max phi_0, rounded out to whole octaves. With edges at
    2**(k / per_octave), halving the fluorescence moves a cell exactly ``per_octave`` bins
    down: each generation is one peak, one octave below the previous.

    Returns
    -------
    ndarray of shape (B + 1,), float64
    """
    histogram = as_histogram(histogram)
    phi_min = check_float(phi_min, "phi_min", minimum=0, min_inclusive=False)
    per_octave = check_int(per_octave, "per_octave", minimum=1, maximum=64)
    low = min(phi_min, float(histogram.fluorescence.min()))
    high = float(histogram.fluorescence.max())
    first = math.floor(math.log2(low) * per_octave)
    last = math.floor(math.log2(high) * per_octave) + 1
    edges = 2.0 ** (np.arange(first, last + 1) / per_octave)
    edges[0] = min(edges[0], low)  # guard against rounding in log2
    edges[-1] = max(edges[-1], high)
    return edges


def resolve_edges(bins, histogram: InitialHistogram, phi_min: float) -> np.ndarray:
    """Bin edges from ``bins``: None (:func:`default_edges`), an int (bins per octave) or the edges."""
    if bins is None:
        return default_edges(histogram, phi_min)
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, (bool, np.bool_)):
        return default_edges(histogram, phi_min, int(bins))
    edges = check_array(bins, "bins", ndim=1, dtype="iuf", finite=True).astype(np.float64)
    if edges.size < 2:
        raise ValueError(f"bins must hold at least 2 edges, got {edges.size}")
    if edges.size - 1 > MAX_BINS:
        raise ValueError(f"bins gives {edges.size - 1} bins; at most {MAX_BINS} are supported")
    if np.any(np.diff(edges) <= 0):
        raise ValueError("bins must be strictly increasing edges")
    return edges


def bin_counts(values, edges) -> tuple:
    """Histogram of ``values`` over ``edges`` with the kernels' rule; returns (counts, outside)."""
    values = np.asarray(values, dtype=np.float64)
    inside = (values >= edges[0]) & (values <= edges[-1])
    index = np.searchsorted(edges, values[inside], side="right") - 1
    index[index == edges.size - 1] = edges.size - 2  # the last bin is closed
    counts = np.bincount(index, minlength=edges.size - 1).astype(np.int64)
    return counts, int(np.count_nonzero(~inside))


@dataclass(frozen=True)
class SimulationResult:
    """Outcome of one simulation.

    Attributes
    ----------
    edges : ndarray of shape (B + 1,), float64
        Bin edges of the output histogram.
    counts : ndarray of shape (B,), int64
        Recorded cells (alive at tau_max) per fluorescence bin.
    outside : int
        Recorded cells whose fluorescence is outside the edges.
    level_counts : ndarray of shape (G + 1, T), int64
        Recorded cells per generation (number of divisions since X_0) and type.
    divisions : int
        Division events.
    discarded : int
        Cells whose daughters would have fallen below phi_min.
    tau_max, phi_min : float
    seed : int
    method : str
    stats : dict
        How it ran: levels, batches, launches, device bytes, copies (depends on the method).
    """

    edges: np.ndarray = field(repr=False)
    counts: np.ndarray = field(repr=False)
    outside: int
    level_counts: np.ndarray = field(repr=False)
    divisions: int
    discarded: int
    tau_max: float
    phi_min: float
    seed: int
    method: str
    stats: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def recorded(self) -> int:
        """Cells alive at tau_max (the population the histogram counts)."""
        return int(self.level_counts.sum())

    @property
    def cells_simulated(self) -> int:
        """Every cell whose fate was decided: recorded + discarded + divided."""
        return self.recorded + self.discarded + self.divisions

    @property
    def by_type(self) -> np.ndarray:
        """Recorded cells per type, shape (T,)."""
        return self.level_counts.sum(axis=0)

    @property
    def by_generation(self) -> np.ndarray:
        """Recorded cells per generation, shape (G + 1,)."""
        return self.level_counts.sum(axis=1)

    @property
    def centers(self) -> np.ndarray:
        """Geometric centres of the bins (fluorescence is plotted on a log axis)."""
        return np.sqrt(self.edges[:-1] * self.edges[1:])

    def same_as(self, other: "SimulationResult") -> bool:
        """True when both runs produced exactly the same counts (histogram, per generation and type,
        divisions and discarded cells)."""
        return (np.array_equal(self.edges, other.edges) and np.array_equal(self.counts, other.counts)
                and self.outside == other.outside and self.level_counts.shape == other.level_counts.shape
                and np.array_equal(self.level_counts, other.level_counts) and self.divisions == other.divisions
                and self.discarded == other.discarded)

    def __repr__(self):
        return (f"SimulationResult(method={self.method!r}, tau_max={self.tau_max:g}, phi_min={self.phi_min:g}, "
                f"seed={self.seed}, recorded={self.recorded}, divisions={self.divisions}, "
                f"discarded={self.discarded}, generations={self.level_counts.shape[0]})")
