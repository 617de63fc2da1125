"""Is the reference right on inputs small enough to check by hand?"""

import numpy as np
import pytest

from course_lib.colocation import (apriori_candidates, instance_table_reference, mine_reference,
                                   neighbour_pairs_reference, participation_index_reference)


def test_points_exactly_at_distance_r_are_neighbours():
    points = np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0], [-5.0000001, 0.0]])
    assert neighbour_pairs_reference(points, 5.0).tolist() == [[0, 1], [1, 2]]


def test_row_instances_are_cliques():
    # A - B - C in a line, 1 apart: with r = 1, (A, C) are not neighbours, so no row instance of {0, 1, 2}.
    points = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    features = np.array([0, 1, 2])
    assert instance_table_reference(points, features, 1.0, (0, 1)) == [(0, 1)]
    assert instance_table_reference(points, features, 1.0, (0, 1, 2)) == []
    assert instance_table_reference(points, features, 2.0, (0, 1, 2)) == [(0, 1, 2)]


def test_participation_index_is_the_smallest_ratio():
    # Feature 0: 2 instances, one next to the single instance of feature 1.
    points = np.array([[0.0, 0.0], [10.0, 0.0], [0.5, 0.0]])
    features = np.array([0, 0, 1])
    pi, ratios = participation_index_reference(points, features, 1.0, (0, 1))
    assert ratios.tolist() == [0.5, 1.0] and pi == 0.5


def test_apriori_joins_and_prunes():
    assert apriori_candidates([(0, 1), (0, 2), (1, 2), (0, 3)], 2) == [(0, 1, 2)]
    assert apriori_candidates([(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)], 3) == [(0, 1, 2, 3)]
    assert apriori_candidates([], 2) == []


@pytest.mark.parametrize("threshold, expected", [(0.5, {(0, 1): 1.0}), (1.0, {(0, 1): 1.0})])
def test_mine_reference_on_a_pair(threshold, expected):
    points = np.array([[0.0, 0.0], [0.5, 0.0], [5.0, 5.0]])
    features = np.array([0, 1, 2])
    assert mine_reference(points, features, 1.0, threshold) == expected
