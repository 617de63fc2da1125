"""Do the structural comparisons say 'same' for the same tree, and see the difference of a different one?"""

import numpy as np
import pytest

from course_lib import hac
from course_lib.hac import data
from course_lib.hac.compare import adjusted_rand_index


def test_adjusted_rand_index_known_values():
    assert adjusted_rand_index([0, 0, 1, 1], [5, 5, 7, 7]) == 1.0
    assert adjusted_rand_index([0, 0, 0, 0], [1, 1, 1, 1]) == 1.0
    assert adjusted_rand_index([0, 0, 1, 1], [0, 1, 0, 1]) == pytest.approx(-0.5)
    with pytest.raises(ValueError, match="same shape"):
        adjusted_rand_index([0, 1], [0, 1, 2])


def test_identical_trees():
    g = data.random_graph(20, 0.3, seed=1)
    a = hac.cluster(g, "cpu")
    out = hac.compare_dendrograms(a, hac.cluster(g, "reference"))
    assert out["same_tree"] and out["cophenetic"] == pytest.approx(1.0) and out["parents_differing"] == 0
    assert all(v == 1.0 for v in out["agreement"].values())


def test_a_different_tree_is_seen():
    g = data.random_graph(20, 0.3, seed=1)
    h = hac.from_pairs(20, g.src[g.src < g.dst], g.dst[g.src < g.dst],
                       np.random.default_rng(9).random(g.n_pairs) + 0.05)
    out = hac.compare_dendrograms(hac.cluster(g, "cpu"), hac.cluster(h, "cpu"))
    assert not out["same_tree"] and out["cophenetic"] < 0.99 and out["parents_differing"] > 0


def test_labels_by_count_and_by_affinity():
    tree = hac.cluster(hac.from_pairs(4, [0, 2, 1], [1, 3, 2], [3.0, 2.0, 0.5]), "cpu")
    assert tree.labels(n_clusters=2).tolist() == [0, 0, 1, 1]
    assert tree.labels(min_affinity=2.5).tolist() == [0, 0, 1, 2]
    assert tree.labels(n_clusters=4).tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="n_clusters"):
        tree.labels(n_clusters=0)
    with pytest.raises(ValueError, match="exactly one"):
        tree.labels()


def test_components_bound_the_cut():
    tree = hac.cluster(data.components_graph((3, 3), n_isolated=1), "cpu")
    assert len(np.unique(tree.labels(n_clusters=3))) == 3
    with pytest.raises(ValueError, match="n_clusters"):
        tree.labels(n_clusters=2)


def test_precision_study_float32_against_float64():
    g, _ = data.planted_graph(200, 3000, n_groups=3, seed=3)
    study = hac.precision_study(g)
    assert study["float32"].height.dtype == np.float32 and study["float64"].height.dtype == np.float64
    assert study["relative_error"].shape == (g.n_elements - g.n_components,)
    # float32 keeps about 7 digits: the thesis saw relative errors below 1.5e-4
    assert study["max_relative_height_error"] < 1.5e-4
    assert study["top_relative_error"] <= study["max_relative_height_error"]
    with pytest.raises(ValueError, match="dtype"):
        hac.precision_study(g, method="scipy")
