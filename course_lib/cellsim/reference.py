"""Trusted reference: a sequential, event-driven simulator in float64 Python.

Every cell is an event in a priority queue, keyed by the time of its next division
(infinite for a quiescent cell). The earliest event is processed first:

* after tau_max -> the cell is alive at the end of the simulation: recorded with its
  fluorescence (every later event is after tau_max too);
* daughters below phi_min -> discarded;
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
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from .._validate import check_choice, check_float, check_seed
from . import _core
from ._inputs import as_histogram, as_types
from ._result import SimulationResult, bin_counts, resolve_edges
from .model import depth_bound

__all__ = ["STREAMS", "simulate_reference"]

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
    hist = as_histogram(histogram)
    cell_types = as_types(types)
    tau_max = check_float(tau_max, "tau_max", minimum=0)
    phi_min = check_float(phi_min, "phi_min", minimum=0, min_inclusive=False)
    seed = check_seed(seed)
    seed = 0 if seed is None else seed
    streams = check_choice(streams, "streams", STREAMS)
    edges = resolve_edges(bins, hist, phi_min)
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
