"""Are the generators seeded and exact in size, and do DIPY's fibers load offline through the thesis's pipeline?"""

import numpy as np
import pytest
import scipy.sparse as sp

from course_lib import hac
from course_lib.hac import as_graph, components_graph, data, from_pairs


def test_planted_graph_has_exactly_the_size_asked_for_and_is_connected():
    g, groups = data.planted_graph(500, 9_000, n_groups=5, n_subgroups=3, seed=4)
    assert g.n_elements == 500 and g.n_entries == 9_000 and g.n_components == 1
    assert groups.shape == (500, 2) and groups[:, 0].max() < 5 and groups[:, 1].max() < 3
    g2, _ = data.planted_graph(500, 9_000, n_groups=5, n_subgroups=3, seed=4)
    assert np.array_equal(g.weight, g2.weight)
    # the planted structure: pairs inside a subgroup are the strongest on average
    same = (groups[g.src] == groups[g.dst]).all(1)
    assert g.weight[same].mean() > 2 * g.weight[~same].mean()


@pytest.mark.parametrize("kwargs, words", [
    (dict(n_elements=10, n_entries=7), "n_entries"),
    (dict(n_elements=10, n_entries=21), "even"),
    (dict(n_elements=10, n_entries=200), "n_entries"),
    (dict(n_elements=1, n_entries=2), "n_elements"),
    (dict(n_elements=10, n_entries=20, p_subgroup=0.8, p_group=0.5), "p_group"),
])
def test_planted_graph_refuses_impossible_sizes(kwargs, words):
    with pytest.raises(ValueError, match=words):
        data.planted_graph(**kwargs)


def test_thesis_size_constants():
    assert (data.THESIS_N, data.THESIS_M) == (12_119, 705_352)


def test_small_generators():
    assert data.path_graph(5).n_pairs == 4
    assert data.star_graph(5).n_pairs == 4
    assert data.complete_graph(5).n_pairs == 10
    assert data.random_graph(30, 0.0, seed=1).n_components == 1  # the spanning path
    assert data.random_graph(30, 0.0, seed=1, connected=False).n_entries == 0
    t = data.tied_graph(12, levels=2)
    assert len(np.unique(t.weight)) <= 2


def test_bundles_ship_with_dipy_and_have_labels():
    fibers = data.load_fibers("bundles", subject=2)
    assert fibers.n_fibers == 150 and fibers.bundle.tolist().count(1) == 50
    assert fibers.bundle_names == data.BUNDLE_NAMES
    assert fibers.streamlines[0].shape[1] == 3 and fibers.streamlines[0].dtype == np.float32
    fornix = data.load_fibers("fornix")
    assert fornix.n_fibers == 300 and fornix.bundle is None
    with pytest.raises(ValueError, match="name"):
        data.load_fibers("cst")
    with pytest.raises(ValueError, match="subject"):
        data.load_fibers("bundles", subject=6)


def test_fiber_pipeline_recovers_the_three_bundles():
    fg = data.fiber_graph(n_parcels=24, seed=0)
    g = fg.graph
    assert g.n_elements == 24 and np.all(g.src != g.dst)
    # affinity = fibers between the parcels: the counts add up to the fibers whose ends differ
    ends = fg.endpoint_parcel
    assert g.weight.sum() / 2 == np.count_nonzero(ends[:, 0] != ends[:, 1])
    tree = hac.cluster(g, "cpu")
    labels = data.fiber_bundles(fg, tree.labels(n_clusters=max(3, tree.n_components)))
    assert hac.adjusted_rand_index(labels, fg.fibers.bundle) > 0.9
    with pytest.raises(ValueError, match="parcel_labels"):
        data.fiber_bundles(fg, np.zeros(3))


def test_kmeans_is_seeded_and_complete():
    pts = np.random.default_rng(0).normal(size=(50, 3))
    a, ca = data.kmeans(pts, 6, seed=1)
    b, _ = data.kmeans(pts, 6, seed=1)
    assert np.array_equal(a, b) and len(np.unique(a)) == 6 and ca.shape == (6, 3)


# as_graph: the graphs the thesis clusters are accepted, the others refused with a message naming the problem.


def test_edge_list_and_sparse_matrix_give_the_same_canonical_graph():
    src, dst, w = [2, 0, 1, 1], [1, 1, 0, 2], [3.0, 0.5, 0.5, 3.0]
    g = as_graph((src, dst, w))
    assert g.n_elements == 3 and g.n_entries == 4 and g.n_pairs == 2 and g.n_components == 1
    assert g.src.tolist() == [0, 1, 1, 2] and g.dst.tolist() == [1, 0, 2, 1]  # sorted by (src, dst)
    h = as_graph(sp.csr_matrix((w, (src, dst)), shape=(3, 3)))
    assert np.array_equal(g.src, h.src) and np.array_equal(g.weight, h.weight)
    assert g.src.dtype == np.int32 and g.weight.dtype == np.float64


def test_isolated_elements_count_as_components():
    g = as_graph(([0, 1], [1, 0], [1.0, 1.0]), n_elements=5)
    assert g.n_components == 4 and g.n_nodes == 6
    assert g.component.tolist()[:2] == [0, 0]


def test_explicit_zero_affinity_is_an_edge():
    g = from_pairs(3, [0, 1], [1, 2], [0.0, 1.0])
    assert g.n_components == 1


def test_disconnected_generator():
    g = components_graph((5, 4, 3), n_isolated=2)
    assert g.n_elements == 14 and g.n_components == 5


@pytest.mark.parametrize("graph, words", [
    (([0, 1], [1, 2], [1.0, 1.0]), "not symmetric"),
    (([0, 1], [1, 0], [1.0, 2.0]), "not symmetric"),
    (([0, 1], [1, 0], [-1.0, -1.0]), "negative"),
    (([0, 1], [1, 0], [np.nan, np.nan]), "finite"),
    (([0, 1], [1, 0], [np.inf, np.inf]), "finite"),
    (([0, 0], [0, 0], [1.0, 1.0]), "self-loop"),
    (([0, 1, 0, 1], [1, 0, 1, 0], [1.0, 1.0, 1.0, 1.0]), "repeated"),
    (([0, -1], [-1, 0], [1.0, 1.0]), "non-negative"),
    (([0.0, 1.0], [1.0, 0.0], [1.0, 1.0]), "integer"),
    (([0, 1, 2], [1, 0], [1.0, 1.0]), "same length"),
    (("abc", [1], [1.0]), "src"),
    ((np.zeros(0, int), np.zeros(0, int), np.zeros(0)), "empty"),
    (np.eye(3), "SciPy sparse"),
    (None, "SciPy sparse"),
])
def test_bad_graphs_are_refused_by_name(graph, words):
    with pytest.raises(ValueError, match=words):
        as_graph(graph)


def test_bad_sparse_matrices():
    with pytest.raises(ValueError, match="square"):
        as_graph(sp.csr_matrix(np.ones((2, 3))))
    with pytest.raises(ValueError, match="self-loop"):
        as_graph(sp.csr_matrix(np.ones((3, 3))))
    with pytest.raises(ValueError, match="empty"):
        as_graph(sp.csr_matrix((0, 0)))
    m = sp.csr_matrix(np.array([[0, np.nan], [np.nan, 0]]))
    with pytest.raises(ValueError, match="non-finite"):
        as_graph(m)
    with pytest.raises(ValueError, match="real"):
        as_graph(sp.csr_matrix(np.array([[0, 1j], [1j, 0]])))


def test_index_beyond_n_elements_is_refused():
    with pytest.raises(ValueError, match="below n_elements=2"):
        as_graph(([0, 2], [2, 0], [1.0, 1.0]), n_elements=2)
    with pytest.raises(ValueError, match="n_elements"):
        as_graph(sp.csr_matrix((2, 2)), n_elements=3)
