"""Does the one-pass filter give the lesson's bounds and patterns without the flag matrix, and are the
inputs of mine() checked once?"""

from itertools import combinations

import numpy as np
import pytest

from course_lib import colocation as co
from course_lib.colocation import _checks, api, model
from course_lib.colocation.profiling import kernel_launches
from course_lib.sim import record


def _mined(points, features, r, threshold, **options):
    with record() as log:
        result = co.mine(points, features, r, threshold, method="gpu", **options)
    return result, log


def _ready_miner(data, n_features, preprocess, **option):
    """A device miner (r = 1, block 32) past preprocessing, its feature totals uploaded: what the filter and
    the refine read."""
    grid = co.grid_for(data.points, 1.0, n_features)
    miner = api._DeviceMiner(data.points, data.features, 1.0, n_features, grid, block=32, preprocess=preprocess,
                             batched=True, host_memory="pageable", **option)
    miner._preprocess()
    miner._d_feature_count = miner._upload(miner.feature_count.astype(np.int32))
    return miner


def _line(n, vertical=False):
    points = np.column_stack([np.linspace(0.0, 9.0, n), np.zeros(n)])
    return (points[:, ::-1].copy() if vertical else points), np.arange(n) % 3


CASES = {
    "planted 31": lambda: co.planted_colocations(31, 4, groups=((0, 1),), extent=5.0, seed=3),
    "one row": lambda: _line(23),
    "one instance": lambda: (np.zeros((1, 2)), np.zeros(1, int)),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_the_fused_filter_mines_what_the_reference_mines(case):
    made = CASES[case]()
    points, features = (made.points, made.features) if hasattr(made, "points") else made
    expected = co.mine(points, features, 1.0, 0.2, method="reference").patterns
    two_step, two_log = _mined(points, features, 1.0, 0.2)
    fused, fused_log = _mined(points, features, 1.0, 0.2, filter="fused")
    assert fused.patterns == two_step.patterns == expected
    assert fused.levels == two_step.levels  # the same candidates pass the filter
    per_kernel = kernel_launches(fused_log)
    assert per_kernel.get("quadruplet_filter_kernel", 0) == per_kernel.get("candidate_bound_kernel", 0) == 0
    assert per_kernel.get("fused_filter_kernel", 0) == len(fused.levels)  # one launch per level, batched
    # No flag per (candidate, quadruplet) and no bound buffer: fewer allocations and bytes (the lesson's
    # filter reuses its buffers across levels, growing them when a level has more candidates).
    if fused.levels:
        assert len(fused_log.allocations) <= len(two_log.allocations) - 2
        assert sum(fused_log.allocations) < sum(two_log.allocations)


def test_the_bounds_are_the_lesson_filter_s_bounds():
    data = co.planted_colocations(97, 5, groups=((0, 1),), extent=6.0, seed=2)
    candidates = list(combinations(range(5), 2))
    bounds = [_ready_miner(data, 5, "device", filter=name)._filter(candidates, 2) for name in ("two_step", "fused")]
    np.testing.assert_array_equal(bounds[0], bounds[1])
    assert 0 < bounds[1].min() and bounds[1].max() <= 1


def test_per_candidate_groups_use_the_fused_filter_too():
    data = co.planted_colocations(40, 3, groups=((0, 1),), extent=3.0, seed=5)
    fused, log = _mined(data.points, data.features, 1.0, 0.3, filter="fused", batched=False)
    assert fused.patterns == co.mine(data.points, data.features, 1.0, 0.3, method="reference").patterns
    assert kernel_launches(log)["fused_filter_kernel"] == sum(level.candidates for level in fused.levels)


def test_an_unknown_filter_is_refused():
    with pytest.raises(ValueError, match="filter"):
        co.mine(np.zeros((2, 2)), [0, 1], 1.0, 0.5, filter="three_step")


@pytest.mark.parametrize("method", ["gpu", "cpu", "reference"])
def test_points_are_checked_once(monkeypatch, method):
    calls = []
    original = _checks.check_points

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    for module in (_checks, model):
        monkeypatch.setattr(module, "check_points", counting)
    data = co.planted_colocations(30, 3, groups=((0, 1),), extent=3.0, seed=1)
    co.mine(data.points, data.features, 1.0, 0.3, method=method, max_size=2)
    assert len(calls) == 1


@pytest.mark.parametrize("extent", [2.0, 12.0], ids=["dense: rows past KEPT searched again", "sparse"])
def test_searching_once_writes_the_lesson_s_table(extent):
    from course_lib.colocation._fused_kernels import KEPT

    data = co.planted_colocations(37, 3, groups=((0, 1, 2),), extent=extent, seed=7)
    candidates = list(combinations(range(3), 2))
    tables = []
    for search in ("twice", "once"):
        # Host preprocessing: the cell-to-instance index in a fixed order (the device's, built with atomics,
        # may order the instances of a cell differently from run to run, and the rows follow it).
        miner = _ready_miner(data, 3, "host", search=search)
        d_table, rows = miner._singleton_tables()["all"]
        refine = miner._refine_once if search == "once" else miner._refine
        with record() as log:
            d_new, total, part = refine(d_table, rows, 2, candidates, [c[0] for c in candidates], 3)
        tables.append((d_new.copy_to_host()[: 3 * total], part, kernel_launches(log)))
    (twice, part_twice, launches_twice), (once, part_once, launches_once) = tables
    np.testing.assert_array_equal(once, twice)
    np.testing.assert_array_equal(part_once, part_twice)
    assert launches_twice["extend_count_kernel"] == launches_twice["extend_fill_kernel"] == 1
    assert launches_once["extend_keep_kernel"] == launches_once["place_kept_kernel"] == 1
    assert "extend_count_kernel" not in launches_once and "extend_fill_kernel" not in launches_once
    per_row = np.bincount(once.reshape(-1, 3)[:, 0], minlength=len(data.features))
    if extent == 2.0:
        assert per_row.max() > KEPT  # the second search ran for some rows


def test_searching_once_mines_the_same_patterns():
    data = co.planted_colocations(33, 4, groups=((0, 1, 2),), extent=3.0, seed=8)
    expected = co.mine(data.points, data.features, 1.0, 0.2, method="reference").patterns
    assert co.mine(data.points, data.features, 1.0, 0.2, search="once", filter="fused").patterns == expected
