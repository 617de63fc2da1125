"""Is the thesis's algorithm UPGMA? SciPy's average linkage on D = c - S agrees on connected, tie-free graphs."""

import numpy as np
import pytest
from scipy.cluster.hierarchy import cophenet, fcluster, is_valid_linkage

from course_lib import hac
from course_lib.hac import data

TIE_FREE = {
    "one": lambda: data.path_graph(1),
    "two": lambda: data.path_graph(2),
    "path": lambda: data.path_graph(9),
    "star": lambda: data.star_graph(8),
    "complete": lambda: data.complete_graph(9),
    "random": lambda: data.random_graph(23, 0.25, seed=4),
    "components_and_isolated": lambda: data.components_graph((6, 3, 2), n_isolated=3),
    "planted": lambda: data.planted_graph(60, 600, n_groups=3, n_subgroups=2, seed=1)[0],
}


@pytest.mark.parametrize("name", TIE_FREE)
def test_sparse_algorithm_is_upgma_on_c_minus_s(name):
    g = TIE_FREE[name]()
    tree = hac.average_link_reference(g)
    upgma = hac.scipy_average_linkage(g)
    assert tree.n_nodes == 2 * g.n_elements - g.n_components
    assert np.array_equal(tree.parent, upgma.parent)
    np.testing.assert_allclose(tree.merge_heights, upgma.merge_heights, rtol=1e-12, atol=1e-12)


def test_output_layout_of_the_thesis():
    g = data.components_graph((4, 3), n_isolated=1)
    tree = hac.average_link_reference(g)
    n = g.n_elements
    assert tree.parent.size == tree.height.size == 2 * n - g.n_components
    # merge q creates node N + q, from two nodes created before it
    children = tree.children()
    assert children.shape == (n - g.n_components, 2)
    assert np.all(children < n + np.arange(children.shape[0])[:, None])
    roots = np.flatnonzero(tree.parent == np.arange(tree.n_nodes))
    assert roots.size == g.n_components  # components are never merged
    assert np.all(np.isinf(tree.height[:n]))
    assert np.all(np.diff(tree.merge_heights) <= 1e-12)  # average linkage never inverts


def test_ties_follow_the_lowest_entry_index():
    # Two pairs of equal affinity: (0, 1) sorts before (2, 3), so it is merged first.
    g = hac.from_pairs(4, [2, 0], [3, 1], [1.0, 1.0])
    tree = hac.average_link_reference(g)
    assert tree.parent.tolist() == [4, 4, 5, 5, 4, 5]
    assert tree.n_components == 2


def test_weighted_average_with_missing_edges_counting_zero():
    # 0-1 merge first (affinity 4); then s(k, 2) = (1 * 2 + 1 * 0) / 2 = 1 (pair 1-2 is missing).
    g = hac.from_pairs(3, [0, 0], [1, 2], [4.0, 2.0])
    tree = hac.average_link_reference(g)
    assert tree.merge_heights.tolist() == [4.0, 1.0]


@pytest.mark.parametrize("name", ["path", "components_and_isolated", "two", "one"])
def test_linkage_matrix_works_with_scipy(name):
    g = TIE_FREE[name]()
    tree = hac.average_link_reference(g)
    z = tree.linkage()
    assert z.shape == (max(g.n_elements - 1, 0), 4)
    if g.n_elements >= 2:
        assert is_valid_linkage(z)
        labels = fcluster(z, t=g.n_components, criterion="maxclust")
        assert len(np.unique(labels)) == g.n_components
        # cutting the tree by number of clusters agrees with the library's own cut
        ours = tree.labels(n_clusters=g.n_components)
        assert hac.adjusted_rand_index(ours, labels) == 1.0
        cophenet(z)


def test_stage_seconds_are_measured():
    tree = hac.average_link_reference(data.random_graph(15, seed=2))
    assert set(tree.stage_seconds) == set(hac.STAGES)
    assert sum(tree.stage_seconds.values()) > 0


def test_max_merges_stops_early():
    tree = hac.average_link_reference(data.path_graph(6), max_merges=2)
    assert np.isfinite(tree.merge_heights).sum() == 2


# Structural comparisons: 'same' for the same tree, and the difference of a different one.


def test_adjusted_rand_index_known_values():
    assert hac.adjusted_rand_index([0, 0, 1, 1], [5, 5, 7, 7]) == 1.0
    assert hac.adjusted_rand_index([0, 0, 0, 0], [1, 1, 1, 1]) == 1.0
    assert hac.adjusted_rand_index([0, 0, 1, 1], [0, 1, 0, 1]) == pytest.approx(-0.5)
    with pytest.raises(ValueError, match="same shape"):
        hac.adjusted_rand_index([0, 1], [0, 1, 2])


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
