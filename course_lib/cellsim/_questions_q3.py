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
#: Threads and blocks one SM of the course's GPUs (compute capability 8.0 and 9.0) holds at once.
SM_THREADS, SM_BLOCKS = 2048, 32


@cuda.jit
def divide_cells(totals, level, phis, daughters, keep, phi_min):
    """Split each live cell of ``level`` into two daughters and flag those to keep (given to the student).

    A grid-stride loop: thread t of a grid of T threads takes cells t, t + T, t + 2 T... below the level's total,
    so a grid of any size covers the level.

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
    # The level's total is read on the device: the host never needs it to size the grid.
    alive = min(totals[level], phis.shape[0])
    for i in range(cuda.grid(1), alive, cuda.gridsize(1)):
        first = phis[i] * FIRST_SHARE
        second = phis[i] * SECOND_SHARE
        daughters[2 * i] = first
        daughters[2 * i + 1] = second
        keep[2 * i] = 1 if first >= phi_min else 0
        keep[2 * i + 1] = 1 if second >= phi_min else 0


@cuda.jit
def keep_daughters(totals, level, daughters, keep, next_phis):
    """Pack the kept daughters of ``level`` into ``next_phis`` and count them in ``totals[level + 1]`` (given).

    A grid-stride loop over the ``2 totals[level]`` daughters, like :func:`divide_cells`.

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
    born = min(2 * totals[level], keep.shape[0])
    for j in range(cuda.grid(1), born, cuda.gridsize(1)):
        if keep[j] == 1:
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


def levels_case(n, levels, seed, block=64, sm_count=1):
    """``inputs`` data: n cells of fluorescence 50-4000, phi_min 10, the capacity the trusted loop needs, the block
    and the SMs of the device the grid is chosen for."""
    rng = np.random.default_rng(seed)
    phis = np.round(rng.uniform(50.0, 4000.0, n), 3)
    phi_min = 10.0
    counts, _ = levels_reference(phis, levels, phi_min)
    return {"phis": phis, "levels": int(levels), "phi_min": phi_min, "capacity": int(counts.max()),
            "block": int(block), "sm_count": int(sm_count)}


def device_grid_bounds(sm_count, block):
    """The grids accepted as sized for a device of ``sm_count`` SMs: about as many blocks as its SMs hold at once,
    ``sm_count * min(SM_BLOCKS, SM_THREADS // block)``, within a factor of two either way.

    Returns
    -------
    (int, int)
        The fewest and the most blocks.
    """
    resident = sm_count * min(SM_BLOCKS, SM_THREADS // block)
    return max(1, resident // 2), 2 * resident


def _levels_inputs(n, levels, block=64):
    return lambda rng, info: levels_case(n, levels, int(rng.integers(1 << 30)), block)


def _hidden_levels(rng, info):
    return levels_case(int(rng.integers(5, 90)), int(rng.integers(4, 7)), int(rng.integers(1 << 30)),
                       int(rng.choice((32, 64, 128))))


def _run_levels(answer, data):
    """Runs the student's host program on copies of the inputs, measuring its launches (and their grids), copies
    and allocations."""
    from ..sim import record

    with record() as log:
        out, counts = counted_call(answer.value, np.array(data["phis"], np.float64), data["levels"],
                                   data["phi_min"], data["capacity"], data["block"], data["sm_count"])
    if not isinstance(out, tuple) or len(out) != 2:
        raise fail("run_levels must return a pair (totals, final_phis)")
    grids = [int(np.prod(launch.griddim)) for launch in log.launches]
    return {"totals": np.asarray(out[0]), "phis": np.asarray(out[1]), "grids": grids, **counts}


def _levels_label(data):
    return f"for {len(data['phis'])} cells, {data['levels']} levels, block {data['block']}"


def grid_runs(rng, info):
    """Three runs of drawn cells: one level in blocks of 128 on one SM, at the capacity the cells need and at a
    capacity whose daughters would need more blocks than the device's grid allows, then two levels in blocks of 32
    on 2 or 3 SMs at such a capacity. Few levels: every thread of a grid costs the simulator, whether it finds work
    or not."""
    seed, sm_count = int(rng.integers(1 << 30)), int(rng.integers(2, 4))
    one_sm = levels_case(int(rng.integers(10, 30)), 1, seed, 128, 1)
    several = levels_case(int(rng.integers(5, 15)), 2, seed + 1, 32, sm_count)
    return {"runs": [one_sm, {**one_sm, "capacity": _past_device_grid(1, 128)},
                     {**several, "capacity": _past_device_grid(sm_count, 32)}]}


def _past_device_grid(sm_count, block):
    """A capacity whose 2 capacity daughters need more blocks of ``block`` than a device-sized grid may have."""
    return device_grid_bounds(sm_count, block)[1] * block // 2 + block


def _run_grids(answer, data):
    return [_run_levels(answer, run) for run in data["runs"]]


def judge_grids(data, got):
    """Right results in every run, and every launch's grid sized for the device whatever the capacity: at most
    twice the blocks its SMs hold at once, and, where the capacity has work for them, at least half."""
    if type(got) is not list or len(got) != len(data["runs"]) or not all(isinstance(g, dict) for g in got):
        raise fail("the runs did not come back", "answer")
    for run, result in zip(data["runs"], got):
        judge_levels(run, result)
        sm_count, block, capacity = run["sm_count"], run["block"], run["capacity"]
        low, high = device_grid_bounds(sm_count, block)
        where = f"with sm_count = {sm_count}, block {block} and capacity {capacity}"
        grids = [int(g) for g in result["grids"]]
        if not grids:
            raise fail(f"no launch {where}", "answer")
        if max(grids) > high:
            failure = fail(f"a grid of {max(grids)} blocks {where}: more blocks than the device holds at once "
                           f"(at most {high} accepted); a grid sized for the capacity grows with it", "grid",
                           public=True)
            failure.measurement = {"measured": float(max(grids)), "low": float(low), "high": float(high),
                                   "unit": "blocks per launch"}
            raise failure
        if capacity * 2 > high * block and min(grids) < low:
            failure = fail(f"a grid of {min(grids)} blocks {where}: the device's SMs hold about {2 * low} blocks at "
                           f"once (at least {low} accepted); most of them would stay idle", "grid", public=True)
            failure.measurement = {"measured": float(min(grids)), "low": float(low), "high": float(high),
                                   "unit": "blocks per launch"}
            raise failure


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
        result_test("one level, three cells", 1, inputs=_levels_inputs(3, 1, 32), run=_run_levels, judge=judge_levels),
        result_test("five levels, 40 cells (block 32)", 1, inputs=_levels_inputs(40, 5, 32), run=_run_levels,
                    judge=judge_levels),
        result_test("hidden: random cells, levels and block", 0.5, hidden=True, inputs=_hidden_levels,
                    run=_run_levels, judge=judge_levels),
        growth_test("launches, copies and allocations per run (record(); six levels, 50 cells, and three: none "
                    "grows with the levels)", 1, inputs=(_levels_inputs(50, 6, 32), _levels_inputs(50, 3, 32)),
                    run=_run_levels, judge=judge_level_counts, steps=lambda data: data["levels"]),
        result_test("the grid: sized for the device, not for the capacity (record(); two capacities, 1 to 3 SMs)",
                    0.5, technique=True, inputs=grid_runs, run=_run_grids, judge=judge_grids),
        host_coverage_test("hidden: every statement of your host program ran in the grader's runs"),
    ])
