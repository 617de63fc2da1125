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
        assert hac.compare.adjusted_rand_index(ours, labels) == 1.0
        cophenet(z)


def test_stage_seconds_are_measured():
    tree = hac.average_link_reference(data.random_graph(15, seed=2))
    assert set(tree.stage_seconds) == set(hac.STAGES)
    assert sum(tree.stage_seconds.values()) > 0


def test_max_merges_stops_early():
    tree = hac.average_link_reference(data.path_graph(6), max_merges=2)
    assert np.isfinite(tree.merge_heights).sum() == 2
