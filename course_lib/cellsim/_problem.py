"""The validated inputs of a simulation, as every simulator of Unit 7 reads them.

:func:`~course_lib.cellsim.api.prepare_problem` builds a :class:`Problem`; the device methods
(:mod:`~course_lib.cellsim.api`) and the CPU simulator (:mod:`~course_lib.cellsim.cpu`) take it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._inputs import CellTypes, InitialHistogram
from ._result import SimulationResult

__all__ = ["Problem"]


@dataclass(frozen=True)
class Problem:
    """A validated simulation: the inputs as the simulators read them.

    Attributes
    ----------
    histogram : InitialHistogram
        H(0): the initial fluorescence values and how many cells have each.
    types : CellTypes
        The cell types' proportions and division-time distributions.
    tau_max, phi_min : float
        Hours simulated, and the smallest fluorescence a cell may have.
    seed : int
        Key of the counter-based random numbers.
    edges : ndarray of shape (B + 1,), float64
        The output histogram's bin edges.
    depth : int
        Deepest generation that can exist (:func:`~course_lib.cellsim.model.depth_bound`).
    params : ndarray of shape (T, 4), float64
        :meth:`CellTypes.params`.
    table : ndarray, float64
        Inverse normal CDF (:func:`~course_lib.cellsim._core.normal_table`).
    k0, k1 : int
        The seed as Philox key words.
    """

    histogram: InitialHistogram
    types: CellTypes
    tau_max: float
    phi_min: float
    seed: int
    edges: np.ndarray
    depth: int
    params: np.ndarray
    table: np.ndarray
    k0: int
    k1: int

    @property
    def n_cells(self) -> int:
        return self.histogram.n_cells

    @property
    def n_slots(self) -> int:
        """Histogram bins + 1 (cells outside the edges)."""
        return int(self.edges.size)

    def result(self, hist, level_counts, divisions, discarded, method, stats) -> SimulationResult:
        hist = np.asarray(hist, dtype=np.int64)
        return SimulationResult(self.edges, hist[:-1].copy(), int(hist[-1]), np.asarray(level_counts, np.int64),
                                int(divisions), int(discarded), self.tau_max, self.phi_min, self.seed, method, stats)
