"""Does the grid bound the participation index from above, and do the launch counts match the source?"""

import numpy as np
import pytest

from course_lib.colocation import (count_map, filter_launches, grid_for, participation_index_reference,
                                   pi_upper_bound, planted_colocations, uniform_features)


def test_filter_launches_are_the_sources_figures():
    assert filter_launches(13, 2, batched=False) == 156
    assert filter_launches(13, 3, batched=False) == 572
    assert filter_launches(13, 3, batched=True) == 2


@pytest.mark.parametrize("seed", range(4))
def test_upper_bound_is_never_below_the_exact_index(seed):
    data = uniform_features(120, 3, extent=6.0, seed=seed)
    grid = grid_for(data.points, 1.0, 3)
    counts = count_map(grid, data.points, data.features, 3)
    fc = np.bincount(data.features, minlength=3)
    for pattern in [(0, 1), (0, 2), (1, 2), (0, 1, 2)]:
        exact, _ = participation_index_reference(data.points, data.features, 1.0, pattern)
        assert pi_upper_bound(grid, counts, pattern, fc) >= exact


def test_a_single_row_or_column_of_cells_still_has_quadruplets():
    points = np.array([[0.0, 0.0], [0.5, 0.0], [3.0, 0.0]])
    grid = grid_for(points, 1.0, 2)
    assert (grid.n_cols, grid.n_rows, grid.n_quads) == (3, 1, 2)  # 3.0 / (r + margin) < 3
    counts = count_map(grid, points, [0, 1, 0], 2)
    assert pi_upper_bound(grid, counts, (0, 1), np.array([2, 1])) == 0.5


def test_all_points_in_one_cell():
    grid = grid_for(np.zeros((5, 2)), 1.0, 1)
    assert (grid.n_cols, grid.n_rows, grid.n_quads) == (1, 1, 1)


def test_a_grid_too_fine_is_refused():
    with pytest.raises(ValueError, match="r is too small"):
        grid_for(np.array([[0.0, 0.0], [1e6, 1e6]]), 1e-3, 20)


def test_planted_groups_are_cliques():
    data = planted_colocations(600, 5, groups=((0, 1, 2),), group_fraction=1.0, seed=4)
    pi, _ = participation_index_reference(data.points, data.features, 1.0, (0, 1, 2))
    assert pi == 1.0


def test_count_map_and_cpu_miner_refuse_a_grid_that_does_not_fit():
    import numpy as np
    import pytest

    from course_lib import colocation as co

    points = np.array([[0.0, 0.0], [0.5, 0.2], [2.5, 1.0]])
    small = co.grid_for(points[:2], 1.0, 2)  # covers the first two points only
    with pytest.raises(ValueError, match="points must lie inside the grid"):
        co.count_map(small, points, [0, 1, 1], 2)
    with pytest.raises(ValueError, match="features must be feature ids below n_features = 2"):
        co.count_map(co.grid_for(points, 1.0, 2), points, [0, 1, 2], 2)
    with pytest.raises(ValueError, match="grid must have cells of side >= r"):
        co.mine_cpu(points, [0, 1, 1], 2.0, 0.5, grid=co.grid_for(points, 1.0, 2))
    with pytest.raises(ValueError, match="pattern must hold distinct feature ids in increasing order"):
        co.pi_upper_bound(co.grid_for(points, 1.0, 2), co.count_map(co.grid_for(points, 1.0, 2), points,
                                                                    [0, 1, 1], 2), (1, 0), np.array([1, 2]))
