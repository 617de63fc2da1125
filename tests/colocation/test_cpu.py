"""The compiled CPU miner's filter gives the model's upper bound, bit for bit, on awkward grids."""

from itertools import combinations

import numpy as np
import pytest

from course_lib import colocation as co
from course_lib.colocation.cpu import _filter_index, _pi_upper_bounds

#: (points, n_features): one cell, a single row, a single column, two columns, a wide grid, > 64 features.
GRIDS = {
    "one cell": (np.random.default_rng(0).uniform(0, 0.5, (15, 2)), 4),
    "single row": (np.column_stack([np.linspace(0, 9, 30), np.zeros(30)]), 4),
    "single column": (np.column_stack([np.zeros(30), np.linspace(0, 9, 30)]), 4),
    "two columns": (np.random.default_rng(1).uniform(0, [1.5, 6.0], (40, 2)), 5),
    "wide grid": (np.random.default_rng(2).uniform(0, [12.0, 5.0], (300, 2)), 6),
    "70 features (two mask words)": (np.random.default_rng(3).uniform(0, 6.0, (600, 2)), 70),
}


@pytest.mark.parametrize("name", GRIDS)
def test_compiled_bounds_equal_pi_upper_bound(name):
    points, n_features = GRIDS[name]
    rng = np.random.default_rng(len(points))
    features = rng.integers(0, n_features, len(points)).astype(np.int32)
    features[0] = n_features - 1  # the last feature word is used
    grid = co.grid_for(points, 1.0, n_features)
    counts = co.count_map(grid, points, features, n_features)
    fc = np.bincount(features, minlength=n_features).astype(np.int64)
    for k in (2, 3):
        candidates = list(combinations(range(n_features), k))[::max(1, n_features // 3)]
        got = _pi_upper_bounds(counts, grid.n_cols, grid.n_rows, *_filter_index(grid, counts),
                               np.array(candidates, np.int64), fc)
        expected = [co.pi_upper_bound(grid, counts, c, fc) for c in candidates]
        assert got.tolist() == expected
