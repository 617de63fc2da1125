"""Problem set 7, question 3 (``ps7.q3``): the level loop with the totals on the device, written on the host: its given
kernels, its reference and its grading. Part of problem set 7 (:mod:`course_lib.cellsim.questions`, which lists it
in ``QUESTIONS``).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ..grading.authoring.harness import fail, function, question, result_test
from ..grading.authoring.coverage import host_coverage_test
from ..grading.authoring.hostcosts import copies_and_allocations_bounds, counted_call, growth_test, judge_bounded


#: The first daughter's share of its mother's fluorescence (the second gets the rest); both shares are exact in
#: binary, so the kernels and the NumPy reference agree to the last bit.
FIRST_SHARE, SECOND_SHARE = 0.375, 0.625
#: Copies a run may make, whatever its number of levels: the initial cells and the totals in, both back out, one
#: spare.
Q3_MAX_COPIES = 5
#: Device allocations a run may make, whatever its number of levels: the initial totals, the two level buffers,
#: the daughters and their keep flags, one spare.
Q3_MAX_ALLOCATIONS = 6


@cuda.jit
def divide_cells(totals, level, phis, daughters, keep, phi_min):
    """Split each live cell of ``level`` into two daughters and flag those to keep (given to the student).

    Parameters
    ----------
    totals : int32 device array (levels + 1,)
        ``totals[level]`` live cells, at the start of ``phis``.
    level : int
    phis : float64 device array (capacity,)
        The level's cells' fluorescence; slots past ``totals[level]`` are ignored.
    daughters : float64 device array (2 capacity,)
        Cell i's daughters go to slots 2 i and 2 i + 1 (shares :data:`FIRST_SHARE` and :data:`SECOND_SHARE`).
    keep : int32 device array (2 capacity,)
        1 where a daughter's fluorescence is at least ``phi_min``, 0 elsewhere among the live cells' daughters.
    phi_min : float
    """
    i = cuda.grid(1)
    # The level's total is read on the device: the grid covers the capacity, threads past the total wait out.
    if i < totals[level] and i < phis.shape[0]:
        first = phis[i] * FIRST_SHARE
        second = phis[i] * SECOND_SHARE
        daughters[2 * i] = first
        daughters[2 * i + 1] = second
        keep[2 * i] = 1 if first >= phi_min else 0
        keep[2 * i + 1] = 1 if second >= phi_min else 0


@cuda.jit
def keep_daughters(totals, level, daughters, keep, next_phis):
    """Pack the kept daughters of ``level`` into ``next_phis`` and count them in ``totals[level + 1]`` (given).

    Parameters
    ----------
    totals : int32 device array (levels + 1,)
        ``totals[level + 1]`` must be 0 before the launch; each kept daughter adds 1 with an atomic.
    level : int
    daughters, keep : device arrays (2 capacity,)
        As :func:`divide_cells` leaves them.
    next_phis : float64 device array (capacity,)
        The next level's cells, in the order the atomics hand out the slots (any order).
    """
    j = cuda.grid(1)
    if j < 2 * totals[level] and j < keep.shape[0] and keep[j] == 1:
        slot = cuda.atomic.add(totals, level + 1, 1)
        if slot < next_phis.shape[0]:
            next_phis[slot] = daughters[j]


def levels_reference(phis, levels, phi_min):
    """The trusted loop, on the host: the totals of every level and the last level's fluorescence, sorted.

    Returns
    -------
    totals : int64 ndarray (levels + 1,)
    final : float64 ndarray (totals[-1],)
    """
    alive = np.asarray(phis, np.float64)
    counts = [alive.size]
    for _ in range(levels):
        pairs = np.stack([alive * FIRST_SHARE, alive * SECOND_SHARE], axis=1).ravel()
        alive = pairs[pairs >= phi_min]
        counts.append(alive.size)
    return np.array(counts, np.int64), np.sort(alive)


def levels_case(n, levels, seed, block=64):
    """``inputs`` data: n cells of fluorescence 50-4000, phi_min 10, the capacity the trusted loop needs."""
    rng = np.random.default_rng(seed)
    phis = np.round(rng.uniform(50.0, 4000.0, n), 3)
    phi_min = 10.0
    counts, _ = levels_reference(phis, levels, phi_min)
    return {"phis": phis, "levels": int(levels), "phi_min": phi_min, "capacity": int(counts.max()),
            "block": int(block)}


def _levels_inputs(n, levels, block=64):
    return lambda rng, info: levels_case(n, levels, int(rng.integers(1 << 30)), block)


def _hidden_levels(rng, info):
    return levels_case(int(rng.integers(5, 90)), int(rng.integers(4, 7)), int(rng.integers(1 << 30)),
                       int(rng.choice((32, 64, 128))))


def _run_levels(answer, data):
    """Runs the student's host program on copies of the inputs, measuring its launches, copies and allocations."""
    out, counts = counted_call(answer.value, np.array(data["phis"], np.float64), data["levels"], data["phi_min"],
                               data["capacity"], data["block"])
    if not isinstance(out, tuple) or len(out) != 2:
        raise fail("run_levels must return a pair (totals, final_phis)")
    return {"totals": np.asarray(out[0]), "phis": np.asarray(out[1]), **counts}


def _levels_label(data):
    return f"for {len(data['phis'])} cells, {data['levels']} levels, block {data['block']}"


def judge_levels(data, got):
    """The totals of every level equal the trusted loop's, and the last level holds its cells (any order)."""
    want_totals, want_phis = levels_reference(data["phis"], data["levels"], data["phi_min"])
    totals = np.asarray(got["totals"]).ravel()
    if totals.shape != want_totals.shape or not np.array_equal(totals, want_totals):
        raise fail(f"totals {_levels_label(data)} = {totals.tolist()[:8]}, expected {want_totals.tolist()[:8]}",
                   "totals")
    phis = np.asarray(got["phis"], np.float64).ravel()
    if phis.shape != want_phis.shape or not np.array_equal(np.sort(phis), want_phis):
        differ = int(np.sum(np.sort(phis) != want_phis)) if phis.shape == want_phis.shape else "their number"
        raise fail(f"the last level's fluorescence {_levels_label(data)}: {phis.size} values, expected "
                   f"{want_phis.size}; {differ} differ (compared after sorting)", "value")


def judge_level_counts(data, got):
    """Right results, two launches per level, and copies and allocations that do not grow with the levels."""
    judge_levels(data, got)
    levels = data["levels"]
    judge_bounded((("launches", got["launches"], 2 * levels, "two per level"),
                   *copies_and_allocations_bounds(got, Q3_MAX_COPIES, Q3_MAX_ALLOCATIONS)),
                  f"for {levels} levels")


Q3 = question(
    "ps7.q3", "the level loop on the host: totals kept on the device", 4,
    answer=function("run_levels", allowed=(divide_cells, keep_daughters)),
    tolerance="exact (shares exact in binary); the last level's cells in any order",
    tests=[
        result_test("one level, three cells", 1, inputs=_levels_inputs(3, 1), run=_run_levels, judge=judge_levels),
        result_test("five levels, 40 cells (block 32)", 1, inputs=_levels_inputs(40, 5, 32), run=_run_levels,
                    judge=judge_levels),
        result_test("hidden: random cells, levels and block", 0.5, hidden=True, inputs=_hidden_levels,
                    run=_run_levels, judge=judge_levels),
        growth_test("launches, copies and allocations per run (record(); six levels, 50 cells, and three: none "
                    "grows with the levels)", 1.5, inputs=(_levels_inputs(50, 6), _levels_inputs(50, 3)),
                    run=_run_levels, judge=judge_level_counts, steps=lambda data: data["levels"]),
        host_coverage_test("hidden: every statement of your host program ran in the grader's runs"),
    ])
